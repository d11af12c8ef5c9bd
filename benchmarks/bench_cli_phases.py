"""Where a first-time `gpubot ask` spends its time: one fresh process per run, wall time per phase (.pyc present).

    .venv/bin/python benchmarks/bench_cli_phases.py [--runs 7] [--home DIR] [--json]

Phases, in the order `gpubot ask "cheapest A100 spot"` goes through them (each includes its imports): the bare
interpreter (`python -c "import sqlite3"`, measured apart), `bot.cli` and the command line, pydantic with the
`Query`/`Answer` models, `handlers.parse` (its import and lexicon set-up: the parse engineer's module), opening the
knowledge base, understanding the question (vocabulary + parse), answering it, and rendering the text (Jinja).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "cheapest A100 spot"
PHASES = (
    ("bot.cli and the command line", "import bot.cli; bot.cli.build_parser('ask')"),
    ("pydantic and the Query/Answer models", "import handlers.models"),
    ("handlers.parse import (lexicon set-up)", "import handlers.parse"),
    ("open the knowledge base", "from knowledge.kb.opener import open_kb; kb = open_kb()"),
    ("understand: vocabulary + parse", "from bot.pipeline import understand; q = understand(QUESTION, kb)"),
    ("answer (handler, pitfalls)", "from bot.pipeline import answer_query; a = answer_query(q, kb)"),
    ("render the text (Jinja)", "from bot.render import render_text; render_text(a)"),
)
CODE = (
    "import time, json, sys\n"
    "T, C = time.perf_counter, time.process_time\n"
    "QUESTION = sys.argv[1]\n"
    "laps = []\n"
    "for name, step in json.loads(sys.argv[2]):\n"
    "    t, c = T(), C(); exec(step); laps.append((name, (T() - t) * 1000, (C() - c) * 1000))\n"
    "print(json.dumps(laps))\n"
)


def _env(home: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["GPUBOT_HOME"] = home
    return env


def bare_python(runs: int) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -c "import sqlite3"` (medians): the floor of any command-line start."""
    import resource

    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sqlite3"], check=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def measure(runs: int = 7, home: str | None = None) -> dict:
    def run(where: str) -> dict[str, float]:
        samples: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        args = [sys.executable, "-c", CODE, QUESTION, json.dumps(PHASES)]
        subprocess.run(args, env=_env(where), check=True, capture_output=True, cwd=ROOT)  # .pyc, vocabulary
        for _ in range(runs):
            done = subprocess.run(args, env=_env(where), check=True, capture_output=True, text=True, cwd=ROOT)
            for name, ms, cpu_ms in json.loads(done.stdout):
                samples.setdefault(name, []).append(ms)
                cpu.setdefault(name, []).append(cpu_ms)
        return {name: (statistics.median(values), statistics.median(cpu[name])) for name, values in samples.items()}

    if home:
        phases = run(home)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "bot.cli", "kb", "build"], env=_env(tmp), check=True, cwd=ROOT)
            phases = run(tmp)
    wall, cpu = bare_python(runs)
    return {"bare_python_ms": (wall * 1000, cpu * 1000), "phases_ms": phases, "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--home", help="a GPUBOT_HOME with a built knowledge base (default: a fresh one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs, args.home)
    if args.json:
        print(json.dumps(figures))
        return 0
    bare = 'bare python -c "import sqlite3"'
    print(f"{'phase (median)':44} {'wall ms':>8} {'CPU ms':>8}")
    print(f"{bare:44} {figures['bare_python_ms'][0]:8.1f} {figures['bare_python_ms'][1]:8.1f}")
    for name, (ms, cpu_ms) in figures["phases_ms"].items():
        print(f"{name:44} {ms:8.1f} {cpu_ms:8.1f}")
    total = [sum(v[i] for v in figures["phases_ms"].values()) for i in (0, 1)]
    print(f"{'sum of the phases (plus the interpreter)':44} {total[0]:8.1f} {total[1]:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
