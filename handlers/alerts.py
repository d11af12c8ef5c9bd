"""Price alerts' replies (`created_text`, `fired_message`, `list_text`, ...), in the alert's language, and the query
an alert is priced with (`ranking_query`). Reading an alert's words is the parser's (`handlers.parse.alert`)."""

from __future__ import annotations

from handlers.common import as_of_text, money, pricing_label
from handlers.i18n import scoped
from handlers.models import Query

__all__ = [
    "created_text",
    "fired_message",
    "list_text",
    "phrase",
    "ranking_query",
]

phrase = scoped("alerts")


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
