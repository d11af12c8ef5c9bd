"""Print how long the command line takes: knowledge-base build, and `gpubot ask` cold starts (new processes).

.venv/bin/python benchmarks/bench_cli.py [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = ["cheapest A100 spot", "price of p4d.24xlarge", "最便宜的H100按需实例"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    gpubot = str(Path(sys.executable).with_name("gpubot"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "GPUBOT_HOME": home}
        started = time.perf_counter()
        subprocess.run([gpubot, "kb", "build"], env=env, check=True, capture_output=True)
        build = time.perf_counter() - started
        print(f"{'what':44} {'p50 ms':>8} {'max ms':>8}")
        print(f"{'kb build (full knowledge base)':44} {build * 1000:8.0f} {build * 1000:8.0f}")
        for question in QUESTIONS:
            for flag in ([], ["--json"]):
                times = []
                for _ in range(args.runs):
                    started = time.perf_counter()
                    subprocess.run([gpubot, "ask", question, *flag], env=env, check=True, capture_output=True)
                    times.append(time.perf_counter() - started)
                label = f'ask "{question}" {" ".join(flag)}'
                print(f"{label:44} {statistics.median(times) * 1000:8.0f} {max(times) * 1000:8.0f}")


if __name__ == "__main__":
    main()
