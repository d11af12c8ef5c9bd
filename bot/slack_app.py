"""The Slack app: Slack payloads in, the CLI's pipeline in the middle, Block Kit out. It only translates.

    /gpu TEXT        one message: the answer inside the ack when it is ready within ACK_BUDGET_SECONDS (ephemeral,
                     with a "Share in channel" button), else an empty ack and the answer posted once through
                     `respond()` (Slack does not honour replace_original for slash-command replies)
    /gpu, /gpu help  the help answer (built from `handlers.INTENTS`) and every command (`bot.slack.help`), in the
                     asker's language (Chinese text, else the channel's language setting, else their Slack locale)
    @gpubot TEXT     one reply in the question's thread (started if needed)
    DM TEXT          one reply in the DM
    buttons          share / spot <-> on-demand / more results / show pitfalls / did-you-mean: the query travels in
                     the button value; the button changes one field and re-runs `answer_query`; on a threaded
                     reply the answer goes in that thread; share posts publicly first (`bot.slack.delivery.share`)
    App Home         what gpubot answers, how fresh its data is, sections from `home_sections_providers` (this
                     workspace's digest subscriptions) and the workspace defaults with a form that edits them

Delivery (`bot.slack.delivery`): a reply Slack refuses for its blocks is sent again (table as section text, else
text only) and the refusal logged with the block type. History charts render on their own worker thread
(`gpubot-chart`), never in a listener that an ack waits for.

Commands, handled before the parser (they are not questions; replies in `bot.slack.settings_cmd`, the admin
rule in `bot.slack.auth`, every change recorded in `knowledge.settings_audit`):

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
(`knowledge.claims`: leased, so a retry answers an event whose first worker died; bounded in time, so a locked
state database never holds up the ack), and the reply itself claims the
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
from bot.slack.auth import workspace_refusal
from bot.slack.commands import Command, parse_command
from bot.slack.delivery import Delivered, post_message, respond_message, share, thread_of
from bot.slack.help import HELP_WORDS, with_commands
from bot.slack.oauth import (
    client_for_team,
    forget_workspace,
    installation_store,
    make_client,
    oauth_settings,
)
from bot.slack.settings_cmd import CommandContext, command_reply, error_text, record_change
from handlers import defaults
from handlers.language import has_chinese, language_of
from handlers.models import Answer, Query
from knowledge import claims
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

ACK_BUDGET_SECONDS = 2.0  # answer inside the ack when ready by then; Slack's deadline is 3 s (1 s for the network)
MAX_TOP = 90  # "more results" never asks for more rows than one table can hold
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
    charts = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpubot-chart")  # rendering never holds a listener

    def in_background(where: str, work: Callable[..., Any], *args: Any) -> None:
        """Run `work` on the chart worker; its failure is logged with the request's context."""

        def run() -> None:
            try:
                work(*args)
            except Exception:
                log.exception("background work failed (%s)", where)

        charts.submit(run)

    def _post_chart(client: WebClient, channel: str, thread_ts: str | None, query: Query, **options: Any) -> dict:
        from bot.slack.history import post_history_chart

        return post_history_chart(client, channel, thread_ts, query, kb, **options)

    # --- a channel's settings applied to a question ---------------------------------------------------------

    def settings_of(team: str | None, channel: str | None) -> dict[str, Any]:
        """The channel's effective settings; none (answer anyway) when the state database cannot be read."""
        if not team:
            return {}
        from knowledge.settings_store import get_settings

        try:
            return claims.bounded(get_settings, team, channel)  # never waits long on the state database
        except Exception as exc:
            log.warning(
                "could not read the settings of %s/%s (%s); answering without them", team, channel, type(exc).__name__
            )
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

    def message_for(
        text: str, *, shareable: bool, where: str, team: str | None = None, channel: str | None = None
    ) -> dict[str, Any]:
        """The rendered reply to `text`; never raises (an unexpected error becomes the apology, logged)."""
        try:
            result = answer_text(text, team, channel)
            if result.query.intent == "history" and shareable:  # a slash command: the summary + "post chart"
                from bot.slack.history import history_summary_message

                return history_summary_message(result)
            message = blocks.answer_message(result, shareable=shareable)
            if result.query.intent == "help":
                message = with_commands(message, result.query.language)
            return message
        except Exception:
            log.exception("internal error answering in Slack (%s)", where)
            return blocks.error_message(language_of(text))

    def message_for_query(
        query: Query,
        *,
        shareable: bool,
        where: str,
        shared_by: str | None = None,
        team: str | None = None,
        channel: str | None = None,
    ) -> dict:
        try:
            result: Answer = answer_in(query, team, channel)
            return blocks.answer_message(result, shareable=shareable, shared_by=shared_by)
        except Exception:
            log.exception("internal error answering a button in Slack (%s)", where)
            return blocks.error_message(query.language)

    def respond_checked(respond, where: str, **message: Any) -> Delivered:
        """Post to the response_url; refused blocks fall back to text (`bot.slack.delivery`); never raises."""
        return respond_message(respond, where, **message)

    # --- dedupe: one handling per event, across retries and processes ------------------------------------------

    @app.middleware
    def claim_once(body: dict, request, next: Callable[[], BoltResponse]) -> BoltResponse | None:
        if body.get("type") == "event_callback":
            key = claims.event_key(body)
            retry = (request.headers.get("x-slack-retry-num") or ["0"])[0]
            number = int(retry) if retry.isascii() and retry.isdigit() else 1
            # leased, bounded in time (never holds up the ack), per-process fallback (knowledge.claims)
            if not claims.claim(f"slack-event:{key}", retry_num=number):
                log.info("duplicate delivery of %s ignored (retry %s)", key, retry)
                return BoltResponse(status=200, body="")
        return next()

    # --- /gpu -------------------------------------------------------------------------------------------------

    def ack_soon(
        ack, respond, where: str, lang: str, work: Callable[[], dict], *, response_type: str = "ephemeral"
    ) -> None:
        """One message: the result of `work` inside the ack when it is ready within the budget, else an empty ack
        and the result posted once through the response_url (Slack ignores replace_original on slash replies)."""
        future = answers.submit(work)
        try:
            message = dict(future.result(timeout=ACK_BUDGET_SECONDS))
        except FutureTimeout:
            ack()
            message = dict(future.result())
            response_type = message.pop("response_type", response_type)
            respond_checked(respond, where, response_type=response_type, **message)
            return
        message.setdefault("response_type", response_type)
        ack(message)  # the whole dict: Bolt's ack(blocks=..., attachments=...) would drop the blocks

    @app.command("/gpu")
    def on_gpu(ack, command: dict, respond, client: WebClient) -> None:
        text = slack_text(command.get("text", ""))
        where = _context_of(command)
        team, channel = command.get("team_id"), command.get("channel_id")
        parsed = parse_command(text)
        if parsed is not None:
            run_command(parsed, ack, respond, command, where, client)
            return
        if text.strip().lower() in HELP_WORDS:  # every command, in the asker's language

            def help_reply() -> dict:
                lang = asker_language(client, text, team, channel, command.get("user_id"))
                try:
                    result = answer_query(Query(text=text.strip(), intent="help", language=lang), kb)
                    return with_commands(blocks.answer_message(result, shareable=True), lang)
                except Exception:
                    log.exception("internal error answering help (%s)", where)
                    return blocks.error_message(lang)

            ack_soon(ack, respond, where, language_of(text), help_reply)
            return
        ack_soon(
            ack,
            respond,
            where,
            language_of(text),
            lambda: message_for(text, shareable=True, where=where, team=team, channel=channel),
        )

    def asker_language(client: WebClient, text: str, team: str | None, channel: str | None, user: str | None) -> str:
        """Chinese text, else the channel's (or workspace's) language setting, else the asker's Slack locale."""
        if has_chinese(text):
            return "zh"
        chosen = settings_of(team, channel).get("language")
        if chosen:
            return chosen
        return _user_language(client, user) if user else "en"

    def run_command(cmd: Command, ack, respond, command: dict, where: str, client: WebClient) -> None:
        team, channel, user = command.get("team_id") or "", command.get("channel_id") or "", command.get("user_id")
        chosen = settings_of(team, channel)
        lang = "zh" if has_chinese(command.get("text")) else (chosen.get("language") or "en")
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

        def reply_to_command() -> dict:  # users.info (the admin rule) and the state database: within the budget
            try:
                ctx = CommandContext(kb=kb, client=client, team=team, channel=channel, user=user, lang=lang)
                message, response_type = command_reply(cmd, ctx)
                return {**message, "response_type": response_type}
            except Exception:
                log.exception("internal error running a command (%s)", where)
                return blocks.error_message(lang)

        ack_soon(ack, respond, where, lang, reply_to_command)

    # --- @-mentions and DMs -------------------------------------------------------------------------------------

    def reply(client: WebClient, body: dict, event: dict, text: str, thread_ts: str | None) -> None:
        channel, where = event.get("channel"), _context_of(body)
        message_key = f"slack-message:{body.get('team_id')}:{channel}:{event.get('ts')}"
        if not claims.claim(message_key):
            return  # the same message was already answered through another event (a mention in a DM)
        try:
            _reply_once(client, body, event, text, thread_ts, channel, where)
        finally:  # answered (or given up on): no retry and no other process answers it again
            claims.finish(message_key)
            claims.finish(f"slack-event:{claims.event_key(body)}")

    def _reply_once(client: WebClient, body: dict, event: dict, text: str, thread_ts: str | None, channel, where):
        command = parse_command(text)
        if command is not None and command.kind == "alert":  # "…时提醒我" by mention: a price alert here
            from bot.alert_cmd import alert_reply

            lang = language_of(text)
            message = alert_reply(
                command, body.get("team_id") or "", channel or "", event.get("user"), lang, kb.current()
            )
            post_message(client, where, channel=channel, thread_ts=thread_ts, **message)
            return
        if _is_history(text):  # a chart, uploaded into the thread (rendered on the chart worker, off every request)
            query = understand(text, kb)
            in_background(where, _post_chart, client, channel, thread_ts, query)
            return
        message = message_for(text, shareable=False, where=where, team=body.get("team_id"), channel=channel)
        post_message(client, where, channel=channel, thread_ts=thread_ts, **message)

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
            respond_checked(respond, where, response_type="ephemeral", replace_original=False, **blocks.error_message())
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
        thread_ts = (body.get("container") or {}).get("thread_ts")

        def post_chart() -> None:
            from bot.slack.history import failure_text

            result = _post_chart(client, channel, thread_ts, asked(query, extra), notify_failure=False)
            if result["ok"]:
                respond_checked(respond, where, delete_original=True)
            else:
                respond_checked(
                    respond,
                    where,
                    response_type="ephemeral",
                    replace_original=False,
                    **blocks.text_message(failure_text(result["error"], query.language)),
                )

        in_background(where, post_chart)

    @app.action(blocks.ACTION_IDS["share"])
    def on_share(ack, body: dict, action: dict, respond, client: WebClient) -> None:
        ack()
        where = _context_of(body)
        parsed = button_query(action, where, respond)
        if parsed is None:
            return
        query, extra = parsed
        team, channel = where_clicked(body)
        user = (body.get("user") or {}).get("id")
        message = message_for_query(
            asked(query, extra), shareable=False, where=where, shared_by=user, team=team, channel=channel
        )
        share(client, respond, body, channel, message, where, query.language)  # public first, then delete

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
        elif channel.startswith("D"):  # a DM: answer in the conversation (in the thread of a threaded reply)
            message = message_for_query(query, shareable=False, **here)
            respond_checked(
                respond, where, response_type="in_channel", replace_original=False, **thread_of(body), **message
            )
        else:  # someone else's answer in a channel: a private answer for whoever clicked, in its thread
            message = message_for_query(query, shareable=True, **here)
            respond_checked(
                respond, where, response_type="ephemeral", replace_original=False, **thread_of(body), **message
            )

    @app.action(blocks.ACTION_IDS["why"])
    def on_why(ack, body: dict, action: dict, respond) -> None:
        """ "Why": the same answer with every pitfall, rule and detail the short one left out, to whoever clicked."""
        ack()
        where = _context_of(body)
        parsed = button_query(action, where, respond)
        if parsed is None:
            return
        query, extra = parsed
        team, channel = where_clicked(body)
        try:
            message = blocks.answer_message(answer_in(asked(query, extra), team, channel), verbose=True, buttons=False)
        except Exception:
            log.exception("internal error answering a button in Slack (%s)", where)
            message = blocks.error_message(query.language)
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
        view = blocks.home_view(
            ctx.lang, help_answer.lines, kb.meta("built_at"), _freshness(kb), extra, settings_section
        )
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
                errors[f"setting_{key}"] = error_text(lang, exc)[:150]
        if errors:
            ack(response_action="errors", errors=errors)
            return
        refusal = workspace_refusal(client, team, user, lang)
        if refusal:  # the workspace defaults are for workspace admins and owners
            ack(response_action="errors", errors={"setting_providers": refusal[:150]})
            return
        try:  # saved before the form closes, so that a failure can still be shown in it
            before = store.scope_settings(team, store.WORKSPACE)
            for key in store.KEYS:
                if key in values:
                    stored = store.set_setting(team, store.WORKSPACE, key, values[key], kb=kb, updated_by=user)
                    record_change(team, store.WORKSPACE, key, before.get(key), stored, user, "home")
                elif store.clear(team, store.WORKSPACE, key):
                    record_change(team, store.WORKSPACE, key, before.get(key), None, user, "home")
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
                installation_store(settings).delete_installation(
                    enterprise_id=context.enterprise_id, team_id=team, user_id=user
                )

    # --- anything unexpected -----------------------------------------------------------------------------------

    @app.error
    def on_error(error: Exception, body: dict, respond=None) -> None:
        log.error(
            "unhandled error in the Slack app: %s (%s)", type(error).__name__, _context_of(body or {}), exc_info=error
        )
        if respond is not None:
            lang = language_of((body or {}).get("text", ""))
            respond_checked(
                respond,
                _context_of(body or {}),
                response_type="ephemeral",
                replace_original=False,
                **blocks.error_message(lang),
            )

    return app


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
    rows = kb.rows(
        "SELECT provider, source, as_of, COUNT(*) AS n FROM offers "
        "GROUP BY provider, source, as_of ORDER BY provider, as_of DESC, source"
    )
    providers: dict[str, dict] = {}
    for row in rows:
        entry = providers.setdefault(row["provider"], {"provider": row["provider"], "sources": []})
        entry["sources"].append({"source": row["source"], "as_of": row["as_of"], "n": row["n"]})
    return tuple(providers.values())


def _freshness(kb: KB) -> list[dict]:
    """Per provider, each source of its offers with its date and offer count (cached per knowledge-base build)."""
    return list(_freshness_of(str(kb.path), kb.meta("built_at"), kb))
