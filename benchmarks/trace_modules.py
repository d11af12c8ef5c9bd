"""How many gpubot modules (bot/handlers/knowledge) a CLI question runs code in, first in the process and again.

    GPUBOT_HOME=... python benchmarks/trace_modules.py "cheapest A100 spot"

A profiler (`sys.setprofile`, `threading.setprofile`) records the module of every function called while
`bot.cli.main(["ask", ...])` answers; the answer cache is off. The Slack figure is taken the same way around two
`/gpu` requests to the real Bolt app of tests/test_slack_app.py (its `app`, `slack` fixtures and `slash` helper).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from pathlib import Path


def main() -> None:
    os.environ["GPUBOT_ANSWER_CACHE"] = "0"
    question = sys.argv[1] if len(sys.argv) > 1 else "cheapest A100 spot"
    entered: set[str] = set()

    def profile(frame, event, arg):
        if event == "call":
            name = frame.f_globals.get("__name__", "")
            if name.split(".")[0] in ("bot", "handlers", "knowledge"):
                entered.add(name)

    sys.setprofile(profile)
    threading.setprofile(profile)
    from bot.cli import main as cli

    runs = []
    for _ in range(2):
        entered.clear()
        with contextlib.redirect_stdout(io.StringIO()):
            cli(["ask", question])
        runs.append(sorted(entered))
    sys.setprofile(None)
    threading.setprofile(None)
    print(f"CLI: first {len(runs[0])} modules, again {len(runs[1])}")
    print(" ".join(runs[1]))
    slack_runs = _slack(question, entered, profile)
    print(f"Slack /gpu: first {len(slack_runs[0])} modules, again {len(slack_runs[1])}")
    print(" ".join(slack_runs[1]))


def _slack(question: str, entered: set[str], profile) -> list[list[str]]:
    """The same question as a signed `/gpu` request to the real Bolt app (stand-in Slack Web API on 127.0.0.1)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from knowledge.kb.opener import open_kb
    from knowledge.paths import home
    from tests.slack_standin import SlackStandIn
    from tests.test_slack_app import make_app, slash

    runs = []
    with SlackStandIn() as standin:
        app = make_app(standin, open_kb(home() / "kb.db"))
        for n in range(2):
            entered.clear()
            sys.setprofile(profile)
            threading.setprofile(profile)
            slash(app, standin, f"{question} {'x' * n}".strip())  # a new question each time: no kept answer
            sys.setprofile(None)
            threading.setprofile(None)
            runs.append(sorted(entered))
    return runs


if __name__ == "__main__":
    main()
