"""The offers table (ONE `table` block per message: `bot.slack.tables` puts it where Slack documents it) and the
context line of numbered sources with how old each is."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

from bot.render import gpu_label, num
from bot.slack.blocks.base import cell, render
from bot.slack.escape import slack_escape
from bot.slack.phrases import phrase
from handlers.common import also_in, money, place
from handlers.display import per_chip, twin, unit
from handlers.models import Offer
from handlers.suspect import suspect_text
from handlers.terms import pricing_text

__all__ = ["TABLE_COLUMNS", "offers_table", "sources_context"]

TABLE_COLUMNS = ("#", "provider", "instance", "gpus", "region", "pricing", "per_gpu_hour", "per_hour", "source")
_RIGHT_ALIGNED = {"#", "gpus", "per_gpu_hour", "per_hour"}


def _offer_cells(
    n: int, item: Offer, source_no: int | str, lang: str, display: dict | None = None, units: bool = False
) -> list[str]:
    per_unit = unit(item, lang) if units else ""  # a table of GPU and TPU rows: each cell says its own unit
    per_gpu = money(item.price_per_gpu_hour, item.currency) + per_unit
    if second := twin(item, display):  # the asked or channel's currency, or a vendor quote's USD twin
        per_gpu += f" (≈ {money(*second)}{per_unit})"
    instance = item.instance_type  # merged sizes (handlers.ranking) are in the text answer and the JSON
    labels = [
        label for label, on in (("vGPU", item.vgpu), (f"{item.kind}, {item.status}", item.kind == "article")) if on
    ]
    if item.suspect:  # a price that looks wrong is kept and marked (issue 26)
        labels.insert(0, suspect_text(item.suspect, lang))
    if labels:
        instance += f" [{'; '.join(labels)}]"
    from handlers.brief import provider_label  # Chinese answers name providers in Chinese

    return [
        str(n),
        provider_label(item.provider, lang),
        instance,
        f"{num(item.gpu_count)}x {gpu_label(item)}",
        ""
        if item.region == "article"
        else place(item, lang) + (f" · {also_in(item.other_regions, lang)}" if item.other_regions else ""),
        _pricing_cell(item, lang),
        per_gpu,
        money(item.price_per_hour, item.currency),
        f"[{source_no}]",
    ]


def _pricing_cell(item: Offer, lang: str) -> str:
    """ "spot", or with a live source's figure "spot 12 min ago · in stock, read 12 min ago" (issue 28)."""
    from handlers.freshness import offer_label

    pricing, live = pricing_text(item, lang), offer_label(item, lang).removeprefix(" · ")
    return live if live.startswith(pricing) else " · ".join(x for x in (pricing, live) if x)


def offers_table(
    offers: list[Offer], source_no: Callable[[Offer], int | str], lang: str, display: dict | None = None
) -> dict:
    """The one table block: a header row, then one row per offer (cut to the row limit by `fit_blocks`). The price
    column is per GPU-hour, per chip-hour for TPU slices only, and for a mix says each row's unit in its cell; the
    count column says GPUs, chips for TPU slices (issue 26)."""
    chips = {per_chip(o) for o in offers}
    mixed = len(chips) > 1
    per_unit_col = "col.per_unit_hour" if mixed else "col.per_chip_hour" if chips == {True} else "col.per_gpu_hour"
    count_col = "col.gpus_or_chips" if mixed else "col.chips" if chips == {True} else "col.gpus"  # a TPU: chips
    header = {"per_gpu_hour": per_unit_col, "gpus": count_col}
    rows = [[cell(phrase(header.get(c, f"col.{c}"), lang)) for c in TABLE_COLUMNS]]
    rows += [
        [cell(v) for v in _offer_cells(n, o, source_no(o), lang, display, mixed)] for n, o in enumerate(offers, start=1)
    ]
    settings = [
        {"align": "right" if c in _RIGHT_ALIGNED else "left", "is_wrapped": c in ("instance", "gpus")}
        for c in TABLE_COLUMNS
    ]
    return {"type": "table", "column_settings": settings, "rows": rows}


def _age_phrase(as_of: str, lang: str, today: dt.date) -> str:
    """How old a dated source is ("40 days old"), or "" when `as_of` is not a date."""
    try:
        days = (today - dt.date.fromisoformat(as_of[:10])).days
    except ValueError:
        return ""
    if days < 0:
        return ""
    return phrase("age.today", lang) if days == 0 else phrase("age.days", lang, n=days)


def sources_context(sources: list, lang: str, today: dt.date, settings_notes: Sequence[str] = ()) -> list[dict]:
    """The context line: what the channel's settings filtered (first), then the numbered sources."""
    elements = []
    if settings_notes:
        text = f"*{phrase('settings.context', lang)}:* " + slack_escape("; ".join(settings_notes))
        elements.append({"type": "mrkdwn", "text": text})
    elements += [
        {"type": "mrkdwn", "text": render("slack_source.md.j2", lang, n=n, s=s, age=_age_phrase(s.as_of, lang, today))}
        for n, s in enumerate(sources, start=1)
    ]
    return [{"type": "context", "elements": elements}] if elements else []  # > 10 elements: merged by fit_blocks
