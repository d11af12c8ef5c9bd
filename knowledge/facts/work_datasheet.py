"""Datasheet estimates of the cost of the work: the machines of a GPU with no priced measurement of the model,
their tokens/s scaled from a measured machine of as many GPUs by the datasheet memory bandwidth
(`rank_by_datasheet`; rows as `knowledge.facts.work.rank`'s, labelled `estimate: ...`)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from knowledge.catalog.current import GPU_ONLY
from knowledge.facts.benchmarks import ModelEntry
from knowledge.facts.work import USABLE_MEMORY, Ranking, measured, priced_row, weights_gb

__all__ = ["rank_by_datasheet"]

_MAX_BANDWIDTH_RATIO = 2.0  # an estimate scales a measurement by at most this memory-bandwidth ratio, either way


def _spec_model(bench: dict, spec_of: dict[str, str]) -> str | None:
    """The datasheet model of the GPU a benchmark ran on: its instance type's catalog model, else the reviewed
    mapping of its cloud (`accelerators.csv`: GCP's H100 is the SXM5 80GB), else the name the benchmark reported."""
    from knowledge.catalog.identity import identify

    if model := spec_of.get(bench["instance_type"]):
        return model
    family = identify("", bench["gpu_model"] or "").family
    return identify(bench["vendor"], family, bench["instance_type"]).model if family else None


def _skip(result: Ranking, why: str, name: str) -> None:
    if name not in result.skipped.setdefault(why, []):
        result.skipped[why].append(name)


def rank_by_datasheet(
    kb,
    *,
    model: ModelEntry,
    gpus: Iterable[str],
    workload: str = "chat-256-128",
    step: str = "max_throughput",
    pricing: str = "on_demand",
    providers: Iterable[str] = (),
    regions: Iterable[str] = (),
    limit: int = 10,
) -> Ranking:
    """Machines of a GPU with no priced measurement of the model: labelled estimates. LLM decode streams every
    weight from GPU memory per token, so throughput is bandwidth-bound: tokens/s = the model's measured
    whole-machine row with as many GPUs (same layout) on the GPU of nearest datasheet bandwidth (the same GPU when
    measured), x this GPU's bandwidth / that one's, a ratio of at most `_MAX_BANDWIDTH_RATIO` either way; only where
    the weights fit. `skipped`: machines left out, by why: "too_small" (weights do not fit), "other_count" (no
    measurement with that many GPUs), "far" (none within the ratio), "no_variant" (no datasheet bandwidth)."""
    from knowledge.kb.reader import GpuRef

    bandwidth, refs = _bandwidth_refs(kb, model, workload, step)
    result = Ranking()
    if not refs:
        return result
    need_gb = weights_gb(model) / USABLE_MEMORY
    seen: set[str] = set()
    for offer in kb.offers(
        gpus=[GpuRef.parse(g) for g in gpus],
        pricing=pricing,
        providers=providers,
        regions=regions,
        kinds=("catalog", "pricing"),
        orderable=True,
    ):
        target = bandwidth.get(offer["gpu_model"])
        if offer["instance_type"] in seen or offer["vgpu"] or GPU_ONLY in offer["instance_type"]:
            continue  # a GPU-only figure (no host VM) is not what a user pays
        name = f"{offer['provider']} {offer['instance_type']}"
        if target is None:  # the catalog does not say which variant (no datasheet bandwidth)
            _skip(result, "no_variant", name)
            continue
        close = _close_refs(offer, refs, bandwidth, target, need_gb)
        if isinstance(close, str):
            _skip(result, close, name)
            continue
        if len(seen) >= limit:
            continue  # every machine is still classified above, so the counts of those skipped are whole
        seen.add(offer["instance_type"])
        row, detail = _by_bandwidth(offer, close, bandwidth, target, step)
        result.rows.append(row)
        result.details.append(detail)
    return result.sort()


def _bandwidth_refs(kb, model: ModelEntry, workload: str, step: str) -> tuple[dict[str, float], list[tuple[dict, str]]]:
    """The datasheet memory bandwidth per GPU model, and the model's whole-machine measurements with the datasheet
    model of the GPU each ran on (those with a known bandwidth)."""
    bandwidth = {
        r["model"]: r["memory_bandwidth_gbps"]
        for r in kb.rows("SELECT model, memory_bandwidth_gbps FROM gpu_specs WHERE memory_bandwidth_gbps > 0")
    }
    whole = [b for b in measured(kb, model.model, workload, step) if b["gpus_used"] == b["gpu_count"]]
    types = sorted({b["instance_type"] for b in whole})
    spec_of = (
        {
            r["instance_type"]: r["gpu_model"]
            for r in kb.rows(
                f"SELECT DISTINCT instance_type, gpu_model FROM offers WHERE instance_type IN ({','.join('?' * len(types))}) "  # noqa: E501
                "AND gpu_model IS NOT NULL",
                types,
            )
        }
        if types
        else {}
    )
    return bandwidth, [(b, spec) for b in whole if (spec := _spec_model(b, spec_of)) and bandwidth.get(spec)]


def _close_refs(
    offer: dict, refs: list[tuple[dict, str]], bandwidth: dict[str, float], target: float, need_gb: float
) -> list[tuple[dict, str]] | str:
    """The measurements an estimate for `offer` (its GPU's bandwidth `target`) may scale: as many GPUs, bandwidth
    within the ratio, weights fitting; else why there is none ("too_small", "other_count", "far")."""
    same_count = [r for r in refs if abs(r[0]["gpu_count"] - offer["gpu_count"]) < 1e-6]
    close = [r for r in same_count if abs(math.log(bandwidth[r[1]] / target)) <= math.log(_MAX_BANDWIDTH_RATIO)]
    if (offer["gpu_memory_gb"] or 0) * offer["gpu_count"] < need_gb or not close:
        return "too_small" if same_count and close else "other_count" if not same_count else "far"
    return close


def _by_bandwidth(
    offer: dict, close: list[tuple[dict, str]], bandwidth: dict[str, float], target: float, step: str
) -> tuple[dict, dict]:
    """The row and details of `offer` estimated from the closest measurement (same GPU first), scaled by the
    datasheet bandwidth ratio."""
    ref, ref_gpu = min(close, key=lambda r: (abs(math.log(bandwidth[r[1]] / target)), r[1] != offer["gpu_model"]))
    tokens = ref["tokens_per_s"] * target / bandwidth[ref_gpu]
    basis = (
        f"estimate: {ref['model']} measured {ref['tokens_per_s']:g} tok/s on {ref_gpu} ({ref['vendor']} "
        f"{ref['instance_type']}), scaled by datasheet memory bandwidth "
        f"{target:g}/{bandwidth[ref_gpu]:g} GB/s"
    )
    return priced_row({**ref, "instance_type": offer["instance_type"]}, offer, basis, tokens, step)
