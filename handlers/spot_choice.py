"""spot or on-demand for a job: both priced for the job (every region, the interruption risk priced in), and
which to take. Reached through `tco` when the question weighs the two (`handlers/parse/reroute.py`)."""

from __future__ import annotations

from handlers.common import money, name_notes
from handlers.i18n import t
from handlers.i18n_rules import provider_name, rule_hits
from handlers.models import Answer, Query, Tco
from handlers.tco_model import DEFAULT_HOURS, best_option, sources, subjects
from handlers.tco_terms import no_interruptions
from knowledge.facts import rules as R
from knowledge.facts.question_facts import query_facts
from knowledge.kb.reader import KB

DEFAULT_GPU, DEFAULT_COUNT = "H100", 8.0  # a training node, when the question names no GPU


def handle(query: Query, kb: KB) -> Answer:
    """spot or on-demand [gpu | instance type] [for N days]: both priced for the job, with the interruption risk"""
    lang = query.language
    notes, suggestions = name_notes(query)
    asked = query
    if not query.instance_types and not query.gpus:
        query = query.model_copy(update={"gpus": [DEFAULT_GPU], "gpu_count": query.gpu_count or DEFAULT_COUNT})
        notes.append(t("spot.default_gpu", lang, count=query.gpu_count, gpu=DEFAULT_GPU))
    hours = query.duration_hours or DEFAULT_HOURS

    def none() -> Answer:
        what = ", ".join(query.instance_types or query.gpus)
        return Answer(query=asked, title=t("tco.none", lang, what=what), notes=notes, suggestions=suggestions)

    priced = subjects(query, kb)
    if not priced or not (priced[0]["on_demand"] or priced[0]["spot"]):  # reserved prices only: nothing to weigh
        return none()
    fx, cands = kb.fx(), priced[0]
    base = (cands["on_demand"] or cands["spot"])[0]
    currency = query.currency or base["currency"]
    facts = {**query_facts(query), "topic": None}
    spot = best_option(kb, query, cands, "spot", hours, currency, fx, facts)
    od = best_option(kb, query, cands, "on_demand", hours, currency, fx, {})
    what = ", ".join(query.instance_types[:1]) or f"{query.gpu_count or 1:g}x {query.gpus[0]}"
    lines, options, labels = [], [o for o in (od, spot) if o], {}
    if not options:  # never: an on-demand or spot row always prices (tco_model.best_option)
        return none()
    for label, option in options:
        labels[option.pricing] = label
    best: tuple[str, Tco]
    cloud = provider_name(kb, facts.get("option_provider") or base["provider"], lang)  # the spot option's cloud
    if spot and od:
        saving = 100 * (1 - spot[1].total / od[1].total) if od[1].total else 0.0
        take_spot = saving > 0 and not no_interruptions(query)
        # "the interruption risk priced in" only where interruption data exists for that cloud (issue 26)
        key = ("verdict.spot" if facts.get("spot_bucket") else "verdict.spot_list") if take_spot else "verdict.spot_od"
        title = t(
            key,
            lang,
            what=what,
            hours=hours,
            spot=money(spot[1].total, currency),
            spot_where=spot[0],
            od=money(od[1].total, currency),
            od_where=od[0],
            pct=abs(saving),
            cloud=cloud,
        )
        best = spot if take_spot else od
    else:
        only = options[0]  # od or spot
        title = t(
            "verdict.spot_only", lang, what=what, hours=hours, option=only[0], total=money(only[1].total, currency)
        )
        take_spot = only is spot
        best = only
    if facts.get("spot_bucket"):
        lines.append(
            t(
                "spot.risk_line",
                lang,
                bucket=facts["spot_bucket"],
                subject=facts.get("spot_subject", ""),
                n=facts.get("interruptions_per_month", 0) * hours / R.HOURS_PER_MONTH,
                source=facts.get("spot_source", ""),
                as_of=facts.get("spot_as_of", ""),
            )
        )
    elif spot:
        lines.append(t("spot.no_risk_data", lang, option=spot[0], cloud=cloud))
    fired = R.evaluate(facts, lang, groups=("cost", "spot"))
    return Answer(
        query=asked,
        title=title,
        tco=od[1] if od else None,
        tco_options=[spot[1]] if spot and od else ([spot[1]] if spot else []),
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=sources(priced),
        extra={"tco_best": best[1].pricing, "tco_labels": labels},
    )
