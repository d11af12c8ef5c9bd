"""`/gpu`: one message per slash command.

/gpu TEXT        the answer inside the ack when it is ready within the ack budget (ephemeral, with a "Share in
                 channel" button), else an empty ack and the answer posted once through `respond()` (Slack does
                 not honour replace_original for slash-command replies)
/gpu, /gpu help  the help answer (built from `handlers.INTENTS`) and every command (`bot.slack.help`), in the
                 asker's language (Chinese text, else the channel's language setting, else their Slack locale)
/gpu set|unset|settings|digest|alert ...   commands, not questions (`bot.slack.commands`), replied to by
                 `bot.slack.settings_cmd` (the admin rule, the record of every change); `digest now` in the
                 channel
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.slack import blocks
from bot.slack.answering import Answerer, failure_message
from bot.slack.commands import Command, parse_command
from bot.slack.payloads import SlashCommand
from bot.slack.repeats import Repeats, changes_state
from bot.slack.settings_cmd import CommandContext, command_reply
from handlers.language import has_chinese

__all__ = ["register"]

log = logging.getLogger("gpubot.slack")


def register(app: App, answerer: Answerer) -> None:
    """The `/gpu` listener."""

    repeats = Repeats()  # a command repeated within a minute: answered as the first, applied once

    @app.command("/gpu")
    def on_gpu(ack, command: dict, respond, client: WebClient, context) -> None:
        cmd = SlashCommand.of(command)
        slash_command(answerer, cmd, ack, respond, client, arrived=arrived_at(context), repeats=repeats)


def ack_soon(
    answerer: Answerer,
    ack: Callable[..., Any],
    respond: Any,
    where: str,
    work: Callable[[], dict],
    *,
    response_type: str = "ephemeral",
    arrived: float | None = None,
) -> None:
    """One message: the result of `work` inside the ack when it is ready within the budget, else an empty ack
    and the result posted once through the response_url (Slack ignores replace_original on slash replies).
    The budget runs from `arrived` (when the request reached gpubot, `arrived_at`): what the gate, authorize and
    the state already took is taken off it (issue 24)."""
    future = answerer.answers.submit(work)
    spent = time.monotonic() - arrived if arrived is not None else 0.0
    try:
        message = dict(future.result(timeout=max(0.0, answerer.ack_budget() - spent)))
    except FutureTimeout:
        ack()
        message = dict(future.result())
        response_type = message.pop("response_type", response_type)
        answerer.respond(respond, where, response_type=response_type, **message)
        return
    message.setdefault("response_type", response_type)
    ack(message)  # the whole dict: Bolt's ack(blocks=..., attachments=...) would drop the blocks


def arrived_at(context: Any) -> float | None:
    """When the request reached gpubot (`time.monotonic()`): stamped by `bot.slack.app.stamp_arrival` before
    authorize, from the HTTP server's `X-Gpubot-Arrived` header when it set one."""
    value = context.get("gpubot_arrived") if context is not None else None
    return float(value) if isinstance(value, int | float) else None


def slash_command(
    answerer: Answerer,
    cmd: SlashCommand,
    ack: Callable[..., Any],
    respond: Any,
    client: WebClient,
    *,
    arrived: float | None = None,
    repeats: Repeats | None = None,
) -> None:
    """A question, help or a command: each answered with one message."""
    parsed = parse_command(cmd.text)
    if parsed is not None:
        run_command(answerer, parsed, cmd, ack, respond, client, arrived=arrived, repeats=repeats or Repeats())
        return
    ack_soon(
        answerer,
        ack,
        respond,
        cmd.where,
        lambda: answerer.message_for(
            cmd.text,
            shareable=True,
            where=cmd.where,
            team=cmd.team,
            channel=cmd.channel,
            help_language=lambda: answerer.asker_language(client, cmd.text, cmd.team, cmd.channel, cmd.user),
        ),
        arrived=arrived,
    )


def run_command(
    answerer: Answerer,
    parsed: Command,
    cmd: SlashCommand,
    ack: Callable[..., Any],
    respond: Any,
    client: WebClient,
    *,
    arrived: float | None = None,
    repeats: Repeats,
) -> None:
    team, channel = cmd.team or "", cmd.channel or ""
    chosen = answerer.settings_of(team, channel)
    lang = "zh" if has_chinese(cmd.text) else (chosen.get("language") or "en")
    if parsed.kind == "digest" and parsed.action == "now":

        def digest_now() -> dict:
            from bot.slack.digest import digest_now_message

            try:
                return digest_now_message(team, channel, lang)
            except Exception as exc:  # the outermost edge of `/gpu digest now`: what failed, in the reply
                log.exception("internal error building the digest (%s)", cmd.where)
                return failure_message(exc, lang)

        ack_soon(answerer, ack, respond, cmd.where, digest_now, response_type="in_channel", arrived=arrived)
        return

    def apply() -> dict:
        ctx = CommandContext(kb=answerer.kb, client=client, team=team, channel=channel, user=cmd.user, lang=lang)
        message, response_type = command_reply(parsed, ctx)
        return {**message, "response_type": response_type}

    def reply_to_command() -> dict:  # users.info (the admin rule) and the state database: within the budget
        try:
            if not changes_state(parsed.kind, parsed.action):
                return apply()
            already = lambda: blocks.notice_message(blocks.phrase("repeated", lang))  # noqa: E731
            return repeats.once(team, channel, cmd.user or "", cmd.text, apply, already)  # never applied twice
        except Exception as exc:  # a state database that cannot save: said so (`failure_message`)
            log.exception("internal error running a command (%s)", cmd.where)
            return failure_message(exc, lang)

    ack_soon(answerer, ack, respond, cmd.where, reply_to_command, arrived=arrived)
