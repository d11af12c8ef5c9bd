"""The options recommend weighs: the GPU variants (family, memory GB) a question can use, where to look
(providers, regions), each variant's cheapest orderable cluster within the hourly cap, and the orders they rank in.

Pure over (Query, KB), for `handlers.recommend`."""

from __future__ import annotations

import math

from handlers.i18n_rules import provider_name
from handlers.models import Query
from knowledge.facts import rules as R
from knowledge.facts.question_facts import in_mainland_china
from knowledge.kb import ranks
from knowledge.kb.reader import KB, GpuRef

__all__ = ["DEFAULT_FAMILIES", "hourly_cap", "option", "rank_key", "scope", "variants"]

DEFAULT_FAMILIES = ("H100", "A100", "L40S", "L4", "A10G", "T4")


def variants(kb: KB, query: Query, fired: list[R.Fired], facts: dict) -> list[tuple[str, float]]:
    """(family, memory GB) candidates: the GPUs asked, else the hardware rule's families, minus excluded ones."""
    hardware = R.first(fired, "hardware", "families") or R.first(fired, "hardware", "min_fp64_tflops")
    refs = [GpuRef.parse(g) for g in query.gpus]
    if not refs and hardware and hardware.then.params.get("min_fp64_tflops"):
        threshold = hardware.then.params["min_fp64_tflops"]
        names = [
            r["family"]
            for r in kb.rows(
                "SELECT family, MAX(fp64_tflops) f FROM gpu_specs WHERE fp64_tflops >= ? "
                "AND family IS NOT NULL GROUP BY family ORDER BY f DESC",
                [threshold],
            )
        ]
        facts["fp64_families"] = ", ".join(names)
        refs = [GpuRef(n) for n in names]
    refs = refs or [GpuRef(f) for f in (hardware.then.families if hardware else DEFAULT_FAMILIES)]
    excluded = {f for item in fired for f in item.then.exclude_families}
    variants = []
    for ref in refs:
        if ref.family in excluded and not query.gpus:
            continue
        sizes = (
            [ref.memory_gb]
            if ref.memory_gb
            else [
                r["m"]
                for r in kb.rows(
                    "SELECT DISTINCT gpu_memory_gb m FROM offers WHERE gpu = ? AND vgpu = 0 AND gpu_count >= 1 "
                    "AND kind != 'article' AND gpu_memory_gb IS NOT NULL ORDER BY m",
                    [ref.family],
                )
            ]
        )
        sizes = sizes or [
            r["memory_gb"]
            for r in kb.rows("SELECT DISTINCT memory_gb FROM gpu_specs WHERE family = ?", [ref.family])
            if r["memory_gb"]
        ]
        variants += [(ref.family, float(m)) for m in sizes if m >= (query.min_gpu_memory_gb or 0)]
    return list(dict.fromkeys(variants))


def scope(kb: KB, query: Query, fired: list[R.Fired], facts: dict) -> tuple[list[str], list[str]]:
    """Providers and regions to search: those asked, else a compliance rule's providers in mainland regions."""
    rule = R.first(fired, "priority", "providers")
    if query.providers or not rule:
        return list(query.providers), list(query.regions)
    providers = [p for p in rule.then.providers if p in kb.providers]
    regions = query.regions or [
        r for r, owners in kb.regions.items() if in_mainland_china(r) and owners & set(providers)
    ]
    names = [provider_name(kb, p, query.language) for p in providers]
    facts["compliance_providers"] = ", ".join(names)
    return providers, regions


def _form_factors(kb: KB) -> dict[str, str]:
    """Datasheet model -> form factor, read once per knowledge base (asked for every candidate offer)."""
    return kb.memo(
        "recommend.form_factors",
        lambda: {r["model"]: r["form_factor"] or "" for r in kb.rows("SELECT model, form_factor FROM gpu_specs")},
    )


def hourly_cap(query: Query, kb: KB) -> tuple[str, float] | None:
    """(what it caps, USD) for an hourly budget in the question: per GPU-hour, or the cluster's hour."""
    budget = query.budget
    if not budget or budget.per == "total":
        return None
    return budget.per, budget.usd(kb.fx()) + 1e-9


def option(
    kb: KB,
    variant: tuple[str, float],
    needed: int,
    pricing: str,
    providers: list[str],
    regions: list[str],
    nvlink: bool,
    cap: tuple[str, float] | None = None,
) -> dict:
    """The cheapest way to rent `needed` GPUs of one variant: instances x hourly price (USD), within `cap`."""
    family, memory = variant
    fabric = nvlink and needed > 1  # NVL/PCIe cards are bridged in pairs at most: no 8-GPU NVLink fabric
    rows = ranks.cluster_candidates(  # `spec.whole` offers, within the cap, that can be the cheapest (in SQL)
        kb,
        {"gpus": [GpuRef(family, memory)], "pricing": pricing, "providers": providers, "regions": regions},
        needed,
        gpu_cap=cap[1] if cap and cap[0] == "gpu_hour" else None,
        hour_cap=cap[1] if cap and cap[0] == "instance_hour" else None,
        min_gpus=min(needed, 8) if fabric else None,
        models=[m for m, form in _form_factors(kb).items() if "SXM" in form.upper()] if fabric else None,
    )
    best, hourly, instances = None, math.inf, 0
    for row in rows:
        count = math.ceil(needed / row["gpu_count"])
        cost = count * row["price_per_hour_usd"]
        if cap and cap[0] == "instance_hour" and cost > cap[1]:  # "budget $10/hour": the whole cluster's hour
            continue
        if cost < hourly - 1e-9:
            best, hourly, instances = row, cost, count
    peak = kb.rows(
        "SELECT MAX(COALESCE(bf16_tflops_dense, fp16_tflops_dense)) t, MAX(fp64_tflops) f FROM gpu_specs "
        "WHERE family = ?",
        [family],
    )[0]
    fp64 = peak["f"] or 0.0
    if best and best["gpu_model"]:  # the offer's own model: a PCIe P100 has less FP64 than the SXM2 one
        own = kb.rows("SELECT fp64_tflops f FROM gpu_specs WHERE model = ?", [best["gpu_model"]])
        fp64 = (own[0]["f"] or 0.0) if own else fp64
    elif best:  # the catalog does not say which model (V100 16GB: SXM2 or PCIe): the lowest figure of that size
        low = kb.rows(
            "SELECT MIN(fp64_tflops) f FROM gpu_specs WHERE family = ? AND ABS(memory_gb - ?) < 0.6", [family, memory]
        )[0]["f"]
        fp64 = low if low is not None else fp64
    return {
        "family": family,
        "memory": memory,
        "needed": needed,
        "offer": best,
        "hourly": hourly,
        "instances": instances,
        "tflops": peak["t"] or 0.0,
        "fp64": fp64,
    }


def rank_key(rank_by: str):
    """Options with an offer first; then by throughput, price per FP64 TFLOPS or price (the rule's rank_by)."""

    def key(o: dict) -> tuple:
        if rank_by == "throughput":
            return (o["offer"] is None, -o["tflops"], o["hourly"])
        if rank_by == "fp64_price":
            return (o["offer"] is None, o["hourly"] / o["fp64"] if o["fp64"] else float("inf"), o["hourly"])
        return (o["offer"] is None, o["hourly"], -o["tflops"])

    return key
