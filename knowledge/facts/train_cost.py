"""What a training run costs: MLPerf Training v5.1 measured time-to-train x the system's hourly price.

`cost = minutes / 60 x nodes x the instance type's hourly price` at its cheapest orderable region for the pricing
asked (the offers of the knowledge base, the same prices every other answer ranks: `work.cheapest_offers`).
`minutes` is the summary's `computed_mean_minutes` (the mean of the runs, fastest and slowest dropped when there are
10): the time the clusters ran, before MLPerf's RCP scaling factor (which is shown, not applied).

Measured rows (`basis: "measured"`) are ranked cheapest first. Estimates are separate (`estimates`): an instance type
nobody submitted, whose GPU is of the same family as a measured system's (Blackwell: B200/GB200; Hopper: H100/H200),
with the same GPUs per node and the same number of nodes as the smallest such run (the same GPU preferred):
minutes x (measured GPU's datasheet dense BF16 TFLOPS / this GPU's). They are never ranked with the measurements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.catalog import availability
from knowledge.catalog.identity import model_name
from knowledge.facts.mlperf import training_benchmarks
from knowledge.facts.work import cheapest_offers  # the cheapest orderable offer per instance type, as `work`

__all__ = ["FAMILIES", "TrainRanking", "rank"]

FAMILIES = (("B200", "GB200"), ("H100", "H200"))  # GPUs whose runs may be scaled to one another by datasheet
_MAX_ESTIMATES = 12


@dataclass(slots=True)
class TrainRanking:
    """Measured rows cheapest first, estimates (cheapest first) and the measured systems that cannot be priced."""

    rows: list[dict] = field(default_factory=list)
    estimates: list[dict] = field(default_factory=list)
    unpriced: list[dict] = field(default_factory=list)
    no_datasheet: list[str] = field(default_factory=list)  # measured GPUs with no datasheet figure to scale from


def _measured(run: dict, offer: dict) -> dict:
    price = offer["price_per_hour_usd"]
    hours = run["minutes"] / 60
    return {
        **{k: run[k] for k in ("benchmark", "submitter", "system_name", "nodes", "gpus_per_node", "gpu", "framework")},
        "provider": offer["provider"],
        "instance_type": run["instance_type"],
        "region": offer["region"],
        "pricing": offer["pricing"],
        "gpus": run["nodes"] * run["gpus_per_node"],
        "minutes": run["minutes"],
        "min_minutes": run["min_minutes"],
        "max_minutes": run["max_minutes"],
        "runs": run["runs"],
        "scaling_factor": run["scaling_factor"],
        "gpu_hours": round(hours * run["nodes"] * run["gpus_per_node"], 3),
        "price_per_hour_usd": price,
        "cost_usd": round(hours * run["nodes"] * price, 2),
        "basis": "measured",
        "quality_target": _targets_of().get(run["benchmark"]),
        "results_url": run["results_url"],
        "source": offer["source"],
        "as_of": offer["as_of"],
    }


def _targets_of() -> dict[str, str]:
    return {b.benchmark: b.quality_target for b in training_benchmarks()}


def _name(run: dict) -> str:
    name = run["system_name"]
    return name if name.lower().startswith(run["submitter"].lower()) else f"{run['submitter']} {name}"


def _bf16(kb) -> dict[str, float]:
    return {
        r["model"]: r["bf16_tflops_dense"]
        for r in kb.rows("SELECT model, bf16_tflops_dense FROM gpu_specs WHERE bf16_tflops_dense > 0")
    }


def _family_spec(kb, gpu: str) -> str | None:
    """The datasheet model of a measured system's GPU (B200 -> 'B200 (HGX B200, per GPU)'; H200 -> the SXM one)."""
    found = kb.rows(
        "SELECT model FROM gpu_specs WHERE family = ? AND bf16_tflops_dense > 0 ORDER BY model LIKE '%SXM%' DESC, "
        "bf16_tflops_dense DESC LIMIT 1",
        (gpu,),
    )
    return found[0]["model"] if found else None


def _targets(kb, gpus: list[str], pricing: str, regions: list[str], providers: list[str]) -> list[dict]:
    """The cheapest orderable offer of every whole-GPU instance type of these GPUs."""
    where = "".join(
        f" AND {col} IN ({','.join('?' * len(vals))})" for col, vals in (("region", regions), ("provider", providers))
        if vals
    )  # fmt: skip
    seen: dict[tuple[str, str], dict] = {}
    for offer in kb.rows(
        f"SELECT * FROM offers WHERE gpu IN ({','.join('?' * len(gpus))}) AND pricing = ? AND vgpu = 0 "
        f"AND kind IN ('catalog', 'pricing') AND gpu_count >= 1{where} ORDER BY price_per_hour_usd, region",
        (*gpus, pricing, *regions, *providers),
    ):
        if availability.orderable(offer):
            seen.setdefault((offer["provider"], offer["instance_type"]), offer)
    return list(seen.values())


def _estimates(kb, runs: list[dict], measured: set, pricing: str, regions, providers) -> tuple[list, list]:
    bf16 = _bf16(kb)
    out: list[dict] = []
    missing: list[str] = []
    for family in FAMILIES:
        refs = [r for r in runs if r["gpu"] in family]
        if not refs:
            continue
        for offer in _targets(kb, list(family), pricing, regions, providers):
            key = (offer["provider"], offer["instance_type"])
            target = bf16.get(offer["gpu_model"] or "")
            fitting = [r for r in refs if r["gpus_per_node"] == offer["gpu_count"]]  # same GPUs per node only
            if key in measured or target is None or not fitting:
                continue
            count = fitting[0]["gpus_per_node"]
            ref = min(fitting, key=lambda r: (r["gpu"] != offer["gpu"], r["nodes"], r["minutes"]))
            ref_spec = _family_spec(kb, ref["gpu"])
            if ref_spec is None:
                continue
            ratio = bf16[ref_spec] / target
            nodes = ref["nodes"]
            minutes = ref["minutes"] * ratio
            row = _measured({**ref, "minutes": minutes, "nodes": nodes, "gpus_per_node": count}, offer)
            row |= {
                "instance_type": offer["instance_type"],
                "gpu": offer["gpu"],
                "basis": (
                    f"estimate: {_name(ref)} measured {ref['minutes']:.1f} min on "
                    f"{ref['nodes'] * ref['gpus_per_node']}x {ref['gpu']}; scaled by datasheet dense BF16 "
                    f"{bf16[ref_spec]:g}/{target:g} TFLOPS "
                    f"({model_name(ref_spec)} / {model_name(offer['gpu_model'])}); "
                    "derived from MLPerf Training v5.1 results; not verified by MLCommons"
                ),
                "reference": _name(ref),
                "ratio": round(ratio, 4),
                "min_minutes": None,
                "max_minutes": None,
                "runs": None,
            }
            out.append(row)
    for run in runs:
        if not any(run["gpu"] in f for f in FAMILIES) and run["gpu"] not in missing:
            missing.append(run["gpu"])
    out.sort(key=lambda r: (r["cost_usd"], r["provider"], r["instance_type"]))
    return out[:_MAX_ESTIMATES], missing


def rank(kb, benchmark: str, *, pricing: str = "on_demand", regions=(), providers=()) -> TrainRanking:
    """Measured training cost of `benchmark` on every priced cloud system, cheapest first, plus labelled estimates."""
    regions, providers = list(regions), list(providers)
    runs = kb.rows("SELECT * FROM mlperf_training WHERE benchmark = ? ORDER BY minutes", (benchmark,))
    result = TrainRanking()
    priced = [r for r in runs if r["instance_type"] and (not providers or r["provider"] in providers)]
    benches = [{"vendor": r["provider"], "instance_type": r["instance_type"], "gpu_count": r["gpus_per_node"]}
               for r in priced]  # fmt: skip
    found, _blocked = cheapest_offers(kb, benches, pricing, regions)
    for run in runs:
        offer = found.get((run["provider"], run["instance_type"])) if run in priced else None
        if offer is None:
            result.unpriced.append(run)
        else:
            result.rows.append(_measured(run, offer))
    result.rows.sort(key=lambda r: (r["cost_usd"], r["minutes"]))
    measured = {(r["provider"], r["instance_type"]) for r in runs if r["instance_type"]}
    result.estimates, result.no_datasheet = _estimates(kb, runs, measured, pricing, regions, providers)
    return result
