"""rent_or_api: rent GPUs or pay an API per token, for one model, from list prices and measured throughput.

Pure over (Query, KB): API list prices from `api_prices` (LiteLLM, through the reviewed alias table), the measured
self-hosted $ per 1M output tokens from `knowledge.facts.work.rank` (Spare Cores, stock vLLM), the break-even from
`knowledge.facts.rent_or_api`. The MLPerf-tuned rows (`knowledge.facts.mlperf_serving`) are shown beside, not used in
the verdict (another dataset, another input/output mix). JSON: `extra["rent_or_api"]` = {"model", "workload",
"input_per_output", "pricing", "api", "rentals", "mlperf", "verdict", "usage"}.
"""

from __future__ import annotations

from handlers.display import both, for_query
from handlers.i18n import scoped, t
from handlers.models import Answer, Query, Source
from knowledge.facts import mlperf_serving, work
from knowledge.facts import rent_or_api as roa
from knowledge.facts.api_prices import SOURCE as API_SOURCE
from knowledge.facts.api_prices import SOURCE_DATE as API_DATE
from knowledge.facts.api_prices import SOURCE_URL as API_URL
from knowledge.facts.benchmarks import ATTRIBUTION, SOURCE, SOURCE_DATE
from knowledge.facts.mlperf import INFERENCE_DATE, INFERENCE_SOURCE

phrase = scoped("api")


def _priced_models(kb) -> list[str]:
    return [r["model"] for r in kb.rows("SELECT DISTINCT model FROM api_prices ORDER BY model")]


def _model(query: Query, kb) -> tuple[str | None, list[str]]:
    """(model name, notes): the model asked (a size read as the measured model of that size), or Llama 3.1 8B."""
    lang = query.language
    if query.model:
        return query.model, []
    if query.issues and any(i.kind == "model" for i in query.issues):
        return None, []
    if query.model_size_b:
        nearest, same = work.nearest_model(query.model_size_b)
        return (nearest.name, []) if same else (None, [])
    return "Llama-3.1-8B", [phrase("default_model", lang, model="Llama-3.1-8B")]


def _unknown(query: Query, kb, model: str | None) -> Answer:
    lang = query.language
    asked = next((i.text for i in query.issues if i.kind == "model"), None) or model
    asked = asked or (f"{query.model_size_b:g}B" if query.model_size_b else "?")
    priced = _priced_models(kb)
    return Answer(
        query=query,
        title=phrase("unknown", lang, text=asked),
        lines=[phrase("which", lang, models=", ".join(priced))],
        suggestions=priced,
        sources=[Source(source=API_SOURCE, as_of=API_DATE), Source(source=SOURCE, as_of=SOURCE_DATE)],
        extra={"rent_or_api": None},
    )


def _rental(row: dict, lang: str) -> dict:
    return row | {"basis_label": t("work.basis.measured", lang) + " (Spare Cores, vLLM)"}


def _title(model: str, verdict: dict, pricing: str, lang: str) -> str:
    api, rent = verdict["cheapest_api"], verdict["cheapest_rental"]
    if api is None or rent is None:
        return phrase("no_verdict", lang, model=model, api="—" if api is None else api["api_model_id"],
                      rent="—" if rent is None else f"{rent['provider']} {rent['instance_type']}")  # fmt: skip
    values = {"model": model, "api": api["api_model_id"], "api_usd": api["usd_per_million_output"],
              "rent": f"{rent['provider']} {rent['instance_type']}", "rent_usd": rent["usd_per_million_tokens"],
              "pricing": t(f"pricing.{pricing}", lang)}  # fmt: skip
    if verdict["api_cheaper_at_any_load"]:
        return phrase("title_api", lang, **values)
    return phrase("title_rent", lang, u=verdict["break_even_utilisation"], **values)


def _usage_line(usage: dict, lang: str) -> str:
    rent = usage["rent"]
    return phrase(
        "usage",
        lang,
        per_day=usage["tokens_per_day"] / 1e6,
        api=usage["api"] or "—",
        api_month=usage["api_usd_per_month"] or 0.0,
        n=rent["instances"] if rent else 0,
        instance=f"{rent['provider']} {rent['instance_type']}" if rent else "—",
        rent_month=rent["usd_per_month"] if rent else 0.0,
        util=rent["utilisation"] if rent else 0.0,
    )


def handle(query: Query, kb) -> Answer:
    """rent or api <model> [rag|long context] [spot] [N tokens a day]: self-host or pay per token, break-even

    e.g. `self-host Llama 3.1 8B or use an API?`, `Llama 70B: rent GPUs or pay per token?`, `自己部署还是用API`."""
    lang = query.language
    model, notes = _model(query, kb)
    entry = work.entry(model)
    if model is None or entry is None or model not in _priced_models(kb):
        return _unknown(query, kb, model)
    workload = query.bench_workload or "chat-256-128"
    pricing = query.pricing or "on_demand"
    mix = roa.MIX[workload]
    found = work.rank(kb, model=entry, workload=workload, pricing=pricing, providers=query.providers,
                      regions=query.regions, gpus=query.gpus)  # fmt: skip
    rentals = [_rental(r, lang) for r in found.rows]
    api = roa.api_rows(kb, model, mix, rentals[0]["usd_per_million_tokens"] if rentals else None)
    verdict = roa.verdict(api, rentals)
    tuned = mlperf_serving.rank(kb, work_model=model, pricing=pricing, providers=query.providers, regions=query.regions)
    usage = roa.monthly(query.tokens_per_day, verdict["cheapest_api"], rentals) if query.tokens_per_day else None
    notes += [phrase("formula", lang, mix=mix, workload=workload), phrase("unknowns", lang)]
    notes += [phrase("attribution", lang, url=API_URL), ATTRIBUTION]
    return Answer(
        query=query,
        title=_title(entry.name, verdict, pricing, lang),
        lines=_lines(query, kb, api, tuned, usage),
        notes=notes,
        sources=_sources(rentals, tuned),
        extra={
            "rent_or_api": {
                "model": model,
                "workload": workload,
                "input_per_output": mix,
                "pricing": pricing,
                "api": api,
                "rentals": rentals,
                "mlperf": tuned,
                "verdict": verdict,
                "usage": usage,
            },
        },  # fmt: skip
    )


def _lines(query: Query, kb, api: list[dict], tuned: list[dict], usage: dict | None) -> list[str]:
    """The API prices flagged (never the verdict's), MLPerf's tuned serving figure, and the monthly usage asked."""
    lang = query.language
    lines = []
    if flagged := [a for a in api if not a["usable"]]:
        lines.append(
            phrase(
                "flagged",
                lang,
                items=", ".join(f"{a['api_model_id']} ({t('api.flag.' + a['flag'], lang)})" for a in flagged),
            )
        )
    if tuned:
        best = tuned[0]
        lines.append(phrase("tuned", lang, instance=f"{best['provider']} {best['instance_type']}",
                            usd=both(best["usd_per_million_tokens"], for_query(query, kb),
                                     said=f"${best['usd_per_million_tokens']:.4f}"),
                            scenario=best["scenario"], precision=best["precision"],
                            id=best["result_id"], label=t("mlperf.label_inference", lang)))  # fmt: skip
    if usage:
        lines.append(_usage_line(usage, lang))
    return lines


def _sources(rentals: list[dict], tuned: list[dict]) -> list[Source]:
    """The API price list's and the benchmark's sources, MLPerf's when its figures are shown, each row's price."""
    sources = [Source(source=API_SOURCE, as_of=API_DATE), Source(source=SOURCE, as_of=SOURCE_DATE)]
    if tuned:
        sources.append(Source(source=INFERENCE_SOURCE, as_of=INFERENCE_DATE))
    for row in rentals + tuned:
        if (source := Source(source=row["source"], as_of=row["as_of"])) not in sources:
            sources.append(source)
    return sources
