"""MLPerf Training v5.1 and Inference v5.1 cloud results, loaded into the knowledge base at build.

`data/mlperf/training_v5.1/` and `data/mlperf/inference_v5.1/` are byte-identical copies of the shared extraction
(see their READMEs: provenance, method, MLPerf messaging rules). Two reviewed mapping files join them to what gpubot
can price:

- `training_systems.csv`: system JSON -> provider, instance type, nodes, GPUs per node (a blank instance type:
  nobody rents that system by the hour in the bundled catalogs, so it is shown unpriced);
- `inference_systems.csv`: system JSON -> provider, instance type, GPUs used;
- `training_benchmarks.csv`: what each training benchmark trains and to which quality target;
- `inference_models.csv`: MLPerf model id -> model name, and the Spare Cores model it is the same model as.

`tables()` gives `mlperf_training` (one row per system x benchmark, from the summary CSV) and `mlperf_inference`
(one row per result x scenario). Prices are never here: they come from the offers at answer time. Every figure
derived from them carries the label of the phrases `mlperf.label_training` / `mlperf.label_inference`
("derived from MLPerf ... results; not verified by MLCommons", the MLPerf Results Messaging Guidelines).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache

from knowledge.paths import DATA_DIR

__all__ = [
    "INFERENCE_DATE",
    "INFERENCE_SOURCE",
    "INFERENCE_URL",
    "MLPERF_DIR",
    "TRAINING_DATE",
    "TRAINING_SOURCE",
    "TRAINING_URL",
    "TrainingBenchmark",
    "inference_models",
    "tables",
    "training_benchmarks",
]

MLPERF_DIR = DATA_DIR / "mlperf"
TRAINING_URL = "https://github.com/mlcommons/training_results_v5.1/tree/441d65f4445cd59687466533fd9f55399136e7a4"
INFERENCE_URL = "https://github.com/mlcommons/inference_results_v5.1/tree/965182b03376a00fcae415c54e560e1c83937932"
TRAINING_SOURCE = (
    "MLPerf Training v5.1 results, mlcommons/training_results_v5.1 @441d65f (Apache-2.0; "
    "https://mlcommons.org/benchmarks/training/)"
)
INFERENCE_SOURCE = (
    "MLPerf Inference v5.1 results, mlcommons/inference_results_v5.1 @965182b (MLPerf Results Messaging "
    "Guidelines; https://mlcommons.org/benchmarks/inference-datacenter/)"
)
TRAINING_DATE = "2026-01-12"  # the results repository commit (runs: October 2025)
INFERENCE_DATE = "2025-09-09"


@dataclass(frozen=True, slots=True)
class TrainingBenchmark:
    """An MLPerf Training benchmark: what it trains, on what, to which quality target."""

    benchmark: str
    name: str
    name_zh: str
    task: str
    task_zh: str
    dataset: str
    quality_target: str
    aliases: tuple[str, ...]
    source: str


def _read(path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@cache
def training_benchmarks() -> tuple[TrainingBenchmark, ...]:
    return tuple(
        TrainingBenchmark(
            r["benchmark"],
            r["name"],
            r["name_zh"],
            r["task"],
            r["task_zh"],
            r["dataset"],
            r["quality_target"],
            tuple(a.strip() for a in r["aliases"].split("|") if a.strip()),
            r["source"],
        )
        for r in _read(MLPERF_DIR / "training_benchmarks.csv")
    )


@cache
def inference_models() -> dict[str, dict[str, str]]:
    """MLPerf model id -> {"model", "same_as_work_model", "note"}."""
    return {r["mlperf_model"]: r for r in _read(MLPERF_DIR / "inference_models.csv")}


def _training_rows() -> list[dict]:
    systems = {r["system_json"]: r for r in _read(MLPERF_DIR / "training_systems.csv")}
    rows = []
    for r in _read(MLPERF_DIR / "training_v5.1" / "training_v5.1_cloud_summary.csv"):
        system = systems[r["system_json"]]  # every system is mapped (tests/test_mlperf_data.py)
        folder = r["system_json"].replace("/systems/", "/results/").removesuffix(".json") + "/" + r["benchmark"]
        rows.append(
            {
                "submitter": r["submitter"],
                "system_json": r["system_json"],
                "system_name": r["system_name"],
                "benchmark": r["benchmark"],
                "nodes": int(r["number_of_nodes"]),
                "gpus_per_node": int(r["accelerators_per_node"]),
                "accelerator": r["accelerator_model_name"],
                "gpu": system["gpu"],
                "framework": r["framework"],
                "runs": int(r["successful_runs"]),
                "minutes": float(r["computed_mean_minutes"]),
                "min_minutes": float(r["min_run_minutes"]),
                "median_minutes": float(r["median_run_minutes"]),
                "max_minutes": float(r["max_run_minutes"]),
                "mean_method": r["mean_method"],
                "scaling_factor": float(r["rcp_scaling_factor"]) if r["rcp_scaling_factor"] else None,
                "provider": system["provider"],
                "instance_type": system["instance_type"] or None,
                "mapping_source": system["source"],
                "results_url": f"{TRAINING_URL}/{folder}",
            }
        )
    return rows


def _inference_rows() -> list[dict]:
    systems = {r["system_json"]: r for r in _read(MLPERF_DIR / "inference_systems.csv")}
    models = inference_models()
    rows = []
    for r in _read(MLPERF_DIR / "inference_v5.1" / "inference_v5.1_cloud_llm.csv"):
        system = systems[r["system_json"]]
        gpus = int(r["Nodes"]) * int(r["a#"])
        rows.append(
            {
                "result_id": r["ID"],
                "submitter": r["Submitter"],
                "system_name": r["System"].strip(),
                "system_json": r["system_json"],
                "availability": r["Availability"],
                "accelerator": r["Accelerator"],
                "nodes": int(r["Nodes"]),
                "gpus": gpus,
                "mlperf_model": r["Model"],
                "model": models[r["Model"]]["model"],
                "work_model": models[r["Model"]]["same_as_work_model"] or None,
                "scenario": r["Scenario"],
                "tokens_per_s": float(r["Performance_Result"]),
                "tokens_per_s_per_gpu": float(r["Performance_Result"]) / gpus,  # derived
                "precision": r["weight_data_types"],
                "software": r["Software"],
                "accuracy": r["Accuracy"],
                "provider": system["provider"],
                "instance_type": system["instance_type"] or None,
                "gpus_used": int(system["gpus_used"]),
                "mapping_source": system["source"],
                "results_url": f"{INFERENCE_URL}/{r['Location']}",
            }
        )
    return rows


def tables() -> dict[str, list[dict]]:
    """`{"mlperf_training": rows, "mlperf_inference": rows}` for the knowledge-base build."""
    return {"mlperf_training": _training_rows(), "mlperf_inference": _inference_rows()}
