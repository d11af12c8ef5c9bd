"""Reserved and committed terms in words: `yrTerm1Convertible.noUpfront` -> "1-year Convertible, no upfront"
(1年可转换预留，无预付); GCP's committed use and Azure's reservations by their own names. No reply prints a raw
term key (knowledge.facts.pricing holds the keys and picks the cheapest term of a length)."""

from __future__ import annotations

from handlers.i18n import t
from handlers.models import Offer
from knowledge.facts.pricing import AWS_TERM, term_years

_SPOT = {"spot_min": "min", "spot_avg": "avg", "spot_max": "max"}


def term_words(term: str, lang: str = "en", provider: str | None = None) -> str:
    """A term key of `price_terms` or an offer's `term`, in words."""
    if match := AWS_TERM.match(term):
        return t(
            "term.aws",
            lang,
            years=match["years"],
            kind=t(f"term.kind.{match['kind'].lower()}", lang),
            upfront=t(f"term.upfront.{match['upfront']}", lang),
        )
    years = term_years(term)
    if years and provider in ("gcp", "azure"):
        return t(f"term.{provider}", lang, years=years)
    if years:
        return t(f"pricing.reserved_{years}y", lang)
    if term == "ondemand":
        return t("pricing.on_demand", lang)
    if term in _SPOT:
        return t(f"term.spot_{_SPOT[term]}", lang)
    return t(f"pricing.{term}", lang) if term in ("on_demand", "spot") else term


def pricing_text(item: Offer, lang: str = "en") -> str:
    """How an offer is priced, in words: its reserved term when it has one, else its pricing model."""
    if item.term:
        return term_words(item.term, lang, item.provider)
    return t(f"pricing.{item.pricing}", lang)
