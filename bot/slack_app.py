"""The Slack app: Slack payloads in, the CLI's pipeline in the middle, Block Kit out. It only translates.

    /gpu TEXT        ack at once: the answer itself when it is ready within ACK_BUDGET_SECONDS (ephemeral, with a
                     "Share in channel" button), else "Looking that up…" and the answer through `respond()`
    /gpu, /gpu help  the help answer (built from `handlers.INTENTS`)
    @gpubot TEXT     one reply in the question's thread (started if needed)
    DM TEXT          one reply in the DM
    buttons          share / spot <-> on-demand / more results / show pitfalls / did-you-mean: the query travels in
                     the button value; the button changes one field and re-runs `answer_query`
    App Home         what gpubot answers, how fresh its data is, and sections from `home_sections_providers`

Never two replies to one message: a global middleware claims each event's `event_id` in the shared state database
(`knowledge.state.claim_event`, so it holds across processes and Slack's retries), and the reply itself claims the
message's channel+ts (an @-mention in a DM also arrives as a DM message). The bot's own messages are dropped by
Bolt (`ignoring_self_events`, bot id from one lazy, cached `auth.test`); other bots' messages and message subtypes
(edits, deletions) get a no-op listener, so Slack sees 200 and does not retry.

Errors are replies: an unexpected error is logged with its context (never tokens) and the user gets a short
apology, never a traceback.
"""

from __future__ import annotations

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
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from bot import blocks
from bot.pipeline import answer, answer_query
from bot.settings import Settings
from handlers.models import Answer, Query
from knowledge.kb import KB
from knowledge.state import claim_event

__all__ = ["ACK_BUDGET_SECONDS", "HomeContext", "build_app", "home_sections_providers", "make_client", "refine"]

log = logging.getLogger("gpubot.slack")

ACK_BUDGET_SECONDS = 1.5  # answer inside the ack when ready by then; Slack's deadline is 3 s
MAX_TOP = 90  # "more results" never asks for more rows than one table can hold
_CJK = re.compile(r"[\u4e00-\u9fff]")
_REFINE_ACTIONS = re.compile(r"^gpu_(toggle_pricing|more_results|show_pitfalls|suggest_\d+)$")
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


def make_client(settings: Settings) -> WebClient:
    """The Web API client: SLACK_API_URL, the bot token, retries on rate limits and connection errors."""
    return WebClient(
        base_url=settings.slack_api_url,
        token=settings.secret("slack_bot_token"),
        timeout=10,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2), ConnectionErrorRetryHandler(max_retry_count=2)],
    )


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


def build_app(settings: Settings, kb: KB, *, client: WebClient | None = None) -> App:
    """The Bolt app. Nothing is called at start-up; the bot's identity comes from one lazy, cached auth.test."""
    app = App(
        client=client or make_client(settings),
        signing_secret=settings.secret("slack_signing_secret") or "",  # an empty secret rejects every HTTP request
        token_verification_enabled=False,
        process_before_response=False,
        listener_executor=ThreadPoolExecutor(max_workers=16, thread_name_prefix="gpubot-listener"),
        logger=logging.getLogger("gpubot.bolt"),
    )
    answers = ThreadPoolExecutor(max_workers=8, thread_name_prefix="gpubot-answer")

    def message_for(text: str, *, shareable: bool, where: str) -> dict[str, Any]:
        """The rendered reply to `text`; never raises (an unexpected error becomes the apology, logged)."""
        try:
            text = text.strip()
            if text.lower() in ("", "help", "?"):
                result = answer_query(Query(text=text, intent="help", language=language_of(text)), kb)
            else:
                result = answer(text, kb)
            return blocks.answer_message(result, shareable=shareable)
        except Exception:
            log.exception("internal error answering in Slack (%s)", where)
            return blocks.error_message(language_of(text))

    def message_for_query(query: Query, *, shareable: bool, where: str, shared_by: str | None = None) -> dict:
        try:
            result: Answer = answer_query(query, kb)
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

    @app.command("/gpu")
    def on_gpu(ack, command: dict, respond) -> None:
        text = slack_text(command.get("text", ""))
        where = _context_of(command)
        future = answers.submit(message_for, text, shareable=True, where=where)
        try:
            message = future.result(timeout=ACK_BUDGET_SECONDS)
        except FutureTimeout:
            ack(response_type="ephemeral", **blocks.text_message(blocks.phrase("working", language_of(text))))
            respond_checked(respond, where, response_type="ephemeral", replace_original=True, **future.result())
            return
        ack(response_type="ephemeral", **message)

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
        message = message_for(text, shareable=False, where=where)
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

    @app.action(blocks.ACTION_IDS["share"])
    def on_share(ack, body: dict, action: dict, respond) -> None:
        ack()
        where = _context_of(body)
        parsed = decoded(action, where)
        if parsed is None:
            respond_checked(respond, where, response_type="ephemeral", replace_original=False,
                            **blocks.error_message())
            return
        query, _ = parsed
        user = (body.get("user") or {}).get("id")
        message = message_for_query(query, shareable=False, where=where, shared_by=user)
        respond_checked(respond, where, response_type="in_channel", replace_original=False, **message)
        respond_checked(respond, where, delete_original=True)

    @app.action(_REFINE_ACTIONS)
    def on_refine(ack, body: dict, action: dict, respond) -> None:
        ack()
        where = _context_of(body)
        parsed = decoded(action, where)
        if parsed is None:
            respond_checked(respond, where, response_type="ephemeral", replace_original=False,
                            **blocks.error_message())
            return
        query = refine(action["action_id"], *parsed)
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        if container.get("is_ephemeral"):  # a private answer: replace it
            message = message_for_query(query, shareable=True, where=where)
            respond_checked(respond, where, response_type="ephemeral", replace_original=True, **message)
        elif channel.startswith("D"):  # a DM: answer in the conversation
            original = body.get("message") or {}
            message = message_for_query(query, shareable=False, where=where)
            respond_checked(respond, where, response_type="in_channel", replace_original=False,
                            thread_ts=original.get("thread_ts"), **message)
        else:  # someone else's answer in a channel: a private answer for whoever clicked, shareable
            message = message_for_query(query, shareable=True, where=where)
            respond_checked(respond, where, response_type="ephemeral", replace_original=False, **message)

    # --- App Home -------------------------------------------------------------------------------------------

    @app.event("app_home_opened")
    def on_home(body: dict, event: dict, client: WebClient) -> None:
        if event.get("tab", "home") != "home":
            return
        user = event["user"]
        ctx = HomeContext(team_id=body.get("team_id"), user_id=user, lang=_user_language(client, user), kb=kb)
        extra: list[dict] = []
        for provider in list(home_sections_providers):
            try:
                extra += provider(ctx)
            except Exception:
                log.exception("home section provider %r failed (%s)", provider, _context_of(body))
        help_answer = answer_query(Query(text="help", intent="help", language=ctx.lang), kb)
        view = blocks.home_view(ctx.lang, help_answer.lines, kb.meta("built_at"), _freshness(kb), extra)
        try:
            client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("could not publish the Home tab: %s (%s)", exc.response.get("error"), _context_of(body))

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
