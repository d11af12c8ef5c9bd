"""The Slack app: Slack payloads in, the CLI's pipeline in the middle, Block Kit out. It only translates.

`build_app` wires the Bolt app from the listener modules:

    bot.slack.slash    /gpu: one message per command, inside the ack when ready within ACK_BUDGET_SECONDS
    bot.slack.events   @-mentions and DMs (one reply, in the question's thread); uninstall, revoked tokens
    bot.slack.actions  buttons: share, refine, why, post a history chart
    bot.slack.home     App Home and the workspace-defaults form

Delivery (`bot.slack.delivery`): a reply Slack refuses for its blocks is sent again (table as section text, else
text only) and the refusal logged with the block type. History charts render on their own worker thread
(`gpubot-chart`), never in a listener that an ack waits for.

Workspaces: with SLACK_CLIENT_ID and SLACK_CLIENT_SECRET set, gpubot is installed through OAuth
(`GET /slack/install`, `GET /slack/oauth_redirect`) and every request is authorized with its own workspace's bot
token from slack_sdk's SQLAlchemy installation store, kept with the OAuth states in gpubot's state database
(`knowledge.state.db.engine()`: SQLite in GPUBOT_HOME, or PostgreSQL). Otherwise one workspace, SLACK_BOT_TOKEN.
`client_for_team(team)` gives the digest poster a client with the right workspace's token.

Never two replies to one message: a global middleware claims each event's `event_id` in the shared state database
(`knowledge.state.claims`: leased, so a retry answers an event whose first worker died; bounded in time, so a locked
state database never holds up the ack), and the reply itself claims the message (`bot.slack.events`). The bot's
own messages are dropped by Bolt (`ignoring_self_events`, bot id from one lazy, cached `auth.test`).

Errors are replies: an unexpected error is logged with its context (never tokens) and the user gets a short
apology, never a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import App, BoltResponse
from slack_sdk import WebClient

from bot.settings import Settings
from bot.slack import actions, blocks, events, home, slash
from bot.slack.answering import Answerer
from bot.slack.oauth import make_client, oauth_settings
from bot.slack.payloads import log_context
from handlers.language import language_of
from knowledge.kb.reader import KB
from knowledge.state import claims

__all__ = ["ACK_BUDGET_SECONDS", "build_app", "claim_once"]

log = logging.getLogger("gpubot.slack")

ACK_BUDGET_SECONDS = 2.0  # answer inside the ack when ready by then; Slack's deadline is 3 s (1 s for the network)


def build_app(
    settings: Settings,
    kb: KB,
    *,
    client: WebClient | None = None,
    oauth: bool | None = None,
    ack_budget_seconds: float = ACK_BUDGET_SECONDS,
) -> App:
    """The Bolt app. Nothing is called at start-up. One workspace: the bot's identity comes from one lazy, cached
    auth.test. OAuth (`oauth`, default: when SLACK_CLIENT_ID/SECRET are set): each request is authorized with its
    workspace's installation (auth.test per request). `ack_budget_seconds`: how long a slash command's answer may
    take to be sent inside the ack (tests shorten it)."""
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
    answerer = Answerer(kb, settings, ack_budget=lambda: ack_budget_seconds)
    app.middleware(claim_once)
    for listeners in (slash, events, actions, home):
        listeners.register(app, answerer)

    @app.error
    def on_error(error: Exception, body: dict, respond=None) -> None:
        where = log_context(body or {})
        log.error("unhandled error in the Slack app: %s (%s)", type(error).__name__, where, exc_info=error)
        if respond is not None:
            message = blocks.error_message(language_of((body or {}).get("text", "")))
            answerer.respond(respond, where, response_type="ephemeral", replace_original=False, **message)

    return app


def claim_once(body: dict, request, next: Callable[[], BoltResponse]) -> BoltResponse | None:
    """One handling per event, across retries and processes."""
    if body.get("type") == "event_callback":
        key = claims.event_key(body)
        retry = (request.headers.get("x-slack-retry-num") or ["0"])[0]
        number = int(retry) if retry.isascii() and retry.isdigit() else 1
        # leased, bounded in time (never holds up the ack), per-process fallback (knowledge.state.claims)
        if not claims.claim(f"slack-event:{key}", retry_num=number):
            log.info("duplicate delivery of %s ignored (retry %s)", key, retry)
            return BoltResponse(status=200, body="")
    return next()
