"""Price alerts as words: reading "H100 spot below 2.50" / "H100竞价低于每卡每小时2美元时提醒我", and the replies.

`parse_alert(text, vocab)` is pure: it finds the threshold (a number after "below", "under", "at most", "<",
"低于", "跌破" ...; USD per GPU-hour unless a currency is named: `$`, `USD`, `美元` or `¥`, `CNY`, `元`, `人民币`) and
parses the rest with the question parser (`handlers.parse`), so an alert watches exactly what the same question
would rank: GPU, count, pricing model (on-demand unless one is named), providers, regions. vGPU slices count only
when the text says so ("vgpu", "fractional", "slice", "分片"). A text without a GPU or a threshold is refused
with a message that shows how to write one.

The replies (`created_text`, `fired_message`, `list_text`, ...) are in the alert's language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from handlers.common import as_of_text, money, pricing_label
from handlers.i18n import scoped
from handlers.language import has_chinese
from handlers.models import Query
from knowledge.errors import UserError

__all__ = [
    "AlertParseError",
    "ParsedAlert",
    "created_text",
    "fired_message",
    "is_alert_text",
    "list_text",
    "parse_alert",
    "phrase",
    "ranking_query",
]

_CUR = r"(?P<pre>US\$|\$|¥|￥|USD|CNY|RMB)?\s*"
_NUM = r"(?P<num>\d+(?:[.,]\d+)?(?:[eE][+-]?\d+)?)"  # 2e1 is 20 (exponent read right, never dropped)
MIN_THRESHOLD, MAX_THRESHOLD = 0.0001, 100_000.0  # per GPU-hour, in the alert's currency: outside is a typo
_UNIT = r"\s*(?P<post>美元|美金|人民币|元|块|usd|dollars?|cny|rmb|yuan)?"
_EN = re.compile(
    r"\b(?:below|under|less than|at most|drops? (?:below|under|to)|falls? (?:below|under|to)|"
    r"<=?|≤)\s*(?:(?:a|an|one)\s+)?" + _CUR + _NUM + _UNIT,
    re.IGNORECASE,
)
_ZH = re.compile(
    r"(?:低于|少于|小于|不高于|不超过|跌破|降到|降至|跌到|跌至)\s*"
    r"(?:每(?:张|块)?(?:卡|GPU|gpu)\s*每?\s*(?:小时|时)|每\s*GPU\s*小时|每卡时)?\s*" + _CUR + _NUM + _UNIT
)
_NOISE = re.compile(
    r"(?:时|的时候)?(?:请)?(?:提醒我|通知我|提醒|告诉我)|per\s+gpu[- ]?(?:hour|hr|h)\b|"
    r"/\s*gpu[- ]?h(?:our)?\b|\b(?:alert me|notify me|tell me)\b(?:\s+when)?|"
    r"每(?:张|块)?(?:卡|GPU)\s*每?\s*(?:小时|时)",
    re.IGNORECASE,
)
_STOCK = re.compile(r"\b(?:back\s+)?in[- ]stock\b|\bavailable\s+again\b|有货|补货|到货", re.IGNORECASE)
_VGPU = re.compile(r"vgpu|fractional|slice|partial gpu|分片|切片", re.IGNORECASE)
_CNY = {"¥", "￥", "CNY", "RMB", "人民币", "元", "块", "cny", "rmb", "yuan"}
_ZH_ALERT = re.compile(r"(?:提醒|通知).{0,6}$|^(?:提醒我|通知我)")


class AlertParseError(UserError, ValueError):
    """The text is not an alert that can be watched; the message says what is missing, with an example."""


@dataclass(frozen=True, slots=True)
class ParsedAlert:
    query: Query
    amount: float
    currency: str  # USD or CNY
    allow_vgpu: bool
    stock: str | None = None  # "in_stock": a stock alert ("H100 on runpod in stock"), no price threshold
    named_currency: bool = False  # the text names its currency ("$", "¥", "人民币"); else a preference may set it


phrase = scoped("alerts")


def _is_cjk(text: str) -> bool:
    return has_chinese(text)


def is_alert_text(text: str) -> bool:
    """A Chinese sentence that asks to be reminded of a price ("…低于…时提醒我")."""
    return bool(_ZH_ALERT.search(text.strip())) and bool(_ZH.search(text))


def parse_alert(text: str, vocab) -> ParsedAlert:
    """The query and threshold in an alert text; `AlertParseError` when it has no GPU or no threshold."""
    from handlers.parse import parse

    lang = "zh" if _is_cjk(text) else "en"
    match = _ZH.search(text) or _EN.search(text)
    if match is None and (stock := _STOCK.search(text)):
        return _stock_alert(text, text[: stock.start()] + " " + text[stock.end() :], lang, vocab)
    if match is None:
        raise AlertParseError(phrase("no_threshold", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    amount = float(match.group("num").replace(",", "."))
    if not (MIN_THRESHOLD <= amount <= MAX_THRESHOLD):  # 1e309 is inf, 1e-320 tiny: refused, never misread
        raise AlertParseError(phrase("threshold_range", lang, text=text[:200], most=f"{MAX_THRESHOLD:,.0f}"))
    marks = {m for m in (match.group("pre"), match.group("post")) if m}
    currency = "CNY" if marks & _CNY or any(m.lower() in _CNY for m in marks) else "USD"
    rest = _NOISE.sub(" ", text[: match.start()] + " " + text[match.end() :])
    query = parse(rest, vocab).model_copy(update={"text": text, "language": lang})
    if not query.gpus:
        raise AlertParseError(phrase("no_gpu", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    if len(query.gpus) > 1:
        raise AlertParseError(phrase("several_gpus", lang, gpus=", ".join(query.gpus)))
    if excluded := [*query.exclude_providers, *query.exclude_pricing, *query.exclude_region_names, *query.exclude_gpus]:
        # an alert watches what it names; "except aws" cannot be stored: said, never silently dropped
        raise AlertParseError(phrase("no_exclusions", lang, what=", ".join(excluded)) + "\n" + phrase("usage", lang))
    return ParsedAlert(query, amount, currency, bool(_VGPU.search(text)), named_currency=bool(marks))


def _stock_alert(text: str, rest: str, lang: str, vocab) -> ParsedAlert:
    from handlers.parse import parse

    query = parse(_NOISE.sub(" ", rest), vocab).model_copy(update={"text": text, "language": lang})
    if len(query.gpus) != 1:
        key = "no_gpu" if not query.gpus else "several_gpus"
        raise AlertParseError(phrase(key, lang, text=text[:200], gpus=", ".join(query.gpus)))
    return ParsedAlert(query, 0.0, "USD", bool(_VGPU.search(text)), "in_stock")


def what_text(spec, lang: str) -> str:
    """ "H100 spot on aws in us-east-1" (a spec from `knowledge.state.alerts`)."""
    where = ""
    if spec.providers:
        where += (" @ " if lang == "zh" else " on ") + ", ".join(spec.providers)
    if spec.regions:
        where += (" @ " if lang == "zh" else " in ") + ", ".join(spec.regions)
    count = f"{spec.gpu_count:g}x " if spec.gpu_count else ""
    return phrase(
        "what", lang, count=count, gpu=" / ".join(spec.gpus), pricing=pricing_label(spec.pricing, lang), where=where
    )


def _threshold(alert) -> str:
    return _in_currency(alert, alert.threshold_usd, amount=alert.threshold_amount)


def _in_currency(alert, usd: float, amount: float | None = None) -> str:
    """A USD figure in the alert's own currency, with its USD twin ("¥10.00 (≈ $1.38)"): at the rate the alert's
    threshold was set with (threshold as asked / threshold in USD), so every figure of one alert compares alike."""
    if alert.currency == "USD" or not alert.threshold_usd:
        return money(usd)
    shown = amount if amount is not None else usd * alert.threshold_amount / alert.threshold_usd
    return f"{money(shown, alert.currency)} (≈ {money(usd)})"


def _offer_text(offer: dict, lang: str) -> str:
    native = money(offer["price_per_hour"], offer.get("currency") or "USD")
    return phrase(
        "offer",
        lang,
        instance=offer["instance_type"],
        region=offer["region"],
        provider=offer["provider"],
        price_native=native,
        source=offer.get("source") or "unknown",
        as_of=as_of_text(offer, lang),
    )


def created_text(alert, offer: dict) -> str:
    lang = alert.language
    if alert.spec.stock:
        key = "stock_created" if alert.armed else "stock_created_in"
        return phrase(key, lang, id=alert.id, what=what_text(alert.spec, lang), offer=_offer_text(offer, lang))
    as_of = as_of_text(offer, lang)
    where = f"{offer['instance_type']}, {offer['region']}, {offer['provider']}; {offer.get('source') or '?'}, {as_of}"
    values = dict(
        id=alert.id,
        what=what_text(alert.spec, lang),
        threshold=_threshold(alert),
        now=_in_currency(alert, offer["price_per_gpu_hour_usd"]),
        offer=where,
        rearm=_in_currency(alert, alert.rearm_above),
    )
    return phrase("created" if alert.armed else "created_below", lang, **values)


def ranking_query(alert) -> Query:
    """The question behind an alert's "See the ranking" button: the cheapest offers it watches."""
    spec = alert.spec
    return Query(
        text=alert.text[:500],
        intent="cheapest",
        gpus=list(spec.gpus),
        gpu_count=spec.gpu_count,
        pricing=spec.pricing,
        providers=list(spec.providers),
        regions=list(spec.regions),
        language=alert.language,
    )


def fired_text(alert, offer: dict, price: float, previous: float | None, previous_at) -> str:
    lang = alert.language
    if alert.spec.stock:
        stock = phrase("stock_word_" + str(offer.get("stock") or "in_stock"), lang)
        return phrase(
            "stock_fired",
            lang,
            id=alert.id,
            what=what_text(alert.spec, lang),
            stock=stock,
            offer=_offer_text(offer, lang),
        )
    lines = [
        phrase(
            "fired",
            lang,
            id=alert.id,
            what=what_text(alert.spec, lang),
            now=_in_currency(alert, price),
            threshold=_threshold(alert),
            offer=_offer_text(offer, lang),
        )
    ]
    if previous is not None and previous_at is not None:
        when = previous_at.date().isoformat()
        lines.append(phrase("previous", lang, price=_in_currency(alert, previous), date=when))
    else:
        lines.append(phrase("previous_unknown", lang))
    lines.append(phrase("rearm", lang, rearm=_in_currency(alert, alert.rearm_above)))
    return "\n".join(lines)


def fired_message(
    alert, offer: dict, price: float, previous: float | None, previous_at, button_value: str | None, action_id: str
) -> dict:
    """The channel post of a firing: text, a section with it and a "See the ranking" button."""
    text = fired_text(alert, offer, price, previous, previous_at)
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    blocks: list[dict] = [{"type": "section", "text": {"type": "mrkdwn", "text": escaped[:3000]}}]
    if button_value:
        blocks.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": action_id,
                        "value": button_value,
                        "text": {"type": "plain_text", "text": phrase("button", alert.language)},
                    }
                ],
            }
        )
    return {"text": escaped, "blocks": blocks}


def list_text(alerts, lang: str, *, every_channel: bool = False) -> str:
    """The alerts of one channel; `every_channel` (the CLI without --channel): of every channel, each line saying
    whose (workspace/channel)."""
    if not alerts:
        return phrase("list_none_anywhere" if every_channel else "list_none", lang)
    lines = [phrase("list_title_anywhere" if every_channel else "list_title", lang)]
    for a in alerts:
        state = phrase("armed", lang) if a.armed else phrase("disarmed", lang, rearm=_in_currency(a, a.rearm_above))
        last = (
            f"{_in_currency(a, a.last_price)} ({a.last_checked_at.date().isoformat()})"
            if a.last_price is not None and a.last_checked_at
            else "—"
        )
        whose = f"[{a.team}/{a.channel}] " if every_channel else ""
        if a.spec.stock:  # a stock alert: no threshold; waiting for stock, or for it to run out and return
            state = phrase("stock_armed" if a.armed else "stock_disarmed", lang)
            line = phrase("stock_list_line", lang, id=a.id, what=what_text(a.spec, lang), state=state)
            lines.append("• " + whose + line)
            continue
        lines.append(
            "• "
            + whose
            + phrase(
                "list_line",
                lang,
                id=a.id,
                what=what_text(a.spec, lang),
                threshold=_threshold(a),
                state=state,
                last=last,
            )
        )
    return "\n".join(lines)
