"""Figures as a reader sees them (issue 26, item 7): the unit of a price and the second currency.

- **Unit.** A TPU slice (`Offer.gpu_kind == "tpu"`, knowledge/catalog/tpus.py) is priced per chip: its per-unit
  figure is labelled per chip-hour ("$1.20/chip-h", "$1.20/芯片·小时"); every other offer per GPU-hour. `unit(o,
  lang)` is the label, `unit_name(o)` the JSON `unit` (`gpu_hour` or `chip_hour`).
- **Second currency.** A question that asks for CNY ("in CNY", "人民币", "prices in yuan"), or a channel/CLI
  currency preference, makes `bot.pipeline.answer_query` call `with_display`: `extra["display_currency"]` is
  `{"currency", "per_usd", "source", "as_of"}` from the knowledge base's one exchange rate (`kb.fx()`,
  providers.yaml) and one note says the rate with its source and date. Every surface then shows both currencies
  through the functions here: an offer quoted in the display currency by its vendor (Alibaba, Tencent in CNY) keeps
  its own figure, never a conversion of its USD twin; any other offer's figure is its USD twin times the rate.
  `twin` is the second figure an offer line shows; `title_line` the converted figures the title states.
- **Figures in sentences.** A handler or renderer that phrases a USD figure itself (break-even rates, history,
  $ per 1M tokens, training runs, a machine total, digest and alert lines) writes it with `both(usd, display)`:
  "$40.45/h (≈ ¥293.13/h)"; `for_query(query, kb)` is the display a handler sees before `with_display` runs.

STYLE: pure functions over the contract models; no rendering beyond one figure or one line; the rate is the
knowledge base's, passed in, never a constant here.
"""

from __future__ import annotations

from typing import Any

from handlers.common import SYMBOLS, money
from handlers.i18n import t
from handlers.models import Answer, Offer, Query, Tco

PER_CHIP_KINDS = frozenset({"tpu"})  # accelerators priced per chip (a TPU slice's price divided by its chips)


# --- units --------------------------------------------------------------------------------------------------------


def per_chip(item: Offer) -> bool:
    return (item.gpu_kind or "").lower() in PER_CHIP_KINDS


def unit_name(item: Offer) -> str:
    """What `price_per_gpu_hour` is per, in the JSON: `gpu_hour`, or `chip_hour` for a TPU slice."""
    return "chip_hour" if per_chip(item) else "gpu_hour"


def unit(item: Offer, lang: str = "en") -> str:
    """ "/GPU-h" or "/chip-h" (Chinese "/GPU·小时", "/芯片·小时")."""
    return t("unit.per_chip_hour", lang) if per_chip(item) else t("unit.per_gpu_hour", lang)


# --- the display currency -----------------------------------------------------------------------------------------


def display_of(query: Query, fx: dict[str, Any]) -> dict[str, Any] | None:
    """`{"currency", "per_usd", "source", "as_of"}` when the query's currency is not USD, else None."""
    return in_currency(query.currency, fx)


def in_currency(currency: str | None, fx: dict[str, Any]) -> dict[str, Any] | None:
    """The display of a currency preference (a channel's, a CLI flag's): None for USD or none."""
    if not currency or currency == "USD":
        return None
    return {
        "currency": currency,
        "per_usd": float(fx["cny_per_usd"]),
        "source": str(fx["source"]),
        "as_of": str(fx["as_of"]),
    }


def for_query(query: Query, kb: Any) -> dict[str, Any] | None:
    """The display currency of a question, for a handler that phrases figures itself (None: USD only)."""
    return display_of(query, kb.fx()) if query.currency and query.currency != "USD" else None


def both(usd: float, display: dict[str, Any] | None, suffix: str = "", said: str | None = None) -> str:
    """A USD figure as a reader sees it: "$40.45/h", with a display currency "$40.45/h (≈ ¥293.13/h)"; `said`: the
    USD figure as its source states it ("$40.454452", "$0.4390"), else `money(usd)`."""
    shown = (said or money(usd)) + suffix
    if not display or display["currency"] == "USD":
        return shown
    return f"{shown} (≈ {money(usd * float(display['per_usd']), display['currency'])}{suffix})"


PRICED_EXTRA = ("break_even", "history", "work", "train_cost", "rent_or_api")  # figures in extra (a digest's
# moves: handlers.digest says the rate itself when it shows some)


def priced(answer: Answer) -> bool:
    """The answer states a price: offers, picks with an offer, dated figures, a TCO, or figures of its own kind
    (a break-even, price history, $ per 1M tokens, training runs, API costs)."""
    return bool(
        answer.offers
        or answer.context
        or any(r.offer for r in answer.recommendations)
        or answer.tco
        or answer.tco_options
        or any(answer.extra.get(key) for key in PRICED_EXTRA)
    )


def rate_note(display: dict[str, Any], lang: str) -> str:
    """ "CNY at ¥7.246 per $1, <source>, <date>" """
    return t(
        "display.rate",
        lang,
        currency=t(f"display.currency.{display['currency']}", lang),
        rate=f"{SYMBOLS.get(display['currency'], '')}{display['per_usd']:g}",
        source=display["source"],
        as_of=display["as_of"],
    )


def with_display(answer: Answer, fx: dict[str, Any]) -> Answer:
    """The answer with `extra["display_currency"]` set, and the rate note when it states a price."""
    display = display_of(answer.query, fx)
    if display is None:
        return answer
    update: dict[str, Any] = {"extra": {**answer.extra, "display_currency": display}}
    note = rate_note(display, answer.query.language)
    if priced(answer) and note not in answer.notes:
        update["notes"] = [*answer.notes, note]
    return answer.model_copy(update=update)


def in_display(item: Offer, display: dict[str, Any]) -> tuple[float, float]:
    """(per unit-hour, per hour) in the display currency: the vendor's own figures when it quoted that currency,
    else the USD twins times the rate."""
    if item.currency == display["currency"]:
        return item.price_per_gpu_hour, item.price_per_hour
    rate = float(display["per_usd"]) if display["currency"] != "USD" else 1.0
    return item.price_per_gpu_hour_usd * rate, item.price_per_hour_usd * rate


def twin(item: Offer, display: dict[str, Any] | None) -> tuple[float, str] | None:
    """The second per-unit figure an offer line shows beside the vendor's own: in the display currency when the
    vendor quoted another, else (a vendor quote that is not USD) its USD twin; None when one currency says it all."""
    if display and item.currency != display["currency"]:
        return in_display(item, display)[0], display["currency"]
    if item.currency != "USD":
        return item.price_per_gpu_hour_usd, "USD"
    return None


def total_twin(tco: Tco, display: dict[str, Any] | None) -> tuple[float, str] | None:
    """A TCO total's other currency when a display currency is set: USD for a total in it, it for a USD total."""
    if not display or display["currency"] == "USD":
        return None
    rate = float(display["per_usd"])
    if tco.currency == display["currency"]:
        return tco.total / rate, "USD"
    if tco.currency == "USD":
        return tco.total * rate, display["currency"]
    return None


def title_line(answer: Answer, display: dict[str, Any] | None) -> str:
    """The title's figures in the other currency, in the title's order ("In CNY: ¥5.23/GPU-h, ¥41.81/h"), or ""
    when the title states none that needs it. A figure the title states is an offer's own per-unit or per-hour
    price (or its USD twin), or a row's figure (`ROW_FIGURES`: $ per 1M tokens, a training run, an API price)."""
    if not display:
        return ""
    lang, title = answer.query.language, answer.title
    found: dict[str, tuple[int, str]] = {}  # shown figure -> (where in the title, target currency)
    offers = [*answer.offers, *(r.offer for r in answer.recommendations if r.offer)]
    cur, per_hour_label = display["currency"], t("unit.per_hour", lang)
    for item in offers:
        per_unit, per_hour = in_display(item, display)
        per_unit_label = unit(item, lang)
        own_unit, own_hour = money(per_unit, cur) + per_unit_label, money(per_hour, cur) + per_hour_label
        usd_unit = money(item.price_per_gpu_hour_usd) + per_unit_label
        if item.currency == cur:  # a vendor quote in the display currency: its own figure, never a conversion
            at = title.find(usd_unit)
            if at >= 0 and own_unit not in title:  # the title states only its USD twin ("A100 is cheaper, $4.76")
                found.setdefault(own_unit, (at, cur))
            continue
        said_unit = money(item.price_per_gpu_hour, item.currency) + per_unit_label
        said_hour = money(item.price_per_hour, item.currency) + per_hour_label
        for said, shown in ((said_unit, own_unit), (usd_unit, own_unit), (said_hour, own_hour)):
            at = title.find(said)
            if at >= 0 and shown not in found:
                found[shown] = (at, cur)
    # a TCO total is not repeated here: every surface shows it with its other currency ("¥40,437.76 (≈ $5,580.70)")
    for said, usd, suffix in _row_figures(answer):  # $ per 1M tokens, a training run, an API price
        at = title.find(said)
        shown = money(usd * float(display["per_usd"]), cur) + suffix
        if at >= 0 and cur != "USD" and not _twinned(title, at, said):
            found.setdefault(shown, (at, cur))
    if not found:
        return ""
    by_currency: dict[str, list[tuple[int, str]]] = {}
    for shown, (at, currency) in found.items():
        by_currency.setdefault(currency, []).append((at, shown))
    parts = [
        t("display.title", lang, currency=t(f"display.currency.{currency}", lang), figures=t("word.list", lang).join(
            shown for _, shown in sorted(figures)
        ))
        for currency, figures in sorted(by_currency.items(), key=lambda kv: min(kv[1]))
    ]  # fmt: skip
    return t("word.sep", lang).join(parts)


def _twinned(title: str, at: int, said: str) -> bool:
    """The figure at `at` already states its other currency right after it ("$5.00 (≈ ¥36.23)")."""
    return title[at + len(said) :].startswith(" (≈ ")


ROW_FIGURES = {  # extra key -> (USD field, how the verdict states it, unit suffix): figures a title may state
    "work": (("usd_per_million_tokens", "${:.4f}", ""), ("price_per_hour_usd", "${:.2f}", "/h")),
    "train_cost": (("cost_usd", "${:,.2f}", ""),),
}


def _row_figures(answer: Answer) -> list[tuple[str, float, str]]:
    """(the figure as the title would state it, its USD value, its unit) for every row of a work, training or
    API-cost answer."""
    out: list[tuple[str, float, str]] = []
    for key, fields in ROW_FIGURES.items():
        for row in answer.extra.get(key) or []:
            out += [(said.format(row[f]), row[f], suffix) for f, said, suffix in fields if row.get(f) is not None]
    verdict = (answer.extra.get("rent_or_api") or {}).get("verdict") or {}
    api, rent = verdict.get("cheapest_api") or {}, verdict.get("cheapest_rental") or {}
    for value in (api.get("usd_per_million_output"), rent.get("usd_per_million_tokens")):
        if value is not None:
            out.append((f"${value:.4f}", value, ""))
    return out


def json_offer(item: Offer, data: dict[str, Any], display: dict[str, Any] | None) -> dict[str, Any]:
    """An offer's JSON with its `unit` and, with a display currency, `price_per_gpu_hour_display`,
    `price_per_hour_display` and `display_currency` (the existing keys unchanged)."""
    out = {**data, "unit": unit_name(item)}
    if display:
        per_unit, per_hour = in_display(item, display)
        out.update(
            price_per_gpu_hour_display=per_unit,
            price_per_hour_display=per_hour,
            display_currency=display["currency"],
        )
    return out


def json_tco(tco: Tco, data: dict[str, Any], display: dict[str, Any] | None) -> dict[str, Any]:
    """A TCO option's JSON with, under a display currency, `total_display`, `total_usd` and `display_currency`."""
    if not display or display["currency"] == "USD":
        return data
    other = total_twin(tco, display)
    if other is None:
        return data
    usd = other[0] if other[1] == "USD" else tco.total
    shown = tco.total if other[1] == "USD" else other[0]
    return {
        **data,
        "total_display": shown,
        "total_usd": usd,
        "display_currency": display["currency"],
    }
