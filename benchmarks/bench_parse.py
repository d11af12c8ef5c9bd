"""Parse + name-resolution latency over every test phrasing, on the full knowledge base.

    .venv/bin/python benchmarks/bench_parse.py [--repeat 50]

Uses the knowledge base in $GPUBOT_HOME (built there if missing); without GPUBOT_HOME it builds one into a temporary
folder. Prints the one-off cost of `Vocabulary.from_kb` and the per-message latency (p50, p99, mean, max, in µs)
of `parse(text, vocab)` over the phrasings of tests/test_parse.py and tests/data/heldout_phrasings.yaml.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def phrasings() -> list[str]:
    spec = importlib.util.spec_from_file_location("test_parse", ROOT / "tests" / "test_parse.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    heldout = yaml.safe_load((ROOT / "tests" / "data" / "heldout_phrasings.yaml").read_text(encoding="utf-8"))
    return [c[0] for c in module.CASES] + [c[0] for c in module.DID_YOU_MEAN] + [c["text"] for c in heldout]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="times each phrasing is parsed (default 50)")
    args = parser.parse_args()
    if not os.environ.get("GPUBOT_HOME"):
        os.environ["GPUBOT_HOME"] = tempfile.mkdtemp(prefix="gpubot-bench-")

    from handlers.parse import Vocabulary, parse
    from knowledge.kb.opener import open_kb

    started = time.perf_counter()
    kb = open_kb()
    opened = time.perf_counter() - started
    started = time.perf_counter()
    vocab = Vocabulary.from_kb(kb)
    built = time.perf_counter() - started

    texts = phrasings()
    for text in texts:  # warm caches (name indexes, regex compilation, pydantic model build)
        parse(text, vocab)
    samples: list[float] = []  # wall clock, µs
    cpu: list[float] = []  # this thread's CPU time, µs: unaffected by other processes on a busy machine
    gc.disable()
    try:
        for _ in range(args.repeat):
            for text in texts:
                c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
                parse(text, vocab)
                t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                samples.append((t1 - t0) / 1000)
                cpu.append((c1 - c0) / 1000)
    finally:
        gc.enable()

    per_text = {}
    for i, text in enumerate(texts):
        per_text[text] = statistics.median(samples[i :: len(texts)])
    slowest = sorted(per_text.items(), key=lambda item: -item[1])[:5]

    print(f"knowledge base  {kb.path}  (opened/built in {opened * 1000:.0f} ms)")
    print(
        f"vocabulary      {built * 1000:.0f} ms once per KB: {len(vocab.words)} word keys, {len(vocab.cjk)} "
        f"Chinese phrases, {len(vocab.instance_types)} instance-type keys, {len(vocab.regions)} regions"
    )
    print(f"phrasings       {len(texts)} x {args.repeat} = {len(samples)} parses")
    for label, values in (("parse+resolve", samples), ("  (CPU time)", cpu)):
        print(
            f"{label:<15} p50 {percentile(values, 50):.0f} µs   p99 {percentile(values, 99):.0f} µs   "
            f"mean {statistics.fmean(values):.0f} µs   max {max(values):.0f} µs"
        )
    print("slowest (median µs):")
    for text, micros in slowest:
        print(f"  {micros:6.0f}  {text}")


if __name__ == "__main__":
    main()
