"""Issue 29 item 6: wall time of a whole `gpubot kb build` and of a whole 100,000-row `gpubot kb import`.

    .venv/bin/python benchmarks/bench_import.py [--runs 3] [--rows 100000] [--postgres URL] [--keep DIR] [--json]

The imported file is built as `tests/test_import_serving.py`'s `big_catalog` builds it (the bundled Lambda catalog's
rows repeated under distinct instance names, then one marker row). Every run gets a fresh `GPUBOT_HOME` (a fresh
SQLite state database, so the snapshot's 100,000 rows are really inserted): first `gpubot kb build` is timed, then
`gpubot kb import <file> --provider bigcloud --as-of 2026-11-30` in the same home. `--postgres URL`: the state
database is that PostgreSQL database instead (its tables are dropped before every run). The figures are the whole
process (interpreter start to exit) and its user+system CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GPUBOT = str(Path(sys.executable).with_name("gpubot"))


def big_catalog(path: Path, rows: int) -> Path:
    """`tests.test_import_serving.big_catalog` with `rows` rows."""
    import tests.test_import_serving as serving

    before = serving.ROWS
    serving.ROWS = rows
    try:
        return serving.big_catalog(path)
    finally:
        serving.ROWS = before


def timed(args: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole `gpubot` process; raises on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([GPUBOT, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"gpubot {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _reset_postgres(url: str) -> None:
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    with eng.begin() as conn:
        conn.execute(sa.text("DROP SCHEMA public CASCADE"))
        conn.execute(sa.text("CREATE SCHEMA public"))
    eng.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--postgres", metavar="URL", help="state database URL (default: SQLite in each home)")
    parser.add_argument("--keep", metavar="DIR", help="keep the last run's kb.db and state.db in DIR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # a real install has .pyc files
    env["GPUBOT_IMPORT_MAX_ROWS"] = str(args.rows + 10)
    env.pop("DATABASE_URL", None)
    if args.postgres:
        env["DATABASE_URL"] = args.postgres
    results: dict[str, list[tuple[float, float]]] = {"build": [], "import": []}
    with tempfile.TemporaryDirectory() as tmp:
        catalog = big_catalog(Path(tmp) / "big.csv", args.rows)
        for run in range(args.runs):
            home = Path(tmp) / f"home-{run}"
            home.mkdir()
            env["GPUBOT_HOME"] = str(home)
            if args.postgres:
                _reset_postgres(args.postgres)
            results["build"].append(timed(["kb", "build"], env))
            results["import"].append(
                timed(["kb", "import", str(catalog), "--provider", "bigcloud", "--as-of", "2026-11-30"], env)
            )
            if args.keep and run == args.runs - 1:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                for name in ("kb.db", "state.db"):  # state.db: the import's snapshot (SQLite state only)
                    if (home / name).exists():
                        shutil.copy(home / name, Path(args.keep) / name)
            shutil.rmtree(home)
    summary = {
        name: {
            "wall_s": [round(w, 2) for w, _ in runs],
            "cpu_s": [round(c, 2) for _, c in runs],
            "median_wall_s": round(statistics.median(w for w, _ in runs), 2),
            "median_cpu_s": round(statistics.median(c for _, c in runs), 2),
        }
        for name, runs in results.items()
    }
    summary["rows"] = args.rows  # type: ignore[assignment]
    summary["state"] = "postgresql" if args.postgres else "sqlite"  # type: ignore[assignment]
    summary["load_average"] = os.getloadavg()[0]  # type: ignore[assignment]
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    for name in ("build", "import"):
        s = summary[name]
        print(
            f"{name:7} wall {s['wall_s']} median {s['median_wall_s']} s; CPU {s['cpu_s']} median {s['median_cpu_s']} s"
        )
    print(f"rows {args.rows}, state {summary['state']}, load average {summary['load_average']:.2f}")


if __name__ == "__main__":
    main()
