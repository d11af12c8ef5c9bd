"""Issue 29 item 6: wall time of a whole `gpubot kb build` and of a whole 100,000-row `gpubot kb import`.

    .venv/bin/python benchmarks/bench_import.py [--runs 3] [--rows 100000] [--postgres URL] [--keep DIR] [--json]
        [--compare TREE]

The imported file is built as `tests/test_import_serving.py`'s `big_catalog` builds it (the bundled Lambda catalog's
rows repeated under distinct instance names, then one marker row). Every run gets a fresh `GPUBOT_HOME` (a fresh
SQLite state database, so the snapshot's 100,000 rows are really inserted): first `gpubot kb build` is timed, then
`gpubot kb import <file> --provider bigcloud --as-of 2026-11-30` in the same home. `--postgres URL`: the state
database is that PostgreSQL database instead (its tables are dropped before every run). The figures are the whole
process (interpreter start to exit) and its user+system CPU time. `--compare TREE`: the same runs, alternating, of
another source tree (e.g. `git archive <base> | tar -x -C /tmp/base`) with this venv's packages: a fair before/after
on a machine shared with other work (each tree runs `python -m bot.cli` with PYTHONPATH set to it).
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


def timed(args: list[str], env: dict, tree: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole `gpubot` process (of source tree `tree`); raises on failure."""
    command = [GPUBOT, *args]
    if tree is not None:
        command, env = [sys.executable, "-m", "bot.cli", *args], {**env, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tree)
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
    parser.add_argument("--compare", metavar="TREE", type=Path, help="alternate with runs of this source tree")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # a real install has .pyc files
    env["GPUBOT_IMPORT_MAX_ROWS"] = str(args.rows + 10)
    env.pop("DATABASE_URL", None)
    if args.postgres:
        env["DATABASE_URL"] = args.postgres
    trees: list[Path | None] = [None] if args.compare is None else [args.compare.resolve(), ROOT]
    results: dict[str, list[tuple[float, float]]] = {
        f"{what}{'' if len(trees) == 1 else ' ' + str(tree)}": [] for tree in trees for what in ("build", "import")
    }
    for tree in trees:  # a real install has .pyc files: the first run must not be the one that writes them
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree or ROOT)], capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        catalog = big_catalog(Path(tmp) / "big.csv", args.rows)
        for run in range(args.runs):
            for tree in trees:
                suffix = "" if len(trees) == 1 else f" {tree}"
                home = Path(tmp) / f"home-{run}"
                home.mkdir()
                env["GPUBOT_HOME"] = str(home)
                if args.postgres:
                    _reset_postgres(args.postgres)
                results[f"build{suffix}"].append(timed(["kb", "build"], env, tree))
                results[f"import{suffix}"].append(
                    timed(["kb", "import", str(catalog), "--provider", "bigcloud", "--as-of", "2026-11-30"], env, tree)
                )
                if args.keep and run == args.runs - 1 and tree in (None, ROOT):
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    for name in ("kb.db", "state.db"):  # state.db: the import's snapshot (SQLite state only)
                        if (home / name).exists():
                            shutil.copy(home / name, Path(args.keep) / name)
                shutil.rmtree(home)
    summary: dict = {
        name: {
            "wall_s": [round(w, 2) for w, _ in runs],
            "cpu_s": [round(c, 2) for _, c in runs],
            "median_wall_s": round(statistics.median(w for w, _ in runs), 2),
            "median_cpu_s": round(statistics.median(c for _, c in runs), 2),
        }
        for name, runs in results.items()
    }
    names = list(results)
    summary["rows"] = args.rows
    summary["state"] = "postgresql" if args.postgres else "sqlite"
    summary["load_average"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    for name in names:
        s = summary[name]
        print(f"{name} wall {s['wall_s']} median {s['median_wall_s']} s; CPU {s['cpu_s']} median {s['median_cpu_s']} s")
    print(f"rows {args.rows}, state {summary['state']}, load average {summary['load_average']:.2f}")


if __name__ == "__main__":
    main()
