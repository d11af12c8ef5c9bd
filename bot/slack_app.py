"""The Slack app: Slack payloads in, the CLI's pipeline in the middle, Block Kit out. It only translates.

    /gpu TEXT        ack at once: the answer itself when it is ready within ACK_BUDGET_SECONDS (ephemeral, with a
                     "Share in channel" button), else "Looking that up…" and the answer through `respond()`
    /gpu, /gpu help  the help answer (built from `handlers.INTENTS`)
    @gpubot TEXT     one reply in the question's thread (started if needed)
    DM TEXT          one reply in the DM
    buttons          share / spot <-> on-demand / more results / show pitfalls / did-you-mean: the query travels in
                     the button value; the button changes one field and re-runs `answer_query`
    App Home         what gpubot answers, how fresh its data is, sections from `home_sections_providers` (this
                     workspace's digest subscriptions) and the workspace defaults with a form that edits them

Commands, handled here before the parser (they are not questions):

    /gpu set [workspace] providers aws,alibaba | regions us-east-1,cn-hangzhou | currency CNY | language zh |
             pricing spot | budget 2 USD/GPU-hour          this channel's (or the workspace's) defaults
    /gpu unset [workspace] KEY|all                           remove them
    /gpu settings                                            what applies here and where each value comes from
    /gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] [quiet] | unsubscribe | now |
                list                                         the daily price-change digest of this channel

Every question (slash command, mention, DM, button) is answered with its channel's effective settings
(`knowledge.settings_store.get_settings`: channel over workspace over defaults) applied by
`handlers.defaults.apply_defaults`, and the reply's context line says what they filtered. Buttons carry which
fields the settings filled in, so a click re-applies the channel's current settings instead of freezing old ones.

Workspaces: with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET set, gpubot is installed through OAuth
(`GET /slack/install`, `GET /slack/oauth_redirect`) and every request is authorized with its own workspace's bot
token from slack_sdk's SQLAlchemy installation store, kept with the OAuth states in gpubot's state database
(`knowledge.state.engine()`: SQLite in GPUBOT_HOME, or PostgreSQL). Otherwise one workspace, SLACK_BOT_TOKEN.
`app_uninstalled` / `tokens_revoked` delete that workspace's tokens, settings and digest subscriptions.
`client_for_team(team)` gives the digest poster a client with the right workspace's token.

Never two replies to one message: a global middleware claims each event's `event_id` in the shared state database
(`knowledge.state.claim_event`, so it holds across processes and Slack's retries), and the reply itself claims the
message's channel+ts (an @-mention in a DM also arrives as a DM message). The bot's own messages are dropped by
Bolt (`ignoring_self_events`, bot id from one lazy, cached `auth.test`); other bots' messages and message subtypes
(edits, deletions) get a no-op listener, so Slack sees 200 and does not retry.

Errors are replies: an unexpected error is logged with its context (never tokens) and the user gets a short
apology, never a traceback.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import cache
from typing import Any

from slack_bolt import App, BoltResponse
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import blocks
from bot.pipeline import answer, answer_query, answer_with, understand
from bot.settings import Settings
from bot.slack_commands import Command, digest_options, parse_command
from bot.slack_oauth import (
    client_for_team,
    forget_workspace,
    installation_store,
    make_client,
    oauth_settings,
)
from handlers import defaults
from handlers.models import Answer, Query
from knowledge.kb import KB
from knowledge.state import claim_event

__all__ = [
    "ACK_BUDGET_SECONDS",
    "Command",
    "HomeContext",
    "build_app",
    "client_for_team",
    "forget_workspace",
    "home_sections_providers",
    "installation_store",
    "make_client",
    "parse_command",
    "refine",
]

log = logging.getLogger("gpubot.slack")

ACK_BUDGET_SECONDS = 1.5  # answer inside the ack when ready by then; Slack's deadline is 3 s
MAX_TOP = 90  # "more results" never asks for more rows than one table can hold
_CJK = re.compile(r"[\u4e00-\u9fff]")
_REFINE_ACTIONS = re.compile(r"^gpu_(toggle_pricing|more_results|show_pitfalls|suggest_\d+|work_\d+)$")
_NAME_FIELDS = {"gpu": "gpus", "provider": "providers", "region": "regions", "instance_type": "instance_types"}


@dataclass(frozen=True)
class HomeContext:
    """What a Home-tab section provider gets: who opened the tab, in which workspace."""

    team_id: str | None
    user_id: str
    lang: str
    kb: KB


# Features append callables returning Block Kit blocks for the Home tab's "subscriptions" part
# (the digest feature lists this workspace's digest subscriptions). A failing provider is logged and skipped.
home_sections_providers: list[Callable[[HomeContext], list[dict]]] = []


def _digest_subscriptions_section(ctx: HomeContext) -> list[dict]:
    """App Home: this workspace's digest subscriptions."""
    if not ctx.team_id:
        return []
    from knowledge.subscriptions import list_subscriptions

    return blocks.digest_home_section(ctx.lang, list_subscriptions(ctx.team_id))


home_sections_providers.append(_digest_subscriptions_section)


def language_of(text: str) -> str:
    return "zh" if _CJK.search(text or "") else "en"


def slack_text(text: str) -> str:
    """Slack sends `& < >` as entities; the pipeline wants the characters the user typed."""
    return (text or "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The question without the `<@BOT>` mention(s)."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text or "")
    else:
        text = re.sub(r"^\s*<@[UW][A-Z0-9]+(\|[^>]*)?>", " ", text or "")
    return " ".join(text.split())


def refine(action_id: str, query: Query, extra: dict[str, Any]) -> Query:
    """The query a button asks for: one field changed."""
    if action_id == blocks.ACTION_IDS["toggle"]:
        return query.model_copy(update={"pricing": "on_demand" if query.pricing == "spot" else "spot"})
    if action_id == blocks.ACTION_IDS["more"]:
        shown = int(extra.get("shown") or query.top_n or 5)
        return query.model_copy(update={"top_n": min(shown + 10, MAX_TOP)})
    if action_id == blocks.ACTION_IDS["pitfalls"]:
        return query.model_copy(update={"intent": "pitfalls"})
    if action_id.startswith("gpu_work_"):  # switch the benchmark workload of a "work" answer (bot/render_work.py)
        return query.model_copy(update={k: extra[k] for k in ("bench_workload", "bench_step") if extra.get(k)})
    if action_id.startswith("gpu_suggest_") and extra.get("kind") == "model":  # a benchmarked model picked
        issues = [i for i in query.issues if i.kind != "model"]
        return query.model_copy(update={"model": str(extra["pick"]), "issues": issues, "intent": "work"})
    if action_id.startswith("gpu_suggest_"):
        kind, pick, replaces = extra.get("kind", "gpu"), str(extra["pick"]), extra.get("replaces", "")
        field = _NAME_FIELDS.get(kind, "gpus")
        names = [n for n in getattr(query, field) if n != replaces and n != pick]
        issues = [i for i in query.issues if not (i.kind == kind and (i.text == replaces or pick in i.candidates))]
        return query.model_copy(update={field: [*names, pick], "issues": issues})
    return query


def _context_of(body: dict) -> str:
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


def build_app(settings: Settings, kb: KB, *, client: WebClient | None = None, oauth: bool | None = None) -> App:
    """The Bolt app. Nothing is called at start-up. One workspace: the bot's identity comes from one lazy, cached
    auth.test. OAuth (`oauth`, default: when SLACK_CLIENT_ID/SECRET are set): each request is authorized with its
    workspace's installation (auth.test per request)."""
    oauth = settings.oauth_enabled if oauth is None else oauth
    options: dict[str, Any] = {}
    if oauth:
        options["oauth_settings"] = oauth_settings(settings)
    app = App(
        client=client or make_client(settings, oauth=oauth),
        signing_secret=settings.secret("slack_signing_secret") or "",  # an empty secret rejects every HTTP request
        token_verification_enabled=False,
        process_before_response=False,
        listener_executor=ThreadPoolExecutor(max_workers=16, thread_name_prefix="gpubot-listener"),
        logger=logging.getLogger("gpubot.bolt"),
        **options,
    )
    answers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="gpubot-answer")

    # --- a channel's settings applied to a question ---------------------------------------------------------

    def settings_of(team: str | None, channel: str | None) -> dict[str, Any]:
        """The channel's effective settings; none (answer anyway) when the state database cannot be read."""
        if not team:
            return {}
        from knowledge.settings_store import get_settings

        try:
            return get_settings(team, channel)
        except Exception:
            log.exception("could not read the settings of %s/%s; answering without them", team, channel)
            return {}

    def answer_in(query: Query, team: str | None, channel: str | None) -> Answer:
        """Answer `query` with its channel's settings applied (the one pipeline: `bot.pipeline.answer_with`)."""
        return answer_with(query, kb, settings_of(team, channel))

    def answer_text(text: str, team: str | None, channel: str | None) -> Answer:
        text = text.strip()
        if text.lower() in ("", "help", "?"):
            query = Query(text=text, intent="help", language=language_of(text))
        else:
            try:
                query = understand(text, kb)
            except Exception:
                return answer(text, kb)  # logs, and answers with the apology
        return answer_in(query, team, channel)

    def message_for(text: str, *, shareable: bool, where: str, team: str | None = None,
                    channel: str | None = None) -> dict[str, Any]:
        """The rendered reply to `text`; never raises (an unexpected error becomes the apology, logged)."""
        try:
            result = answer_text(text, team, channel)
            if result.query.intent == "history" and shareable:  # a slash command: the summary + "post chart"
                from bot.history_slack import history_summary_message

                return history_summary_message(result)
            return blocks.answer_message(result, shareable=shareable)
        except Exception:
            log.exception("internal error answering in Slack (%s)", where)
            return blocks.error_message(language_of(text))

    def message_for_query(query: Query, *, shareable: bool, where: str, shared_by: str | None = None,
                          team: str | None = None, channel: str | None = None) -> dict:
        try:
            result: Answer = answer_in(query, team, channel)
            return blocks.answer_message(result, shareable=shareable, shared_by=shared_by)
        except Exception:
            log.exception("internal error answering a button in Slack (%s)", where)
            return blocks.error_message(query.language)

    def respond_checked(respond, where: str, **message: Any) -> None:
        try:
            response = respond(**message)
        except Exception:
            log.exception("could not reach response_url (%s)", where)
            return
        if response is not None and getattr(response, "status_code", 200) != 200:
            log.warning("response_url answered %s %r (%s)", response.status_code, response.body, where)

    # --- dedupe: one handling per event, across retries and processes ------------------------------------------

    @app.middleware
    def claim_once(body: dict, request, next: Callable[[], BoltResponse]) -> BoltResponse | None:
        if body.get("type") == "event_callback":
            event = body.get("event") or {}
            key = body.get("event_id") or f"{body.get('team_id')}:{event.get('channel')}:{event.get('ts')}"
            try:
                first = claim_event(f"slack-event:{key}")
            except Exception:  # the state store is down: answer rather than stay silent
                log.exception("could not record event %s; handling it anyway", key)
                first = True
            if not first:
                retry = (request.headers.get("x-slack-retry-num") or ["?"])[0]
                log.info("duplicate delivery of %s ignored (retry %s)", key, retry)
                return BoltResponse(status=200, body="")
        return next()

    # --- /gpu -------------------------------------------------------------------------------------------------

    def ack_soon(ack, respond, where: str, lang: str, work: Callable[[], dict], *,
                 response_type: str = "ephemeral") -> None:
        """Ack with the result of `work` when it is ready within the budget, else "Looking that up…" and respond."""
        future = answers.submit(work)
        try:
            message = future.result(timeout=ACK_BUDGET_SECONDS)
        except FutureTimeout:
            ack(response_type="ephemeral", **blocks.text_message(blocks.phrase("working", lang)))
            replace = response_type == "ephemeral"
            respond_checked(respond, where, response_type=response_type, replace_original=replace, **future.result())
            return
        ack(response_type=response_type, **message)

    @app.command("/gpu")
    def on_gpu(ack, command: dict, respond) -> None:
        text = slack_text(command.get("text", ""))
        where = _context_of(command)
        team, channel = command.get("team_id"), command.get("channel_id")
        parsed = parse_command(text)
        if parsed is not None:
            run_command(parsed, ack, respond, command, where)
            return
        ack_soon(ack, respond, where, language_of(text),
                 lambda: message_for(text, shareable=True, where=where, team=team, channel=channel))

    def run_command(cmd: Command, ack, respond, command: dict, where: str) -> None:
        team, channel, user = command.get("team_id") or "", command.get("channel_id") or "", command.get("user_id")
        chosen = settings_of(team, channel)
        lang = "zh" if _CJK.search(command.get("text", "")) else (chosen.get("language") or "en")
        if cmd.kind == "digest" and cmd.action == "now":
            def digest_now() -> dict:
                from bot.digest_cmd import digest_answer

                try:
                    result, _ = digest_answer(team, channel, lang=lang)
                    return blocks.answer_message(result, buttons=False)
                except Exception:
                    log.exception("internal error building the digest (%s)", where)
                    return blocks.error_message(lang)

            ack_soon(ack, respond, where, lang, digest_now, response_type="in_channel")
            return
        try:
            message = command_reply(cmd, team, channel, user, lang, dm=channel.startswith("D"))
        except Exception:
            log.exception("internal error running a command (%s)", where)
            message = blocks.error_message(lang)
        ack(response_type="ephemeral", **message)

    def command_reply(cmd: Command, team: str, channel: str, user: str | None, lang: str, *, dm: bool) -> dict:
        from knowledge import settings_store as store

        scope_channel = store.WORKSPACE if cmd.scope == "workspace" else channel
        where = _PHRASES["scope." + cmd.scope][lang]
        if cmd.kind == "show":
            chosen = store.get_settings(team, channel)
            return blocks.settings_message(lang, dict(chosen), chosen.origins, store.scope_settings(team, ""), dm=dm)
        if cmd.kind == "set":
            if not cmd.key:
                return _notice(lang, "usage.set")
            try:
                key = store.key_of(cmd.key)
            except store.SettingError as exc:
                return _setting_error(lang, "unknown_key", exc, value=cmd.key)
            if not cmd.value.strip():
                return _notice(lang, "usage.set", key=key)
            try:
                value = store.set_setting(team, scope_channel, key, cmd.value, kb=kb, updated_by=user)
            except store.SettingError as exc:
                return _setting_error(lang, "invalid", exc, value=cmd.value, key=key)
            return _notice(lang, f"set.{cmd.scope}", key=_key_label(key, lang), where=where,
                           value=store.format_value(key, value))
        if cmd.kind == "unset":
            if not cmd.key:
                return _notice(lang, "usage.unset")
            if cmd.key.lower() == "all":
                n = store.clear(team, scope_channel)
                return _notice(lang, "unset.all" if n else "unset.none_all", where=where)
            try:
                key = store.key_of(cmd.key)
            except store.SettingError as exc:
                return _setting_error(lang, "unknown_key", exc, value=cmd.key)
            n = store.clear(team, scope_channel, key)
            now = store.get_settings(team, channel)
            origin = _PHRASES["origin." + now.origin(key)][lang]
            return _notice(lang, "unset.done" if n else "unset.none", key=_key_label(key, lang), where=where,
                           now=f"{store.format_value(key, now.get(key))} ({origin})")
        return digest_reply(cmd, team, channel, user, lang)

    def digest_reply(cmd: Command, team: str, channel: str, user: str | None, lang: str) -> dict:
        from knowledge import subscriptions

        if cmd.action == "subscribe":
            try:
                options = digest_options(cmd.args)
                options.setdefault("language", lang)
                sub = subscriptions.subscribe(team, channel, created_by=user, **options)
            except ValueError as exc:
                return blocks.notice_message(blocks.slack_escape(str(exc)),
                                             hint=_PHRASES["usage.digest"][lang])
            line = blocks.digest_home_section(lang, [sub])
            summary = line[0]["text"]["text"] if line else ""
            return blocks.notice_message(_PHRASES["digest.subscribed"][lang] + "\n" + summary,
                                         hint=_PHRASES["digest.invite"][lang])
        if cmd.action == "unsubscribe":
            done = subscriptions.unsubscribe(team, channel)
            return blocks.notice_message(_PHRASES["digest.unsubscribed" if done else "digest.not_subscribed"][lang])
        subs = subscriptions.list_subscriptions(team)  # list
        section = blocks.digest_home_section(lang, subs)
        if not section:
            return blocks.notice_message(blocks.phrase("home.no_digests", lang),
                                         hint=_PHRASES["usage.digest"][lang])
        return {"text": blocks.phrase("home.digests", lang), "blocks": section}

    # --- @-mentions and DMs -------------------------------------------------------------------------------------

    def reply(client: WebClient, body: dict, event: dict, text: str, thread_ts: str | None) -> None:
        channel, where = event.get("channel"), _context_of(body)
        try:
            first = claim_event(f"slack-message:{body.get('team_id')}:{channel}:{event.get('ts')}")
        except Exception:
            log.exception("could not record the message; answering anyway (%s)", where)
            first = True
        if not first:
            return  # the same message was already answered through another event (a mention in a DM)
        if _is_history(text):  # a chart, uploaded into the thread (rendered here, after Slack got its ack)
            from bot.history_slack import post_history_chart

            post_history_chart(client, channel, thread_ts, understand(text, kb), kb)
            return
        message = message_for(text, shareable=False, where=where, team=body.get("team_id"), channel=channel)
        try:
            client.chat_postMessage(channel=channel, thread_ts=thread_ts, **message)
        except SlackApiError as exc:
            log.warning("could not reply: %s (%s)", exc.response.get("error"), where)

    @app.event("app_mention")
    def on_mention(body: dict, event: dict, client: WebClient, context) -> None:
        if event.get("bot_id") or event.get("subtype") or event.get("channel_type") == "im":
            return  # other bots; edits; DMs are answered as DM messages
        text = strip_mention(slack_text(event.get("text", "")), context.bot_user_id)
        reply(client, body, event, text, event.get("thread_ts") or event.get("ts"))

    @app.event("message")
    def on_message(body: dict, event: dict, client: WebClient, context) -> None:
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id") or not event.get("user"):
            return  # edits, deletions, bots, channel chatter: acknowledged, not answered
        text = strip_mention(slack_text(event.get("text", "")), context.bot_user_id)
        reply(client, body, event, text, event.get("thread_ts"))

    # --- buttons ------------------------------------------------------------------------------------------------

    def decoded(action: dict, where: str) -> tuple[Query, dict] | None:
        try:
            return blocks.decode_value(action.get("value") or "")
        except ValueError:
            log.warning("button with an unreadable value (%s)", where)
            return None

    def where_clicked(body: dict) -> tuple[str | None, str]:
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        return (body.get("team") or {}).get("id") or body.get("team_id"), channel

    def asked(query: Query, extra: dict, changed: Query | None = None) -> Query:
        """The question as asked: what the channel's settings filled in is reset, so that they apply afresh."""
        return defaults.undo_defaults(changed or query, extra.get("d") or (), unless_changed_from=query)

    def button_query(action: dict, where: str, respond) -> tuple[Query, dict] | None:
        """The question a button carries; an unreadable one gets the apology (privately) and None."""
        parsed = decoded(action, where)
        if parsed is None:
            respond_checked(respond, where, response_type="ephemeral", replace_original=False,
                            **blocks.error_message())
        return parsed

    def _is_history(text: str) -> bool:
        try:
            return bool(text.strip()) and understand(text, kb).intent == "history"
        except Exception:
            return False

    @app.action("history_post_chart")
    def on_history_chart(ack, body: dict, action: dict, client: WebClient, respond) -> None:
        ack()
        where = _context_of(body)
        parsed = button_query(action, where, respond)
        if parsed is None:
            return
        query, extra = parsed
        team, channel = where_clicked(body)
        ts = (body.get("container") or {}).get("message_ts") or (body.get("actions") or [{}])[0].get("action_ts")
        if not claim_event(f"history-chart:{team}:{channel}:{ts}"):  # a double click posts one chart
            return
        from bot.history_slack import failure_text, post_history_chart

        result = post_history_chart(client, channel, None, asked(query, extra), kb, notify_failure=False)
        if result["ok"]:
            respond_checked(respond, where, delete_original=True)
        else:
            respond_checked(respond, where, response_type="ephemeral", replace_original=False,
                            **blocks.text_message(failure_text(result["error"], query.language)))

    @app.action(blocks.ACTION_IDS["share"])
    def on_share(ack, body: dict, action: dict, respond) -> None:
        ack()
        where = _context_of(body)
        parsed = button_query(action, where, respond)
        if parsed is None:
            return
        query, extra = parsed
        team, channel = where_clicked(body)
        user = (body.get("user") or {}).get("id")
        message = message_for_query(asked(query, extra), shareable=False, where=where, shared_by=user, team=team,
                                    channel=channel)
        respond_checked(respond, where, response_type="in_channel", replace_original=False, **message)
        respond_checked(respond, where, delete_original=True)

    @app.action(_REFINE_ACTIONS)
    def on_refine(ack, body: dict, action: dict, respond) -> None:
        ack()
        where = _context_of(body)
        parsed = button_query(action, where, respond)
        if parsed is None:
            return
        query, extra = parsed
        query = asked(query, extra, refine(action["action_id"], query, extra))
        container = body.get("container") or {}
        team, channel = where_clicked(body)
        here = {"where": where, "team": team, "channel": channel}
        if container.get("is_ephemeral"):  # a private answer: replace it
            message = message_for_query(query, shareable=True, **here)
            respond_checked(respond, where, response_type="ephemeral", replace_original=True, **message)
        elif channel.startswith("D"):  # a DM: answer in the conversation
            original = body.get("message") or {}
            message = message_for_query(query, shareable=False, **here)
            respond_checked(respond, where, response_type="in_channel", replace_original=False,
                            thread_ts=original.get("thread_ts"), **message)
        else:  # someone else's answer in a channel: a private answer for whoever clicked, shareable
            message = message_for_query(query, shareable=True, **here)
            respond_checked(respond, where, response_type="ephemeral", replace_original=False, **message)

    # --- App Home: what gpubot does, digests, and the workspace defaults' form -----------------------------

    def publish_home(client: WebClient, team: str | None, user: str, where: str, lang: str | None = None) -> None:
        from knowledge.settings_store import scope_settings

        ctx = HomeContext(team_id=team, user_id=user, lang=lang or _user_language(client, user), kb=kb)
        extra: list[dict] = []
        for provider in list(home_sections_providers):
            try:
                extra += provider(ctx)
            except Exception:
                log.exception("home section provider %r failed (%s)", provider, where)
        settings_section: list[dict] = []
        if team:
            try:
                settings_section = blocks.home_settings_section(ctx.lang, scope_settings(team, ""))
            except Exception:
                log.exception("could not read the workspace defaults for the Home tab (%s)", where)
        help_answer = answer_query(Query(text="help", intent="help", language=ctx.lang), kb)
        view = blocks.home_view(ctx.lang, help_answer.lines, kb.meta("built_at"), _freshness(kb), extra,
                                settings_section)
        try:
            client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("could not publish the Home tab: %s (%s)", exc.response.get("error"), where)

    @app.event("app_home_opened")
    def on_home(body: dict, event: dict, client: WebClient) -> None:
        if event.get("tab", "home") != "home":
            return
        publish_home(client, body.get("team_id"), event["user"], _context_of(body))

    @app.action(blocks.ACTION_IDS["settings_open"])
    def on_settings_open(ack, body: dict, client: WebClient) -> None:
        ack()
        from knowledge.settings_store import scope_settings

        team = (body.get("team") or {}).get("id") or ""
        user = (body.get("user") or {}).get("id") or ""
        lang = _user_language(client, user) if user else "en"
        view = blocks.settings_modal(lang, team, scope_settings(team, ""), sorted(kb.providers))
        try:
            client.views_open(trigger_id=body.get("trigger_id"), view=view)
        except SlackApiError as exc:
            log.warning("could not open the settings form: %s (%s)", exc.response.get("error"), _context_of(body))

    @app.view(blocks.SETTINGS_MODAL_ID)
    def on_settings_submit(ack, body: dict, view: dict, client: WebClient) -> None:
        from knowledge import settings_store as store

        team = (body.get("team") or {}).get("id") or ""
        user = (body.get("user") or {}).get("id") or ""
        try:
            lang = json.loads(view.get("private_metadata") or "{}").get("lang") or "en"
        except ValueError:
            lang = "en"
        wanted = blocks.settings_from_view(view)
        values: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for key, raw in wanted.items():
            if raw is None:
                continue
            try:
                values[key] = store.normalize(key, raw, kb)
            except store.SettingError as exc:
                errors[f"setting_{key}"] = _error_text(lang, exc)[:150]
        if errors:
            ack(response_action="errors", errors=errors)
            return
        try:  # saved before the form closes, so that a failure can still be shown in it
            for key in store.KEYS:
                if key in values:
                    store.set_setting(team, store.WORKSPACE, key, values[key], kb=kb, updated_by=user)
                else:
                    store.clear(team, store.WORKSPACE, key)
        except Exception:
            log.exception("could not save the workspace defaults (%s)", _context_of(body))
            ack(response_action="errors", errors={"setting_providers": blocks.error_message(lang)["text"][:150]})
            return
        ack()
        log.info("workspace defaults of %s saved by %s: %s", team, user, sorted(values))
        publish_home(client, team, user, _context_of(body), lang)

    # --- the app leaves a workspace ------------------------------------------------------------------------

    @app.event("app_uninstalled")
    def on_uninstalled(body: dict, context) -> None:
        forget_workspace(context.team_id or body.get("team_id"), settings, enterprise_id=context.enterprise_id)

    @app.event("tokens_revoked")
    def on_tokens_revoked(body: dict, event: dict, context) -> None:
        tokens = event.get("tokens") or {}
        team = context.team_id or body.get("team_id")
        if tokens.get("bot"):
            forget_workspace(team, settings, enterprise_id=context.enterprise_id)
        elif settings.oauth_enabled:
            for user in tokens.get("oauth") or []:
                installation_store(settings).delete_installation(enterprise_id=context.enterprise_id, team_id=team,
                                                                 user_id=user)

    # --- anything unexpected -----------------------------------------------------------------------------------

    @app.error
    def on_error(error: Exception, body: dict, respond=None) -> None:
        log.error("unhandled error in the Slack app: %s (%s)", type(error).__name__, _context_of(body or {}),
                  exc_info=error)
        if respond is not None:
            lang = language_of((body or {}).get("text", ""))
            respond_checked(respond, _context_of(body or {}), response_type="ephemeral", replace_original=False,
                            **blocks.error_message(lang))

    return app


# --- command replies ----------------------------------------------------------------------------------------------

_PHRASES: dict[str, dict[str, str]] = {
    "scope.channel": {"en": "this channel", "zh": "本频道"},
    "scope.workspace": {"en": "this workspace", "zh": "本工作区"},
    "origin.channel": {"en": "this channel", "zh": "本频道"},
    "origin.workspace": {"en": "workspace", "zh": "工作区"},
    "origin.default": {"en": "gpubot's default", "zh": "gpubot 默认"},
    "set.channel": {"en": "Set {key} for {where}: *{value}*. Questions asked here use it unless they say otherwise.",
                    "zh": "已为{where}设置{key}：*{value}*。此后在这里的提问都会使用它（提问中另有说明的除外）。"},
    "set.workspace": {"en": "Set {key} for {where}: *{value}*. Every channel without its own {key} uses it.",
                      "zh": "已为{where}设置{key}：*{value}*。所有未单独设置{key}的频道都会使用它。"},
    "unset.done": {"en": "Removed {where}'s {key}. Now: {now}.", "zh": "已删除{where}的{key}设置。现在：{now}。"},
    "unset.none": {"en": "{where} has no {key} of its own. Now: {now}.",
                   "zh": "{where}没有单独设置{key}。现在：{now}。"},
    "unset.all": {"en": "Removed every setting of {where}.", "zh": "已删除{where}的全部设置。"},
    "unset.none_all": {"en": "{where} has no settings of its own.", "zh": "{where}没有单独的设置。"},
    "unknown_key": {"en": "Unknown setting `{value}`.", "zh": "未知的设置项 `{value}`。"},
    "invalid": {"en": "Not set: {error}.", "zh": "未设置：{error}。"},
    "did_you_mean": {"en": " Did you mean {candidates}?", "zh": "您是不是想输入 {candidates}？"},
    "keys": {"en": "Settings: providers, regions, currency, language, pricing, budget.",
             "zh": "可设置：providers、regions、currency、language、pricing、budget。"},
    "usage.set": {"en": "Usage: `/gpu set [workspace] KEY VALUE`, e.g. `/gpu set providers aws,alibaba`, "
                        "`/gpu set budget 2 USD/GPU-hour`.",
                  "zh": "用法：`/gpu set [workspace] 设置项 值`，例如 `/gpu set providers aws,alibaba`、"
                        "`/gpu set budget 2 USD/GPU-hour`。"},
    "usage.unset": {"en": "Usage: `/gpu unset [workspace] KEY` or `/gpu unset all`.",
                    "zh": "用法：`/gpu unset [workspace] 设置项` 或 `/gpu unset all`。"},
    "usage.digest": {"en": "Usage: `/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] "
                           "[quiet]`, `/gpu digest unsubscribe`, `/gpu digest now`, `/gpu digest list`.",
                     "zh": "用法：`/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] "
                           "[quiet]`、`/gpu digest unsubscribe`、`/gpu digest now`、`/gpu digest list`。"},
    "digest.subscribed": {"en": "This channel gets the daily GPU price digest:",
                          "zh": "本频道已订阅每日GPU价格摘要："},
    "digest.invite": {"en": "I post it myself: invite me to this channel (`/invite @gpubot`) if I am not in it yet.",
                      "zh": "摘要由我发送：如果我还不在本频道，请先邀请我（`/invite @gpubot`）。"},
    "digest.unsubscribed": {"en": "This channel no longer gets the daily digest.", "zh": "本频道已取消每日摘要。"},
    "digest.not_subscribed": {"en": "This channel was not subscribed to the digest.", "zh": "本频道没有订阅摘要。"},
}
_USAGE_VALUES = {
    "providers": "aws,alibaba", "regions": "us-east-1,cn-hangzhou", "currency": "CNY", "language": "zh",
    "pricing": "spot", "budget": "2 USD/GPU-hour",
}


def _key_label(key: str, lang: str) -> str:
    return blocks.phrase(f"settings.key.{key}", lang)


def _notice(lang: str, name: str, **values: Any) -> dict[str, Any]:
    if name == "usage.set" and values.get("key"):
        key = values["key"]
        text = f"`/gpu set {key} {_USAGE_VALUES[key]}` / `/gpu set workspace {key} {_USAGE_VALUES[key]}`"
        return blocks.notice_message(("Usage: " if lang == "en" else "用法：") + text)
    escaped = {k: blocks.slack_escape(v) for k, v in values.items()}
    return blocks.notice_message(_PHRASES[name][lang].format(**escaped))


def _error_text(lang: str, exc: Exception) -> str:
    text = str(exc)
    suggestions = getattr(exc, "suggestions", ())
    if suggestions:
        text += _PHRASES["did_you_mean"][lang].format(candidates=" / ".join(suggestions))
    return text


def _setting_error(lang: str, name: str, exc: Exception, **values: Any) -> dict[str, Any]:
    """`/gpu set providers awz` -> "Not set: unknown provider 'awz'. Did you mean aws / azure / huawei?"."""
    suggestions = getattr(exc, "suggestions", ())
    if name == "unknown_key":
        text = _PHRASES["unknown_key"][lang].format(value=blocks.slack_escape(values.get("value", "")))
        hint = _PHRASES["keys"][lang]
    else:
        text = _PHRASES["invalid"][lang].format(error=blocks.slack_escape(str(exc)))
        key = values.get("key")
        hint = f"`/gpu set {key} {_USAGE_VALUES[key]}`" if key in _USAGE_VALUES else None
    if suggestions:
        text += _PHRASES["did_you_mean"][lang].format(
            candidates=" / ".join(f"*{blocks.slack_escape(s)}*" for s in suggestions))
    return blocks.notice_message(text, hint=hint)


def _user_language(client: WebClient, user: str) -> str:
    """zh for users whose Slack locale is Chinese, else en (users:read; en when the lookup fails)."""
    try:
        locale = (client.users_info(user=user, include_locale=True).get("user") or {}).get("locale") or ""
    except SlackApiError as exc:
        log.info("users.info failed for the Home tab: %s", exc.response.get("error"))
        return "en"
    return "zh" if locale.lower().startswith("zh") else "en"


@cache
def _freshness_of(path: str, built_at: str | None, kb: KB) -> tuple[dict, ...]:
    rows = kb.rows("SELECT provider, source, as_of, COUNT(*) AS n FROM offers "
                   "GROUP BY provider, source, as_of ORDER BY provider, as_of DESC, source")
    providers: dict[str, dict] = {}
    for row in rows:
        entry = providers.setdefault(row["provider"], {"provider": row["provider"], "sources": []})
        entry["sources"].append({"source": row["source"], "as_of": row["as_of"], "n": row["n"]})
    return tuple(providers.values())


def _freshness(kb: KB) -> list[dict]:
    """Per provider, each source of its offers with its date and offer count (cached per knowledge-base build)."""
    return list(_freshness_of(str(kb.path), kb.meta("built_at"), kb))
