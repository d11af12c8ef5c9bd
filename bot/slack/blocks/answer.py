"""The message for an answer: `answer_message(answer)` -> `{"text": ..., "blocks": [...], "attachments": [{"blocks":
[table]}]}`: a header with the title, the offers table, sections for reasoning / recommendations / TCO / pitfalls /
notes / rules (what the text rendering shows; handlers put the readable form of specs in `lines`), a `context`
line with the numbered sources and how old they are, and buttons to refine the answer. `text` is always the
plain-text rendering (`bot.render.render_text`), escaped, so notifications and screen readers get the whole answer.

A channel's settings reach the reply through `Answer.extra` (set by `bot.pipeline`): `settings_notes` (what was
filtered, shown first in the context line and in the text fallback), `defaulted` (the fields the channel's
defaults filled in; every button carries them as `d`, so a click re-applies the channel's *current* settings) and
`display_currency` (`{"currency", "per_usd", "source", "as_of"}`, set by `bot.pipeline.answer_query` for a question
in CNY or a channel currency: prices are also shown converted, "≈ ¥…", and the title's figures right under it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from bot.citations import public_answer
from bot.render import answer_sources, offer_line, render_text, tco_parts
from bot.render_train import table_blocks
from bot.render_work import brief_work, work_blocks, work_line
from bot.slack.blocks.base import cell, header, render, section, sections
from bot.slack.blocks.buttons import action_buttons
from bot.slack.blocks.offers import offers_table, sources_context
from bot.slack.escape import cut, slack_escape
from bot.slack.limits import LIMITS, fit_blocks
from bot.slack.phrases import phrase
from bot.slack.tables import table_in_attachments  # the table goes where Slack documents it
from handlers.display import title_line
from handlers.i18n import t
from handlers.models import Answer

__all__ = ["answer_message", "error_message", "fallback_text", "text_message"]


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
    answer = public_answer(answer)  # every sentence with its sources in words (bot.citations)
    shown = brief.view(answer)
    full = answer
    if not verbose:
        answer = _short(answer, shown["caveat"])
    sources = answer_sources(answer, verbose)
    index = {(s.source, s.as_of): n for n, s in enumerate(sources, start=1)}

    def number(source: str, as_of: str) -> int | str:
        return index.get((source, as_of), "?")

    display = answer.extra.get("display_currency")
    blocks: list[dict] = header(answer.title)
    if converted := title_line(answer, display):  # the title's figures in the other currency, right under it
        blocks.append(_context(slack_escape(converted)))
    lead = len(blocks)  # the verdict; with a table, everything else follows it in the table's attachment
    blocks += _rows(answer, number, verbose)
    for text in _body(answer, number, verbose, shown["pages"]):
        blocks += sections(text)
    if shared_by:
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("shared_by", lang, user=shared_by)}]}
        )
    blocks += sources_context(sources, lang, today, list(answer.extra.get("settings_notes") or []))
    if buttons:
        elements = action_buttons(full, shareable=shareable, why=bool(shown["hidden"]) and not verbose)
        if elements:
            blocks.append({"type": "actions", "elements": elements})
    return table_in_attachments(
        {"text": fallback_text(full), "blocks": blocks}, fit=lambda found: fit_blocks(found, lang=lang), lead=lead
    )


def _short(answer: Answer, caveat: Any) -> Answer:
    """The short answer (one screen): the brief offers and recommendations, one caveat, no rules; work answers keep
    five rows (the benchmark configuration is behind Why)."""
    from handlers import brief

    if answer.extra.get("work"):
        answer = brief_work(answer)
    listed = brief.brief_offers(answer)
    return answer.model_copy(
        update={
            "offers": listed,
            "more": answer.more + len(answer.offers) - len(listed),
            "rules": [],
            "recommendations": answer.recommendations[: brief.BRIEF_RECOMMENDATIONS],
            "pitfalls": _short_pitfalls(answer, caveat),
        }
    )


Numbering = Callable[[str, str], int | str]  # (source, as_of) -> its number in the sources line


def _rows(answer: Answer, number: Numbering, verbose: bool) -> list[dict]:
    """The answer's rows: the offers table, $ per 1M tokens (work), training runs, and how many more there are."""
    lang, display = answer.query.language, answer.extra.get("display_currency")
    blocks: list[dict] = []
    if answer.offers:
        blocks.append(offers_table(answer.offers, lambda item: number(item.source, item.as_of), lang, display))
    if answer.extra.get("work"):  # $ per 1M tokens rows (bot/render_work.py): 6 short columns
        blocks += work_blocks(answer, number, cell)
        if answer.extra.get("work_more"):
            blocks.append(_context(phrase("more", lang, n=answer.extra["work_more"])))
        if verbose:  # "Why": every row with its benchmark configuration
            rows = zip(answer.extra["work"], answer.extra.get("work_details") or [], strict=False)
            lines = [work_line(r, d, lang, number, display=display) for r, d in rows]
            blocks += sections(f"*{phrase('details', lang)}*\n" + "\n".join(slack_escape(x) for x in lines))
    blocks += table_blocks(  # issue 27 (bot/render_train.py); Slack allows one table per message: work has its own
        answer, number, cell, sections, table=not answer.extra.get("work")
    )
    if answer.more > 0:
        more = phrase("more", lang, n=answer.more)
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": more}]})
    return blocks


def _body(answer: Answer, number: Numbering, verbose: bool, pages: Any) -> list[str]:
    """The sections under the rows (each "" when it has nothing): lines, recommendations, TCO, pitfalls, notes,
    details (verbose), rules and the pages line."""
    lang, display = answer.query.language, answer.extra.get("display_currency")
    return [
        render("slack_lines.md.j2", lang, lines=answer.lines) if answer.lines else "",
        (
            f"*{phrase('recommendations', lang)}*\n"
            + render(
                "slack_recommendations.md.j2",
                lang,
                recommendations=answer.recommendations,
                offer_line=lambda item: offer_line(item, lang, display),
                source_no=lambda item: number(item.source, item.as_of),
            )
        )
        if answer.recommendations
        else "",
        render(
            "slack_tco.md.j2",
            lang,
            tcos=_tcos(answer, verbose),
            tco_parts=lambda x: tco_parts(x, lang, (answer.extra.get("tco_labels") or {}).get(x.pricing), display),
        )
        if answer.tco or answer.tco_options
        else "",
        (f"*{phrase('pitfalls', lang)}*\n" + render("slack_pitfalls.md.j2", lang, pitfalls=answer.pitfalls))
        if answer.pitfalls
        else "",
        render("slack_notes.md.j2", lang, notes=answer.notes) if answer.notes else "",
        (f"*{phrase('details', lang)}*\n" + render("slack_notes.md.j2", lang, notes=answer.extra["details"]))
        if verbose and answer.extra.get("details")
        else "",
        render("slack_rules.md.j2", lang, rules=answer.rules) if answer.rules else "",
        _pages_line(pages, lang),
    ]


SHORT_PITFALLS = 5


def _short_pitfalls(answer: Answer, caveat) -> list:
    """The short answer's pitfalls: for a pitfalls question the first five by title (their bodies behind Why),
    else the one caveat that changes the decision."""
    if answer.query.intent == "pitfalls":
        return [p.model_copy(update={"body": ""}) for p in answer.pitfalls[:SHORT_PITFALLS]]
    return [caveat] if caveat else []


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


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
    return cut(slack_escape(text), LIMITS["fallback_text"]) or slack_escape(answer.title) or "…"


def error_message(lang: str = "en") -> dict[str, Any]:
    """The short apology for an internal error: no detail, no traceback."""
    text = t("error.internal", lang)
    return {"text": text, "blocks": [section(slack_escape(text))]}


def text_message(text: str) -> dict[str, Any]:
    """A one-line message (e.g. "Looking that up…")."""
    return {"text": slack_escape(text), "blocks": [section(slack_escape(text))]}
