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

from handlers.common import money, pricing_label
from handlers.language import has_chinese
from handlers.models import Query

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
_NUM = r"(?P<num>\d+(?:[.,]\d+)?)"
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
_VGPU = re.compile(r"vgpu|fractional|slice|partial gpu|分片|切片", re.IGNORECASE)
_CNY = {"¥", "￥", "CNY", "RMB", "人民币", "元", "块", "cny", "rmb", "yuan"}
_ZH_ALERT = re.compile(r"(?:提醒|通知).{0,6}$|^(?:提醒我|通知我)")

PHRASES: dict[str, dict[str, str]] = {
    "usage": {
        "en": "Write an alert as a question with a price, e.g. `/gpu alert H100 spot below 2.50` or "
        "`/gpu alert A100 on aws below 1.2 per GPU-hour` (USD per GPU-hour unless you name a currency); "
        "`/gpu alerts` lists this channel's alerts, `/gpu alert remove N` removes one.",
        "zh": "这样写提醒：`/gpu alert H100 spot below 2.50` 或 `H100竞价低于每卡每小时2美元时提醒我`"
        "（默认单位：美元/GPU·小时）；`/gpu alerts` 列出本频道的提醒，`/gpu alert remove N` 删除一条。",
    },
    "no_threshold": {
        "en": "I could not find the price to watch for in {text!r}: say e.g. `below 2.50`.",
        "zh": "在“{text}”中没有找到提醒的价格：请写明例如“低于每卡每小时2美元”。",
    },
    "no_gpu": {
        "en": "Which GPU should the alert watch? I found none in {text!r}.",
        "zh": "提醒要关注哪款 GPU？在“{text}”中没有找到。",
    },
    "several_gpus": {
        "en": "One GPU per alert, please (found {gpus}).",
        "zh": "每条提醒只能关注一款 GPU（找到：{gpus}）。",
    },
    "what": {"en": "{count}{gpu} {pricing}{where}", "zh": "{count}{gpu} {pricing}{where}"},
    "created": {
        "en": "Alert #{id} set: I will post here when the cheapest {what} is at or below {threshold} per "
        "GPU-hour. Now: {now} ({offer}).",
        "zh": "已设置提醒 #{id}：当最便宜的 {what} 不高于每 GPU 小时 {threshold} 时，我会在这里发消息。"
        "当前：{now}（{offer}）。",
    },
    "created_below": {
        "en": "Alert #{id} set, but the cheapest {what} is already at or below {threshold}: {now} "
        "({offer}). I will not post now; I will post at the next crossing, once the price has "
        "risen above {rearm} and falls back to {threshold} or below.",
        "zh": "已设置提醒 #{id}，但最便宜的 {what} 已经不高于 {threshold}：当前 {now}（{offer}）。"
        "现在不会发消息；价格回升到 {rearm} 以上、再次降到 {threshold} 及以下时我会发消息。",
    },
    "fired": {
        "en": ":bell: Price alert #{id}: the cheapest {what} is now {now} per GPU-hour, at or below your "
        "{threshold}. {offer}.",
        "zh": ":bell: 价格提醒 #{id}：最便宜的 {what} 现为每 GPU 小时 {now}，已不高于你设定的 {threshold}。{offer}。",
    },
    "previous": {"en": "Previously {price} on {date}.", "zh": "此前为 {price}（{date}）。"},
    "previous_unknown": {"en": "No earlier price recorded.", "zh": "此前没有记录价格。"},
    "offer": {
        "en": "{instance} in {region} on {provider}, {price_native} per instance-hour (source: {source}, as of "
        "{as_of})",
        "zh": "{provider} {region} 的 {instance}，每实例小时 {price_native}（来源：{source}，日期 {as_of}）",
    },
    "rearm": {
        "en": "It fires again after the price rises above {rearm} (+5 %).",
        "zh": "价格回升到 {rearm}（+5%）以上后才会再次提醒。",
    },
    "button": {"en": "See the ranking", "zh": "查看排名"},
    "invite": {
        "en": "The bot posts the alert itself: invite it to this channel (`/invite @gpubot`).",
        "zh": "提醒由机器人自己发送：请把它邀请到本频道（`/invite @gpubot`）。",
    },
    "list_title": {"en": "Price alerts in this channel:", "zh": "本频道的价格提醒："},
    "list_none": {"en": "No price alerts in this channel yet.", "zh": "本频道还没有价格提醒。"},
    "list_line": {
        "en": "#{id} {what} at or below {threshold} per GPU-hour; {state}; last {last}",
        "zh": "#{id} {what} 不高于每 GPU 小时 {threshold}；{state}；最近 {last}",
    },
    "armed": {"en": "waiting for the price to drop", "zh": "等待降价"},
    "disarmed": {"en": "below now: waiting for a rise above {rearm}", "zh": "当前已低于：等待回升到 {rearm} 以上"},
    "removed": {"en": "Alert #{id} removed.", "zh": "已删除提醒 #{id}。"},
    "not_found": {
        "en": "There is no alert #{id} in this channel (`/gpu alerts` lists them).",
        "zh": "本频道没有提醒 #{id}（`/gpu alerts` 可列出）。",
    },
    "remove_usage": {
        "en": "Which alert? `/gpu alert remove N` (N from `/gpu alerts`).",
        "zh": "删除哪一条？`/gpu alert remove N`（N 见 `/gpu alerts`）。",
    },
}


class AlertParseError(ValueError):
    """The text is not an alert that can be watched; the message says what is missing, with an example."""


@dataclass(frozen=True, slots=True)
class ParsedAlert:
    query: Query
    amount: float
    currency: str  # USD or CNY
    allow_vgpu: bool


def phrase(key: str, lang: str = "en", **values: object) -> str:
    table = PHRASES[key]
    return (table.get(lang) or table["en"]).format(**values)


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
    if match is None:
        raise AlertParseError(phrase("no_threshold", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    amount = float(match.group("num").replace(",", "."))
    marks = {m for m in (match.group("pre"), match.group("post")) if m}
    currency = "CNY" if marks & _CNY or any(m.lower() in _CNY for m in marks) else "USD"
    rest = _NOISE.sub(" ", text[: match.start()] + " " + text[match.end() :])
    query = parse(rest, vocab).model_copy(update={"text": text, "language": lang})
    if not query.gpus:
        raise AlertParseError(phrase("no_gpu", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    if len(query.gpus) > 1:
        raise AlertParseError(phrase("several_gpus", lang, gpus=", ".join(query.gpus)))
    return ParsedAlert(query, amount, currency, bool(_VGPU.search(text)))


def what_text(spec, lang: str) -> str:
    """ "H100 spot on aws in us-east-1" (a spec from `knowledge.alerts`)."""
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
    shown = money(alert.threshold_amount, alert.currency)
    return shown if alert.currency == "USD" else f"{shown} (≈ {money(alert.threshold_usd)})"


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
        as_of=offer.get("as_of") or ("日期未知" if lang == "zh" else "date unknown"),
    )


def created_text(alert, offer: dict) -> str:
    lang = alert.language
    as_of = offer.get("as_of") or ("日期未知" if lang == "zh" else "date unknown")
    where = f"{offer['instance_type']}, {offer['region']}, {offer['provider']}; {offer.get('source') or '?'}, {as_of}"
    values = dict(
        id=alert.id,
        what=what_text(alert.spec, lang),
        threshold=_threshold(alert),
        now=money(offer["price_per_gpu_hour_usd"]),
        offer=where,
        rearm=money(alert.rearm_above),
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
    lines = [
        phrase(
            "fired",
            lang,
            id=alert.id,
            what=what_text(alert.spec, lang),
            now=money(price),
            threshold=_threshold(alert),
            offer=_offer_text(offer, lang),
        )
    ]
    if previous is not None and previous_at is not None:
        lines.append(phrase("previous", lang, price=money(previous), date=previous_at.date().isoformat()))
    else:
        lines.append(phrase("previous_unknown", lang))
    lines.append(phrase("rearm", lang, rearm=money(alert.rearm_above)))
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


def list_text(alerts, lang: str) -> str:
    if not alerts:
        return phrase("list_none", lang)
    lines = [phrase("list_title", lang)]
    for a in alerts:
        state = phrase("armed", lang) if a.armed else phrase("disarmed", lang, rearm=money(a.rearm_above))
        last = (
            f"{money(a.last_price)} ({a.last_checked_at.date().isoformat()})"
            if a.last_price is not None and a.last_checked_at
            else "—"
        )
        lines.append(
            "• "
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
