"""Getting a reply to Slack without losing it: block refusals fall back, failures are said in plain words.

    post_message(client, where, channel=..., **message) -> (response, None) | (None, error)   chat.postMessage
    respond_message(respond, where, **message) -> Delivered                       the response_url
    table_as_sections(table) -> list[dict]                                         a table block as section text
    share(client, respond, click, message, lang)                                   "Share in channel"

When Slack refuses a message for its blocks (`invalid_blocks`, `invalid_attachments`), the refusal is logged with
the types of the refused blocks and the message is sent again: with the offers table as section text when the
refusal points at the table (or the message has more tables than Slack takes), else as its text fallback only
(`text` always carries the whole answer). A throttled response_url post (429) is retried once after Retry-After;
chat.postMessage retries come from the client's RateLimitErrorRetryHandler. Any other error is returned to the
caller, who knows what to tell the user (`plain_error`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.slack.blocks.settings import notice_message
from bot.slack.escape import slack_escape
from bot.slack.limits import LIMITS, fit_blocks
from bot.slack.payloads import Click
from bot.slack.tables import tables_of
from handlers.i18n import t

__all__ = [
    "BLOCK_ERRORS",
    "Delivered",
    "plain_error",
    "post_message",
    "refused_types",
    "respond_message",
    "share",
    "table_as_sections",
    "variants",
]

log = logging.getLogger("gpubot.slack.delivery")

MAX_RETRY_WAIT = 3.0  # seconds a throttled response_url post waits before its one retry
BLOCK_ERRORS = frozenset({"invalid_blocks", "invalid_attachments", "invalid_blocks_format"})
_POINTER = re.compile(r"json-pointer:/(?:attachments/(\d+)/)?blocks/(\d+)")
_CHANNEL_ERRORS = frozenset(
    {
        "not_in_channel",
        "channel_not_found",
        "is_archived",
        "restricted_action",
        "cannot_reply_to_message",
        "team_access_not_granted",
        "ekm_access_denied",
    }
)


@dataclass(frozen=True)
class Delivered:
    """What became of a response_url post: ok, or the error Slack (or the network) gave."""

    ok: bool
    error: str | None = None

    def __bool__(self) -> bool:
        return self.ok


def _pointed_block(message: dict, pointer: re.Match) -> dict | None:
    attachment, index = pointer.group(1), int(pointer.group(2))
    if attachment is None:
        blocks = message.get("blocks") or []
    else:
        attachments = message.get("attachments") or []
        blocks = (attachments[int(attachment)].get("blocks") or []) if int(attachment) < len(attachments) else []
    return blocks[index] if index < len(blocks) else None


def refused_types(message: dict, errors: list[str] | None = None) -> list[str]:
    """The types of the blocks Slack's errors point at; all the message's block types when none is named."""
    pointed = [_pointed_block(message, m) for e in errors or [] if (m := _POINTER.search(str(e)))]
    types = [b.get("type", "?") for b in pointed if b is not None]
    if not types:
        types = [b.get("type", "?") for b in message.get("blocks") or []]
        types += [b.get("type", "?") for a in message.get("attachments") or [] for b in a.get("blocks") or []]
    return sorted(set(types))


def table_as_sections(table: dict) -> list[dict]:
    """A table block as mrkdwn sections: the header row in bold, then one line per row."""
    rows = [[str(cell.get("text", "")) for cell in row] for row in table.get("rows") or []]
    if not rows:
        return []
    lines = ["*" + " · ".join(slack_escape(c) for c in rows[0]) + "*"]
    lines += [" · ".join(slack_escape(c) for c in row if c and c != "—") for row in rows[1:]]
    sections, chunk = [], ""
    for line in lines:
        if chunk and len(chunk) + 1 + len(line) > LIMITS["section_text"]:
            sections.append(chunk)
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line[: LIMITS["section_text"]]
    sections.append(chunk)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": s}} for s in sections]


def _without_tables(message: dict) -> dict:
    """The message with its tables as section text, where the table was (or under the header, for a table that
    was in `attachments`)."""
    blocks: list[dict] = []
    for block in message.get("blocks") or []:
        blocks += table_as_sections(block) if block.get("type") == "table" else [block]
    attachments = []
    for attachment in message.get("attachments") or []:
        inner = attachment.get("blocks") or []
        tables = [b for b in inner if b.get("type") == "table"]
        rest = [b for b in inner if b.get("type") != "table"]
        if tables and rest:  # the answer after its verdict (`table_in_attachments(lead=)`): table, then the rest
            blocks += [s for table in tables for s in table_as_sections(table)] + rest
            continue
        at = 1 if blocks and blocks[0].get("type") == "header" else 0
        for table in tables:
            blocks[at:at] = table_as_sections(table)
        if rest or not inner:
            attachments.append({**attachment, "blocks": rest} if inner else attachment)
    out = {k: v for k, v in message.items() if k != "attachments"}
    if attachments:
        out["attachments"] = attachments
    out["blocks"] = fit_blocks(blocks)  # within 50 blocks, the sources line and buttons kept at the end
    return out


def _text_only(message: dict) -> dict:
    return {k: v for k, v in message.items() if k not in ("blocks", "attachments")}


def variants(message: dict, refusal: Callable[[], tuple[str | None, list[str]]]) -> Iterator[dict]:
    """The message, then (each only after `refusal()` says the previous one was refused for its blocks) the
    message with its tables as section text when the refusal points at a table (or says one table too many),
    then its text only."""
    yield message
    if not (message.get("blocks") or message.get("attachments")):
        return
    error, errors = refusal()
    types = refused_types(message, errors)
    named = bool(errors) and any(_POINTER.search(str(e)) for e in errors)  # a response_url names no block
    has_table = bool(tables_of(message))
    if has_table and ((named and "table" in types) or error == "invalid_attachments"):
        log.warning(
            "Slack refused a reply's blocks (%s; block types: %s); sending it with the table as text",
            error,
            ", ".join(types),
        )
        yield _without_tables(message)
        error, errors = refusal()
        types = refused_types(message, errors)
    log.warning(
        "Slack refused a reply's blocks (%s; block types: %s); sending it as text only", error, ", ".join(types)
    )
    yield _text_only(message)


def post_message(client, where: str, **message: Any) -> tuple[Any, str | None]:
    """chat.postMessage with the block fallbacks: `(response, None)` or `(None, error code)`."""
    last: dict[str, Any] = {}

    def refusal() -> tuple[str | None, list[str]]:
        return last.get("error"), last.get("errors") or []

    for attempt in variants(message, refusal):
        try:
            return client.chat_postMessage(**attempt), None
        except SlackApiError as exc:
            data = exc.response.data if isinstance(getattr(exc.response, "data", None), dict) else {}
            error = data.get("error") or f"HTTP {getattr(exc.response, 'status_code', '?')}"
            if error not in BLOCK_ERRORS:
                log.warning("could not post a reply: %s (%s)", error, where)
                return None, error
            last = {
                "error": error,
                "errors": data.get("errors") or (data.get("response_metadata") or {}).get("messages") or [],
            }
        except Exception as exc:  # the network: the caller says so
            log.warning("could not post a reply: %s (%s)", type(exc).__name__, where)
            return None, "unreachable"
    log.warning("Slack refused even the text of a reply: %s (%s)", last.get("error"), where)
    return None, last.get("error")


def _retry_after(response) -> float:
    headers = getattr(response, "headers", None) or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return 1.0 if value is None else max(0.0, float(value))
    except (TypeError, ValueError):
        return 1.0


def respond_message(respond, where: str, **message: Any) -> Delivered:
    """Post to the response_url with the block fallbacks; never raises."""
    last: dict[str, Any] = {}

    def refusal() -> tuple[str | None, list[str]]:
        return last.get("error"), []

    for attempt in variants(message, refusal):
        try:
            response = respond(**attempt)
            if getattr(response, "status_code", 200) == 429:  # throttled: once more after Retry-After (<= 3 s)
                time.sleep(min(_retry_after(response), MAX_RETRY_WAIT))
                response = respond(**attempt)
        except Exception as exc:  # the network, whatever the client raises: the caller says it was not delivered
            log.warning("could not reach response_url: %s (%s)", type(exc).__name__, where)
            return Delivered(False, "unreachable")
        status = getattr(response, "status_code", 200) if response is not None else 200
        if status == 200:
            return Delivered(True)
        body = str(getattr(response, "body", "") or "").strip()
        error = body if re.fullmatch(r"[a-z_]{3,60}", body) else f"http_{status}"
        log.warning("response_url answered %s %r (%s)", status, body[:200], where)
        if error not in BLOCK_ERRORS:
            return Delivered(False, error)
        last = {"error": error}
    return Delivered(False, last.get("error"))


def plain_error(error: str | None, channel: str, lang: str = "en") -> str:
    """What a failed post means for the user, in words (never a bare Slack error code)."""
    if error in _CHANNEL_ERRORS:
        kind = "channel"
    elif error in ("ratelimited", "rate_limited", "http_429"):
        kind = "ratelimited"
    elif error in ("expired_url", "used_url"):
        kind = "expired"
    else:
        kind = "other"
    return t(f"delivery.{kind}", lang, channel=channel)


# --- "Share in channel" ----------------------------------------------------------------------------------------


def share(client, respond, click: Click, message: dict, lang: str) -> None:
    """The public post first (response_url, else chat.postMessage as the bot); the private answer is deleted only
    when that worked, else it stays (its button can be pressed again) and a plain explanation is added privately."""
    channel, where = click.channel, click.where
    posted = respond_message(
        respond, where, response_type="in_channel", replace_original=False, **click.thread(), **message
    )
    error = posted.error
    if not posted:
        response, error = post_message(client, where, channel=channel, **click.thread(), **message)
        posted = Delivered(response is not None, error)
    if posted:
        respond_message(respond, where, delete_original=True)
        return
    name = click.channel_name
    shown = f"#{slack_escape(name)}" if name and name not in ("directmessage", "privategroup") else f"<#{channel}>"
    explanation = notice_message(plain_error(error, shown, lang))
    told = respond_message(respond, where, response_type="ephemeral", replace_original=False, **explanation)
    if not told and click.user:
        try:
            client.chat_postEphemeral(channel=channel, user=click.user, **explanation)
        except SlackApiError as exc:
            log.warning("could not explain a failed share: %s (%s)", exc.response.get("error"), where)
