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
    print(f"first {len(runs[0])} modules, again {len(runs[1])}")
    print(" ".join(runs[1]))


if __name__ == "__main__":
    main()
