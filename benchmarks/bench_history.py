"""Price-history figures: the knowledge-base build's extra cost for the bundled GCP weekly history, and
`gpubot history H100 --provider gcp --pricing spot --json` (130+ points back to 2024) in new processes.

    .venv/bin/python benchmarks/bench_history.py [--runs 10] [--home DIR] [--json]

For each run the time is taken inside the process (from the first line of the program, imports included, to the
printed answer) and around it (the whole process: issue 18's target, 200 ms). "computed": the question asked for
the first time (the kept outputs in GPUBOT_HOME/cache/history removed before each run; the environment as a user
has it, so no variable makes the start validate settings); "repeated": the same question again with the data
unchanged (the printed output is reused, bot/history_cache.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ARGS = ["history", "H100", "--provider", "gcp", "--pricing", "spot", "--json"]
TIMED = (
    "import time, sys; t = time.perf_counter()\n"
    "from bot.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "print(f'IN_PROCESS_MS {(time.perf_counter() - t) * 1000:.1f}', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def build_cost(runs: int) -> dict:
    """Seconds `history_bundled.write` adds to a build: the first (parses the CSV) and later ones (replay kept)."""
    from knowledge.history import bundled as history_bundled

    before = os.environ.get("GPUBOT_HOME")
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GPUBOT_HOME"] = tmp  # an empty cache for the first build
        try:
            for _ in range(runs + 1):
                conn = sqlite3.connect(":memory:")
                started = time.perf_counter()
                intervals = history_bundled.write(conn)
                times.append(time.perf_counter() - started)
                conn.close()
        finally:
            if before is None:
                os.environ.pop("GPUBOT_HOME", None)
            else:
                os.environ["GPUBOT_HOME"] = before
    return {"first_s": times[0], "median_s": statistics.median(times[1:]), "intervals": intervals, "runs": runs}


def _run(env: dict, *, first_time: bool = False) -> tuple[float, float, int]:
    if first_time:
        shutil.rmtree(Path(env["GPUBOT_HOME"]) / "cache" / "history", ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", TIMED, *ARGS], env=env, capture_output=True, text=True, cwd=ROOT, check=True
    )
    wall = time.perf_counter() - started
    inside = float(next(line.split()[1] for line in done.stderr.splitlines() if line.startswith("IN_PROCESS_MS")))
    return wall * 1000, inside, len(json.loads(done.stdout)["history"])


def cli(runs: int, home: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(GPUBOT_HOME=home, DATABASE_URL=f"sqlite:///{Path(home) / 'state.db'}")
    first = _run(env, first_time=True)  # builds nothing more: records the bundled baselines once
    out = {"points": first[2]}
    for name in ("computed", "repeated"):
        _run(env, first_time=name == "computed")  # warm-up (.pyc; for "repeated", the kept output)
        walls, insides = [], []
        for _ in range(runs):
            wall, inside, _points = _run(env, first_time=name == "computed")
            walls.append(wall)
            insides.append(inside)
        out[name] = {
            "wall_p50_ms": statistics.median(walls),
            "in_process_p50_ms": statistics.median(insides),
            "in_process_max_ms": max(insides),
        }
    return out


def measure(runs: int = 10, home: str | None = None) -> dict:
    figures = {"build": build_cost(3)}
    if home:
        figures["cli"] = cli(runs, home)
        return figures
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "bot.cli", "kb", "build"],
            env={**os.environ, "GPUBOT_HOME": tmp},
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        figures["cli"] = cli(runs, tmp)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--home", help="a GPUBOT_HOME with a built knowledge base (default: a fresh one)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs, args.home)
    if args.json:
        print(json.dumps(figures))
        return 0
    b, c = figures["build"], figures["cli"]
    print(
        f"bundled history at KB build: first {b['first_s']:.2f} s, later {b['median_s']:.2f} s "
        f"({b['intervals']} intervals)"
    )
    for name in ("computed", "repeated"):
        r = c[name]
        print(
            f"gpubot {' '.join(ARGS)} ({name}, {c['points']} points): in-process p50 {r['in_process_p50_ms']:.0f} ms "
            f"(max {r['in_process_max_ms']:.0f}), whole process p50 {r['wall_p50_ms']:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
