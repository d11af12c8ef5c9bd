"""A mention or DM reply that survives Slack's errors and is never posted twice.

- The reply client retries as Slack documents (`reply_retry_handlers`, slack_sdk's handlers): a rate limit (429)
  after its Retry-After, up to `RATE_LIMIT_RETRIES` times; a server error (500, 503) with exponential backoff, up to
  `SERVER_ERROR_RETRIES` times; a connection error twice. The claims' heartbeat keeps the event's lease alive
  meanwhile (`knowledge.state.claims`), so no other worker takes it over while this one waits.
- A reply Slack still throttles after the retries is certainly not posted: the message's and the event's claims
  are released, and Slack's own retry of the event (at +1 and +5 minutes) answers it.
- A reply whose outcome is unknown (a 5xx, which Slack may send after storing the message; a timeout) releases
  them "maybe done", as a worker that dies mid-post does when its lease runs out: whoever takes the claim over first
  looks for the earlier reply (its message metadata `gpubot_reply` carries the message's claim key, as the digest
  ledger does) and posts only when it is verifiably not there. When the thread cannot be read it does not post
  blindly a second time (logged).
- Any other refusal (not in the channel, archived) is final: a retry would not change it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator

from bot.earlier_post import find_earlier_post
from bot.slack.payloads import Message
from knowledge.state import claims
from knowledge.state.post_once import is_our_post

__all__ = [
    "EVENT_TYPE",
    "RATE_LIMIT_RETRIES",
    "SERVER_ERROR_RETRIES",
    "find_earlier_reply",
    "outcome_of",
    "reply_once",
    "reply_retry_handlers",
]

log = logging.getLogger("gpubot.slack.reply")

EVENT_TYPE = "gpubot_reply"  # the message metadata of every mention/DM reply: {"key": the message's claim key}
RATE_LIMIT_RETRIES = 5  # 429s retried after Retry-After (+ up to 1 s of jitter each)
SERVER_ERROR_RETRIES = 4  # 500/503 retried after 1, 2, 4, 8 s (+ jitter): ~15 s, well inside the renewed lease
THREAD_PAGES = 5  # replies read looking for an earlier attempt's reply: 5 pages of 200
_NOT_POSTED = frozenset({"ratelimited", "rate_limited", "HTTP 429"})


def reply_retry_handlers(*, interval: RetryIntervalCalculator | None = None) -> list[RetryHandler]:
    """The Web API client's retry policy (`interval`: the wait between server-error retries; tests shorten it)."""
    return [
        ConnectionErrorRetryHandler(max_retry_count=2),
        RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ServerErrorRetryHandler(
            max_retry_count=SERVER_ERROR_RETRIES,
            interval_calculator=interval or BackoffRetryIntervalCalculator(backoff_factor=1.0),
        ),
    ]


def outcome_of(error: str | None) -> str:
    """What a post's error means for its claim: `done` (posted, or refused for good), `failed` (certainly not
    posted: let Slack's retry answer), `unsure` (maybe posted: the retry looks first)."""
    if error is None:
        return "done"
    if error in _NOT_POSTED:
        return "failed"
    if error in ("unreachable", "internal_error", "fatal_error", "service_unavailable") or error.startswith("HTTP 5"):
        return "unsure"
    return "done"


def reply_metadata(message: Message) -> dict[str, Any]:
    return {"event_type": EVENT_TYPE, "event_payload": {"key": message.key}}


def reply_once(client: Any, body: dict, message: Message, send: Callable[[dict[str, Any]], str | None]) -> None:
    """Answer `message` once: `send(metadata)` posts the reply (with that message metadata) and returns the post's
    error code, None when posted (or when there was nothing to post)."""
    event_key = f"slack-event:{claims.event_key(body)}"
    if not claims.claim(message.key):
        return  # the same message is answered (or being answered) through another event (a mention in a DM)
    outcome = "unsure"  # an exception before the post is known to have happened: looked for at the retry
    try:
        if claims.taken_over(message.key):
            ts, why = find_earlier_reply(client, message)
            if ts or why:
                log.warning("not answering %s again: %s", message.where, "its reply is in the thread" if ts else why)
                outcome = "done"
                return
        outcome = outcome_of(send(reply_metadata(message)))
    finally:
        if outcome == "done":  # answered (or given up for good): no retry and no other process answers it again
            claims.finish(message.key)
            claims.finish(event_key)
        else:
            log.warning("reply to %s not delivered (%s): left to Slack's retry of the event", message.where, outcome)
            claims.release(message.key, maybe_done=outcome == "unsure")
            claims.release(event_key, maybe_done=outcome == "unsure")


def find_earlier_reply(client: Any, message: Message) -> tuple[str | None, str | None]:
    """(ts, None) when an earlier attempt's reply to `message` is there, (None, None) when it verifiably is not,
    (None, why) when that cannot be told."""
    channel, payload = message.channel or "", {"key": message.key}
    if not message.thread_ts:
        return find_earlier_post(client, channel, EVENT_TYPE, payload, pages=THREAD_PAGES)
    cursor = None
    for _page in range(THREAD_PAGES):
        try:
            response = client.conversations_replies(
                channel=channel,
                ts=message.thread_ts,
                limit=200,
                include_all_metadata=True,
                **({"cursor": cursor} if cursor else {}),
            )
        except SlackApiError as exc:
            error = (exc.response.get("error") if exc.response is not None else None) or "error"
            return None, f"the thread cannot be read ({error})"
        except Exception as exc:  # noqa: BLE001 - unreachable: cannot tell
            return None, f"the thread cannot be read ({type(exc).__name__})"
        for reply in response.get("messages") or []:
            if is_our_post(reply, EVENT_TYPE, payload):
                return reply.get("ts"), None
        cursor = (response.get("response_metadata") or {}).get("next_cursor")
        if not (response.get("has_more") and cursor):
            return None, None
    return None, "more replies in the thread than could be read"
