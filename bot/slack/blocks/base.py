"""The Block Kit pieces every surface uses: sections (split to fit), a header, a table cell, and mrkdwn rendered by
Jinja from `bot/templates/slack_*.md.j2` (Python builds the structure; templates only render text)."""

from __future__ import annotations

from functools import cache
from typing import Any

from bot.citations import cite_pitfall, public_source
from bot.render import num
from bot.slack.escape import cut, slack_escape, slack_inline, slack_plain
from bot.slack.limits import LIMITS
from bot.slack.phrases import phrase
from handlers.common import date_label
from handlers.i18n import t

__all__ = ["cell", "header", "plain_header", "render", "section", "sections"]


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


def render(template: str, lang: str, **values: Any) -> str:
    values.setdefault("label", lambda key: phrase(key, lang))
    values.setdefault("date_label", date_label)  # as of / date unknown, bundled / date unknown, imported
    values.setdefault("cite", lambda source: public_source(source, lang))  # sources in words (bot.citations)
    values.setdefault("cite_pitfall", lambda p: cite_pitfall(p.id, p.source, lang))
    values.setdefault("severity", lambda s: t(f"severity.{s}", lang) if s in ("high", "medium", "low") else s)
    text = _environment().get_template(template).render(**values)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def sections(text: str, limit: int = LIMITS["section_text"]) -> list[dict]:
    """Sections holding `text`, split at line ends so each stays within the section limit."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines():
        line = cut(line, limit)
        if current and len(current) + 1 + len(line) > limit:
            chunks.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current.strip():
        chunks.append(current)
    return [section(chunk) for chunk in chunks if chunk.strip()]


SHORT_HEADER = 80  # a longer verdict: its first clause in the header, the rest right below, said once


def plain_header(text: str) -> dict:
    """A header block holding `text` (cut to Slack's 150 characters)."""
    return _head(" ".join(text.split()) or "gpubot")


def _head(text: str) -> dict:
    return {
        "type": "header",
        "text": {"type": "plain_text", "text": cut(slack_plain(text), LIMITS["header_text"]), "emoji": True},
    }


def header(title: str) -> list[dict]:
    """The verdict: a short header, and for a long verdict the rest of it below, so every word is said once
    ("Pick A100 80GB x3" / "3 x primeintellect ... — the cheapest per hour that fits")."""
    title = " ".join(title.split()) or "gpubot"
    if len(title) <= SHORT_HEADER:
        return [_head(title)]
    for mark in (": ", "："):
        lead, found, rest = title.partition(mark)
        if found and rest.strip() and len(lead) <= LIMITS["header_text"]:
            return [_head(lead), *sections(slack_escape(rest.strip()))]
    if len(title) <= LIMITS["header_text"]:
        return [_head(title)]
    return [_head(title), *sections(slack_escape(title))]  # the full title, too long for a header


def cell(text: str) -> dict:
    return {"type": "raw_text", "text": slack_plain(text) or "—"}
