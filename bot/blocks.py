"""Block Kit for Slack replies: Jinja renders mrkdwn fragments, Python builds the block structure.

`answer_message(answer)` -> `{"text": ..., "blocks": [...]}`: a header with the title, ONE `table` block for the
offers, sections for reasoning / recommendations / TCO / pitfalls / notes / rules (what the text rendering shows;
handlers put the readable form of specs in `lines`), a `context` line with the numbered sources and how old they
are, and buttons to refine the answer. `text` is always the plain-text rendering (`bot.render.render_text`),
escaped, so notifications and screen readers get the whole answer.

Slack's limits are enforced in one place, `fit_blocks` (50 blocks per message, 100 per view, 3000 characters per
section text, 150 per header, one table of <= 100 rows x 20 cells, 10 context elements, 25 buttons per actions
block, unique action ids <= 255, button text <= 75, button value <= 2000): anything longer degrades to
"… N more" instead of failing.

Every string that comes from a question or from data goes through `slack_escape` (mrkdwn) or `slack_plain`
(plain_text / table cells), so `<!channel>`, `@here` or `<@U123>` typed by a user is shown, never executed.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from bot.render import answer_sources, gpu_label, num, offer_line, render_text
from handlers.common import money
from handlers.i18n import t
from handlers.models import Answer, Offer, Query

__all__ = [
    "ACTION_IDS",
    "LIMITS",
    "PHRASES",
    "answer_message",
    "decode_value",
    "encode_value",
    "error_message",
    "fit_blocks",
    "home_view",
    "phrase",
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
    "suggest": "gpu_suggest_{n}",
}
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
}

TABLE_COLUMNS = ("#", "provider", "instance", "gpus", "region", "pricing", "per_gpu_hour", "per_hour", "source")
_RIGHT_ALIGNED = {"#", "gpus", "per_gpu_hour", "per_hour"}


def phrase(key: str, lang: str = "en", **values: object) -> str:
    """A Slack-only phrase in `lang` (English when missing)."""
    phrases = PHRASES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)


# --- escaping ---------------------------------------------------------------------------------------------

_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_SPECIAL = re.compile(r"<([!@#])")
_JOINER = "\u2060"  # WORD JOINER: invisible, and breaks Slack's mention syntax


def slack_escape(value: object) -> str:
    """Text for mrkdwn: `& < >` escaped (so `<!channel>`, `<@U1>`, `<#C1>` show literally) and `@here` defused."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@" + _JOINER + m.group(1), text)


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
    )
    env.filters["slack_escape"] = slack_escape
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
    head = {"type": "header", "text": {"type": "plain_text", "text": _cut(slack_plain(title), LIMITS["header_text"]),
                                       "emoji": True}}
    if len(title) <= LIMITS["header_text"]:
        return [head]
    return [head, *_sections(slack_escape(title))]  # the full title, too long for a header


def _cell(text: str) -> dict:
    return {"type": "raw_text", "text": slack_plain(text) or "—"}


def _offer_cells(n: int, item: Offer, source_no: int | str, lang: str) -> list[str]:
    per_gpu = money(item.price_per_gpu_hour, item.currency)
    if item.currency != "USD":
        per_gpu += f" (≈ {money(item.price_per_gpu_hour_usd)})"
    instance = item.instance_type
    labels = [label for label, on in (("vGPU", item.vgpu), (f"{item.kind}, {item.status}", item.kind == "article"))
              if on]
    if labels:
        instance += f" [{'; '.join(labels)}]"
    return [
        str(n),
        item.provider,
        instance,
        f"{num(item.gpu_count)}x {gpu_label(item)}",
        "" if item.region == "article" else item.region + (f" ({item.zone})" if item.zone else ""),
        t(f"pricing.{item.pricing}", lang),
        per_gpu,
        money(item.price_per_hour, item.currency),
        f"[{source_no}]",
    ]


def offers_table(offers: list[Offer], source_no: Callable[[Offer], int | str], lang: str) -> dict:
    """The one table block: a header row, then one row per offer (cut to the row limit by `fit_blocks`)."""
    rows = [[_cell(phrase(f"col.{c}", lang)) for c in TABLE_COLUMNS]]
    rows += [[_cell(v) for v in _offer_cells(n, o, source_no(o), lang)] for n, o in enumerate(offers, start=1)]
    settings = [{"align": "right" if c in _RIGHT_ALIGNED else "left", "is_wrapped": c in ("instance", "gpus")}
                for c in TABLE_COLUMNS]
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


def _sources_context(sources: list, lang: str, today: dt.date) -> list[dict]:
    if not sources:
        return []
    elements = [
        {"type": "mrkdwn", "text": _render("slack_source.md.j2", lang, n=n, s=s, age=_age_phrase(s.as_of, lang, today))}
        for n, s in enumerate(sources, start=1)
    ]
    return [{"type": "context", "elements": elements}]  # > 10 elements are merged by fit_blocks


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
    button = {"type": "button", "action_id": action_id, "value": value,
              "text": {"type": "plain_text", "text": _cut(slack_plain(text), LIMITS["button_text"]), "emoji": True}}
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
    return any([answer.offers, answer.context, answer.lines, answer.notes, answer.suggestions, answer.recommendations,
                answer.specs, answer.tco, answer.tco_options, answer.pitfalls, answer.rules])


def action_buttons(answer: Answer, *, shareable: bool) -> list[dict]:
    """Buttons that refine the answer; each carries the query, the Slack app applies the change."""
    from handlers import INTENTS

    query, lang = answer.query, answer.query.language
    if not _has_content(answer):
        return []  # a title-only answer (an apology) has nothing to share or refine
    buttons: list[dict | None] = []
    if shareable:
        buttons.append(_button(phrase("btn.share", lang), encode_value(query), ACTION_IDS["share"],
                               "primary"))
    if query.intent in ("cheapest", "price") and (answer.offers or query.gpus or query.instance_types):
        label = phrase("btn.on_demand" if query.pricing == "spot" else "btn.spot", lang)
        buttons.append(_button(label, encode_value(query), ACTION_IDS["toggle"]))
    if answer.more > 0 and query.intent in TOP_N_INTENTS:
        buttons.append(_button(phrase("btn.more", lang), encode_value(query, shown=len(answer.offers)),
                               ACTION_IDS["more"]))
    if "pitfalls" in INTENTS and query.intent != "pitfalls" and (query.gpus or query.providers or query.instance_types):
        buttons.append(_button(phrase("btn.pitfalls", lang), encode_value(query), ACTION_IDS["pitfalls"]))
    for n, pick in enumerate(_suggestion_picks(answer)):
        buttons.append(_button(pick["pick"], encode_value(query, **pick),
                               ACTION_IDS["suggest"].format(n=n)))
    return [b for b in buttons if b is not None]


# --- the message -----------------------------------------------------------------------------------------------


def answer_message(answer: Answer, *, shareable: bool = False, buttons: bool = True,
                   shared_by: str | None = None, today: dt.date | None = None) -> dict[str, Any]:
    """`{"text", "blocks"}` for an answer; `shareable` adds "Share in channel" (ephemeral slash replies)."""
    lang = answer.query.language
    today = today or dt.date.today()
    sources = answer_sources(answer)
    index = {(s.source, s.as_of): n for n, s in enumerate(sources, start=1)}

    def source_no(item: Offer) -> int | str:
        return index.get((item.source, item.as_of), "?")

    def line_of(item: Offer) -> str:
        return offer_line(item, lang)

    blocks: list[dict] = _header(answer.title)
    if answer.offers:
        blocks.append(offers_table(answer.offers, source_no, lang))
    if answer.more > 0:
        more = phrase("more", lang, n=answer.more)
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
    body = [
        _render("slack_lines.md.j2", lang, lines=answer.lines) if answer.lines else "",
        (f"*{phrase('recommendations', lang)}*\n" + _render(
            "slack_recommendations.md.j2", lang, recommendations=answer.recommendations, offer_line=line_of,
            source_no=source_no)) if answer.recommendations else "",
        _render("slack_tco.md.j2", lang, tcos=[x for x in [answer.tco, *answer.tco_options] if x], money=money,
                pricing_label=lambda p: t(f"pricing.{p}", lang)) if answer.tco or answer.tco_options else "",
        (f"*{phrase('pitfalls', lang)}*\n" + _render("slack_pitfalls.md.j2", lang, pitfalls=answer.pitfalls))
        if answer.pitfalls else "",
        _render("slack_notes.md.j2", lang, notes=answer.notes) if answer.notes else "",
        _render("slack_rules.md.j2", lang, rules=answer.rules) if answer.rules else "",
    ]
    for text in body:
        blocks += _sections(text)
    if shared_by:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("shared_by", lang,
                                                                                         user=shared_by)}]})
    blocks += _sources_context(sources, lang, today)
    if buttons:
        elements = action_buttons(answer, shareable=shareable)
        if elements:
            blocks.append({"type": "actions", "elements": elements})
    return {"text": fallback_text(answer), "blocks": fit_blocks(blocks, lang=lang)}


def fallback_text(answer: Answer) -> str:
    """The top-level `text`: the plain-text answer, escaped (Slack parses it as mrkdwn), cut to a notification size."""
    return _cut(slack_escape(render_text(answer).strip()), LIMITS["fallback_text"]) or slack_escape(answer.title) or "…"


def error_message(lang: str = "en") -> dict[str, Any]:
    """The short apology for an internal error: no detail, no traceback."""
    text = t("error.internal", lang)
    return {"text": text, "blocks": [_section(slack_escape(text))]}


def text_message(text: str) -> dict[str, Any]:
    """A one-line message (e.g. "Looking that up…")."""
    return {"text": slack_escape(text), "blocks": [_section(slack_escape(text))]}


# --- App Home ----------------------------------------------------------------------------------------------------


def home_view(lang: str, help_lines: list[str], built_at: str | None, freshness: list[dict],
              extra_sections: Iterable[dict] = ()) -> dict[str, Any]:
    """The App Home tab: what gpubot answers, how fresh its data is, and sections other features add
    (`freshness` rows: `{"provider", "sources": [{"source", "as_of", "n"}]}`)."""
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
    return {"type": "home", "blocks": fit_blocks(blocks, surface="view", lang=lang)}


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
        rows = [*rows[: LIMITS["table_rows"] - 1],
                [_cell("…"), _cell(phrase("more", lang, n=hidden)), *[_cell("") for _ in range(width - 2)]]]
    fitted = {**block, "rows": rows}
    if "column_settings" in block:
        fitted["column_settings"] = block["column_settings"][: LIMITS["table_cells"]]
    return fitted


def _fit_context(block: dict) -> dict:
    elements = [{**e, "text": _cut(e["text"], LIMITS["context_text"])} if "text" in e else e
                for e in block.get("elements", [])]
    limit = LIMITS["context_elements"]
    if len(elements) > limit:  # fold the rest into the last element
        rest = [e.get("text", "") for e in elements[limit - 1:]]
        merged = " · ".join(rest)
        elements = [*elements[: limit - 1], {"type": "mrkdwn", "text": _cut(merged, LIMITS["context_text"])}]
    return {**block, "elements": elements}


def _fit_actions(block: dict) -> dict:
    elements = []
    for element in block.get("elements", []):
        if element.get("type") == "button":
            if len(element.get("value", "")) > LIMITS["button_value"]:
                continue
            element = {**element, "text": {**element["text"], "text": _cut(element["text"]["text"],
                                                                           LIMITS["button_text"])}}
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
