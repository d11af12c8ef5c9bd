"""Serving cost as MLPerf Inference v5.1 measured it: $ per 1M output tokens on the cloud systems gpubot can price.

`usd_per_million = instance price per hour / (whole-system tokens/s x 3600) x 1e6`, the same formula as the Spare
Cores rows (`knowledge.facts.work`), priced the same way (the instance type's cheapest orderable region for the
pricing asked). The system -> instance type mapping is the reviewed `knowledge/data/mlperf/inference_systems.csv`;
a system mapped to no instance type is listed in `unpriced`. Per-GPU tokens/s are derived (system / GPUs).

These rows are `basis: "measured (MLPerf Inference v5.1, <scenario>)"`: vendor-tuned stacks (TensorRT-LLM, fp4 on
Blackwell, fp8 on Hopper) on MLPerf's own datasets, never mixed silently with the Spare Cores rows (stock vLLM,
bf16, a fixed prompt/answer length).
"""

from __future__ import annotations

from knowledge.facts.work import cheapest_offers, usd_per_million  # priced as the `work` rows are

__all__ = ["SCENARIOS", "basis", "rank", "unpriced"]

SCENARIOS = ("Offline", "Server", "Interactive")


def basis(scenario: str) -> str:
    return f"measured (MLPerf Inference v5.1, {scenario})"


def _rows(kb, *, mlperf_model: str | None, work_model: str | None) -> list[dict]:
    if mlperf_model:
        return kb.rows("SELECT * FROM mlperf_inference WHERE mlperf_model = ?", (mlperf_model,))
    return kb.rows("SELECT * FROM mlperf_inference WHERE work_model = ? AND work_model IS NOT NULL", (work_model,))


def rank(
    kb,
    *,
    mlperf_model: str | None = None,
    work_model: str | None = None,
    scenarios=SCENARIOS,
    pricing: str = "on_demand",
    providers=(),
    regions=(),
    gpus=(),
) -> list[dict]:
    """Priced MLPerf rows of one MLPerf model (or of the MLPerf model that is `work_model`), cheapest first; `gpus`:
    only machines of these GPU families ("H100", "H100 80GB": the family is the first word)."""
    providers, regions = list(providers), list(regions)
    families = {g.split()[0].lower() for g in gpus if g.strip()}
    runs = [
        r
        for r in _rows(kb, mlperf_model=mlperf_model, work_model=work_model)
        if r["instance_type"] and r["scenario"] in scenarios and (not providers or r["provider"] in providers)
    ]
    benches = [{"vendor": r["provider"], "instance_type": r["instance_type"], "gpu_count": r["gpus"]} for r in runs]
    found, _blocked = cheapest_offers(kb, benches, pricing, regions)
    out = []
    for run in runs:
        offer = found.get((run["provider"], run["instance_type"]))
        if offer is None or (families and (offer["gpu"] or "").split(" ")[0].lower() not in families):
            continue
        price = offer["price_per_hour_usd"]
        out.append(
            {
                "provider": offer["provider"],
                "instance_type": run["instance_type"],
                "region": offer["region"],
                "pricing": offer["pricing"],
                "gpu": offer["gpu"],
                "gpu_count": offer["gpu_count"],
                "gpus_used": run["gpus_used"],
                "model": run["model"],
                "mlperf_model": run["mlperf_model"],
                "scenario": run["scenario"],
                "precision": run["precision"],
                "software": run["software"],
                "result_id": run["result_id"],
                "submitter": run["submitter"],
                "system_name": run["system_name"],
                "tokens_per_s": run["tokens_per_s"],
                "tokens_per_s_per_gpu": round(run["tokens_per_s_per_gpu"], 3),  # derived
                "price_per_hour_usd": price,
                "usd_per_million_tokens": round(usd_per_million(price, run["tokens_per_s"]), 4),
                "basis": basis(run["scenario"]),
                "results_url": run["results_url"],
                "mapping_source": run["mapping_source"],
                "source": offer["source"],
                "as_of": offer["as_of"],
            }
        )
    return sorted(out, key=lambda r: (r["usd_per_million_tokens"], r["scenario"], r["instance_type"]))


def unpriced(kb, *, mlperf_model: str | None = None, work_model: str | None = None) -> list[dict]:
    """The MLPerf systems of that model mapped to no rentable instance type here (with the mapping's reason)."""
    seen: dict[str, dict] = {}
    for r in _rows(kb, mlperf_model=mlperf_model, work_model=work_model):
        if not r["instance_type"]:
            seen.setdefault(r["system_json"], {"system": f"{r['submitter']} {r['system_name']}",
                                               "reason": r["mapping_source"], "result_id": r["result_id"]})  # fmt: skip
    return list(seen.values())
