"""What an answer says about offers beyond their price: not orderable (left out), second sources, zones.

Pure text helpers over `Offer`s and the knowledge layer's exclusion counts (`KB.excluded`), in English and
Chinese. Handlers add their output to `Answer.notes` / `Answer.extra`; `bot.render` adds the labels to each line.
"""

from __future__ import annotations

from handlers.common import as_of_text, money
from handlers.models import Offer

SHORT = {  # availability -> (English, Chinese) label
    "spot_only": ("Spot/Flex-start only", "仅限竞价/Flex-start"),
    "reservation_only": ("capacity reservation only", "仅限预留容量"),
    "preview": ("preview, no price", "预览版，无价格"),
    "unknown": ("availability unknown", "可用性未知"),
}
PRICING_WORDS = {
    "on_demand": ("on-demand", "按需"),
    "spot": ("spot", "竞价"),
    "reserved_1y": ("1-year reserved", "1年预留"),
    "reserved_3y": ("3-year reserved", "3年预留"),
}
MAX_SOURCE_NOTES = 3


def _pick(pair: tuple[str, str], lang: str) -> str:
    return pair[1] if lang == "zh" else pair[0]


def _sentence(text: str | None) -> str:
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def where_and_what(item: Offer, lang: str = "en") -> list[str]:
    """Labels for one offer line: not orderable as priced, and the other source's figure."""
    labels = []
    if item.availability != "orderable":
        labels.append(_pick(SHORT[item.availability], lang))
    for other in item.other_prices[:1]:
        date = as_of_text(other, lang)
        word = "other source" if lang != "zh" else "另一来源"
        labels.append(
            f"{word}: {money(other['price_per_gpu_hour_usd'])}/GPU-h ({money(other['price_per_hour_usd'])}/h, {date})"
        )
    return labels


def excluded_note(excluded: list[dict], pricing: str, lang: str = "en") -> str | None:
    """One short line: how many offers were left out of a ranking because they cannot be ordered, and why."""
    if not excluded:
        return None
    total = sum(e["count"] for e in excluded)
    by_kind: dict[str, int] = {}
    for e in excluded:
        by_kind[e["availability"]] = by_kind.get(e["availability"], 0) + e["count"]
    parts = ", ".join(f"{n} {_pick(SHORT.get(kind, (kind, kind)), lang)}" for kind, n in by_kind.items())
    word = _pick(PRICING_WORDS.get(pricing, (pricing, pricing)), lang)
    if lang == "zh":
        return f"已排除 {total} 个无法以{word}方式购买的报价：{parts}。"
    return f"{total} offers left out: they cannot be ordered {word} ({parts})."


def other_price_notes(offers: list[Offer], lang: str = "en") -> list[str]:
    """For offers whose two sources disagree: both figures, their sources and dates, and which one ranks, why."""
    notes: list[str] = []
    seen: set[tuple] = set()
    for item in offers:
        key = (item.instance_type, item.region, item.pricing)
        if not item.other_prices or key in seen:
            continue
        seen.add(key)
        if len(notes) == MAX_SOURCE_NOTES:
            break
        others = "; ".join(
            f"{money(o['price_per_hour_usd'])}/h ({money(o['price_per_gpu_hour_usd'])}/GPU-h) per {o['source']}"
            + (f", as of {o.get('as_of') or '?'}" if o.get("as_of_known", True) else f", {as_of_text(o, lang)}")
            for o in item.other_prices
        )
        word = _pick(PRICING_WORDS.get(item.pricing, (item.pricing, item.pricing)), lang)
        head = f"{item.instance_type} {item.region} {word}"
        if lang == "zh":
            notes.append(
                f"{head}：两个来源不一致。采用 {money(item.price_per_hour_usd)}/h（{item.source}，截至 "
                f"{item.as_of}）；另一来源：{others}。{item.price_trust_reason}"
            )
        else:
            notes.append(
                f"{head}: {money(item.price_per_hour_usd)}/h per {item.source}, as of {item.as_of}; "
                f"other source: {others}. {_sentence(item.price_trust_reason)}"
            )
    return notes
