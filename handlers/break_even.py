"""Reservations: the break-even utilisation of a reserved term (reserved rate / on-demand rate, from the pricing
data), what reserving and spot save, and the one-figure answer "when does reserving X pay"."""

from __future__ import annotations

import re

from handlers.common import as_of_text, money, pricing_label
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.models import Answer, Query, Source
from handlers.tco_model import TERMS
from knowledge.facts import rules as R
from knowledge.kb.reader import KB


def break_even(
    kb: KB, instance_type: str, region: str, pricing: str = "reserved_1y", term: str | None = None
) -> dict | None:
    """Reserved rate / on-demand rate for one instance type and region, from the pricing data (AWS, GCP)."""
    terms = {r["term"]: r for r in kb.price_terms(instance_type, region)}
    reserved = terms.get(term or TERMS[pricing][0]) or terms.get(pricing)
    on_demand = terms.get("ondemand")
    if on_demand is None:
        rows = kb.offers(instance_types=[instance_type], regions=[region], pricing="on_demand", limit=1)
        on_demand = {**rows[0], "price_per_hour": rows[0]["price_per_hour_usd"]} if rows else None
    if not reserved or not on_demand:
        return None
    ratio = R.break_even_utilisation(reserved["price_per_hour"], on_demand["price_per_hour"])
    return {
        "instance_type": instance_type,
        "region": region,
        "term": reserved["term"],
        "reserved_rate": reserved["price_per_hour"],
        "on_demand_rate": on_demand["price_per_hour"],
        "utilisation_pct": ratio * 100,
        "source": reserved["source"],
        "as_of": reserved["as_of"],
    }


def saving_facts(kb: KB, instance_type: str, region: str, lang: str) -> dict:
    """What reserving and spot save on one instance type and region, in the data, for the cost rules' texts."""
    subject = f"{instance_type} {region}"
    found = next(((p, be) for p in TERMS if (be := break_even(kb, instance_type, region, p))), None)
    facts = {
        "reserved_saving_text": t(
            "save.reserved",
            lang,
            term=pricing_label(found[0], lang),
            subject=subject,
            pct=100 - found[1]["utilisation_pct"],
            source=found[1]["source"],
            as_of=found[1]["as_of"],
        )
        if found
        else t("save.no_reserved", lang, subject=subject)
    }
    od, spot = (
        kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1) for p in ("on_demand", "spot")
    )
    if od and spot:
        pct = 100 * (1 - spot[0]["price_per_hour_usd"] / od[0]["price_per_hour_usd"])
        facts["spot_saving_text"] = t(
            "save.spot", lang, subject=subject, pct=pct, source=spot[0]["source"], as_of=as_of_text(spot[0], lang)
        )
    else:
        facts["spot_saving_text"] = t("save.no_spot", lang, subject=subject)
    return facts


def break_even_facts(be: dict) -> dict:
    return {
        "break_even_pct": be["utilisation_pct"],
        "reserved_rate_text": _exact(be["reserved_rate"]),
        "on_demand_rate_text": _exact(be["on_demand_rate"]),
        "rate_source": be["source"],
        "rate_as_of": be["as_of"],
        "break_even_subject": f"{be['instance_type']}, {be['region']}, {be['term']}",
    }


def _exact(value: float) -> str:
    """A rate with every digit the source gave (break-even figures are checked against them)."""
    return f"${value:.8g}"


_PER_MONTH = re.compile(r"a month|per month|/\s*mo(nth)?\b|monthly|每月|每个月|一个月")


def _break_even_verdict(query: Query, be: dict, term: str, instance_type: str, region: str) -> str:
    """Line one: where the reservation starts to pay, and which option is cheaper for the usage asked about."""
    lang = query.language
    pct = be["utilisation_pct"]
    head = t(
        "verdict.be",
        lang,
        term=term,
        instance=instance_type,
        region=region,
        pct=pct,
        hours=pct / 100 * R.HOURS_PER_MONTH,
    )
    if pct >= 100:
        return head + t("verdict.be_never", lang)
    hours = query.duration_hours
    if not hours:
        return head
    monthly = hours if _PER_MONTH.search((query.text or "").lower()) or hours <= R.HOURS_PER_MONTH else None
    used = (
        (monthly / R.HOURS_PER_MONTH)
        if monthly
        else hours / (TERMS[query.pricing if query.pricing in TERMS else "reserved_1y"][1] * R.HOURS_PER_YEAR)
    )
    used = min(used, 1.0)
    reserved_month = be["reserved_rate"] * R.HOURS_PER_MONTH
    od_month = be["on_demand_rate"] * R.HOURS_PER_MONTH * used
    cheaper = "verdict.be_reserved" if used * 100 > pct else "verdict.be_on_demand"
    return head + t(cheaper, lang, used=used * 100, reserved=money(reserved_month), on_demand=money(od_month))


def break_even_line(be: dict, lang: str) -> str:
    verdict = t("tco.be.above" if be["utilisation_pct"] < 100 else "tco.be.never", lang)
    return t(
        "tco.break_even",
        lang,
        subject=f"{be['instance_type']} {be['region']} {be['term']}",
        reserved=_exact(be["reserved_rate"]),
        on_demand=_exact(be["on_demand_rate"]),
        pct=be["utilisation_pct"],
        source=be["source"],
        as_of=be["as_of"],
        verdict=verdict,
    )


def break_even_answer(query: Query, kb: KB, facts: dict) -> Answer:
    """Break-even utilisation of a reservation: reserved rate / on-demand rate, every term of that length."""
    lang = query.language
    if not query.instance_types:
        return Answer(query=query, title=t("tco.be.which", lang), rules=rule_hits(R.evaluate(facts, lang)))
    instance_type = query.instance_types[0]
    three = re.search(r"3[- ]?(year|yr)|three[- ]year|3年|三年", (query.text or "").lower())
    pricing = query.pricing if query.pricing in TERMS else "reserved_3y" if three else "reserved_1y"
    rows = kb.offers(instance_types=[instance_type], regions=query.regions, pricing="on_demand")
    region = (
        query.regions[0]
        if query.regions
        else ("us-east-1" if any(r["region"] == "us-east-1" for r in rows) else rows[0]["region"] if rows else "")
    )
    term_label = pricing_label(pricing, lang)
    title = t("tco.be.title", lang, term=term_label, instance=instance_type, region=region)
    main = break_even(kb, instance_type, region, pricing)
    prefix = "yrTerm1" if pricing == "reserved_1y" else "yrTerm3"
    terms = kb.price_terms(instance_type, region)
    others = [
        break_even(kb, instance_type, region, pricing, r["term"])
        for r in terms
        if r["term"].startswith(prefix) and (not main or r["term"] != main["term"])
    ]
    lines = [break_even_line(main, lang)] if main else []
    if main:
        title = _break_even_verdict(query, main, term_label, instance_type, region)
    if any(others):
        lines.append(
            t(
                "tco.be.others",
                lang,
                terms=", ".join(
                    f"{be['term']} {_exact(be['reserved_rate'])}/h = {be['utilisation_pct']:.1f}%"
                    for be in others
                    if be
                ),
            )
        )
    if not main:
        available = ", ".join(sorted({r["term"] for r in terms})) or "-"
        lines.insert(
            0,
            t(
                "tco.be.none",
                lang,
                provider=rows[0]["provider"] if rows else "",
                term=term_label,
                instance=instance_type,
                region=region,
                available=available,
            ),
        )
    else:
        facts.update(break_even_facts(main))
    if region:
        facts.update(saving_facts(kb, instance_type, region, lang))
    return Answer(
        query=query,
        title=title,
        lines=lines,
        rules=rule_hits(R.evaluate(facts, lang)),
        extra={"break_even": main},
        sources=[Source(source=main["source"], as_of=main["as_of"])] if main else [],
    )
