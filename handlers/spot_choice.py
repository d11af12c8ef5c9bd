"""spot or on-demand for a job: both priced for the job (every region, the interruption risk priced in), and
which to take. Reached through `tco` when the question weighs the two (`handlers/parse/reroute.py`)."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class _Pair:
    """The job's two options as priced (label, Tco), either possibly missing, in `currency` over `hours`; `what`:
    the job as the title names it; `cloud`: the spot option's provider as the reply names it."""

    spot: tuple[str, Tco] | None
    od: tuple[str, Tco] | None
    currency: str
    hours: float
    what: str
    cloud: str


def handle(query: Query, kb: KB) -> Answer:
    """spot or on-demand [gpu | instance type] [for N days]: both priced for the job, with the interruption risk"""
    lang = query.language
    notes, suggestions = name_notes(query)
    asked = query
    if not query.instance_types and not query.gpus:
        query = query.model_copy(update={"gpus": [DEFAULT_GPU], "gpu_count": query.gpu_count or DEFAULT_COUNT})
        notes.append(t("spot.default_gpu", lang, count=query.gpu_count, gpu=DEFAULT_GPU))
    hours = query.duration_hours or DEFAULT_HOURS
    priced = subjects(query, kb)
    if not priced or not (priced[0]["on_demand"] or priced[0]["spot"]):  # reserved prices only: nothing to weigh
        return _none(asked, query, notes, suggestions)
    fx, cands = kb.fx(), priced[0]
    base = (cands["on_demand"] or cands["spot"])[0]
    currency = query.currency or base["currency"]
    facts = {**query_facts(query), "topic": None}
    spot = best_option(kb, query, cands, "spot", hours, currency, fx, facts)
    od = best_option(kb, query, cands, "on_demand", hours, currency, fx, {})
    options = [o for o in (od, spot) if o]
    if not options:  # never: an on-demand or spot row always prices (tco_model.best_option)
        return _none(asked, query, notes, suggestions)
    what = ", ".join(query.instance_types[:1]) or f"{query.gpu_count or 1:g}x {query.gpus[0]}"
    cloud = provider_name(kb, facts.get("option_provider") or base["provider"], lang)  # the spot option's cloud
    pair = _Pair(spot, od, currency, hours, what, cloud)
    title, best = _verdict(query, pair, facts)
    fired = R.evaluate(facts, lang, groups=("cost", "spot"))
    return Answer(
        query=asked,
        title=title,
        tco=od[1] if od else None,
        tco_options=[spot[1]] if spot and od else ([spot[1]] if spot else []),
        lines=_risk_lines(pair, facts, lang),
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=sources(priced),
        extra={"tco_best": best[1].pricing, "tco_labels": {option.pricing: label for label, option in options}},
    )


def _none(asked: Query, query: Query, notes: list[str], suggestions: list[str]) -> Answer:
    """Nothing to weigh for the instance types or GPUs of `query` (`asked`: the question as asked)."""
    what = ", ".join(query.instance_types or query.gpus)
    return Answer(query=asked, title=t("tco.none", query.language, what=what), notes=notes, suggestions=suggestions)


def _verdict(query: Query, pair: _Pair, facts: dict) -> tuple[str, tuple[str, Tco]]:
    """The title and the option to take: spot when it saves and the job may be interrupted, else on demand; the one
    option there is when the other has no price."""
    lang, spot, od = query.language, pair.spot, pair.od
    if spot and od:
        saving = 100 * (1 - spot[1].total / od[1].total) if od[1].total else 0.0
        take_spot = saving > 0 and not no_interruptions(query)
        # "the interruption risk priced in" only where interruption data exists for that cloud (issue 26)
        key = ("verdict.spot" if facts.get("spot_bucket") else "verdict.spot_list") if take_spot else "verdict.spot_od"
        title = t(
            key,
            lang,
            what=pair.what,
            hours=pair.hours,
            spot=money(spot[1].total, pair.currency),
            spot_where=spot[0],
            od=money(od[1].total, pair.currency),
            od_where=od[0],
            pct=abs(saving),
            cloud=pair.cloud,
        )
        return title, spot if take_spot else od
    only = od or spot
    assert only is not None  # the handler answers only with one of them
    total = money(only[1].total, pair.currency)
    return t("verdict.spot_only", lang, what=pair.what, hours=pair.hours, option=only[0], total=total), only


def _risk_lines(pair: _Pair, facts: dict, lang: str) -> list[str]:
    """The interruption risk priced in (its bucket, expected interruptions over the job, source), or that the spot
    option's cloud has no interruption data."""
    if facts.get("spot_bucket"):
        return [
            t(
                "spot.risk_line",
                lang,
                bucket=facts["spot_bucket"],
                subject=facts.get("spot_subject", ""),
                n=facts.get("interruptions_per_month", 0) * pair.hours / R.HOURS_PER_MONTH,
                source=facts.get("spot_source", ""),
                as_of=facts.get("spot_as_of", ""),
            )
        ]
    if pair.spot:
        return [t("spot.no_risk_data", lang, option=pair.spot[0], cloud=pair.cloud)]
    return []
