"""Issue 29 item 6: a first-time answer's cost as the data grows, the bundled 12,000 offers against 112,000.

    .venv/bin/python benchmarks/bench_growth.py [--runs 5] [--repeat 7] [--rows 100000] [--homes DIR] [--json]
    .venv/bin/python benchmarks/bench_growth.py --dump DIR [--homes DIR]

Two homes: "bundled" (`gpubot kb build`) and "big" (the same, then `gpubot kb import <file> --provider bigcloud
--as-of 2026-11-30` of a `--rows`-row catalog built as `tests/test_import_serving.py`'s `big_catalog` builds it:
the bundled Lambda catalog's rows, A100, H100, B200, V100 ... on demand, repeated under distinct instance names).
`--homes DIR` keeps both homes in DIR and reuses them when they are there (DIR/bundled, DIR/big).

For each question of QUESTIONS, first-time answers (the answer cache off: GPUBOT_ANSWER_CACHE=0, and the printed
answers' cache GPUBOT_HOME/cache/answers removed before each run):

- in process: parse + answer (`bot.pipeline.answer`) on an open knowledge base, median of `--repeat` (a child
  process per home, warmed with one other question, so imports and the vocabulary are not counted);
- whole process: `gpubot ask QUESTION`, median of `--runs`, the two homes alternating (the machine is shared).

Each as wall and as CPU time (the process's own; the children's for whole processes: on a loaded machine the
comparable figure). Prints both medians per home and the ratio big/bundled, and the load average before and after.
`--tree TREE`: the same with another source tree (e.g. `git archive main | tar -x -C /tmp/base`), its homes built by
it (give each tree its own `--homes`), run as `python -m bot.cli` with PYTHONPATH set to it, as
`bench_import.py --compare` does.
`--dump DIR`: instead, writes `gpubot ask --json` of every question of DUMP_QUESTIONS (computed in process, as the
command line prints it) for both homes into DIR/bundled.txt and DIR/big.txt, for a before/after `diff`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_import import big_catalog, timed  # noqa: E402  (after the path is set)

QUESTIONS = [  # (intent, question): the first-time questions timed
    ("cheapest", "cheapest A100 on-demand"),
    ("cheapest", "cheapest H100 spot in europe"),
    ("cheapest", "最便宜的H100按需实例"),
    ("cheapest", "cheapest 8x H100 on aws"),
    ("price", "price of p4d.24xlarge"),
    ("compare", "compare H100 and A100"),
    ("tco", "tco 8x A100 for 3 months"),
    ("recommend", "best GPU for fine-tuning llama 70B"),
    ("history", "A100 price trend"),
]
WARM_UP = "cheapest T4 spot"

DUMP_QUESTIONS = [  # README examples and parser-test phrasings, every intent whose answer reads offers
    "cheapest A100 spot",
    "cheapest A100 spot on aws",
    "最便宜的H100按需实例",
    "cheapest A100 on-demand",
    "cheapest H100 spot in europe",
    "cheapest 8x H100 on aws",
    "cheapest L4 on gcp",
    "cheapest A10 on alibaba",
    "cheapest T4 spot on alibaba",
    "cheapest A100 in CNY",
    "最便宜的A100 人民币",
    "cheapest A100 on alibaba in CNY",
    "cheapest TPU v5e",
    "最便宜的TPU v5e",
    "cheapest H100 except gcp",
    "最便宜的A100，不要竞价",
    "A100 on aws but not spot",
    "cheapest A100 on coreweave",
    "cheapest H1000",
    "cheapest A100 spot in Osaka",
    "2 nodes of 8 H100 cheapest",
    "cheapest 4x L4 spot in europe",
    "cheapest H100?",
    "whats the cheapest 8x h100 on demand rn",
    "lowest price for a single A10G in us-east-1",
    "cheapest place to rent an RTX 4090",
    "cheapest GPU in asia under $0.5/GPU-h",
    "cheapest H100 under $3/GPU-hour",
    "top 10 cheapest A100",
    "cheapest A100 in every region",
    "cheapest H100 per hour for the whole instance",
    "cheapest gpu with at least 80GB",
    "cheapest H100 PCIe",
    "cheapest A100 80GB spot",
    "cheapest B200",
    "cheapest V100 reserved",
    "cheapest A6000",
    "cheapest GH200",
    "price of p4d.24xlarge",
    "price of p4d.24xlarge reserved 1 year in us-east-1",
    "g5.xlarge 一小时多少钱",
    "price of Standard_NC80adis_H100_v5",
    "腾讯云 GN10Xp 多少钱",
    "compare H100 and A100",
    "a100 vs h100",
    "compare p4d.24xlarge and p5.48xlarge",
    "H100 和 H200 对比",
    "a100-80g vs h100 for training",
    "推理用T4还是L4",
    "TPU v5e vs H100",
    "tco 8x A100 for 3 months",
    "tco p4d.24xlarge 720 hours",
    "tco 8x h100 for 1 month on aws",
    "8卡A100一个月总成本",
    "best GPU for fine-tuning llama 70B",
    "recommend a gpu for 70B inference",
    "训练70B模型推荐什么卡",
    "what should we rent to serve llama 70b with low latency",
    "训练千亿参数模型，预算有限，选哪家？",
    "checklist 8x A100 spot on aws",
    "cost per million tokens for Llama 3.1 8B",
    "cheapest way to serve llama 8b rag on spot",
    "cost to fine-tune Llama 2 70B with LoRA",
    "self-host Llama 3.1 8B or use an API?",
    "is it worth reserving g5.xlarge for a year at 50% utilisation",
    "spec of H100",
    "cheapest A100 except aws",
    "cheapest H100 on aws and gcp top 3",
    "cheapest A100 80GB on aws under $3/GPU-hour",
    "最便宜的H100整机每小时价格",
    "cheapest L4 in every region on gcp",
    "cheapest T4 spot per hour for the whole instance",
    "compare A100 and H100 on aws under $4/GPU-hour",
    "compare H100 on aws and azure",
    "recommend 8 GPUs with NVLink to train a 70B model",
    "@gpubot which gpu to fine-tune a 13B model? cheap please",
    "recommend a gpu for 7B inference in europe under $1/GPU-hour",
    "推理用什么卡最便宜，7B模型",
    "best gpu for training a 7B model on spot",
    "tco 4x T4 on aws for a month reserved",
    "total cost of 4x A100 spot for 720 hours with 500 GB storage",
    "should I use spot or on-demand for 8x A100 for a week?",
    "8卡H100跑两周，竞价还是按需划算",
    "tco 2x L4 in europe for 200 hours",
    "top 200 cheapest H100",
    "最便宜的A100前100个",
]

CHILD = """
import json, os, statistics, sys, time
os.environ["GPUBOT_ANSWER_CACHE"] = "0"
from bot.pipeline import answer
from knowledge.kb.opener import open_kb
kb = open_kb()
answer(sys.argv[1], kb)  # imports, the vocabulary, pydantic schemas: not what a question costs
out = {}
for question in json.loads(sys.argv[2]):
    samples = []
    for _ in range(int(sys.argv[3])):
        for memo in ("spec.errata_scores", "pitfalls.search"):  # per-question memos: a question never asked
            kb.__dict__.get("_memo", {}).pop(memo, None)
        started, cpu = time.perf_counter(), time.process_time()
        answer(question, kb)
        samples.append((time.perf_counter() - started, time.process_time() - cpu))
    out[question] = [statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)]
print(json.dumps(out))
"""

DUMP = """
import json, os, sys
os.environ["GPUBOT_ANSWER_CACHE"] = "0"
from bot.pipeline import answer
from bot.render import answer_json
from knowledge.kb.opener import open_kb
from knowledge.numbers import finite
kb = open_kb()
for question in json.loads(sys.argv[1]):  # what `gpubot ask QUESTION --json` prints
    print(f"### {question}")
    print(json.dumps(finite(answer_json(answer(question, kb), False)), ensure_ascii=False, indent=2, allow_nan=False))
"""


def env_for(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "DATABASE_URL")}
    return {**env, "GPUBOT_HOME": str(home), "GPUBOT_ANSWER_CACHE": "0"}


def make_homes(folder: Path, rows: int, tree: Path | None = None) -> dict[str, Path]:
    """{"bundled": home, "big": home}, built (by source tree `tree`) unless `folder` already holds them."""
    homes = {"bundled": folder / "bundled", "big": folder / "big"}
    if not (homes["bundled"] / "kb.db").exists():
        homes["bundled"].mkdir(parents=True, exist_ok=True)
        timed(["kb", "build"], env_for(homes["bundled"]), tree)
    if not (homes["big"] / "imported").exists():
        shutil.rmtree(homes["big"], ignore_errors=True)
        homes["big"].mkdir(parents=True)
        env = {**env_for(homes["big"]), "GPUBOT_IMPORT_MAX_ROWS": str(rows + 10)}
        catalog = big_catalog(folder / "big.csv", rows)
        timed(["kb", "build"], env, tree)
        timed(["kb", "import", str(catalog), "--provider", "bigcloud", "--as-of", "2026-11-30"], env, tree)
        (homes["big"] / "imported").write_text(f"{rows} rows\n", encoding="utf-8")
        catalog.unlink()
    return homes


def offers_in(home: Path) -> int:
    import sqlite3

    with sqlite3.connect(f"file:{home / 'kb.db'}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM offers").fetchone()[0]


def in_process(home: Path, repeat: int, tree: Path | None = None) -> dict[str, list[float]]:
    """{question: [median wall, median CPU seconds] of parse + answer} in one child process on `home` (of source
    tree `tree`)."""
    questions = json.dumps([q for _, q in QUESTIONS])
    env = env_for(home) if tree is None else {**env_for(home), "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, WARM_UP, questions, str(repeat)],
        env=env,
        cwd=tree or ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def whole_process(homes: dict[str, Path], runs: int, tree: Path | None = None) -> dict[str, dict[str, list[float]]]:
    """{home name: {question: [median wall, median CPU seconds] of `gpubot ask QUESTION`}}, the homes alternating."""
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {name: {q: [] for _, q in QUESTIONS} for name in homes}
    for home in homes.values():  # once each, unmeasured: the history cache, the OS's file cache
        timed(["ask", WARM_UP], env_for(home), tree)
    for _ in range(runs):
        for _, question in QUESTIONS:
            for name, home in homes.items():
                shutil.rmtree(home / "cache" / "answers", ignore_errors=True)
                samples[name][question].append(timed(["ask", question], env_for(home), tree))
    return {
        name: {q: [statistics.median(x[0] for x in s), statistics.median(x[1] for x in s)] for q, s in by_q.items()}
        for name, by_q in samples.items()
    }


def dump(homes: dict[str, Path], folder: Path, tree: Path | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, home in homes.items():
        done = subprocess.run(
            [sys.executable, "-c", DUMP, json.dumps(DUMP_QUESTIONS)],
            env=env_for(home) if tree is None else {**env_for(home), "PYTHONPATH": str(tree)},
            cwd=tree or ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        (folder / f"{name}.txt").write_text(done.stdout, encoding="utf-8")
        print(f"{folder / name}.txt: {len(DUMP_QUESTIONS)} answers, {offers_in(home)} offers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs per question and home")
    parser.add_argument("--repeat", type=int, default=7, help="in-process answers per question and home")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--homes", metavar="DIR", type=Path, help="keep (and reuse) the two homes in DIR")
    parser.add_argument("--dump", metavar="DIR", type=Path, help="write the --json answers of DUMP_QUESTIONS")
    parser.add_argument("--tree", metavar="TREE", type=Path, help="measure this source tree instead")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tree = args.tree.resolve() if args.tree else None
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree or ROOT)], capture_output=True)  # .pyc
    with tempfile.TemporaryDirectory() as tmp:
        homes = make_homes((args.homes or Path(tmp)).resolve(), args.rows, tree)
        if args.dump:
            dump(homes, args.dump, tree)
            return
        load_before = os.getloadavg()
        started = time.perf_counter()
        inproc = {name: in_process(home, args.repeat, tree) for name, home in homes.items()}
        whole = whole_process(homes, args.runs, tree)
        summary = {
            "tree": str(tree or ROOT),
            "offers": {name: offers_in(home) for name, home in homes.items()},
            "questions": [
                {
                    "intent": intent,
                    "question": q,
                    "in_process_ms": {name: round(inproc[name][q][0] * 1000, 1) for name in homes},
                    "in_process_ratio": round(inproc["big"][q][0] / inproc["bundled"][q][0], 2),
                    "in_process_cpu_ms": {name: round(inproc[name][q][1] * 1000, 1) for name in homes},
                    "in_process_cpu_ratio": round(inproc["big"][q][1] / max(inproc["bundled"][q][1], 1e-9), 2),
                    "whole_process_ms": {name: round(whole[name][q][0] * 1000) for name in homes},
                    "whole_process_ratio": round(whole["big"][q][0] / whole["bundled"][q][0], 2),
                    "whole_process_cpu_ms": {name: round(whole[name][q][1] * 1000) for name in homes},
                    "whole_process_cpu_ratio": round(whole["big"][q][1] / max(whole["bundled"][q][1], 1e-9), 2),
                }
                for intent, q in QUESTIONS
            ],
            "load_average": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
            "seconds": round(time.perf_counter() - started),
        }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return
    offers = summary["offers"]
    print(f"offers: bundled {offers['bundled']}, big {offers['big']}; in process median of {args.repeat}, "
          f"whole process median of {args.runs}")  # fmt: skip
    print(f"{'question':38} {'in-proc wall / CPU ms':>41} {'whole wall / CPU ms':>37}")
    print(f"{'':38} {'bundled':>7} {'big':>7} {'ratio':>5} {'bundled':>7} {'big':>7} {'ratio':>5} "
          f"{'bundled':>6} {'big':>6} {'ratio':>5} {'bundled':>6} {'big':>6} {'ratio':>5}")  # fmt: skip
    for row in summary["questions"]:
        ip, ic, wp, wc = (row[k] for k in ("in_process_ms", "in_process_cpu_ms", "whole_process_ms",
                                           "whole_process_cpu_ms"))  # fmt: skip
        print(
            f"{row['question']:38} {ip['bundled']:7.1f} {ip['big']:7.1f} {row['in_process_ratio']:5.2f} "
            f"{ic['bundled']:7.1f} {ic['big']:7.1f} {row['in_process_cpu_ratio']:5.2f} "
            f"{wp['bundled']:6d} {wp['big']:6d} {row['whole_process_ratio']:5.2f} "
            f"{wc['bundled']:6d} {wc['big']:6d} {row['whole_process_cpu_ratio']:5.2f}"
        )
    print(f"load average {summary['load_average'][0]} before, {summary['load_average'][1]} after; "
          f"{summary['seconds']} s")  # fmt: skip


if __name__ == "__main__":
    main()
