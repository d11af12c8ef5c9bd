"""Slack payloads parsed once into the few typed fields gpubot reads (no dict digging in the listeners).

    SlashCommand  `/gpu TEXT`: the text as typed, who asked where
    Message       an @-mention or a DM: the question without the mention, where the reply goes
    Click         a button: its action and value, where it was clicked, the thread a reply belongs in

Each carries `where`, the who/where/what of the request for log lines (never tokens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.grid import workspace_of

__all__ = ["Click", "Message", "SlashCommand", "log_context", "slack_text", "strip_mention"]


def slack_text(text: str | None) -> str:
    """Slack sends `& < >` as entities; the pipeline wants the characters the user typed."""
    return (text or "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the `<@BOT>` mention(s)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text or "")
    else:
        text = re.sub(r"^\s*<@[UW][A-Z0-9]+(\|[^>]*)?>", " ", text or "")
    return " ".join(text.split())


def log_context(body: dict[str, Any]) -> str:
    """Who/where/what, for log lines (never tokens)."""
    event = body.get("event") or {}
    parts = {
        "type": body.get("type") or ("command" if body.get("command") else None),
        "team": body.get("team_id") or (body.get("team") or {}).get("id"),
        "channel": body.get("channel_id") or event.get("channel") or (body.get("channel") or {}).get("id"),
        "user": body.get("user_id") or event.get("user") or (body.get("user") or {}).get("id"),
        "event": event.get("type"),
        "event_id": body.get("event_id"),
        "command": body.get("command"),
        "actions": ",".join(a.get("action_id", "") for a in body.get("actions") or []) or None,
        "text": (body.get("text") or event.get("text") or "")[:200] or None,
    }
    return " ".join(f"{k}={v!r}" for k, v in parts.items() if v)


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """`/gpu TEXT` as Slack sent it."""

    text: str  # entities decoded
    team: str | None
    channel: str | None
    user: str | None
    where: str

    @classmethod
    def of(cls, command: dict[str, Any]) -> SlashCommand:
        return cls(
            text=slack_text(command.get("text", "")),
            team=command.get("team_id"),
            channel=command.get("channel_id"),
            user=command.get("user_id"),
            where=log_context(command),
        )


@dataclass(frozen=True, slots=True)
class Message:
    """An @-mention or a DM: the question, and the thread its reply goes in (None: the conversation itself)."""

    text: str  # entities decoded, the bot's mention removed
    team: str | None
    channel: str | None
    user: str | None
    ts: str | None
    thread_ts: str | None
    where: str

    @classmethod
    def of(
        cls, body: dict[str, Any], event: dict[str, Any], bot_user_id: str | None, *, thread_ts: str | None
    ) -> Message:
        return cls(
            text=strip_mention(slack_text(event.get("text", "")), bot_user_id),
            team=body.get("team_id"),
            channel=event.get("channel"),
            user=event.get("user"),
            ts=event.get("ts"),
            thread_ts=thread_ts,
            where=log_context(body),
        )

    @property
    def key(self) -> str:
        """The message's claim key: an @-mention in a DM also arrives as a DM message, answered once."""
        return f"slack-message:{self.team}:{self.channel}:{self.ts}"


@dataclass(frozen=True, slots=True)
class Click:
    """A button pressed on one of gpubot's messages."""

    action_id: str
    value: str
    team: str | None
    channel: str  # "" when Slack did not say
    channel_name: str | None
    user: str | None
    message_ts: str | None  # the clicked message (else the action's own ts)
    container_thread_ts: str | None  # the thread the clicked message is in, as the container says
    message_thread_ts: str | None  # ... as the message says
    is_ephemeral: bool
    where: str

    @classmethod
    def of(cls, body: dict[str, Any], action: dict[str, Any]) -> Click:
        container = body.get("container") or {}
        channel = body.get("channel") or {}
        return cls(
            action_id=action.get("action_id") or "",
            value=action.get("value") or "",
            team=workspace_of(body),  # Enterprise Grid: `team` may be null
            channel=channel.get("id") or container.get("channel_id") or "",
            channel_name=channel.get("name"),
            user=(body.get("user") or {}).get("id"),
            message_ts=container.get("message_ts") or (body.get("actions") or [{}])[0].get("action_ts"),
            container_thread_ts=container.get("thread_ts"),
            message_thread_ts=(body.get("message") or {}).get("thread_ts"),
            is_ephemeral=bool(container.get("is_ephemeral")),
            where=log_context(body),
        )

    def thread(self) -> dict[str, str]:
        """`{"thread_ts": ...}` when the clicked message is a threaded reply (its answer goes in that thread)."""
        ts = self.message_thread_ts or self.container_thread_ts
        return {"thread_ts": ts} if ts else {}
