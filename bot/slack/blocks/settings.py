"""Settings surfaces: `settings_message` (`/gpu settings`), `notice_message` (a command's short reply),
`home_settings_section` and `settings_modal` (App Home's form for the workspace defaults; `settings_from_view` reads
a submission back)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from bot.slack.blocks.base import section
from bot.slack.blocks.buttons import ACTION_IDS
from bot.slack.escape import cut, slack_escape, slack_plain
from bot.slack.limits import LIMITS, fit_blocks
from bot.slack.phrases import phrase
from handlers.i18n import t

__all__ = [
    "SETTINGS_MODAL_ID",
    "SETTING_KEYS",
    "home_settings_section",
    "notice_message",
    "settings_from_view",
    "settings_lines",
    "settings_message",
    "settings_modal",
]

SETTINGS_MODAL_ID = "gpu_settings_modal"  # callback_id of the workspace-defaults form
SETTING_KEYS = ("providers", "regions", "currency", "language", "pricing", "budget")


def setting_value(key: str, value: Any, lang: str) -> str:
    """A setting's value in the reader's words; unset: what gpubot does then ("all providers")."""
    if value is None or value == []:
        return phrase(f"settings.default.{key}", lang)
    if key == "budget":
        hourly = value.get("per") == "instance_hour"
        unit = (
            ("/hour" if hourly else "/GPU-hour")
            if lang == "en"
            else t(f"unit.per_{'' if hourly else 'gpu_'}hour", lang)
        )
        return f"{float(value['amount']):g} {value['currency']}{unit}"
    if key == "pricing":
        return t(f"pricing.{value}", lang)
    return ", ".join(value) if isinstance(value, list) else str(value)


def settings_lines(
    effective: dict[str, Any], origins: dict[str, str], workspace: dict[str, Any], lang: str
) -> list[str]:
    """One mrkdwn line per setting: its effective value and where it comes from (and a workspace value that the
    channel overrides)."""
    lines = []
    for key in SETTING_KEYS:
        origin = origins.get(key, "default")
        value = slack_escape(setting_value(key, effective.get(key), lang))
        line = f"• *{phrase(f'settings.key.{key}', lang)}*: {value} — _{phrase(f'settings.from.{origin}', lang)}_"
        if origin == "channel" and workspace.get(key) is not None:
            line += (
                " ("
                + slack_escape(phrase("settings.overrides", lang, value=setting_value(key, workspace[key], lang)))
                + ")"
            )
        lines.append(line)
    return lines


def settings_message(
    lang: str, effective: dict[str, Any], origins: dict[str, str], workspace: dict[str, Any], *, dm: bool = False
) -> dict[str, Any]:
    """`/gpu settings`: every setting of this channel, where it comes from, and how to change it."""
    title = phrase("settings.title_dm" if dm else "settings.title", lang)
    lines = settings_lines(effective, origins, workspace, lang)
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": title}},
        section("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("settings.help", lang)}]},
    ]
    text = title + "\n" + "\n".join(lines)
    return {"text": cut(text, LIMITS["fallback_text"]), "blocks": fit_blocks(blocks, lang=lang)}


def notice_message(text: str, *, hint: str | None = None) -> dict[str, Any]:
    """A short reply to a command (already mrkdwn-escaped by the caller), with an optional hint below it."""
    blocks: list[dict] = [section(cut(text, LIMITS["section_text"]))]
    if hint:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": cut(hint, 3000)}]})
    return {"text": cut(text, LIMITS["fallback_text"]), "blocks": blocks}


def home_settings_section(lang: str, workspace: dict[str, Any]) -> list[dict]:
    """App Home: the workspace defaults and the button that opens their form."""
    origins = {key: "workspace" if workspace.get(key) is not None else "default" for key in SETTING_KEYS}
    lines = settings_lines({k: workspace.get(k) for k in SETTING_KEYS}, origins, {}, lang)
    button = {
        "type": "button",
        "action_id": ACTION_IDS["settings_open"],
        "value": "workspace",
        "text": {"type": "plain_text", "text": phrase("btn.settings", lang)},
    }
    return [
        section(f"*{phrase('home.settings', lang)}*"),
        section("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("home.settings_hint", lang)}]},
        {"type": "actions", "elements": [button]},
    ]


def _option(text: str, value: str) -> dict:
    return {"text": {"type": "plain_text", "text": cut(slack_plain(text), 75)}, "value": value}


def _select(key: str, lang: str, values: Iterable[str], current: str | None) -> dict:
    not_set = _option(phrase("modal.not_set", lang), "-")
    options = [not_set] + [_option(t(f"pricing.{v}", lang) if key == "pricing" else v, v) for v in values]
    chosen = next((o for o in options if o["value"] == current), not_set)
    return {
        "type": "input",
        "block_id": f"setting_{key}",
        "optional": True,
        "label": {"type": "plain_text", "text": phrase(f"settings.key.{key}", lang)},
        "element": {"type": "static_select", "action_id": key, "options": options, "initial_option": chosen},
    }


def _text_input(key: str, lang: str, current: str, hint: str) -> dict:
    element: dict[str, Any] = {"type": "plain_text_input", "action_id": key}
    if current:
        element["initial_value"] = current
    return {
        "type": "input",
        "block_id": f"setting_{key}",
        "optional": True,
        "label": {"type": "plain_text", "text": phrase(f"settings.key.{key}", lang)},
        "hint": {"type": "plain_text", "text": phrase(hint, lang)},
        "element": element,
    }


def settings_modal(lang: str, team: str, workspace: dict[str, Any], providers: Iterable[str]) -> dict[str, Any]:
    """The form that edits the workspace defaults (a modal opened from App Home)."""
    chosen = list(workspace.get("providers") or [])
    provider_options = [_option(p, p) for p in providers]
    provider_element: dict[str, Any] = {
        "type": "multi_static_select",
        "action_id": "providers",
        "options": provider_options[:100],
    }
    initial = [o for o in provider_options if o["value"] in chosen]
    if initial:
        provider_element["initial_options"] = initial
    budget = workspace.get("budget")
    blocks = [
        {
            "type": "input",
            "block_id": "setting_providers",
            "optional": True,
            "label": {"type": "plain_text", "text": phrase("settings.key.providers", lang)},
            "hint": {"type": "plain_text", "text": phrase("modal.providers_hint", lang)},
            "element": provider_element,
        },
        _text_input("regions", lang, ", ".join(workspace.get("regions") or []), "modal.regions_hint"),
        _select("currency", lang, ("USD", "CNY"), workspace.get("currency")),
        _select("language", lang, ("en", "zh"), workspace.get("language")),
        _select("pricing", lang, ("on_demand", "spot", "reserved_1y", "reserved_3y"), workspace.get("pricing")),
        _text_input(
            "budget",
            lang,
            setting_value("budget", budget, "en") if budget else "",
            "modal.budget_hint",
        ),
    ]
    return {
        "type": "modal",
        "callback_id": SETTINGS_MODAL_ID,
        "private_metadata": json.dumps({"team": team, "lang": lang}),
        "title": {"type": "plain_text", "text": cut(phrase("modal.title", lang), 24)},
        "submit": {"type": "plain_text", "text": phrase("modal.save", lang)},
        "close": {"type": "plain_text", "text": phrase("modal.cancel", lang)},
        "blocks": blocks,
    }


def settings_from_view(view: dict) -> dict[str, Any]:
    """What a submitted settings form asks for: key -> raw value (None: not set, remove it)."""
    values = (view.get("state") or {}).get("values") or {}
    out: dict[str, Any] = {}
    for key in SETTING_KEYS:
        block = values.get(f"setting_{key}") or {}
        # the block's one input
        field: dict[str, Any] = next(iter(block.values()), {}) if isinstance(block, dict) else {}
        kind = field.get("type")
        if kind == "multi_static_select":
            picked = [o["value"] for o in field.get("selected_options") or []]
            out[key] = picked or None
        elif kind == "static_select":
            option = field.get("selected_option") or {}
            out[key] = option.get("value") if option.get("value") not in (None, "-") else None
        else:
            text = (field.get("value") or "").strip()
            out[key] = text or None
    return out
