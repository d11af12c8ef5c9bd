"""Freshness and stock, said in answers: "spot 12 min ago", "in stock, read 12 min ago", mixed tiers, silent sources.

The tiers themselves are `knowledge.catalog.freshness`; this module only words them (phrases `live.*` in
`knowledge/data/phrases.json`). Everything is computed from the offers' own fields, so an answer never waits on
the network or the state: a live source that has not answered for a day shows as figures read more than a day
ago, and is named with the time of its last good answer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from handlers.i18n import t
from handlers.models import Offer
from knowledge.catalog.freshness import FRESH_SECONDS, TIERS, age_seconds

__all__ = ["age_text", "answer_notes", "offer_label", "out_of_stock_last"]


def age_text(seconds: float, lang: str = "en") -> str:
    """ "just now", "12 min ago", "3 h ago", "2 d ago" """
    minutes = int(seconds // 60)
    if minutes < 1:
        return t("live.age.now", lang)
    if minutes < 60:
        return t("live.age.minutes", lang, n=minutes)
    if minutes < 48 * 60:
        return t("live.age.hours", lang, n=minutes // 60)
    return t("live.age.days", lang, n=minutes // (24 * 60))


def offer_label(item: Offer, lang: str = "en", now: dt.datetime | None = None) -> str:
    """What the offer line says of age and stock (empty for a catalog figure without a fetch time or stock)."""
    parts = []
    age = age_seconds(item.fetched_at, now)
    if age is not None:
        parts.append(t("live.priced_ago", lang, pricing=t("pricing." + item.pricing, lang), age=age_text(age, lang)))
    if item.stock:
        stock = t("live.stock." + item.stock, lang)
        read = age_seconds(item.stock_read_at, now)
        parts.append(t("live.stock_read", lang, stock=stock, age=age_text(read, lang)) if read is not None else stock)
    return "".join(f" · {p}" for p in parts)


def answer_notes(offers: Iterable[Offer], lang: str = "en", now: dt.datetime | None = None) -> list[str]:
    """Notes for an answer: the tiers when they are mixed, and each live source silent for a day, by name."""
    offers = list(offers)
    notes = []
    counts = {tier: sum(1 for o in offers if o.freshness == tier) for tier in TIERS}
    if sum(1 for n in counts.values() if n) > 1:
        tiers = ", ".join(f"{n} {t('live.tier.' + tier, lang)}" for tier, n in counts.items() if n)
        notes.append(t("live.mixed", lang, tiers=tiers))
    silent: dict[str, float] = {}
    for item in offers:
        age = age_seconds(item.fetched_at, now)
        if age is not None and age >= FRESH_SECONDS:
            silent[item.source] = min(age, silent.get(item.source, age))
    for source, age in silent.items():
        notes.append(t("live.silent", lang, source=source, age=age_text(age, lang)))
    return notes


def out_of_stock_last(rows: list[dict]) -> tuple[list[dict], int]:
    """(rows with the ones known to be out of stock moved after the rest, order kept otherwise; how many moved)."""
    out = [r for r in rows if r.get("stock") == "out_of_stock"]
    return [r for r in rows if r.get("stock") != "out_of_stock"] + out, len(out)
