"""Slack workspaces: the Web API client, OAuth installs and each workspace's token.

With SLACK_CLIENT_ID and SLACK_CLIENT_SECRET set, gpubot is installed through OAuth (`GET /slack/install`,
`GET /slack/oauth_redirect`) and every request is authorized with its own workspace's bot token from slack_sdk's
SQLAlchemy installation store, kept with the OAuth states in gpubot's state database (`knowledge.state.db.engine()`:
SQLite in GPUBOT_HOME, or PostgreSQL). Otherwise one workspace, SLACK_BOT_TOKEN. `client_for_team(team)` gives
the digest poster a client with the right workspace's token; `forget_workspace` deletes what a workspace left.
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bot.settings import Settings
from bot.slack.reply_once import reply_retry_handlers

__all__ = [
    "INSTALL_PATH",
    "REDIRECT_PATH",
    "client_for_team",
    "forget_workspace",
    "installation_store",
    "make_client",
    "oauth_settings",
]

log = logging.getLogger("gpubot.slack")

INSTALL_PATH = "/slack/install"
MAX_OAUTH_STATES = 1000  # live install states kept (each anonymous GET /slack/install issues one)
REDIRECT_PATH = "/slack/oauth_redirect"


def make_client(settings: Settings, *, oauth: bool | None = None) -> WebClient:
    """The Web API client: SLACK_API_URL, the bot token (none in OAuth mode: each request brings its workspace's),
    retries on rate limits and connection errors."""
    oauth = settings.oauth_enabled if oauth is None else oauth
    return WebClient(
        base_url=settings.slack_api_url,
        token=None if oauth else settings.secret("slack_bot_token"),
        timeout=10,
        retry_handlers=reply_retry_handlers(),  # 429 after Retry-After, 500/503 with backoff (bot.slack.reply_once)
    )


# --- workspaces: OAuth installs and their tokens -------------------------------------------------------------


class _Stores:
    """slack_sdk's SQLAlchemy installation and OAuth-state stores on gpubot's state database."""

    def __init__(self, client_id: str, state_expiration_seconds: int) -> None:
        try:
            from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

            from bot.installations import EncryptedInstallationStore  # tokens encrypted with GPUBOT_SECRET_KEY
        except ImportError as exc:  # sqlalchemy.ext.asyncio needs greenlet
            raise RuntimeError(f"OAuth mode needs sqlalchemy[asyncio] (greenlet): {exc}") from exc
        from knowledge.state import db as state

        class OnceOAuthStateStore(SQLAlchemyOAuthStateStore):
            """A state is consumed by one DELETE: of two workers handed the same redirect, exactly one wins.
            Issuing one (every `GET /slack/install`, anonymous) first deletes the expired states and keeps at most
            MAX_OAUTH_STATES live ones (the oldest go), so the table cannot grow without bound."""

            def issue(self, *args, **kwargs) -> str:
                import datetime as dt

                from slack_sdk.oauth.sqlalchemy_utils import normalize_datetime_for_db

                now = normalize_datetime_for_db(dt.datetime.now(tz=dt.UTC))
                c = self.oauth_states.c
                try:
                    with self.engine.begin() as conn:
                        conn.execute(self.oauth_states.delete().where(c.expire_at <= now))
                        keep = sa.select(c.id).order_by(c.expire_at.desc(), c.id.desc()).limit(MAX_OAUTH_STATES - 1)
                        conn.execute(self.oauth_states.delete().where(c.id.not_in(keep)))
                except Exception as exc:  # tidying is best effort; the install itself goes on
                    log.warning("could not tidy the OAuth states: %s", type(exc).__name__)
                return super().issue(*args, **kwargs)

            def consume(self, state: str) -> bool:
                import datetime as dt

                from slack_sdk.oauth.sqlalchemy_utils import normalize_datetime_for_db

                now = normalize_datetime_for_db(dt.datetime.now(tz=dt.UTC))
                c = self.oauth_states.c
                try:
                    with self.engine.begin() as conn:
                        won = conn.execute(self.oauth_states.delete().where(c.state == state, c.expire_at > now))
                        conn.execute(self.oauth_states.delete().where(c.expire_at <= now))  # tidy up old states
                    return won.rowcount == 1
                except Exception as exc:  # a database problem refuses the install rather than crash
                    log.warning("could not check an OAuth state: %s", type(exc).__name__)
                    return False

        engine = state.engine()
        self.installations = EncryptedInstallationStore(
            client_id=client_id, engine=engine, logger=logging.getLogger("gpubot.oauth")
        )
        self.states = OnceOAuthStateStore(
            expiration_seconds=state_expiration_seconds, engine=engine, logger=logging.getLogger("gpubot.oauth")
        )
        for store in (self.installations, self.states):
            try:
                store.create_tables()  # CREATE ... IF NOT EXISTS semantics (checkfirst)
            except Exception:  # another process created them between the check and the create
                store.create_tables()


_stores_cache: dict[tuple[str, str, int], _Stores] = {}


def _stores(settings: Settings) -> _Stores:
    from knowledge.state.url import database_url

    key = (settings.slack_client_id or "", database_url(), settings.slack_state_expiration_seconds)
    if key not in _stores_cache:
        _stores_cache[key] = _Stores(key[0], key[2])
    return _stores_cache[key]


def installation_store(settings: Settings):
    """The installation store (OAuth mode): `bot.installations.find_team_bot(store, T)` gives a workspace's token."""
    return _stores(settings).installations


def client_for_team(team_id: str, settings: Settings | None = None) -> WebClient:
    """A WebClient with the bot token of workspace `team_id`: from the installation store in OAuth mode, else
    SLACK_BOT_TOKEN. Rate limits are retried after Retry-After; connection errors are not (a post may have gone
    through; the digest's next run retries instead). `LookupError` when the workspace has no installation."""
    from bot.settings import load_settings

    settings = settings or load_settings()
    if settings.oauth_enabled:
        from bot.installations import find_team_bot

        bot = find_team_bot(installation_store(settings), team_id)  # Enterprise Grid: with its enterprise_id
        if bot is None or not bot.bot_token:
            raise LookupError(f"gpubot is not installed in workspace {team_id}")
        token: str | None = bot.bot_token
    else:
        token = settings.secret("slack_bot_token")
        if not token:
            raise RuntimeError("SLACK_BOT_TOKEN is not set: it is needed to post to Slack")
    return WebClient(
        token=token,
        base_url=settings.slack_api_url,
        timeout=30,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=3)],
    )


def oauth_settings(settings: Settings):
    from slack_bolt.oauth.oauth_settings import OAuthSettings

    stores = _stores(settings)
    return OAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.secret("slack_client_secret"),
        scopes=[s.strip() for s in settings.slack_scopes.split(",") if s.strip()],
        user_scopes=[],
        redirect_uri=settings.slack_redirect_uri,
        install_path=INSTALL_PATH,
        redirect_uri_path=REDIRECT_PATH,
        install_page_rendering_enabled=False,  # /slack/install goes straight to Slack's consent page
        installation_store=stores.installations,
        installation_store_bot_only=True,
        state_store=stores.states,
        state_expiration_seconds=settings.slack_state_expiration_seconds,
        logger=logging.getLogger("gpubot.oauth"),
    )


def forget_workspace(team_id: str | None, settings: Settings, *, enterprise_id: str | None = None) -> None:
    """The app left a workspace: its tokens (OAuth mode), settings, digest subscriptions and price alerts are
    deleted."""
    if not team_id:
        return
    if settings.oauth_enabled:
        store = installation_store(settings)
        store.delete_bot(enterprise_id=enterprise_id, team_id=team_id)
        store.delete_installation(enterprise_id=enterprise_id, team_id=team_id)
    from knowledge.state import settings_store, subscriptions

    removed = settings_store.delete_team(team_id)
    from knowledge.state import settings_audit

    settings_audit.delete_team(team_id)
    subs = subscriptions.list_subscriptions(team_id)
    for sub in subs:
        subscriptions.unsubscribe(team_id, sub.channel)
    from knowledge.state import alerts

    dropped = alerts.remove_team(team_id)
    from knowledge.state import grid_members

    grid_members.forget_workspace(team_id)
    log.info(
        "workspace %s removed: tokens deleted, %d settings, %d digest subscriptions and %d price alerts dropped",
        team_id,
        removed,
        len(subs),
        dropped,
    )
