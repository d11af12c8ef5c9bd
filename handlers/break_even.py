"""Reservations: the break-even utilisation of a reserved term (reserved rate / on-demand rate, from the pricing
data), what reserving and spot save, and the one-figure answer "when does reserving X pay"."""

from __future__ import annotations

from handlers.common import as_of_text, pricing_label
from handlers.display import both, for_query
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.models import Answer, Query, Source
from handlers.tco_model import TERMS
from handlers.terms import term_words
from knowledge.facts import rules as R
from knowledge.facts.pricing import cheapest_term, term_years
from knowledge.kb.reader import KB


def break_even(
    kb: KB, instance_type: str, region: str, pricing: str = "reserved_1y", term: str | None = None
) -> dict | None:
    """Reserved rate / on-demand rate for one instance type and region, from the pricing data (AWS, GCP, fetched
    Azure reservations). Without `term`, the cheapest term of the pricing's length (Standard or Convertible, any
    upfront option: effective hourly rates, knowledge.facts.pricing.cheapest_term)."""
    terms = {r["term"]: r for r in kb.price_terms(instance_type, region)}
    chosen = term or cheapest_term({k: r["price_per_hour"] for k, r in terms.items()}, int(pricing[-2]))
    reserved = terms.get(chosen) if chosen else None
    if reserved is None and term is None:  # a reserved offer without a term table (Azure Retail Prices fetch)
        rows = kb.offers(instance_types=[instance_type], regions=[region], pricing=pricing, limit=1)
        if rows:
            reserved = {
                **rows[0],
                "term": rows[0].get("term") or pricing,
                "price_per_hour": rows[0]["price_per_hour_usd"],
            }
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
        "provider": reserved.get("provider") or on_demand.get("provider"),
        "term": reserved["term"],
        "reserved_rate": reserved["price_per_hour"],
        "on_demand_rate": on_demand["price_per_hour"],
        "utilisation_pct": ratio * 100,
        "source": reserved["source"],
        "as_of": reserved["as_of"],
    }


def be_term(be: dict, lang: str) -> str:
    """The term of a break-even figure, in words ("1-year Convertible, no upfront")."""
    return term_words(be["term"], lang, be.get("provider"))


def saving_facts(kb: KB, instance_type: str, region: str, lang: str) -> dict:
    """What reserving and spot save on one instance type and region, in the data, for the cost rules' texts."""
    subject = f"{instance_type} {region}"
    found = next(((p, be) for p in TERMS if (be := break_even(kb, instance_type, region, p))), None)
    facts = {
        "reserved_saving_text": t(
            "save.reserved",
            lang,
            term=be_term(found[1], lang),
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


def break_even_facts(be: dict, lang: str = "en") -> dict:
    return {
        "break_even_pct": be["utilisation_pct"],
        "reserved_rate_text": _exact(be["reserved_rate"]),
        "on_demand_rate_text": _exact(be["on_demand_rate"]),
        "rate_source": be["source"],
        "rate_as_of": be["as_of"],
        "break_even_subject": f"{be['instance_type']}, {be['region']}, {be_term(be, lang)}",
    }


def _exact(value: float, display: dict | None = None, suffix: str = "") -> str:
    """A rate with every digit the source gave (break-even figures are checked against them), and in the display
    currency when one is asked ("$43.344/h (≈ ¥314.07/h)")."""
    return both(value, display, suffix, said=f"${value:.8g}")


def _break_even_verdict(
    query: Query, be: dict, term: str, instance_type: str, region: str, display: dict | None = None
) -> str:
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
    used = used_share(query)
    if used is None:
        return head
    reserved_month = be["reserved_rate"] * R.HOURS_PER_MONTH
    od_month = be["on_demand_rate"] * R.HOURS_PER_MONTH * used
    cheaper = "verdict.be_reserved" if used * 100 > pct else "verdict.be_on_demand"
    return head + t(
        cheaper, lang, used=used * 100, reserved=both(reserved_month, display), on_demand=both(od_month, display)
    )


def used_share(query: Query) -> float | None:
    """The share of the hours the machine runs: the usage said ("at 50%", "12 hours a day"), else the hours asked
    for within a month, else those hours over the reserved term; None when the question says nothing of it."""
    if query.usage is not None:
        return query.usage.utilisation
    hours = query.duration_hours
    if not hours:
        return None
    if hours <= R.HOURS_PER_MONTH:
        return hours / R.HOURS_PER_MONTH
    return min(1.0, hours / (TERMS[query.pricing if query.pricing in TERMS else "reserved_1y"][1] * R.HOURS_PER_YEAR))


def usage_line(query: Query) -> str | None:
    """ "Usage: 50% of the hours (12 hours a day)": the usage a verdict used, as said."""
    if query.usage is None:
        return None
    return t("usage.line", query.language, pct=query.usage.utilisation * 100, said=query.usage.text)


def usage_verdict(kb: KB, query: Query, instance_type: str, region: str) -> str | None:
    """ "At your 27% (200 hours a month): on-demand $200.86 a month; 1-year reserved $462.66 (pays off above 63.0%)":
    which of the two is cheaper for the usage said, for one instance type; None without a usage or a reserved rate."""
    if query.usage is None:
        return None
    be = break_even(kb, instance_type, region, "reserved_1y")
    used = query.usage.utilisation
    lang = query.language
    if be is None:
        return usage_line(query)
    key = "usage.reserved_cheaper" if used * 100 > be["utilisation_pct"] else "usage.on_demand_cheaper"
    return t(
        key,
        lang,
        pct=used * 100,
        said=query.usage.text,
        instance=instance_type,
        on_demand=both(be["on_demand_rate"] * R.HOURS_PER_MONTH * used, for_query(query, kb)),
        reserved=both(be["reserved_rate"] * R.HOURS_PER_MONTH, for_query(query, kb)),
        be=be["utilisation_pct"],
    )


def break_even_line(be: dict, lang: str, display: dict | None = None) -> str:
    verdict = t("tco.be.above" if be["utilisation_pct"] < 100 else "tco.be.never", lang)
    return t(
        "tco.break_even",
        lang,
        subject=f"{be['instance_type']} {be['region']} {be_term(be, lang)}",
        reserved=_exact(be["reserved_rate"], display, t("unit.per_hour", lang)),
        on_demand=_exact(be["on_demand_rate"], display, t("unit.per_hour", lang)),
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
    asked_hours = query.duration_hours or (query.usage.duration_hours if query.usage else None) or 0
    three = query.pricing == "reserved_3y" or asked_hours >= 3 * R.HOURS_PER_YEAR
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
    display = for_query(query, kb)  # "in CNY": every rate in both currencies
    lines = [break_even_line(main, lang, display)] if main else []
    if said := usage_line(query):
        lines.insert(0, said)
    if main:
        title = _break_even_verdict(query, main, be_term(main, lang), instance_type, region, display)
        facts.update(break_even_facts(main, lang))
        lines += _other_terms_line(kb, main, pricing, lang, display)
    else:
        available = sorted({term_words(r["term"], lang, r["provider"]) for r in kb.price_terms(instance_type, region)})
        provider = rows[0]["provider"] if rows else ""
        lines.insert(
            0,
            t(
                "tco.be.none",
                lang,
                provider=provider,
                term=term_label,
                instance=instance_type,
                region=region,
                available=t("word.sep", lang).join(available) or "-",
            ),
        )
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


def _other_terms_line(kb: KB, main: dict, pricing: str, lang: str, display: dict | None = None) -> list[str]:
    """Every other term of the same length, in words, with its rate and break-even, cheapest first."""
    years = int(pricing[-2])
    others = [
        be
        for r in kb.price_terms(main["instance_type"], main["region"])
        if term_years(r["term"]) == years
        and r["term"] != main["term"]
        and (be := break_even(kb, main["instance_type"], main["region"], pricing, r["term"]))
    ]
    if not others:
        return []
    others.sort(key=lambda be: be["reserved_rate"])
    listed = t("word.sep", lang).join(
        f"{be_term(be, lang)} {_exact(be['reserved_rate'], display, t('unit.per_hour', lang))}"
        f" = {be['utilisation_pct']:.1f}%"
        for be in others
    )
    return [t("tco.be.others", lang, terms=listed)]
