"""Block Kit for Slack replies: Jinja renders mrkdwn fragments, Python builds the block structure.

`answer_message(answer)` -> `{"text": ..., "blocks": [...], "attachments": [{"blocks": [table]}]}`: a header with
the title, ONE `table` block for the offers (in `attachments`, where Slack's table-block reference puts it:
`bot.slack.tables`), sections for reasoning / recommendations / TCO / pitfalls / notes / rules (what the text
rendering shows; handlers put the readable form of specs in `lines`), a `context` line with the numbered sources
and how old they are, and buttons to refine the answer. `text` is always the plain-text rendering
(`bot.render.render_text`), escaped, so notifications and screen readers get the whole answer.

Slack's limits are enforced in one place, `fit_blocks` (50 blocks per message, 100 per view, 3000 characters per
section text, 150 per header, one table of <= 100 rows x 20 cells, 10 context elements, 25 buttons per actions
block, unique action ids <= 255, button text <= 75, button value <= 2000): anything longer degrades to
"… N more" instead of failing.

Every string that comes from a question or from data goes through `slack_escape` (mrkdwn) or `slack_plain`
(plain_text / table cells), so `<!channel>`, `@here` or `<@U123>` typed by a user is shown, never executed.

A channel's settings reach the reply through `Answer.extra` (set by the Slack app): `settings_notes` (what was
filtered, shown first in the context line and in the text fallback), `defaulted` (the fields the channel's
defaults filled in; every button carries them as `d`, so a click re-applies the channel's *current* settings) and
`display_currency` (`{"currency", "per_usd"}`: prices are also shown converted, "≈ ¥…").

Settings surfaces: `settings_message` (`/gpu settings`), `home_settings_section` and `settings_modal` (App Home's
form for the workspace defaults; `settings_from_view` reads a submission back), `digest_home_section`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from bot.render import answer_sources, gpu_label, num, offer_line, render_text
from bot.render_work import work_blocks, work_buttons
from handlers.common import money, place
from handlers.i18n import t
from handlers.models import Answer, Offer, Query

__all__ = [
    "ACTION_IDS",
    "LIMITS",
    "PHRASES",
    "SETTINGS_MODAL_ID",
    "answer_message",
    "decode_value",
    "digest_home_section",
    "encode_value",
    "error_message",
    "fit_blocks",
    "home_settings_section",
    "home_view",
    "notice_message",
    "phrase",
    "settings_from_view",
    "settings_message",
    "settings_modal",
    "slack_escape",
    "slack_plain",
]

LIMITS = {
    "blocks_message": 50,
    "blocks_view": 100,
    "section_text": 3000,
    "header_text": 150,
    "context_elements": 10,
    "context_text": 3000,
    "actions_elements": 25,
    "action_id": 255,
    "button_text": 75,
    "button_value": 2000,
    "table_rows": 100,
    "table_cells": 20,
    "fallback_text": 3500,
}

# what each button does; the Slack app registers one listener per id (suggestions are numbered)
ACTION_IDS = {
    "share": "gpu_share",
    "toggle": "gpu_toggle_pricing",
    "more": "gpu_more_results",
    "pitfalls": "gpu_show_pitfalls",
    "why": "gpu_show_why",
    "suggest": "gpu_suggest_{n}",
    "settings_open": "gpu_settings_open",
}
SETTINGS_MODAL_ID = "gpu_settings_modal"  # callback_id of the workspace-defaults form
SETTING_KEYS = ("providers", "regions", "currency", "language", "pricing", "budget")
MAX_SUGGESTIONS = 5
TOP_N_INTENTS = ("cheapest",)  # intents whose handler honours Query.top_n, so "More results" shows more

# Slack-only phrases (the shared ones are in handlers.i18n)
PHRASES: dict[str, dict[str, str]] = {
    "col.#": {"en": "#", "zh": "#"},
    "col.provider": {"en": "Provider", "zh": "云厂商"},
    "col.instance": {"en": "Instance", "zh": "实例规格"},
    "col.gpus": {"en": "GPUs", "zh": "GPU"},
    "col.region": {"en": "Region", "zh": "地域"},
    "col.pricing": {"en": "Pricing", "zh": "计费方式"},
    "col.per_gpu_hour": {"en": "Per GPU-hour", "zh": "每GPU小时"},
    "col.per_hour": {"en": "Per hour", "zh": "每小时"},
    "col.source": {"en": "Source", "zh": "来源"},
    "more": {"en": "… {n} more", "zh": "… 还有 {n} 条"},
    "more_sections": {"en": "… {n} more sections (see the full text)", "zh": "… 还有 {n} 段（见完整文本）"},
    "more_sources": {"en": "… {n} more sources", "zh": "… 还有 {n} 个来源"},
    "sources": {"en": "Sources", "zh": "来源"},
    "as_of": {"en": "as of", "zh": "截至"},
    "date_unknown": {"en": "date unknown, bundled", "zh": "数据日期未知，打包于"},
    "age.today": {"en": "today", "zh": "今天"},
    "age.days": {"en": "{n} days old", "zh": "{n} 天前"},
    "rules": {"en": "Rules applied", "zh": "应用的规则"},
    "pitfalls": {"en": "Pitfalls", "zh": "注意事项"},
    "recommendations": {"en": "Recommendations", "zh": "推荐"},
    "compute": {"en": "compute", "zh": "计算"},
    "storage": {"en": "storage", "zh": "存储"},
    "egress": {"en": "egress", "zh": "出网流量"},
    "btn.share": {"en": "Share in channel", "zh": "分享到频道"},
    "btn.spot": {"en": "Show spot prices", "zh": "看竞价价格"},
    "btn.on_demand": {"en": "Show on-demand prices", "zh": "看按需价格"},
    "btn.more": {"en": "More results", "zh": "更多结果"},
    "btn.pitfalls": {"en": "Show pitfalls", "zh": "注意事项"},
    "btn.why": {"en": "Why", "zh": "原因"},
    "pages": {"en": "Pricing pages", "zh": "官方价格页"},
    "details": {"en": "Details", "zh": "详细说明"},
    "shared_by": {"en": "Shared by <@{user}>", "zh": "由 <@{user}> 分享"},
    "working": {"en": "Looking that up…", "zh": "正在查询…"},
    "home.title": {"en": "gpubot: where to rent GPUs", "zh": "gpubot：去哪里租GPU"},
    "home.can_do": {"en": "What I can answer", "zh": "我能回答的问题"},
    "home_try": {
        "en": "Ask with `/gpu <question>`, mention me in a channel, or message me here.",
        "zh": "使用 `/gpu <问题>`、在频道里 @我，或在这里直接给我发消息。",
    },
    "home.freshness": {"en": "How fresh my data is", "zh": "数据有多新"},
    "built_at": {"en": "Knowledge base built", "zh": "知识库构建于"},
    "offers": {"en": "offers", "zh": "条报价"},
    "home.digests": {"en": "Digest subscriptions", "zh": "价格摘要订阅"},
    "home.no_digests": {
        "en": "No digest subscriptions for this workspace yet.",
        "zh": "本工作区还没有价格摘要订阅。",
    },
    "home.digest_hint": {
        "en": "Subscribe a channel with `/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] "
        "[threshold 2] [quiet]` in it.",
        "zh": "在频道中输入 `/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] "
        "[quiet]` 即可订阅。",
    },
    "digest.line": {"en": "daily at {hour:02d}:00 {tz}", "zh": "每天 {hour:02d}:00（{tz}）"},
    "digest.gpus": {"en": "GPUs: {gpus}", "zh": "GPU：{gpus}"},
    "digest.all_gpus": {"en": "all GPUs", "zh": "全部GPU"},
    "digest.threshold": {"en": "moves of {pct}% or more", "zh": "变动 ≥ {pct}%"},
    "digest.quiet": {"en": "quiet on days without changes", "zh": "无变化时不发送"},
    "digest.off": {"en": "off: {reason}", "zh": "已停用：{reason}"},
    "settings.context": {"en": "Settings", "zh": "设置"},
    "settings.title": {"en": "Settings for this channel", "zh": "本频道的设置"},
    "settings.title_dm": {"en": "Settings for this conversation", "zh": "本会话的设置"},
    "settings.from.channel": {"en": "this channel", "zh": "本频道"},
    "settings.from.workspace": {"en": "workspace", "zh": "工作区"},
    "settings.from.default": {"en": "gpubot's default", "zh": "gpubot 默认"},
    "settings.overrides": {"en": "workspace: {value}", "zh": "工作区：{value}"},
    "settings.help": {
        "en": "Change with `/gpu set providers aws,alibaba` (this channel) or `/gpu set workspace providers aws` "
        "(every channel without its own); remove with `/gpu unset providers` (`/gpu unset all`).",
        "zh": "修改：`/gpu set providers aws,alibaba`（本频道）或 `/gpu set workspace providers aws`（所有未单独设置的"
        "频道）；删除：`/gpu unset providers`（`/gpu unset all`）。",
    },
    "settings.key.providers": {"en": "providers", "zh": "云厂商"},
    "settings.key.regions": {"en": "regions", "zh": "地域"},
    "settings.key.currency": {"en": "currency", "zh": "币种"},
    "settings.key.language": {"en": "language", "zh": "语言"},
    "settings.key.pricing": {"en": "pricing", "zh": "计费方式"},
    "settings.key.budget": {"en": "budget (per GPU-hour)", "zh": "预算（每GPU小时）"},
    "settings.default.providers": {"en": "all", "zh": "全部"},
    "settings.default.regions": {"en": "all", "zh": "全部"},
    "settings.default.currency": {"en": "as quoted; totals in USD", "zh": "按报价币种；合计用美元"},
    "settings.default.language": {"en": "the question's", "zh": "跟随提问语言"},
    "settings.default.pricing": {"en": "as asked (on-demand when not said)", "zh": "按提问（未说明时为按需）"},
    "settings.default.budget": {"en": "none", "zh": "不限"},
    "home.settings": {"en": "Workspace defaults", "zh": "工作区默认设置"},
    "home.settings_hint": {
        "en": "Every channel uses these unless it has its own (`/gpu set ...` in the channel; `/gpu settings` shows "
        "them).",
        "zh": "未单独设置的频道都使用这些默认值（在频道中用 `/gpu set ...` 单独设置，`/gpu settings` 查看）。",
    },
    "btn.settings": {"en": "Edit workspace defaults", "zh": "编辑工作区默认设置"},
    "modal.title": {"en": "Workspace defaults", "zh": "工作区默认设置"},
    "modal.save": {"en": "Save", "zh": "保存"},
    "modal.cancel": {"en": "Cancel", "zh": "取消"},
    "modal.not_set": {"en": "not set", "zh": "不设置"},
    "modal.providers_hint": {"en": "Only these clouds (empty: all).", "zh": "只看这些云厂商（留空：全部）。"},
    "modal.regions_hint": {
        "en": "Region ids, comma-separated, e.g. us-east-1, cn-hangzhou (empty: all).",
        "zh": "地域 ID，用逗号分隔，例如 us-east-1, cn-hangzhou（留空：全部）。",
    },
    "modal.budget_hint": {
        "en": "Most to pay per GPU-hour, e.g. 2 USD/GPU-hour or 15 CNY/GPU-hour (empty: none).",
        "zh": "每GPU小时最高价格，例如 2 USD/GPU-hour 或 15 CNY/GPU-hour（留空：不限）。",
    },
}

TABLE_COLUMNS = ("#", "provider", "instance", "gpus", "region", "pricing", "per_gpu_hour", "per_hour", "source")
_RIGHT_ALIGNED = {"#", "gpus", "per_gpu_hour", "per_hour"}


def phrase(key: str, lang: str = "en", **values: object) -> str:
    """A Slack-only phrase in `lang` (English when missing)."""
    phrases = PHRASES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)


# --- escaping ---------------------------------------------------------------------------------------------

_BROADCAST = re.compile(r"@(channel|here|everyone)", re.IGNORECASE)  # no \b: "@herex" cut to "@here…" pings
_SPECIAL = re.compile(r"<([!@#])")
_JOINER = "\u2060"  # WORD JOINER: invisible, and breaks Slack's mention syntax


def slack_escape(value: object) -> str:
    """Text for mrkdwn: `& < >` escaped (so `<!channel>`, `<@U1>`, `<#C1>` show literally) and `@here` defused."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@" + _JOINER + m.group(1), text)


_SPAN_MARKS = str.maketrans({"*": "\u2217", "_": "\u02cd", "~": "\u223c", "`": "\u02cb"})


def slack_inline(value: object) -> str:
    """`slack_escape` for a value placed inside `*bold*`, `_italic_` or `` `code` ``: look-alike characters stand in
    for the mrkdwn span marks, so the value cannot end the span around it early."""
    return slack_escape(value).translate(_SPAN_MARKS)


def slack_plain(value: object) -> str:
    """Text for plain_text fields and table cells: no entities, but mention and broadcast syntax defused."""
    text = "" if value is None else str(value)
    text = _SPECIAL.sub(lambda m: "<" + _JOINER + m.group(1), text)
    return _BROADCAST.sub(lambda m: "@" + _JOINER + m.group(1), text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- templates ----------------------------------------------------------------------------------------------


@cache
def _environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot", "templates"),
        autoescape=False,  # mrkdwn is not HTML: every value is piped through slack_escape explicitly
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # templates ship with the package: no stat() per render
    )
    env.filters["slack_escape"] = slack_escape
    env.filters["slack_inline"] = slack_inline
    env.filters["num"] = num
    return env


def _render(template: str, lang: str, **values: Any) -> str:
    values.setdefault("label", lambda key: phrase(key, lang))
    text = _environment().get_template(template).render(**values)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


# --- building blocks ------------------------------------------------------------------------------------------


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _sections(text: str, limit: int = LIMITS["section_text"]) -> list[dict]:
    """Sections holding `text`, split at line ends so each stays within the section limit."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines():
        line = _cut(line, limit)
        if current and len(current) + 1 + len(line) > limit:
            chunks.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current.strip():
        chunks.append(current)
    return [_section(chunk) for chunk in chunks if chunk.strip()]


def _header(title: str) -> list[dict]:
    title = " ".join(title.split()) or "gpubot"
    head = {
        "type": "header",
        "text": {"type": "plain_text", "text": _cut(slack_plain(title), LIMITS["header_text"]), "emoji": True},
    }
    if len(title) <= LIMITS["header_text"]:
        return [head]
    return [head, *_sections(slack_escape(title))]  # the full title, too long for a header


def _cell(text: str) -> dict:
    return {"type": "raw_text", "text": slack_plain(text) or "—"}


def _offer_cells(n: int, item: Offer, source_no: int | str, lang: str, display: dict | None = None) -> list[str]:
    per_gpu = money(item.price_per_gpu_hour, item.currency)
    shown = (display or {}).get("currency") or "USD"
    if item.currency != shown:  # the channel's currency (USD unless set), converted
        rate = float((display or {}).get("per_usd") or 1.0) if shown != "USD" else 1.0
        per_gpu += f" (≈ {money(item.price_per_gpu_hour_usd * rate, shown)})"
    instance = item.instance_type
    labels = [
        label for label, on in (("vGPU", item.vgpu), (f"{item.kind}, {item.status}", item.kind == "article")) if on
    ]
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
        else place(item, lang) + (f" · {t('brief.also_in', lang, n=item.other_regions)}" if item.other_regions else ""),
        t(f"pricing.{item.pricing}", lang),
        per_gpu,
        money(item.price_per_hour, item.currency),
        f"[{source_no}]",
    ]


def offers_table(
    offers: list[Offer], source_no: Callable[[Offer], int | str], lang: str, display: dict | None = None
) -> dict:
    """The one table block: a header row, then one row per offer (cut to the row limit by `fit_blocks`)."""
    rows = [[_cell(phrase(f"col.{c}", lang)) for c in TABLE_COLUMNS]]
    rows += [[_cell(v) for v in _offer_cells(n, o, source_no(o), lang, display)] for n, o in enumerate(offers, start=1)]
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


def _sources_context(sources: list, lang: str, today: dt.date, settings_notes: list[str] = ()) -> list[dict]:
    """The context line: what the channel's settings filtered (first), then the numbered sources."""
    elements = []
    if settings_notes:
        text = f"*{phrase('settings.context', lang)}:* " + slack_escape("; ".join(settings_notes))
        elements.append({"type": "mrkdwn", "text": text})
    elements += [
        {"type": "mrkdwn", "text": _render("slack_source.md.j2", lang, n=n, s=s, age=_age_phrase(s.as_of, lang, today))}
        for n, s in enumerate(sources, start=1)
    ]
    return [{"type": "context", "elements": elements}] if elements else []  # > 10 elements: merged by fit_blocks


# --- button values: the query travels in the button ----------------------------------------------------------


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


def _button(text: str, value: str | None, action_id: str, style: str | None = None) -> dict | None:
    if value is None:
        return None
    button = {
        "type": "button",
        "action_id": action_id,
        "value": value,
        "text": {"type": "plain_text", "text": _cut(slack_plain(text), LIMITS["button_text"]), "emoji": True},
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
        buttons.append(
            _button(phrase("btn.share", lang), encode_value(query, **common), ACTION_IDS["share"], "primary")
        )
    if query.intent in ("cheapest", "price") and (answer.offers or query.gpus or query.instance_types):
        label = phrase("btn.on_demand" if query.pricing == "spot" else "btn.spot", lang)
        buttons.append(_button(label, encode_value(query, **common), ACTION_IDS["toggle"]))
    if answer.more > 0 and query.intent in TOP_N_INTENTS:
        buttons.append(
            _button(
                phrase("btn.more", lang), encode_value(query, shown=len(answer.offers), **common), ACTION_IDS["more"]
            )
        )
    if "pitfalls" in INTENTS and query.intent != "pitfalls" and (query.gpus or query.providers or query.instance_types):
        buttons.append(_button(phrase("btn.pitfalls", lang), encode_value(query, **common), ACTION_IDS["pitfalls"]))
    if why:  # the short answer left pitfalls, rules or details out: "Why" shows them (privately)
        buttons.append(_button(phrase("btn.why", lang), encode_value(query, **common), ACTION_IDS["why"]))
    if query.intent == "work" and answer.extra.get("work"):  # switch the benchmark workload (bot/render_work.py)
        buttons += work_buttons(query, common, _button, encode_value)
    for n, pick in enumerate(_suggestion_picks(answer)):
        buttons.append(_button(pick["pick"], encode_value(query, **pick, **common), ACTION_IDS["suggest"].format(n=n)))
    return [b for b in buttons if b is not None]


# --- the message -----------------------------------------------------------------------------------------------


def answer_message(
    answer: Answer,
    *,
    shareable: bool = False,
    buttons: bool = True,
    shared_by: str | None = None,
    today: dt.date | None = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """`{"text", "blocks"}` for an answer; `shareable` adds "Share in channel" (ephemeral slash replies). The short
    answer (one screen) keeps one caveat; `verbose` (the "Why" button) shows every pitfall, rule and detail."""
    from handlers import brief

    lang = answer.query.language
    today = today or dt.date.today()
    shown = brief.view(answer)
    full = answer
    if not verbose:
        listed = brief.brief_offers(answer)
        answer = answer.model_copy(
            update={
                "offers": listed,
                "more": answer.more + len(answer.offers) - len(listed),
                "rules": [],
                "recommendations": answer.recommendations[: brief.BRIEF_RECOMMENDATIONS],
                "pitfalls": [shown["caveat"]] if shown["caveat"] else [],
            }
        )
    sources = answer_sources(answer, verbose)
    index = {(s.source, s.as_of): n for n, s in enumerate(sources, start=1)}

    def source_no(item: Offer) -> int | str:
        return index.get((item.source, item.as_of), "?")

    def line_of(item: Offer) -> str:
        return offer_line(item, lang)

    blocks: list[dict] = _header(answer.title)
    if answer.offers:
        blocks.append(offers_table(answer.offers, source_no, lang, answer.extra.get("display_currency")))
    if answer.extra.get("work"):  # $ per 1M tokens rows (bot/render_work.py)
        blocks += work_blocks(answer, lambda s, a: index.get((s, a), "?"), _cell)
    if answer.more > 0:
        more = phrase("more", lang, n=answer.more)
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
    body = [
        _render("slack_lines.md.j2", lang, lines=answer.lines) if answer.lines else "",
        (
            f"*{phrase('recommendations', lang)}*\n"
            + _render(
                "slack_recommendations.md.j2",
                lang,
                recommendations=answer.recommendations,
                offer_line=line_of,
                source_no=source_no,
            )
        )
        if answer.recommendations
        else "",
        _render(
            "slack_tco.md.j2",
            lang,
            tcos=_tcos(answer, verbose),
            money=money,
            pricing_label=lambda p: (answer.extra.get("tco_labels") or {}).get(p) or t(f"pricing.{p}", lang),
        )
        if answer.tco or answer.tco_options
        else "",
        (f"*{phrase('pitfalls', lang)}*\n" + _render("slack_pitfalls.md.j2", lang, pitfalls=answer.pitfalls))
        if answer.pitfalls
        else "",
        _render("slack_notes.md.j2", lang, notes=answer.notes) if answer.notes else "",
        (f"*{phrase('details', lang)}*\n" + _render("slack_notes.md.j2", lang, notes=answer.extra["details"]))
        if verbose and answer.extra.get("details")
        else "",
        _render("slack_rules.md.j2", lang, rules=answer.rules) if answer.rules else "",
        _pages_line(shown["pages"], lang),
    ]
    for text in body:
        blocks += _sections(text)
    if shared_by:
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("shared_by", lang, user=shared_by)}]}
        )
    blocks += _sources_context(sources, lang, today, list(answer.extra.get("settings_notes") or []))
    if buttons:
        elements = action_buttons(full, shareable=shareable, why=bool(shown["hidden"]) and not verbose)
        if elements:
            blocks.append({"type": "actions", "elements": elements})
    from bot.slack.tables import table_in_attachments  # the table goes where Slack documents it

    return table_in_attachments(
        {"text": fallback_text(full), "blocks": blocks}, fit=lambda found: fit_blocks(found, lang=lang)
    )


def _tcos(answer: Answer, verbose: bool) -> list:
    """TCO options, the cheapest that can run the job first; a short answer keeps only its assumptions."""
    from bot.render import tco_order

    ordered = tco_order(answer)
    return ordered if verbose else ordered[:1] + [x.model_copy(update={"assumptions": []}) for x in ordered[1:]]


def _pages_line(pages: list[dict], lang: str) -> str:
    """ "*Pricing pages:* aws https://... · azure https://..." (bare addresses: Slack links them itself, and no
    `<...>` control syntax is ever sent)"""
    from handlers.brief import provider_label

    if not pages:
        return ""
    links = " · ".join(f"{slack_escape(provider_label(p['provider'], lang))} {slack_escape(p['url'])}" for p in pages)
    return f"*{phrase('pages', lang)}:* {links}"


def fallback_text(answer: Answer) -> str:
    """The top-level `text`: the plain-text answer (and what the channel's settings filtered), escaped (Slack parses
    it as mrkdwn), cut to a notification size."""
    text = render_text(answer).strip()
    notes = list(answer.extra.get("settings_notes") or [])
    if notes:
        text += f"\n({phrase('settings.context', answer.query.language)}: {'; '.join(notes)})"
    return _cut(slack_escape(text), LIMITS["fallback_text"]) or slack_escape(answer.title) or "…"


def error_message(lang: str = "en") -> dict[str, Any]:
    """The short apology for an internal error: no detail, no traceback."""
    text = t("error.internal", lang)
    return {"text": text, "blocks": [_section(slack_escape(text))]}


def text_message(text: str) -> dict[str, Any]:
    """A one-line message (e.g. "Looking that up…")."""
    return {"text": slack_escape(text), "blocks": [_section(slack_escape(text))]}


# --- App Home ----------------------------------------------------------------------------------------------------


def home_view(
    lang: str,
    help_lines: list[str],
    built_at: str | None,
    freshness: list[dict],
    extra_sections: Iterable[dict] = (),
    settings_sections: Iterable[dict] = (),
) -> dict[str, Any]:
    """The App Home tab: what gpubot answers, how fresh its data is, sections other features add (digest
    subscriptions) and the workspace defaults (`freshness` rows: `{"provider", "sources": [{"source", "as_of",
    "n"}]}`)."""
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": phrase("home.title", lang)}}]
    blocks.append(_section(f"*{phrase('home.can_do', lang)}*"))
    blocks += _sections(_render("slack_home.md.j2", lang, lines=help_lines))
    blocks.append({"type": "divider"})
    blocks.append(_section(f"*{phrase('home.freshness', lang)}*"))
    blocks += _sections(_render("slack_freshness.md.j2", lang, built_at=built_at or "?", providers=freshness))
    blocks.append({"type": "divider"})
    blocks.append(_section(f"*{phrase('home.digests', lang)}*"))
    extra = list(extra_sections)
    blocks += extra or [_section(phrase("home.no_digests", lang))]
    settings = list(settings_sections)
    if settings:
        blocks.append({"type": "divider"})
        blocks += settings
    return {"type": "home", "blocks": fit_blocks(blocks, surface="view", lang=lang)}


# --- settings and digest surfaces -------------------------------------------------------------------------------


def _setting_value(key: str, value: Any, lang: str) -> str:
    if value is None:
        return phrase(f"settings.default.{key}", lang)
    if key == "budget":
        return f"{float(value['amount']):g} {value['currency']}/GPU-hour"
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
        value = slack_escape(_setting_value(key, effective.get(key), lang))
        line = f"• *{phrase(f'settings.key.{key}', lang)}*: {value} — _{phrase(f'settings.from.{origin}', lang)}_"
        if origin == "channel" and workspace.get(key) is not None:
            line += (
                " ("
                + slack_escape(phrase("settings.overrides", lang, value=_setting_value(key, workspace[key], lang)))
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
        _section("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("settings.help", lang)}]},
    ]
    text = title + "\n" + "\n".join(lines)
    return {"text": _cut(text, LIMITS["fallback_text"]), "blocks": fit_blocks(blocks, lang=lang)}


def notice_message(text: str, *, hint: str | None = None) -> dict[str, Any]:
    """A short reply to a command (already mrkdwn-escaped by the caller), with an optional hint below it."""
    blocks: list[dict] = [_section(_cut(text, LIMITS["section_text"]))]
    if hint:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(hint, 3000)}]})
    return {"text": _cut(text, LIMITS["fallback_text"]), "blocks": blocks}


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
        _section(f"*{phrase('home.settings', lang)}*"),
        _section("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("home.settings_hint", lang)}]},
        {"type": "actions", "elements": [button]},
    ]


def _option(text: str, value: str) -> dict:
    return {"text": {"type": "plain_text", "text": _cut(slack_plain(text), 75)}, "value": value}


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
            f"{float(budget['amount']):g} {budget['currency']}/GPU-hour" if budget else "",
            "modal.budget_hint",
        ),
    ]
    return {
        "type": "modal",
        "callback_id": SETTINGS_MODAL_ID,
        "private_metadata": json.dumps({"team": team, "lang": lang}),
        "title": {"type": "plain_text", "text": _cut(phrase("modal.title", lang), 24)},
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
        field = next(iter(block.values()), {}) if isinstance(block, dict) else {}  # the block's one input
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


def digest_home_section(lang: str, subscriptions: Iterable[Any]) -> list[dict]:
    """App Home: this workspace's digest subscriptions, one line per channel."""
    lines = []
    for sub in subscriptions:
        parts = [
            phrase("digest.line", lang, hour=sub.hour, tz=sub.timezone),
            phrase("digest.gpus", lang, gpus=", ".join(sub.gpus)) if sub.gpus else phrase("digest.all_gpus", lang),
            phrase("digest.threshold", lang, pct=f"{sub.threshold_pct:g}"),
        ]
        if sub.quiet:
            parts.append(phrase("digest.quiet", lang))
        if not sub.active:
            parts.append(phrase("digest.off", lang, reason=sub.disabled_reason or "?"))
        channel = f"<#{sub.channel}>" if re.fullmatch(r"[CGD][A-Z0-9]+", sub.channel) else slack_escape(sub.channel)
        lines.append(f"• {channel}: " + slack_escape(" · ".join(parts)))
    if not lines:
        return []
    return [
        *_sections("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("home.digest_hint", lang)}]},
    ]


# --- limits, enforced in one place ---------------------------------------------------------------------------------


def fit_blocks(blocks: list[dict], *, surface: str = "message", lang: str = "en") -> list[dict]:
    """Blocks within Slack's limits: long texts cut, extra rows/elements folded into "… N more"."""
    out: list[dict] = []
    tables = 0
    for block in blocks:
        kind = block.get("type")
        if kind == "table":
            tables += 1
            if tables > 1:
                continue
            block = _fit_table(block, lang)
        elif kind == "section":
            block = _fit_text(block, "text", LIMITS["section_text"])
        elif kind == "header":
            block = _fit_text(block, "text", LIMITS["header_text"])
        elif kind == "context":
            block = _fit_context(block)
        elif kind == "actions":
            block = _fit_actions(block)
            if not block["elements"]:
                continue
        out.append(block)
    out = _unique_action_ids(out)
    limit = LIMITS["blocks_view" if surface == "view" else "blocks_message"]
    if len(out) <= limit:
        return out
    tail: list[dict] = []  # sources and buttons stay at the end
    while out and out[-1].get("type") in ("context", "actions") and len(tail) < 2:
        tail.insert(0, out.pop())
    keep = limit - len(tail) - 1
    dropped = len(out) - keep
    return [*out[:keep], _section(phrase("more_sections", lang, n=dropped)), *tail]


def _fit_text(block: dict, key: str, limit: int) -> dict:
    text = block.get(key) or {}
    if len(text.get("text", "")) <= limit:
        return block
    return {**block, key: {**text, "text": _cut(text["text"], limit)}}


def _fit_table(block: dict, lang: str) -> dict:
    rows = [row[: LIMITS["table_cells"]] for row in block.get("rows", [])]
    if len(rows) > LIMITS["table_rows"]:
        hidden = len(rows) - LIMITS["table_rows"] + 1
        width = len(rows[0])
        rows = [
            *rows[: LIMITS["table_rows"] - 1],
            [_cell("…"), _cell(phrase("more", lang, n=hidden)), *[_cell("") for _ in range(width - 2)]],
        ]
    fitted = {**block, "rows": rows}
    if "column_settings" in block:
        fitted["column_settings"] = block["column_settings"][: LIMITS["table_cells"]]
    return fitted


def _fit_context(block: dict) -> dict:
    elements = [
        {**e, "text": _cut(e["text"], LIMITS["context_text"])} if "text" in e else e for e in block.get("elements", [])
    ]
    limit = LIMITS["context_elements"]
    if len(elements) > limit:  # fold the rest into the last element
        rest = [e.get("text", "") for e in elements[limit - 1 :]]
        merged = " · ".join(rest)
        elements = [*elements[: limit - 1], {"type": "mrkdwn", "text": _cut(merged, LIMITS["context_text"])}]
    return {**block, "elements": elements}


def _fit_actions(block: dict) -> dict:
    elements = []
    for element in block.get("elements", []):
        if element.get("type") == "button":
            if len(element.get("value", "")) > LIMITS["button_value"]:
                continue
            element = {
                **element,
                "text": {**element["text"], "text": _cut(element["text"]["text"], LIMITS["button_text"])},
            }
        elements.append(element)
    return {**block, "elements": elements[: LIMITS["actions_elements"]]}


def _unique_action_ids(blocks: list[dict]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for block in blocks:
        if block.get("type") == "actions":
            elements = []
            for element in block["elements"]:
                aid = element.get("action_id")
                if aid is not None:
                    aid = aid[: LIMITS["action_id"]]
                    base, n = aid, 1
                    while aid in seen:
                        suffix = f"_{n}"
                        aid, n = base[: LIMITS["action_id"] - len(suffix)] + suffix, n + 1
                    seen.add(aid)
                    element = {**element, "action_id": aid}
                elements.append(element)
            block = {**block, "elements": elements}
        out.append(block)
    return out
