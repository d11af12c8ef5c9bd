"""Events: @-mentions and DMs, and the app leaving a workspace.

    @gpubot TEXT     one reply in the question's thread (started if needed)
    DM TEXT          one reply in the DM
    "…时提醒我"       a price alert set by mention (`bot.alert_cmd`)
    a history question   a chart uploaded into the thread, rendered on the chart worker (off every request)
    app_uninstalled / tokens_revoked   that workspace's tokens, settings and digest subscriptions deleted (an
                                       org-wide install's: the whole org's, `bot.slack.uninstall`)

Never two replies to one message, none lost to Slack's errors (`bot.slack.reply_once`): the reply claims the
message's channel+ts (an @-mention in a DM also arrives as a DM message); a delivered reply finishes the message's
and the event's claims, a refused one releases them for Slack's retry of the event, which looks for an earlier
reply first. Other bots' messages and message subtypes (edits, deletions) get a no-op, so Slack sees 200 and does
not retry.
"""

from __future__ import annotations

from slack_bolt import App
from slack_sdk import WebClient

from bot.pipeline import understand
from bot.slack.answering import Answerer
from bot.slack.commands import parse_command
from bot.slack.delivery import post_message
from bot.slack.oauth import installation_store
from bot.slack.payloads import Message
from bot.slack.reply_once import reply_once
from bot.slack.uninstall import forget, note_grid_workspace
from handlers.language import language_of

__all__ = ["register", "reply"]


def register(app: App, answerer: Answerer) -> None:
    """The mention, DM and workspace-lifecycle listeners."""
    settings = answerer.settings

    @app.event("app_mention")
    def on_mention(body: dict, event: dict, client: WebClient, context) -> None:
        if event.get("bot_id") or event.get("subtype") or event.get("channel_type") == "im":
            return  # other bots; edits; DMs are answered as DM messages
        message = Message.of(body, event, context.bot_user_id, thread_ts=event.get("thread_ts") or event.get("ts"))
        reply(answerer, client, body, message)

    @app.event("message")
    def on_message(body: dict, event: dict, client: WebClient, context) -> None:
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id") or not event.get("user"):
            return  # edits, deletions, bots, channel chatter: acknowledged, not answered
        reply(answerer, client, body, Message.of(body, event, context.bot_user_id, thread_ts=event.get("thread_ts")))

    app.middleware(note_grid_workspace)  # workspaces an org-wide install serves, for its uninstall

    @app.event("app_uninstalled")
    def on_uninstalled(body: dict, context) -> None:
        forget(body, context, settings)  # the whole org for an org-wide install (`bot.slack.uninstall`)

    @app.event("tokens_revoked")
    def on_tokens_revoked(body: dict, event: dict, context) -> None:
        tokens = event.get("tokens") or {}
        team = context.team_id or body.get("team_id")
        if tokens.get("bot"):
            forget(body, context, settings)
        elif settings.oauth_enabled:
            for user in tokens.get("oauth") or []:
                installation_store(settings).delete_installation(
                    enterprise_id=context.enterprise_id, team_id=team, user_id=user
                )


def reply(answerer: Answerer, client: WebClient, body: dict, message: Message) -> None:
    """Answer `message` once, across the events that carry it and the processes that receive them."""
    reply_once(client, body, message, lambda metadata: _reply_once(answerer, client, message, metadata))


def _reply_once(answerer: Answerer, client: WebClient, message: Message, metadata: dict) -> str | None:
    """Post the reply (with `metadata`); the post's error, None when posted or when the reply is posted later."""
    text, channel, thread_ts, where = message.text, message.channel, message.thread_ts, message.where
    command = parse_command(text)
    if command is not None and command.kind == "alert":  # "…时提醒我" by mention: a price alert here
        from bot.alert_cmd import alert_reply

        reply = alert_reply(
            command, message.team or "", channel or "", message.user, language_of(text), answerer.kb.current()
        )
        return post_message(client, where, channel=channel, thread_ts=thread_ts, metadata=metadata, **reply)[1]
    if answerer.is_history(text):  # a chart, uploaded into the thread (rendered on the chart worker)
        query = understand(text, answerer.kb)
        answerer.in_background(where, answerer.post_chart, client, channel, thread_ts, query)
        return None
    answer = answerer.message_for(text, shareable=False, where=where, team=message.team, channel=channel)
    return post_message(client, where, channel=channel, thread_ts=thread_ts, metadata=metadata, **answer)[1]
