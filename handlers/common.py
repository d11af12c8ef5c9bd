"""Helpers shared by handlers: rows to models, money, sources, did-you-mean notes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from handlers.i18n import t
from handlers.models import NameIssue, Offer, Query, Source
from knowledge.catalog.freshness import imported

SYMBOLS = {"USD": "$", "CNY": "¥"}
SCAN_CHARS = 2000  # handlers read a question up to here, like the parser (handlers.parse.MAX_CHARS)
_OFFER_FIELDS = set(Offer.model_fields)


def offer(row: dict) -> Offer:
    """An `Offer` from an `offers` table row."""
    return Offer.model_validate({key: value for key, value in row.items() if key in _OFFER_FIELDS})


def scan_text(query: Query) -> str:
    """The question's text as handlers read it: the Query keeps the whole text, but a 100 KB paste is not scanned
    keyword by keyword (the parser reads the same first `SCAN_CHARS` characters)."""
    return (query.text or "")[:SCAN_CHARS]


def money(value: float, currency: str = "USD") -> str:
    symbol = SYMBOLS.get(currency)
    digits = 4 if abs(value) < 1 else 2
    amount = f"{value:,.{digits}f}"
    return f"{symbol}{amount}" if symbol else f"{amount} {currency}"


def place(item: Offer, lang: str = "en") -> str:
    """Where an offer is: "us-east-1 (use1-az1)", or a Local / Wavelength Zone by its own name, never as its region
    ("use1-atl2-az1 Atlanta (Local Zone, opt-in) of us-east-1")."""
    from knowledge.catalog.zones import label

    if not item.zone:
        return item.region
    if item.zone_label:
        return t("zone.local", lang, zone=item.zone, label=label(item.zone, lang), region=item.region)
    return t("zone", lang, region=item.region, zone=item.zone)


def pricing_label(pricing: str, lang: str) -> str:
    return t(f"pricing.{pricing}", lang)


def sources(offers: Iterable[Offer]) -> list[Source]:
    """Distinct (source, as_of) pairs, in order of first appearance."""
    seen: dict[tuple[str, str], Source] = {}
    for item in offers:
        seen.setdefault(
            (item.source, item.as_of), Source(source=item.source, as_of=item.as_of, as_of_known=item.as_of_known)
        )
    return list(seen.values())


def name_notes(query: Query) -> tuple[list[str], list[str]]:
    """(notes, suggestions) for names the parser could not resolve: what was not understood, and did-you-mean."""
    notes: list[str] = []
    suggestions: list[str] = []
    lang = query.language
    for issue in query.issues:
        notes.append(issue_text(issue, lang))
        suggestions += [c for c in issue.candidates if c not in suggestions]
    return notes, suggestions


def issue_text(issue: NameIssue, lang: str) -> str:
    """ "I don't know the instance type 'g5xlarge'. Did you mean g5.xlarge?" (or "could mean several ...")."""
    kind = t(f"kind.{issue.kind}", lang)
    key = "names.ambiguous" if issue.status == "ambiguous" else "names.unknown"
    text = t(key, lang, kind=kind, text=issue.text)
    if issue.candidates:
        text += ("" if lang == "zh" else " ") + t(
            "names.did_you_mean", lang, candidates=t("word.or", lang).join(issue.candidates[:4])
        )
    return text


def also_in(n: int, lang: str) -> str:
    """ "+3 regions" / "+1 region" (另有3个地域): where else the offer's price is found."""
    return t("brief.also_in_one", lang) if n == 1 else t("brief.also_in", lang, n=n)


def date_label(source: Source | Offer) -> str:
    """The phrase before a figure's day (`render.`/`slack.` key): as of, or date unknown (bundled, or imported)."""
    if source.as_of_known:
        return "as_of"
    return "date_unknown_imported" if imported(source.source) else "date_unknown"


def as_of_text(row: Any, lang: str) -> str:
    """A figure's date: "2026-07-30", or "date unknown, bundled 2026-12-01" (日期未知，打包于 …) where the catalog
    has none (`as_of_known` false: the day is only when the file was bundled or imported)."""
    get = row.get if isinstance(row, dict) else lambda key, default=None: getattr(row, key, default)
    day = get("as_of")
    if not day:
        return t("common.date_unknown", lang)
    if get("as_of_known", True) in (False, 0):
        key = "common.date_unknown_imported" if imported(get("source")) else "common.date_unknown_bundled"
        return t(key, lang, day=day)
    return day
