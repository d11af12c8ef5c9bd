"""price <instance type | gpu> [pricing] [region]: every known price, by region and pricing model."""

from __future__ import annotations

from handlers import brief, cheapest
from handlers.common import money, name_notes, offer, place, pricing_label, sources
from handlers.display import for_query
from handlers.freshness import answer_notes
from handlers.i18n import t
from handlers.models import PRICINGS, Answer, Offer, Query
from handlers.offer_notes import other_price_notes
from handlers.suspect import suspect_text
from handlers.terms import term_words
from knowledge.kb.reader import KB

BY_PROVIDER_TOP = 3  # "A100 price": the cheapest offer of the three cheapest providers ("top 10" for more)
_RESERVED_TERM_NAMES = ("yrTerm1Standard", "yrTerm1Convertible", "yrTerm3Standard", "yrTerm3Convertible")


def handle(query: Query, kb: KB) -> Answer:
    """price <instance type | gpu> [spot|on-demand|reserved] [region]: every known price of an instance type"""
    lang = query.language
    if not query.instance_types:
        if query.gpus:
            return _by_provider(query, kb)
        notes, suggestions = name_notes(query)
        return Answer(query=query, title=t("price.which", lang), notes=notes, suggestions=suggestions)
    notes, suggestions = name_notes(query)
    pricings = [query.pricing] if query.pricing else list(PRICINGS)
    rows = [
        offer(r)
        for r in kb.offers(
            instance_types=query.instance_types,
            providers=query.providers,
            regions=query.regions,
            order="instance_type, pricing, price_per_hour_usd, region",
        )
        if r["pricing"] in pricings
    ]
    rows.sort(  # on a tie the standard region wins over its Local / Wavelength Zones (issue 26)
        key=lambda o: (
            o.instance_type,
            PRICINGS.index(o.pricing),
            o.price_per_hour_usd,
            o.zone_label is not None,
            o.region,
        )
    )
    rows, budget_note = brief.apply_budget(rows, query, kb.fx())
    if budget_note:
        notes.insert(0, budget_note)
    what = ", ".join(query.instance_types[:3]) + (" …" if len(query.instance_types) > 3 else "")
    where = (t("word.in", lang) + ", ".join(query.regions)) if query.regions else ""
    if query.pricing and not rows:
        notes.insert(0, _missing_term(kb, query, what, where))
    if query.pricing in ("reserved_1y", "reserved_3y"):
        notes += _other_terms(kb, query)
    notes += other_price_notes(rows, lang)  # where two sources disagree: both figures, and which one ranks
    notes += answer_notes(rows, lang)  # mixed freshness tiers, live sources silent for a day (issue 28)
    return Answer(
        query=query,
        title=_verdict(query, rows, what, for_query(query, kb)) or t("price.title", lang, what=what),
        offers=rows,  # every known price; renderers show the first ones and say how many more
        notes=notes,
        suggestions=suggestions,
        sources=sources(rows),
    )


def _verdict(query: Query, rows: list[Offer], what: str, display: dict | None = None) -> str | None:
    """Line one: the lowest price of each pricing model (cheapest region and zone), for the first type asked."""
    lang = query.language
    first = [o for o in rows if o.instance_type == rows[0].instance_type] if rows else []
    parts = []
    for pricing in PRICINGS:
        best = next((o for o in first if o.pricing == pricing), None)  # rows are cheapest first per pricing
        if best:
            where = place(best, lang) + (f" [{suspect_text(best.suspect, lang)}]" if best.suspect else "")
            parts.append(
                t(
                    "verdict.price_part",
                    lang,
                    pricing=pricing_label(pricing, lang),
                    price=money(best.price_per_hour, best.currency),
                    unit=t("unit.per_hour", lang),
                    where=where,
                )
            )
    if not parts:
        return None
    said = t("verdict.price", lang, what=first[0].instance_type, parts=t("word.sep", lang).join(parts))
    return said + cheapest.machines_line(query, first[0], display)  # "3 x p4d.24xlarge": three machines


def _missing_term(kb: KB, query: Query, what: str, where: str) -> str:
    lang = query.language
    available = sorted(
        {r["pricing"] for r in kb.offers(instance_types=query.instance_types, regions=query.regions)},
        key=PRICINGS.index,
    )
    if not available:
        return t("price.none", lang, what=what, where=where, pricing=pricing_label(query.pricing or "on_demand", lang))
    provider = kb.offers(instance_types=query.instance_types, limit=1)[0]["provider"]
    return t(
        "price.no_term",
        lang,
        provider=provider,
        what=what,
        where=where,
        pricing=pricing_label(query.pricing or "on_demand", lang),
        available=", ".join(pricing_label(p, lang) for p in available),
    )


def _other_terms(kb: KB, query: Query) -> list[str]:
    """Every reserved-instance term (upfront options, convertible) for the asked type and regions."""
    notes: list[str] = []
    for instance_type in query.instance_types[:3]:
        for region in query.regions[:3]:  # no region asked: no notes (the terms are listed per region)
            terms = [r for r in kb.price_terms(instance_type, region) if r["term"].startswith(_RESERVED_TERM_NAMES)]
            if not terms:
                continue
            listed = ", ".join(
                f"{term_words(r['term'], query.language, r['provider'])} {money(r['price_per_hour'])}/h" for r in terms
            )
            notes.append(t("price.other_terms", query.language, region=region, as_of=terms[0]["as_of"], terms=listed))
    return notes


def _by_provider(query: Query, kb: KB) -> Answer:
    """A GPU's price: the cheapest offer per provider for the asked (or on-demand) pricing model."""
    answer = cheapest.handle(query.model_copy(update={"top_n": 500}), kb)
    best: dict[str, Offer] = {}
    for item in answer.offers:
        best.setdefault(item.provider, item)
    ranked = list(best.values())
    offers = ranked[: query.top_n or BY_PROVIDER_TOP]  # a short answer: the cheapest providers
    title = answer.title  # the cheapest answer's verdict line
    return answer.model_copy(
        update={
            "title": title,
            "offers": offers,
            "sources": sources(offers),  # the seed figures' sources come with them (--verbose)
            "more": len(ranked) - len(offers),
        }
    )
