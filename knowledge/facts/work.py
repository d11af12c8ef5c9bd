"""The cost of the work: dollars per million output tokens, from measured benchmarks and catalog prices.

`usd_per_million = price_per_hour / (output tokens/s x 3600) x 1e6`. Tokens/s come from `llm_benchmarks`
(`knowledge/facts/benchmarks.py`); the price always comes from the knowledge base's offers, never from the benchmark
file: the instance type's cheapest region for the pricing asked. A GCP machine type that the catalog does not
offer as such (`g2-standard-16`: SkyPilot prices 1x L4 on `g2-standard-4`) is priced as GCP bills it: its
accelerator row plus the host row of that very machine type, same zone (`catalog_rows`). Prices are what the rest
of gpubot ranks: orderable offers only (`knowledge.catalog.availability`; an instance type orderable nowhere asked is
counted in `Ranking.excluded`), and composed GCP prices go through the same availability rules and two-source rule
(`knowledge.catalog.crosscheck`) as the catalog's offers.

Rows the benchmark measured are `basis: "measured"`. A model size nobody measured gets `estimate: ...` rows,
scaled from the nearest measured model size on the same instance; estimates are never mixed into a measured
ranking.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from knowledge.catalog import availability, crosscheck
from knowledge.facts.benchmarks import SOURCE, ModelEntry, models
from knowledge.facts.reference import host_rules

__all__ = [
    "STEPS",
    "WORKLOADS",
    "USABLE_MEMORY",
    "Ranking",
    "cheapest_offers",
    "cost_per_token",
    "entry",
    "measured",
    "nearest_model",
    "priced_row",
    "rank",
    "sibling",
    "usd_per_million",
    "weights_gb",
]

WORKLOADS = {"chat": "chat-256-128", "rag": "rag-1024-256", "long": "long-4096-512"}
STEPS = ("max_throughput", "synchronous", "single_stream")
SINGLE_STREAM_WORKLOAD = "tg128"
_ROLES = {
    "max_throughput": ("max_throughput", "synchronous+max_throughput"),
    "synchronous": ("synchronous", "synchronous+max_throughput"),
}
_SAME_SIZE = 0.05  # a size within 5% of a measured model's is that model ("a 70B model" = Llama-3.3-70B)
USABLE_MEMORY = 0.9  # share of GPU memory an estimate may assume the weights can use


@dataclass(slots=True)
class Ranking:
    """Rows cheapest first (the JSON `work` rows), their details (same order), and what could not be priced."""

    rows: list[dict] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)
    unpriced: list[str] = field(default_factory=list)
    measured_on: list[str] = field(default_factory=list)  # every instance type measured (before filters)
    excluded: list[dict] = field(default_factory=list)  # not orderable at this pricing: [{reason, availability,
    # count, instance_types}], as `availability.excluded_counts` (count = instance types left out)
    skipped: dict[str, list[str]] = field(default_factory=dict)  # estimates: why -> "provider instance" left out

    def sort(self) -> Ranking:
        """Cheapest per 1M tokens first (rows and their details kept in step)."""
        order = sorted(
            range(len(self.rows)), key=lambda i: (self.rows[i]["usd_per_million_tokens"], self.rows[i]["instance_type"])
        )
        self.rows, self.details = [self.rows[i] for i in order], [self.details[i] for i in order]
        return self


def usd_per_million(price_per_hour: float, tokens_per_s: float) -> float:
    return price_per_hour / (tokens_per_s * 3600) * 1e6


def entry(name: str | None) -> ModelEntry | None:
    return next((m for m in models() if m.name == name), None)


def nearest_model(size_b: float, benchmark: str = "vllm_serving") -> tuple[ModelEntry, bool]:
    """The measured model nearest `size_b` (log scale) and whether it counts as the same size."""
    pool = [m for m in models() if m.benchmark == benchmark]
    best = min(pool, key=lambda m: abs(math.log(m.params_b / size_b)))
    return best, abs(best.params_b - size_b) <= _SAME_SIZE * size_b


def sibling(model: ModelEntry, benchmark: str) -> ModelEntry | None:
    """The same model measured by the other benchmark (Phi-4 <-> Phi-4 GGUF), if any."""
    return next(
        (
            m
            for m in models()
            if m.benchmark == benchmark
            and m.family == model.family
            and m.version == model.version
            and abs(m.params_b - model.params_b) <= _SAME_SIZE * model.params_b
        ),
        None,
    )


def measured(kb, model: str, workload: str, step: str) -> list[dict]:
    """Benchmark rows of one model (benchmark id), one per instance type (llama.cpp: full offload preferred)."""
    if step == "single_stream":
        rows = kb.rows(
            "SELECT * FROM llm_benchmarks WHERE model = ? AND workload = ? "
            "ORDER BY strategy != 'single-stream/full', tokens_per_s DESC",
            (model, SINGLE_STREAM_WORKLOAD),
        )
    else:
        roles = _ROLES[step]
        rows = kb.rows(
            "SELECT * FROM llm_benchmarks WHERE model = ? AND workload = ? AND step_role IN (?, ?) "
            "ORDER BY tokens_per_s DESC",
            (model, workload, *roles),
        )
    seen: dict[tuple[str, str], dict] = {}
    for row in rows:
        seen.setdefault((row["vendor"], row["instance_type"]), row)
    return list(seen.values())


def _gcp_accelerator(instance_type: str) -> str | None:
    """The accelerator a GCP machine series carries (`g2-standard-16` -> L4), from the fixed host rules."""
    series = instance_type.rsplit("-", 1)[0]
    return next(
        (
            r.accelerator
            for r in host_rules()
            if r.provider == "gcp" and r.accelerator_count != "*" and r.host_instance_type.rsplit("-", 1)[0] == series
        ),
        None,
    )


def _gcp_composed(kb, instance_type: str, gpu_count: float, pricing: str, regions: list[str]) -> list[dict]:
    """Accelerator row + this machine type's host row, same zone, cheapest zone per region: the price GCP bills,
    as offers that went through the same checks as the catalog's (availability rules, the two-source rule)."""
    accelerator = _gcp_accelerator(instance_type)
    if accelerator is None or pricing not in ("on_demand", "spot"):
        return []
    column = "price" if pricing == "on_demand" else "spot_price"
    where = f" AND a.region IN ({','.join('?' * len(regions))})" if regions else ""
    found = kb.rows(
        f"SELECT a.{column} + h.{column} AS usd, a.region, a.zone, a.line AS acc_line, h.line AS host_line "
        "FROM catalog_rows a JOIN catalog_rows h ON h.provider = 'gcp' AND h.instance_type = ? AND h.zone = a.zone "
        "WHERE a.provider = 'gcp' AND COALESCE(a.instance_type, '') = '' AND a.accelerator = ? "
        f"AND ABS(a.accelerator_count - ?) < 1e-6 AND a.{column} IS NOT NULL AND h.{column} IS NOT NULL{where} "
        "ORDER BY usd, a.region, a.zone",
        (instance_type, accelerator, gpu_count, *regions),
    )
    ref = kb.rows(
        "SELECT gpu, source, as_of, as_of_known FROM offers WHERE provider = 'gcp' AND kind = 'catalog' "
        "AND accelerator = ? LIMIT 1",
        (accelerator,),
    )
    if not found or not ref:
        return []
    offers: dict[str, dict] = {}
    for hit in found:  # cheapest first: the first zone of each region
        offers.setdefault(
            hit["region"],
            {
                "provider": "gcp",
                "instance_type": instance_type,
                "region": hit["region"],
                "zone": hit["zone"],
                "pricing": pricing,
                "kind": "catalog",
                "gpu": ref[0]["gpu"],
                "gpu_count": gpu_count,
                "price_per_hour_usd": hit["usd"],
                "source": ref[0]["source"],
                "as_of": ref[0]["as_of"],
                "as_of_known": None if ref[0]["as_of_known"] is None else bool(ref[0]["as_of_known"]),
                "note": f"{accelerator} x{gpu_count:g} (gcp_vms.csv line {hit['acc_line']}) + {instance_type} host "
                f"(gcp_host_vms.csv line {hit['host_line']}), {hit['zone']}",
            },
        )
    composed = list(offers.values())
    availability.apply(composed)
    crosscheck.apply(composed, [])  # re-prices (and re-sources) where Google's billing catalog is trusted
    return sorted(composed, key=lambda o: (o["price_per_hour_usd"], o["region"]))


def _prices(
    kb, benches: list[dict], pricing: str, regions: list[str]
) -> tuple[dict[tuple[str, str], dict], dict[tuple[str, str], dict]]:
    """((provider, instance type) -> its cheapest orderable offer, (provider, instance type) -> one offer of each
    instance type listed at this pricing model but orderable nowhere asked), for all the benchmarked types at once."""
    types = sorted({b["instance_type"] for b in benches})
    if not types:
        return {}, {}
    where = f" AND region IN ({','.join('?' * len(regions))})" if regions else ""
    found: dict[tuple[str, str], dict] = {}
    blocked: dict[tuple[str, str], dict] = {}  # listed at this pricing model, but cannot be ordered so
    for offer in kb.rows(
        f"SELECT * FROM offers WHERE instance_type IN ({','.join('?' * len(types))}) AND pricing = ? "
        f"AND kind IN ('catalog', 'pricing'){where} ORDER BY price_per_hour_usd, region",
        (*types, pricing, *regions),
    ):
        key = (offer["provider"], offer["instance_type"])
        if availability.orderable(offer):  # never rank what cannot be ordered
            found.setdefault(key, offer)
        else:
            blocked.setdefault(key, offer)
    for b in benches:
        key = (b["vendor"], b["instance_type"])
        if key not in found and key not in blocked and b["vendor"] == "gcp":
            composed = _gcp_composed(kb, b["instance_type"], b["gpu_count"], pricing, regions)
            if ok := [o for o in composed if availability.orderable(o)]:
                found[key] = ok[0]
            elif composed:
                blocked[key] = composed[0]
    return found, {k: v for k, v in blocked.items() if k not in found}


cheapest_offers = _prices  # the same pricing for other measured sources (MLPerf: knowledge.facts.train_cost, ...)


def priced_row(bench: dict, offer: dict, basis: str, tokens_per_s: float, step: str) -> tuple[dict, dict]:
    price = offer["price_per_hour_usd"]
    strategy = bench["strategy"] if step == "single_stream" else step
    row = {
        "provider": offer["provider"],
        "instance_type": bench["instance_type"],
        "region": offer["region"],
        "pricing": offer["pricing"],
        "gpu": offer["gpu"],
        "gpu_count": offer["gpu_count"],
        "gpus_used": bench["gpus_used"],
        "model": bench["model"],
        "quantization": bench["quantization"],
        "workload": bench["workload"],
        "strategy": strategy,
        "tokens_per_s": round(tokens_per_s, 3),
        "price_per_hour_usd": price,
        "usd_per_million_tokens": round(usd_per_million(price, tokens_per_s), 4),
        "basis": basis,
        "benchmark_source": bench["source"],
        "run_date": bench["run_date"],
        "source": offer["source"],
        "as_of": offer["as_of"],
    }
    if other := offer.get("other_prices"):  # the two GCP sources disagree: the other figure, and which one ranks
        row |= {
            "other_prices": json.loads(other) if isinstance(other, str) else other,
            "price_trust_reason": offer.get("price_trust_reason"),
        }
    detail = {
        k: bench.get(k)
        for k in (
            "framework",
            "framework_version",
            "gpu_model",
            "concurrency",
            "max_num_seqs",
            "ttft_p50_ms",
            "ttft_p95_ms",
            "tpot_p50_ms",
            "tpot_p95_ms",
        )
    }
    detail |= {
        "zone": offer.get("zone"),
        "currency": offer.get("currency") or "USD",
        "price_per_hour": offer.get("price_per_hour", price),
        "price_note": offer.get("note"),
    }
    return row, detail


def _bytes_per_param(quantization: str | None, benchmark: str) -> float:
    """Weight bytes per parameter: 4-bit (bitsandbytes, GGUF Q4_K_M) or 16-bit."""
    return 0.5 if "4bit" in (quantization or "").lower() or benchmark == "llama_bench" else 2.0


def weights_gb(model: ModelEntry) -> float:
    """GB the model's weights take in GPU memory, as benchmarked (4-bit or 16-bit)."""
    return model.params_b * _bytes_per_param(model.model, model.benchmark)


def _fits(size_b: float, ref: dict) -> bool:
    need = size_b * _bytes_per_param(ref["quantization"], ref["benchmark"])
    return need <= USABLE_MEMORY * (ref["gpu_memory_gb"] or 0) * (ref["gpus_used"] or 1)


def rank(
    kb,
    *,
    model: ModelEntry | None,
    size_b: float | None = None,
    workload: str = "chat-256-128",
    step: str = "max_throughput",
    pricing: str = "on_demand",
    providers: Iterable[str] = (),
    regions: Iterable[str] = (),
    gpus: Iterable[str] = (),
    instance_types: Iterable[str] = (),
) -> Ranking:
    """$ per 1M output tokens per instance type, cheapest first.

    With `model`, the rows are its measurements. With only `size_b` (no measured model of that size), each
    instance type's nearest measured model size is scaled by the parameter ratio and labelled `estimate`.
    """
    providers, regions, instance_types = list(providers), list(regions), {i.lower() for i in instance_types}
    gpu_families = {g.split()[0].lower() for g in gpus}
    if model is None and not size_b:
        return Ranking()
    pairs = _measurements(kb, model, size_b or 1.0, workload, step)
    result = Ranking(measured_on=sorted({f"{b['vendor']} {b['instance_type']}" for b, _ in pairs}))
    pairs = [
        (b, r)
        for b, r in pairs
        if (not providers or b["vendor"] in providers)
        and (not instance_types or b["instance_type"].lower() in instance_types)
    ]
    prices, blocked = _prices(kb, [b for b, _ in pairs], pricing, regions)
    left_out: list[dict] = []
    for bench, ref in pairs:
        offer = prices.get((bench["vendor"], bench["instance_type"]))
        if offer is None and (gone := blocked.get((bench["vendor"], bench["instance_type"]))):
            if not gpu_families or gone["gpu"].split()[0].lower() in gpu_families:
                left_out.append(gone)
            continue
        if offer is None:
            result.unpriced.append(f"{bench['vendor']} {bench['instance_type']}")
            continue
        if gpu_families and offer["gpu"].split()[0].lower() not in gpu_families:
            continue
        tokens, basis = bench["tokens_per_s"], "measured"
        if model is None and size_b:
            tokens, basis = _scaled_by_size(ref, size_b)
        row, detail = priced_row(bench, offer, basis, tokens, step)
        result.rows.append(row)
        result.details.append(detail)
    result.excluded = _excluded(left_out)
    return result.sort()


def _measurements(kb, model: ModelEntry | None, size_b: float, workload: str, step: str) -> list[tuple[dict, dict]]:
    """(benchmark row, reference row) pairs: the model's measurements (each its own reference), or without a
    model, per instance type the measured model nearest in size among those whose weights fit (with `_params`)."""
    if model is not None:
        return [(b, b) for b in measured(kb, model.model, workload, step)]
    benchmark = "llama_bench" if step == "single_stream" else "vllm_serving"
    by_instance: dict[tuple[str, str], list[dict]] = {}
    for m in models():
        if m.benchmark != benchmark:
            continue
        for b in measured(kb, m.model, workload, step):
            by_instance.setdefault((b["vendor"], b["instance_type"]), []).append(b | {"_params": m.params_b})
    pairs = []
    for found in by_instance.values():
        if fitting := [b for b in found if _fits(size_b, b)]:
            ref = min(fitting, key=lambda b: abs(math.log(b["_params"] / size_b)))
            pairs.append((ref, ref))
    return pairs


def _scaled_by_size(ref: dict, size_b: float) -> tuple[float, str]:
    """Tokens/s of a `size_b` model estimated from the reference measurement by the parameter ratio, and its basis."""
    tokens = ref["tokens_per_s"] * ref["_params"] / size_b
    basis = (
        f"estimate: {ref['model']} ({ref['_params']:g}B) measured {ref['tokens_per_s']:g} tok/s on "
        f"this instance, scaled by the parameter ratio {ref['_params']:g}/{size_b:g}"
    )
    return tokens, basis


def _excluded(left_out: list[dict]) -> list[dict]:
    """`availability.excluded_counts` of the offers left out, each reason with the instance types it left out."""
    return [
        e
        | {
            "instance_types": sorted(
                f"{o['provider']} {o['instance_type']}"
                for o in left_out
                if (o.get("availability_reason") or o.get("availability")) == e["reason"]
            )
        }
        for e in availability.excluded_counts(left_out)
    ]


def cost_per_token(
    kb,
    *,
    model: str | None = None,
    model_size_b: float | None = None,
    gpus: Iterable[str] = (),
    instance_types: Iterable[str] = (),
    pricing: str | None = None,
) -> dict | None:
    """For recommend/compare: measured $ per 1M output tokens (vLLM, chat, max throughput) of `model`, else of the
    measured model of `model_size_b`, else Llama-3.1-8B, on the GPUs or instance types asked.

    Returns {"model", "rows", "source"} (`rows` as in `rank`, measured only, never estimates), or None when no
    model of that size is measured or nothing asked is measured."""
    found_model = entry(model)
    if found_model is None and model_size_b:
        nearest, same = nearest_model(model_size_b)
        found_model = nearest if same else None
        if found_model is None:
            return None
    found_model = found_model or entry("Llama-3.1-8B")
    if found_model is None or found_model.benchmark != "vllm_serving":
        return None
    found = rank(kb, model=found_model, pricing=pricing or "on_demand", gpus=gpus, instance_types=instance_types)
    return {"model": found_model.name, "rows": found.rows, "source": SOURCE} if found.rows else None
