"""In-process latency per intent: parse + resolve + answer (`bot.pipeline.answer`) on the full knowledge base.

    .venv/bin/python benchmarks/bench_answer.py [--repeat 30]

For each intent, several real questions (English and Chinese) are answered `--repeat` times each, twice:
"uncached" with the answer cache off (GPUBOT_ANSWER_CACHE=0: every answer computed, what a question asked for the
first time costs) and "cached" (the default: the same question again on the same knowledge base). Prints p50 and
p99 in ms per intent, and checks that each question is understood as the intent it stands for. Uses the knowledge
base in $GPUBOT_HOME (built there if missing); without GPUBOT_HOME it builds one into a temporary folder.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUESTIONS: dict[str, list[str]] = {
    "cheapest": [
        "cheapest A100 spot",
        "cheapest 8x H100 on aws",
        "最便宜的H100按需实例",
        "cheapest L4 on gcp",
        "cheapest A10 on alibaba",
        "cheapest T4 spot on alibaba",
    ],
    "price": [
        "price of p4d.24xlarge",
        "price of p4d.24xlarge reserved 1 year in us-east-1",
        "g5.xlarge 一小时多少钱",
        "price of Standard_NC80adis_H100_v5",
    ],
    "compare": ["a100 vs h100", "compare p4d.24xlarge and p5.48xlarge", "H100 和 H200 对比"],
    "spec": ["spec of H100", "A100 80GB fp8 tflops", "H200 显存多大"],
    "recommend": [
        "recommend a gpu for 70B inference",
        "which gpu should we use to fine-tune a 7B model",
        "训练70B模型推荐什么卡",
    ],
    "tco": [
        "tco 8x h100 for 1 month on aws",
        "total cost of 4x A100 spot for 720 hours with 500 GB storage",
        "8卡A100一个月总成本",
    ],
    "pitfalls": ["pitfalls spot on aws", "hidden costs of egress", "竞价实例有什么坑"],
    "checklist": ["checklist 8x A100 spot on aws", "checklist before buying H100 on azure"],
    "digest": ["digest", "what changed in gpu prices this week"],
    "history": ["price history of H100 spot on aws", "A100 price trend"],
    "help": ["help", "flibber jabber wocky"],
    "work": [
        "cost per million tokens for Llama 3.1 8B",
        "cheapest way to serve llama 8b rag",
        "用Llama 3.1 8B做在线推理，每百万token成本最低的是哪家？",
        "$/token for a 13B model",
        "cost per million tokens for Llama 2 70B",  # MLPerf Inference rows only (issue 27)
    ],
    "train_cost": [  # issue 27: MLPerf Training v5.1 time-to-train x catalog prices
        "cost to fine-tune Llama 2 70B with LoRA",
        "how much to pretrain Llama 3.1 8B on B200",
        "训练Llama 3.1 8B要花多少钱",
    ],
    "rent_or_api": [  # issue 27: API list prices vs measured self-hosting
        "self-host Llama 3.1 8B or use an API?",
        "Llama 70B: rent GPUs or pay per token?",
        "自己部署还是用API",
        "we serve 50M tokens a day of Llama 3.1 8B, rent or API?",
    ],
}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def measure(repeat: int = 30) -> dict[str, dict]:
    """{intent: {"uncached": (p50, p99), "cached": (p50, p99), "n": samples, "misparsed": [...]}} in ms."""
    if not os.environ.get("GPUBOT_HOME"):
        os.environ["GPUBOT_HOME"] = tempfile.mkdtemp(prefix="gpubot-bench-")
    from bot.pipeline import answer, understand
    from handlers import cache
    from knowledge.kb.opener import open_kb

    kb = open_kb()
    for texts in QUESTIONS.values():  # warm up: imports, vocabulary, per-KB caches, pydantic schemas
        for text in texts:
            answer(text, kb)
    out: dict[str, dict] = {}
    for intent, texts in QUESTIONS.items():
        expected = {intent, "unknown"} if intent == "help" else {intent}  # gibberish is "unknown": help answers
        misparsed = [t for t in texts if understand(t, kb).intent not in expected]
        row: dict = {"n": repeat * len(texts), "misparsed": misparsed}
        for mode in ("uncached", "cached"):
            os.environ["GPUBOT_ANSWER_CACHE"] = "0" if mode == "uncached" else "512"
            samples = []
            gc.collect()
            for _ in range(repeat):
                for text in texts:
                    if mode == "uncached":  # a question never asked before: no per-question memo either
                        for memo in ("spec.errata_scores", "pitfalls.search"):
                            kb.__dict__.get("_memo", {}).pop(memo, None)
                    started = time.perf_counter_ns()
                    answer(text, kb)
                    samples.append((time.perf_counter_ns() - started) / 1e6)
            row[mode] = (statistics.median(samples), percentile(samples, 99))
        out[intent] = row
    os.environ.pop("GPUBOT_ANSWER_CACHE", None)
    cache.clear()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON (for benchmarks/run.py)")
    args = parser.parse_args()
    results = measure(args.repeat)
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'intent':10} {'questions':>9} {'uncached p50':>13} {'p99':>7} {'cached p50':>11} {'p99':>7}   (ms)")
    for intent, row in results.items():
        print(
            f"{intent:10} {len(QUESTIONS[intent]):9} {row['uncached'][0]:13.2f} {row['uncached'][1]:7.2f} "
            f"{row['cached'][0]:11.3f} {row['cached'][1]:7.3f}"
            + (f"   misparsed: {row['misparsed']}" if row["misparsed"] else "")
        )


if __name__ == "__main__":
    main()
