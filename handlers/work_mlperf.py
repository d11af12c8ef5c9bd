"""The `work` answer's second measured source: MLPerf Inference v5.1 cloud rows, shown beside the Spare Cores rows.

`beside(kb, query, model, pricing)` gives what `handlers.work` adds to an answer about a model both sources measured
(Llama 3.1 8B): `extra["mlperf_serving"]` rows (`knowledge.facts.mlperf_serving.rank`), a note on why the two
differ, the systems MLPerf measured that cannot be priced here, and the MLPerf source. `only(query, kb)` answers a
model only MLPerf measured ("cost per million tokens for Llama 2 70B"): its MLPerf rows and nothing else, never a
Spare Cores model of the same size.
"""

from __future__ import annotations

from handlers.i18n import t
from handlers.models import Answer, Query, Source
from knowledge.facts import mlperf_serving
from knowledge.facts.mlperf import INFERENCE_DATE, INFERENCE_SOURCE, INFERENCE_URL, inference_models

__all__ = ["beside", "only"]


def _notes(rows: list[dict], unpriced: list[dict], lang: str) -> list[str]:
    notes = []
    if rows:
        precision = "/".join(sorted({r["precision"] for r in rows}))
        scenario = "/".join(s for s in mlperf_serving.SCENARIOS if any(r["scenario"] == s for r in rows))
        notes.append(t("serving.why_differ", lang, precision=precision, scenario=scenario,
                       label=t("mlperf.label_inference", lang)))  # fmt: skip
        notes.append(t("serving.unknowns", lang))
    if unpriced:
        reason = (lambda u: u["reason"]) if lang == "en" else (lambda u: t("train.unmapped", lang))
        items = "; ".join(f"{u['system']} ({u['result_id']}): {reason(u)}" for u in unpriced)
        notes.append(t("serving.unpriced", lang, items=items))
    return notes


def beside(kb, query: Query, model: str, pricing: str) -> tuple[list[dict], list[str], list[Source]]:
    """(MLPerf rows, notes, sources) for a model the Spare Cores benchmarks measured too (none when MLPerf did not)."""
    if query.bench_step == "single_stream":
        return [], [], []
    rows = mlperf_serving.rank(
        kb, work_model=model, pricing=pricing, providers=query.providers, regions=query.regions, gpus=query.gpus
    )
    unpriced = mlperf_serving.unpriced(kb, work_model=model)
    if not rows and not unpriced:
        return [], [], []
    sources = [Source(source=INFERENCE_SOURCE, as_of=INFERENCE_DATE)]
    for row in rows:
        if (source := Source(source=row["source"], as_of=row["as_of"])) not in sources:
            sources.append(source)
    return rows, _notes(rows, unpriced, query.language), sources


def only(query: Query, kb) -> Answer | None:
    """The answer for a model only MLPerf Inference measured, or None when the query names no such model."""
    if not query.mlperf_model:
        return None
    lang, pricing = query.language, query.pricing or "on_demand"
    name = inference_models()[query.mlperf_model]["model"]
    rows = mlperf_serving.rank(
        kb,
        mlperf_model=query.mlperf_model,
        pricing=pricing,
        providers=query.providers,
        regions=query.regions,
        gpus=query.gpus,
    )
    unpriced = mlperf_serving.unpriced(kb, mlperf_model=query.mlperf_model)
    label = t(f"pricing.{pricing}", lang)
    elsewhere: list[str] = []  # the GPUs it was measured on, when the question's GPU is not one of them
    if not rows and query.gpus:
        others = mlperf_serving.rank(
            kb, mlperf_model=query.mlperf_model, pricing=pricing, providers=query.providers, regions=query.regions
        )
        elsewhere = sorted({r["gpu"].split(" ")[0] for r in others if r["gpu"]})
    if elsewhere:
        title = t("serving.not_on_gpu", lang, model=name, gpus=", ".join(query.gpus), measured=", ".join(elsewhere))
    elif rows:
        best = rows[0]
        where = f"{best['provider']} {best['instance_type']}"
        title = t("serving.title", lang, model=name, pricing=label, instance=where, usd=best["usd_per_million_tokens"],
                  scenario=best["scenario"], precision=best["precision"])  # fmt: skip
    else:
        title = t("serving.none", lang, model=name, pricing=label)
    sources = [Source(source=INFERENCE_SOURCE, as_of=INFERENCE_DATE)]
    for row in rows:
        if (source := Source(source=row["source"], as_of=row["as_of"])) not in sources:
            sources.append(source)
    notes = [t("serving.only", lang, model=name, note=inference_models()[query.mlperf_model]["note"])]
    notes += _notes(rows, unpriced, lang) + [t("serving.attribution", lang, url=INFERENCE_URL)]
    return Answer(
        query=query,
        title=title,
        notes=notes,
        sources=sources,
        extra={"work": [], "work_details": [], "mlperf_serving": rows},
    )
