"""Measured LLM inference benchmarks (Spare Cores, CC BY-SA 4.0): loaded into the knowledge base at build.

`data/benchmarks/llm_inference.csv` has one row per metric; `tables()` pivots the rows a cost-per-token answer
needs into `llm_benchmarks`, one row per (instance type, model, workload, step): the output tokens/s and, for
vLLM, TTFT/TPOT percentiles. Only the vLLM synchronous and max-throughput steps and the llama.cpp `tg128`
single-stream decode rows are kept. `models()` is the lexicon of benchmarked models (`data/benchmarks/models.csv`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

from knowledge.paths import DATA_DIR

__all__ = ["ATTRIBUTION", "BENCH_DIR", "SOURCE", "SOURCE_DATE", "ModelEntry", "models", "tables"]

BENCH_DIR = DATA_DIR / "benchmarks"
SOURCE = "Spare Cores sc-inspector-data @804d3c71ddae (CC BY-SA 4.0)"
SOURCE_DATE = "2026-08-22"  # the source commit's date
ATTRIBUTION = (
    'LLM benchmark data: Spare Cores, "sc-inspector-data" (https://github.com/SpareCores/sc-inspector-data), '
    "commit 804d3c71ddae, licensed CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/). Modified: "
    "GPU-mode results selected, reshaped to one row per metric, values rounded to 6 significant digits."
)
_KEEP = (
    "vendor",
    "instance_type",
    "gpu_model",
    "gpu_count",
    "gpu_memory_gb",
    "gpus_used",
    "framework",
    "framework_version",
    "benchmark",
    "model",
    "model_params_b",
    "quantization",
    "max_num_seqs",
    "workload",
    "strategy",
    "concurrency",
    "step_role",
    "run_date",
)
_NUMERIC = frozenset({"gpu_count", "gpu_memory_gb", "gpus_used", "model_params_b", "max_num_seqs", "concurrency"})
_LATENCY = frozenset({"ttft_p50_ms", "ttft_p95_ms", "tpot_p50_ms", "tpot_p95_ms"})
_TOKENS = frozenset({"output_tokens_per_s", "generation_tokens_per_s"})


@dataclass(frozen=True, slots=True)
class ModelEntry:
    """A benchmarked model: `name` is what a Query carries, `model` the benchmark's own id."""

    name: str
    family: str
    version: str
    params_b: float
    benchmark: str
    model: str
    aliases: tuple[str, ...]
    note: str


@cache
def models() -> tuple[ModelEntry, ...]:
    with (BENCH_DIR / "models.csv").open(encoding="utf-8", newline="") as handle:
        return tuple(
            ModelEntry(
                r["name"],
                r["family"],
                r["version"],
                float(r["params_b"]),
                r["benchmark"],
                r["model"],
                tuple(a.strip() for a in r["aliases"].split("|") if a.strip()),
                r["note"],
            )
            for r in csv.DictReader(handle)
        )


def tables() -> dict[str, list[dict]]:
    """`{"llm_benchmarks": rows}`: one row per measured step, with its tokens/s and the source line of that figure."""
    steps: dict[tuple, dict] = {}
    with (BENCH_DIR / "llm_inference.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        col = {name: i for i, name in enumerate(next(reader))}
        metric, value, bench, role, workload = (
            col[k] for k in ("metric", "value", "benchmark", "step_role", "workload")
        )
        keep = [(k, col[k], k in _NUMERIC) for k in _KEEP]
        key_cols = [col[k] for k in ("vendor", "instance_type", "model", "workload", "step_role", "strategy")]
        for row in reader:
            name = row[metric]
            if row[bench] == "vllm_serving":
                if row[role] == "other" or (name not in _TOKENS and name not in _LATENCY):
                    continue
            elif row[workload] != "tg128" or name != "generation_tokens_per_s":
                continue
            key = tuple(row[i] for i in key_cols)
            step = steps.get(key)
            if step is None:
                step = steps[key] = {
                    k: (float(row[i]) if numeric and row[i] else row[i] or None) for k, i, numeric in keep
                }
            if name in _TOKENS:
                step["tokens_per_s"] = float(row[value])
                step["source"] = row[col["source"]]
            else:
                step[name] = float(row[value])
    rows = [s for s in steps.values() if "tokens_per_s" in s]
    for step in rows:
        for name in _LATENCY:
            step.setdefault(name, None)
    return {"llm_benchmarks": rows}
