"""tco <instance type | gpu> [xN] [hours] [pricing] [storage, egress GB] [CNY]: compute + storage + egress.

Also the two one-figure cost questions: how often a spot type is interrupted (`handlers.interruptions`), and the
break-even utilisation of a reservation (`handlers.break_even`). The cost model is `handlers.tco_model`; what
the question asks beyond the offer (no interruptions, a budget, the job's length) is `handlers.tco_terms`.
"""

from __future__ import annotations

from handlers import spot_risk
from handlers.break_even import (
    break_even,
    break_even_answer,
    break_even_facts,
    break_even_line,
    saving_facts,
    usage_line,
    usage_verdict,
)
from handlers.common import money, name_notes
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.interruptions import interruptions
from handlers.models import PRICINGS, Answer, Query, Tco
from handlers.spec import errata_json, errata_lines, match_errata
from handlers.tco_model import DEFAULT_HOURS, TERMS, best_option, sources, spot_estimate, subjects
from handlers.tco_terms import budget_hours, budget_line, fits, no_interruptions
from knowledge.facts import rules as R
from knowledge.facts.question_facts import query_facts
from knowledge.kb.reader import KB

__all__ = [  # the cost model and the one-figure answers live in their own modules; named here as before
    "DEFAULT_HOURS",
    "TERMS",
    "break_even",
    "break_even_answer",
    "handle",
    "interruptions",
    "saving_facts",
    "spot_estimate",
]


def handle(query: Query, kb: KB) -> Answer:
    """tco <instance type | gpu> [xN] [hours] [pricing] [storage/egress GB] [CNY]: cost breakdown, break-even"""
    if query.topic == "spot_risk":  # "is spot safe on runpod" (the parser's topic)
        return spot_risk.handle(query, kb)
    facts = query_facts(query)
    if no_interruptions(query):  # "the job cannot be interrupted": a constraint, not a question about interruptions
        facts["topic"] = None
    if facts["topic"] == "interruption":
        return interruptions(query, kb, facts)
    if facts["topic"] == "break_even":
        return break_even_answer(query, kb, facts)
    lang = query.language
    notes, suggestions = name_notes(query)
    asked = subjects(query, kb)
    if not asked:
        key = "tco.none" if query.instance_types or query.gpus else "tco.which"
        what = ", ".join(query.instance_types or query.gpus)
        return Answer(query=query, title=t(key, lang, what=what), notes=notes, suggestions=suggestions)
    hours = _hours(query)
    fx = kb.fx()
    options, first, lines = _options(kb, query, asked, hours, fx, facts)
    if not options:
        what = ", ".join(query.instance_types or query.gpus)
        return Answer(query=query, title=t("tco.none", lang, what=what), notes=notes, suggestions=suggestions)
    first = first or options[0][1]
    no_spot = no_interruptions(query)
    ranked = sorted(options, key=lambda item: item[1].total)
    eligible = [item for item in ranked if fits(item[1], query, no_spot)] or ranked
    label, best = eligible[0]
    lines = _usage_said(kb, query, asked[0]) + lines
    if no_spot:
        lines.append(t("tco.no_spot", lang))
    if query.duration_hours and any(not fits(o, query, False) for _, o in ranked):
        lines.append(t("tco.term_too_long", lang, hours=hours))
    if budget_note := budget_line(query, best, fx):
        notes.insert(0, budget_note)
    errata = match_errata(query, kb)
    facts["erratum_ids"] = [e["id"] for e in errata]
    fired = R.evaluate(facts, lang, groups=("cost", "spot", "spec"))
    total = money(best.total, best.currency)
    return Answer(
        query=query,
        title=t("verdict.tco", lang, what=_what(query), hours=hours, option=label, total=total),
        tco=first,  # the pricing asked for (on-demand when none): the JSON contract's "tco"
        tco_options=[o for _, o in ranked if o is not first],
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=sources(asked),
        extra={
            "errata": errata_json(errata, lang),
            "tco_best": best.pricing,
            "tco_labels": {o.pricing: lab for lab, o in ranked},
            **({"details": errata_lines(errata, lang)} if errata else {}),
        },
    )


def _hours(query: Query) -> float:
    """The hours the job runs: as asked, as long as the budget lasts, or a month; a usage share scales them."""
    if query.usage is not None:  # "for a month at 12 hours a day": the hours it runs, never 100 %
        return (query.duration_hours or DEFAULT_HOURS) * query.usage.utilisation
    return query.duration_hours or budget_hours(query) or DEFAULT_HOURS


def _options(
    kb: KB, query: Query, asked: list[dict[str, list[dict]]], hours: float, fx: dict, facts: dict
) -> tuple[list[tuple[str, Tco]], Tco | None, list[str]]:
    """Each subject's best option per pricing model, the one of the pricing asked for the first subject, and a
    break-even line per subject; the first subject's saving and break-even facts go into `facts`."""
    lang = query.language
    options: list[tuple[str, Tco]] = []
    lines: list[str] = []
    first = None
    for index, cands in enumerate(asked):
        base = (cands["on_demand"] or next(c for c in cands.values() if c))[0]
        currency = query.currency or base["currency"]
        local = facts if index == 0 else {}
        for pricing in PRICINGS:
            picked = best_option(kb, query, cands, pricing, hours, currency, fx, local)
            if picked:
                options.append(picked)
                if index == 0 and first is None and pricing == (query.pricing or "on_demand"):
                    first = picked[1]
        be = break_even(kb, base["instance_type"], base["region"], "reserved_1y")
        if be:
            lines.append(break_even_line(be, lang))
        if index == 0:
            facts.update(saving_facts(kb, base["instance_type"], base["region"], lang))
            facts.update(break_even_facts(be) if be else {})
    return options, first, lines


def _usage_said(kb: KB, query: Query, subject: dict[str, list[dict]]) -> list[str]:
    """The verdict on the usage asked (on demand or reserved for that many hours), for the first subject."""
    od = subject.get("on_demand")
    said = usage_verdict(kb, query, od[0]["instance_type"], od[0]["region"]) if od else usage_line(query)
    return [said] if said else []


def _what(query: Query) -> str:
    """What the title prices: the instance types, or the GPUs with their count (and nodes)."""
    what = ", ".join(query.instance_types[:3]) or " / ".join(query.gpus)
    if query.gpu_count and not query.instance_types:
        what = f"{query.gpu_count:g}x {what}"
    if query.machines:  # "2 nodes of 8 H100": 2x 8x H100
        what = f"{query.machines}x {what}"
    return what
