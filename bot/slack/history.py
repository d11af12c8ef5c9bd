"""Price history in Slack: the chart uploaded into a thread, and the slash command's summary with a button.

    post_history_chart(client, channel, thread_ts, query, kb) -> dict   render + files_upload_v2 (one file)
    history_summary_blocks(answer) -> list[dict]                        summary + "Post chart in channel"
    history_summary_message(answer) -> {"text", "blocks"}               the same with its text fallback
    attach_digest_chart(client, channel, thread_ts, digest, lang) -> dict   the digest's movers chart

The Slack app calls these from a worker thread, never on the request path: rendering takes a fraction of a
second, and Slack wants its HTTP acknowledgement within 3 s. Everything here is thread-safe (charts use
matplotlib's object API under one lock, `bot.charts`) and never raises: a Slack error or an unexpected failure is
logged with its context and returned as `{"ok": False, "error": ...}`, so one failing upload cannot take a
worker down. Deduplication (one chart per event, also when Slack retries) is the caller's: the app claims each
event before it calls `post_history_chart`.
"""

from __future__ import annotations

import contextlib
import logging
import re
from typing import Any

from bot.slack import blocks
from handlers.i18n import scoped
from handlers.models import Answer, Query

__all__ = [
    "ACTION_ID",
    "attach_digest_chart",
    "chart_failure_reason",
    "failure_text",
    "history_summary_blocks",
    "history_summary_message",
    "post_history_chart",
]

log = logging.getLogger("gpubot.slack.history")

ACTION_ID = "history_post_chart"
MAX_ALT_TEXT = 1000  # Slack's alt text limit for files
MAX_TITLE = 250
MAX_COMMENT = 3000


_phrase = scoped("slack_history")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_of(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            return str(response.get("error") or f"HTTP {getattr(response, 'status_code', '?')}")
        except Exception:  # noqa: BLE001 - a response without .get
            pass
    return type(exc).__name__


def _filename(query: Query) -> str:
    parts = ["gpu-price-history", *query.gpus, query.pricing or "", *query.providers]
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(p for p in parts if p).lower()).strip("-")
    return _cut(slug, 120) + ".png"


def _upload(
    client, *, channel: str, thread_ts: str | None, data: bytes, filename: str, title: str, alt: str, comment: str
) -> dict[str, Any]:
    response = client.files_upload_v2(
        channel=channel,
        thread_ts=thread_ts,
        file=data,
        filename=filename,
        title=_cut(title, MAX_TITLE),
        alt_txt=_cut(alt, MAX_ALT_TEXT),
        initial_comment=_cut(blocks.slack_escape(comment), MAX_COMMENT),
    )
    files = response.get("files") or [response.get("file") or {}]
    return {"ok": True, "uploaded": True, "file_id": (files[0] or {}).get("id"), "bytes": len(data)}


def post_history_chart(
    client, channel: str, thread_ts: str | None, query: Query, kb=None, *, notify_failure: bool = True
) -> dict[str, Any]:
    """Answer a history question with a chart uploaded into `channel` (in `thread_ts`'s thread when given).

    One `files_upload_v2` call with the PNG, alt text describing the chart, and the one-line summary as the
    comment. With no matching history there is nothing to draw: the answer (what is missing, what exists) is
    posted as a message instead. On a failure a one-line apology goes to the same place unless `notify_failure`
    is False (a button's caller tells the clicker privately instead). Returns `{"ok", "uploaded", "summary",
    "file_id"?, "error"?}`; never raises.
    """
    from bot.charts import alt_text, chart_title, render_history_png
    from handlers.history import history_points, summarize
    from knowledge.history import baselines

    lang = query.language
    summary = ""
    try:
        baselines.ensure(query.providers)  # the edge records; the handler only reads
        points, notes, families = history_points(query, kb)
        answer = summarize(query, points, families=families)
        if notes:
            answer = answer.model_copy(update={"notes": [*notes, *answer.notes]})
        summary = answer.extra.get("headline") or answer.title
        if not points:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, **blocks.answer_message(answer))
            return {"ok": True, "uploaded": False, "summary": summary}
        try:
            data = render_history_png(points)
        except Exception as exc:  # no chart (e.g. matplotlib missing): say why, and still give the answer
            reason = chart_failure_reason(exc)
            log.warning("history chart for %r could not be drawn: %s", query.text[:200], reason)
            text = f"{_phrase('not_drawn', lang, reason=reason)}\n{summary}"
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, **blocks.text_message(text))
            return {"ok": True, "uploaded": False, "summary": summary, "chart_error": reason}
        result = _upload(
            client,
            channel=channel,
            thread_ts=thread_ts,
            data=data,
            filename=_filename(query),
            title=chart_title(points),
            alt=alt_text(points),
            comment=summary,
        )
        return {**result, "summary": summary}
    except Exception as exc:  # a worker thread must not die; the user gets a short reply
        error = _error_of(exc)
        log.warning(
            "history chart for %r in %s failed: %s",
            query.text[:200],
            channel,
            error,
            exc_info=not hasattr(exc, "response"),
        )
        if notify_failure:
            with contextlib.suppress(Exception):  # the channel itself is unreachable: logged above
                text = failure_text(error, lang) + (f"\n{summary}" if summary else "")  # never drop the answer
                client.chat_postMessage(channel=channel, thread_ts=thread_ts, **blocks.text_message(text))
        return {"ok": False, "uploaded": False, "error": error}


def chart_failure_reason(exc: Exception) -> str:
    """Why a chart could not be drawn, in words a user can act on."""
    if isinstance(exc, ImportError):
        return f"the plotting library is not installed ({exc}); reinstall gpubot: pip install ."
    return str(exc) or type(exc).__name__


def failure_text(error: str, lang: str = "en") -> str:
    """ "Could not post the chart (not_in_channel)." in `lang`."""
    return _phrase("failed", lang, error=error)


def history_summary_blocks(answer: Answer) -> list[dict]:
    """Blocks for an ephemeral slash-command reply: the summary, then "Post chart in channel" when there is data.

    The button carries the query (`bot.slack.blocks.encode_value`, within Slack's 2000 characters) and has action id
    `history_post_chart`; the app's action listener decodes it and calls `post_history_chart` for the channel.
    """
    lang = answer.query.language
    out: list[dict] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": blocks.slack_plain(_cut(answer.title, 150)), "emoji": True},
        }
    ]
    if answer.lines:
        body = "\n".join(blocks.slack_escape(line) for line in answer.lines)
        out.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(body, 3000)}})
    if answer.notes:
        notes = "\n".join(f"• {blocks.slack_escape(n)}" for n in answer.notes)
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(notes, 3000)}]})
    if answer.sources:
        sources = " · ".join(f"{blocks.slack_escape(s.source)} ({s.as_of})" for s in answer.sources)
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(sources, 3000)}]})
    value = blocks.encode_value(answer.query)
    if answer.extra.get("history") and value is not None:
        out.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": ACTION_ID,
                        "value": value,
                        "style": "primary",
                        "text": {"type": "plain_text", "text": _phrase("btn.post_chart", lang), "emoji": True},
                    }
                ],
            }
        )
        out.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _phrase("chart_hint", lang)}]})
    return blocks.fit_blocks(out, lang=lang)


def history_summary_message(answer: Answer) -> dict[str, Any]:
    """`{"text", "blocks"}` for the slash command's ephemeral reply."""
    return {"text": blocks.fallback_text(answer), "blocks": history_summary_blocks(answer)}


def attach_digest_chart(client, channel: str, thread_ts: str | None, digest, lang: str = "en") -> dict[str, Any]:
    """Upload the digest's biggest-movers chart under the digest message (`thread_ts`); never raises.

    Nothing moved: nothing uploaded (`{"ok": True, "uploaded": False}`).
    """
    from bot.charts import digest_chart, digest_movers

    try:
        data = digest_chart(digest)
        if data is None:
            return {"ok": True, "uploaded": False}
        movers = digest_movers(digest)
        alt = "Bar chart of the biggest GPU price changes: " + "; ".join(
            f"{c.gpu} {c.pricing} {c.provider} {c.instance_type} {c.region} {c.change_pct or 0:+.1f}%" for c in movers
        )
        return _upload(
            client,
            channel=channel,
            thread_ts=thread_ts,
            data=data,
            filename="gpu-price-moves.png",
            title=_phrase("digest_comment", "en"),
            alt=alt,
            comment=_phrase("digest_comment", lang),
        )
    except Exception as exc:  # the digest itself was posted; a missing chart must not fail it
        error = _error_of(exc)
        log.warning("digest chart for %s failed: %s", channel, error, exc_info=not hasattr(exc, "response"))
        return {"ok": False, "uploaded": False, "error": error}
