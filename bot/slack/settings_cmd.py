"""Replies to the `/gpu` commands that change or show settings and digest subscriptions (kept out of
the listeners, `bot.slack.slash`), with who-may-change-what and the record of every change.

    command_reply(cmd, ctx) -> (message, response_type)

- Workspace-wide changes (`/gpu set|unset workspace ...`) need a workspace admin or owner (`bot.slack.auth`);
  others get a plain refusal and nothing changes.
- A change to a channel's settings or digest subscription is announced in the channel: the command is answered
  `in_channel`, opening with "@user set providers to aws, gcp". Changes in a DM or to the workspace stay private.
- Every change is recorded (`knowledge.state.settings_audit`: who, when, old, new); `/gpu settings` lists the latest.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from bot.pipeline import typed_setting
from bot.slack import blocks
from bot.slack.auth import workspace_refusal
from bot.slack.blocks.settings import setting_value
from bot.slack.commands import Command, digest_options
from handlers.i18n import scoped

__all__ = ["CommandContext", "change_lines", "command_reply", "record_change"]

log = logging.getLogger("gpubot.slack")

USAGE_VALUES = {
    "providers": "aws,alibaba",
    "regions": "us-east-1,cn-hangzhou",
    "currency": "CNY",
    "language": "zh",
    "pricing": "spot",
    "budget": "2 USD/GPU-hour",
}


@dataclass(frozen=True)
class CommandContext:
    """Who ran a command, where, and with what (the Web client answers users.info for the admin rule)."""

    kb: Any
    client: Any
    team: str
    channel: str
    user: str | None
    lang: str

    @property
    def dm(self) -> bool:
        return self.channel.startswith("D")


def _who(user: str | None) -> str:
    """A Slack mention of `user` (ids only; anything else is shown, not parsed)."""
    return f"<@{user}>" if user and re.fullmatch(r"[UW][A-Z0-9_]+", user) else blocks.slack_escape(user or "?")


_p = scoped("settings_cmd")


def key_label(key: str, lang: str) -> str:
    return blocks.phrase(f"settings.key.{key}", lang)


def notice(lang: str, name: str, **values: Any) -> dict[str, Any]:
    if name == "usage.set" and values.get("key"):
        key = values["key"]
        text = f"`/gpu set {key} {USAGE_VALUES[key]}` / `/gpu set workspace {key} {USAGE_VALUES[key]}`"
        return blocks.notice_message(("Usage: " if lang == "en" else "用法：") + text)
    escaped = {k: blocks.slack_escape(v) for k, v in values.items()}
    return blocks.notice_message(_p(name, lang, **escaped))


def error_text(lang: str, exc: Exception) -> str:
    text = str(exc)
    suggestions = getattr(exc, "suggestions", ())
    if suggestions:
        text += _p("did_you_mean", lang, candidates=" / ".join(suggestions))
    return text


def setting_error(lang: str, name: str, exc: Exception, **values: Any) -> dict[str, Any]:
    """`/gpu set providers awz` -> "Not set: unknown provider 'awz'. Did you mean aws / azure / huawei?"."""
    suggestions = getattr(exc, "suggestions", ())
    if name == "unknown_key":
        text = _p("unknown_key", lang, value=blocks.slack_escape(values.get("value", "")))
        hint: str | None = _p("keys", lang)
    else:
        text = _p("invalid", lang, error=blocks.slack_escape(str(exc)))
        key = values.get("key")
        hint = f"`/gpu set {key} {USAGE_VALUES[key]}`" if key in USAGE_VALUES else None
    if suggestions:
        text += _p("did_you_mean", lang, candidates=" / ".join(f"*{blocks.slack_escape(s)}*" for s in suggestions))
    return blocks.notice_message(text, hint=hint)


def record_change(team: str, channel: str, key: str, old: Any, new: Any, user: str | None, via: str) -> None:
    """Record a change; a failure to record is logged, never undoes or hides the change itself."""
    from knowledge.state import settings_audit

    try:
        settings_audit.record(team, channel, key, old, new, changed_by=user, via=via)
    except Exception:  # the setting is saved; a change record that cannot be written is logged, not a failure
        log.exception("could not record the change of %s in %s/%s by %s", key, team, channel, user)


def _announced(message: dict[str, Any], announcement: str) -> dict[str, Any]:
    """`message` opened by a public announcement line (already mrkdwn)."""
    return {
        "text": announcement + "\n" + message["text"],
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": announcement}}, *message["blocks"]],
    }


def command_reply(cmd: Command, ctx: CommandContext) -> tuple[dict[str, Any], str]:
    """The reply to a settings or digest command, and its response_type (in_channel when announced)."""
    from knowledge.state import settings_store as store

    lang, team, channel = ctx.lang, ctx.team, ctx.channel
    workspace = cmd.scope == "workspace"
    if cmd.kind == "show":
        chosen = store.get_settings(team, channel)
        message = blocks.settings_message(lang, dict(chosen), chosen.origins, store.scope_settings(team, ""), dm=ctx.dm)
        return with_change_record(message, team, channel, lang), "ephemeral"
    if cmd.kind == "digest":
        return digest_reply(cmd, ctx)
    if cmd.kind == "sources":  # `/gpu sources` (bot/sources_cmd.py)
        from bot.sources_cmd import report, sources_text

        return blocks.text_message(blocks.slack_escape(sources_text(report(lang=lang), lang))), "ephemeral"
    if cmd.kind == "alert":  # price alerts (bot/alert_cmd.py)
        from bot.alert_cmd import alert_reply

        kb = ctx.kb.current() if hasattr(ctx.kb, "current") else ctx.kb
        return alert_reply(cmd, team, channel, ctx.user, lang, kb), "ephemeral"
    if workspace and cmd.key and (refusal := workspace_refusal(ctx.client, team, ctx.user, lang)):
        return blocks.notice_message(blocks.slack_escape(refusal)), "ephemeral"
    target = _Target(
        store.WORKSPACE if workspace else channel, _p("scope." + cmd.scope, lang), not workspace and not ctx.dm
    )
    if cmd.kind == "set":
        return _set_reply(cmd, ctx, target)
    if not cmd.key:  # unset
        return notice(lang, "usage.unset"), "ephemeral"
    if cmd.key.lower() == "all":
        return _unset_all_reply(ctx, target)
    return _unset_reply(cmd.key, ctx, target)


@dataclass(frozen=True, slots=True)
class _Target:
    """Where a set or unset applies: the stored scope (`WORKSPACE` or the channel), its name in the reply, and
    whether the change is announced in the channel."""

    scope_channel: str
    where: str
    announce: bool


def _set_reply(cmd: Command, ctx: CommandContext, target: _Target) -> tuple[dict[str, Any], str]:
    from knowledge.state import settings_store as store

    lang = ctx.lang
    if not cmd.key:
        return notice(lang, "usage.set"), "ephemeral"
    try:
        key = store.key_of(cmd.key)
    except store.SettingError as exc:
        return setting_error(lang, "unknown_key", exc, value=cmd.key), "ephemeral"
    if not cmd.value.strip():
        return notice(lang, "usage.set", key=key), "ephemeral"
    old = store.scope_settings(ctx.team, target.scope_channel).get(key)
    try:
        typed = typed_setting(key, cmd.value)  # a budget: the question's grammar, one meaning
        value = store.set_setting(ctx.team, target.scope_channel, key, typed, kb=ctx.kb, updated_by=ctx.user)
    except store.SettingError as exc:
        return setting_error(lang, "invalid", exc, value=cmd.value, key=key), "ephemeral"
    record_change(ctx.team, target.scope_channel, key, old, value, ctx.user, "slash")
    shown = setting_value(key, value, lang)
    message = notice(lang, f"set.{cmd.scope}", key=key_label(key, lang), where=target.where, value=shown)
    if target.announce:
        line = _p("announce.set", lang, user=_who(ctx.user), key=key_label(key, lang), value=blocks.slack_escape(shown))
        return _announced(message, line), "in_channel"
    return message, "ephemeral"


def _unset_all_reply(ctx: CommandContext, target: _Target) -> tuple[dict[str, Any], str]:
    from knowledge.state import settings_store as store

    before = store.scope_settings(ctx.team, target.scope_channel)
    n = store.clear(ctx.team, target.scope_channel)
    for key, old in before.items():
        record_change(ctx.team, target.scope_channel, key, old, None, ctx.user, "slash")
    message = notice(ctx.lang, "unset.all" if n else "unset.none_all", where=target.where)
    if target.announce and n:
        return _announced(message, _p("announce.unset_all", ctx.lang, user=_who(ctx.user))), "in_channel"
    return message, "ephemeral"


def _unset_reply(raw_key: str, ctx: CommandContext, target: _Target) -> tuple[dict[str, Any], str]:
    from knowledge.state import settings_store as store

    lang = ctx.lang
    try:
        key = store.key_of(raw_key)
    except store.SettingError as exc:
        return setting_error(lang, "unknown_key", exc, value=raw_key), "ephemeral"
    old = store.scope_settings(ctx.team, target.scope_channel).get(key)
    n = store.clear(ctx.team, target.scope_channel, key)
    if n:
        record_change(ctx.team, target.scope_channel, key, old, None, ctx.user, "slash")
    now = store.get_settings(ctx.team, ctx.channel)
    origin = _p("origin." + now.origin(key), lang)
    message = notice(
        lang,
        "unset.done" if n else "unset.none",
        key=key_label(key, lang),
        where=target.where,
        now=f"{setting_value(key, now.get(key), lang)} ({origin})",
    )
    if target.announce and n:
        line = _p("announce.unset", lang, user=_who(ctx.user), key=key_label(key, lang))
        return _announced(message, line), "in_channel"
    return message, "ephemeral"


def _digest_value(sub) -> dict | None:
    if sub is None:
        return None
    return {
        "hour": sub.hour,
        "timezone": sub.timezone,
        "gpus": list(sub.gpus),
        "threshold_pct": sub.threshold_pct,
        "quiet": sub.quiet,
    }


def digest_reply(cmd: Command, ctx: CommandContext) -> tuple[dict[str, Any], str]:
    from knowledge.state import subscriptions

    lang, team, channel = ctx.lang, ctx.team, ctx.channel
    announce = not ctx.dm
    if cmd.action == "subscribe":
        old = _digest_value(subscriptions.get_subscription(team, channel))
        try:
            options = digest_options(cmd.args)
            options.setdefault("language", lang)
            sub = subscriptions.subscribe(team, channel, created_by=ctx.user, **options)
        except ValueError as exc:
            return blocks.notice_message(blocks.slack_escape(str(exc)), hint=_p("usage.digest", lang)), "ephemeral"
        record_change(team, channel, "digest", old, _digest_value(sub), ctx.user, "slash")
        line = blocks.digest_home_section(lang, [sub])
        summary = line[0]["text"]["text"] if line else ""
        message = blocks.notice_message(_p("digest.subscribed", lang) + "\n" + summary, hint=_p("digest.invite", lang))
        if announce:
            return _announced(message, _p("announce.subscribe", lang, user=_who(ctx.user))), "in_channel"
        return message, "ephemeral"
    if cmd.action == "unsubscribe":
        old = _digest_value(subscriptions.get_subscription(team, channel))
        done = subscriptions.unsubscribe(team, channel)
        message = blocks.notice_message(_p("digest.unsubscribed" if done else "digest.not_subscribed", lang))
        if done:
            record_change(team, channel, "digest", old, None, ctx.user, "slash")
            if announce:
                return _announced(message, _p("announce.unsubscribe", lang, user=_who(ctx.user))), "in_channel"
        return message, "ephemeral"
    subs = subscriptions.list_subscriptions(team)  # list
    section = blocks.digest_home_section(lang, subs)
    if not section:
        return blocks.notice_message(blocks.phrase("home.no_digests", lang), hint=_p("usage.digest", lang)), "ephemeral"
    return {"text": blocks.phrase("home.digests", lang), "blocks": section}, "ephemeral"


# --- the change record in /gpu settings ----------------------------------------------------------------------


def _value_text(key: str, value: Any, lang: str) -> str:
    if value is None:
        return _p("changes.unset", lang)
    if key == "digest":
        return _p("changes.digest_on", lang, hour=int(value.get("hour", 0)), tz=value.get("timezone", "UTC"))
    return setting_value(key, value, lang)


def change_lines(team: str, channel: str, lang: str, limit: int = 5) -> list[str]:
    """mrkdwn lines of the latest changes of this channel and of the workspace, newest first."""
    from knowledge.state import settings_audit

    lines = []
    for change in settings_audit.recent(team, channel, limit=limit):
        key = _p("changes.digest", lang) if change.key == "digest" else key_label(change.key, lang)
        lines.append(
            "• "
            + _p(
                "changes.line",
                lang,
                when=change.changed_at.strftime("%Y-%m-%d %H:%M UTC"),
                who=_who(change.changed_by),
                key=f"*{blocks.slack_escape(key)}*",
                where=_p("scope.workspace" if not change.channel else "scope.channel", lang),
                old=blocks.slack_escape(_value_text(change.key, change.old, lang)),
                new=blocks.slack_escape(_value_text(change.key, change.new, lang)),
            )
        )
    return lines


def with_change_record(message: dict[str, Any], team: str, channel: str, lang: str) -> dict[str, Any]:
    """`/gpu settings` with its "Recent changes" section before the closing hint (when there are changes)."""
    try:
        lines = change_lines(team, channel, lang)
    except Exception:  # the settings are shown without their change record (logged)
        log.exception("could not read the change record of %s/%s", team, channel)
        return message
    if not lines:
        return message
    text = f"*{_p('changes.title', lang)}*\n" + "\n".join(lines)
    section = {"type": "section", "text": {"type": "mrkdwn", "text": text[: blocks.LIMITS["section_text"]]}}
    out = list(message["blocks"])
    out.insert(len(out) - 1 if out and out[-1].get("type") == "context" else len(out), section)
    fallback = message["text"] + "\n" + text
    return {"text": fallback[: blocks.LIMITS["fallback_text"]], "blocks": out}
