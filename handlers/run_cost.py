"""The estimated cost of a training run, for ranking multi-GPU training options by what the run costs rather than
by the cluster's $/hour.

Basis (stated in every answer that uses it):
    training compute  C = 6 * N * D FLOPs            (N parameters, D tokens; Kaplan et al. 2020, "Scaling Laws")
    tokens            D = 20 * N unless the question says ("on 2T tokens"); Hoffmann et al. 2022 ("Chinchilla")
    throughput        the GPU's datasheet dense BF16 (else FP16) peak x MFU, MFU = 40 % (an assumption: large
                      runs report roughly 35-55 %)
    GPU-hours         C / (throughput * 3600); run cost = GPU-hours * the option's price per GPU-hour as rented
                      (whole instances: cluster price / GPUs in the cluster)
"""

from __future__ import annotations

from handlers.models import Query

TOKENS_PER_PARAM = 20.0
MFU = 0.40


def applies(query: Query, needed_max: int) -> bool:
    """Multi-GPU training of a model of known size, not ranked for raw performance."""
    return (
        query.workload == "training"
        and bool(query.model_size_b)
        and needed_max > 1
        and query.priority in (None, "cost")
    )


def tokens(query: Query) -> tuple[float, bool]:
    """(training tokens, said in the question?)"""
    if query.train_tokens:  # "on 2T tokens", read by the parser
        return query.train_tokens, True
    return TOKENS_PER_PARAM * (query.model_size_b or 0) * 1e9, False


def estimate(query: Query, tflops: float, instances: int, gpus_per_instance: float, hourly: float) -> dict | None:
    """GPU-hours, wall-clock hours and cost of the run on one option (`hourly`: the whole cluster, USD)."""
    if not tflops or not instances or not hourly:
        return None
    flops = 6 * (query.model_size_b or 0) * 1e9 * tokens(query)[0]
    gpu_hours = flops / (tflops * 1e12 * MFU * 3600)
    gpus = instances * gpus_per_instance
    wall = gpu_hours / gpus
    return {"gpu_hours": gpu_hours, "wall_hours": wall, "cost": wall * hourly, "gpus": gpus}
