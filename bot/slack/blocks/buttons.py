"""Buttons that refine an answer. The query travels in the button value (`encode_value`, within Slack's 2000
characters); the Slack app decodes it (`decode_value`), changes one field and answers again."""

from __future__ import annotations

import json
from typing import Any

from bot.render_train import switch_buttons
from bot.render_work import work_buttons
from bot.slack.escape import cut, slack_plain
from bot.slack.limits import LIMITS
from bot.slack.phrases import phrase
from handlers.models import Answer, Query
from handlers.ranking import MAX_TOP

__all__ = ["ACTION_IDS", "MAX_SUGGESTIONS", "action_buttons", "button", "decode_value", "encode_value"]

ACTION_IDS = {
    "share": "gpu_share",
    "toggle": "gpu_toggle_pricing",
    "more": "gpu_more_results",
    "pitfalls": "gpu_show_pitfalls",
    "why": "gpu_show_why",
    "suggest": "gpu_suggest_{n}",
    "settings_open": "gpu_settings_open",
}
MAX_SUGGESTIONS = 5
TOP_N_INTENTS = ("cheapest",)  # intents whose handler honours Query.top_n, so "More results" shows more


def encode_value(query: Query, **extra: Any) -> str | None:
    """The button value: `{"q": <query>, ...extra}` as compact JSON within 2000 characters (text cut if needed);
    None if even that does not fit."""
    data = query.model_dump(mode="json", exclude_defaults=True)
    for attempt in range(8):
        value = json.dumps({"q": data, **extra}, ensure_ascii=False, separators=(",", ":"))
        if len(value) <= LIMITS["button_value"]:
            return value
        excess = len(value) - LIMITS["button_value"]
        text = data.get("text", "")
        if text and attempt < 4:
            data["text"] = text[: max(0, len(text) - excess - 8)]
        elif data.get("issues"):
            data.pop("issues")
        else:
            data.pop("text", None)
    return None


def decode_value(value: str) -> tuple[Query, dict[str, Any]]:
    """(query, extra) from a button value made by `encode_value`; ValueError when it is not one."""
    try:
        data = json.loads(value)
        query = Query.model_validate(data.pop("q"))
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a gpubot button value: {exc}") from None
    return query, data


def button(text: str, value: str | None, action_id: str, style: str | None = None) -> dict | None:
    if value is None:
        return None
    button = {
        "type": "button",
        "action_id": action_id,
        "value": value,
        "text": {"type": "plain_text", "text": cut(slack_plain(text), LIMITS["button_text"]), "emoji": True},
    }
    if style:
        button["style"] = style
    return button


def _suggestion_picks(answer: Answer) -> list[dict[str, str]]:
    """Did-you-mean choices: the suggested name, the kind of name and the text it replaces."""
    picks: list[dict[str, str]] = []
    for issue in answer.query.issues:
        for candidate in issue.candidates:
            picks.append({"pick": candidate, "kind": issue.kind, "replaces": issue.text})
    known = {p["pick"] for p in picks}
    picks += [{"pick": s, "kind": "gpu", "replaces": ""} for s in answer.suggestions if s not in known]
    wanted = set(answer.suggestions)
    return [p for p in picks if p["pick"] in wanted][:MAX_SUGGESTIONS]


def _has_content(answer: Answer) -> bool:
    return any(
        [
            answer.offers,
            answer.context,
            answer.lines,
            answer.notes,
            answer.suggestions,
            answer.recommendations,
            answer.specs,
            answer.tco,
            answer.tco_options,
            answer.pitfalls,
            answer.rules,
        ]
    )


def action_buttons(answer: Answer, *, shareable: bool, why: bool = False) -> list[dict]:
    """Buttons that refine the answer; each carries the query, the Slack app applies the change."""
    from handlers import INTENTS

    query, lang = answer.query, answer.query.language
    if not _has_content(answer):
        return []  # a title-only answer (an apology) has nothing to share or refine
    defaulted = list(answer.extra.get("defaulted") or [])
    common: dict[str, Any] = {"d": defaulted} if defaulted else {}  # fields the channel's settings filled in
    buttons: list[dict | None] = []
    if shareable:
        buttons.append(button(phrase("btn.share", lang), encode_value(query, **common), ACTION_IDS["share"], "primary"))
    if query.intent in ("cheapest", "price") and (answer.offers or query.gpus or query.instance_types):
        label = phrase("btn.on_demand" if query.pricing == "spot" else "btn.spot", lang)
        buttons.append(button(label, encode_value(query, **common), ACTION_IDS["toggle"]))
    if answer.more > 0 and query.intent in TOP_N_INTENTS and len(answer.offers) < MAX_TOP:  # never past the cap
        buttons.append(
            button(
                phrase("btn.more", lang), encode_value(query, shown=len(answer.offers), **common), ACTION_IDS["more"]
            )
        )
    if "pitfalls" in INTENTS and query.intent != "pitfalls" and (query.gpus or query.providers or query.instance_types):
        buttons.append(button(phrase("btn.pitfalls", lang), encode_value(query, **common), ACTION_IDS["pitfalls"]))
    if why:  # the short answer left pitfalls, rules or details out: "Why" shows them (privately)
        buttons.append(button(phrase("btn.why", lang), encode_value(query, **common), ACTION_IDS["why"]))
    if query.intent == "work" and answer.extra.get("work"):  # switch the benchmark workload (bot/render_work.py)
        buttons += work_buttons(query, common, button, encode_value)
    buttons += switch_buttons(query, common, button, encode_value)  # train_cost, rent_or_api (bot/render_train.py)
    for n, pick in enumerate(_suggestion_picks(answer)):
        buttons.append(button(pick["pick"], encode_value(query, **pick, **common), ACTION_IDS["suggest"].format(n=n)))
    return [b for b in buttons if b is not None]
