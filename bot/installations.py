"""Slack installations at rest: bot tokens encrypted with GPUBOT_SECRET_KEY, and found for Enterprise Grid too.

`EncryptedInstallationStore` is slack_sdk's SQLAlchemy installation store with every token (bot, user, refresh)
encrypted by Fernet (`cryptography`: AES-128-CBC + HMAC-SHA256) before it is written when GPUBOT_SECRET_KEY is
set, and decrypted when read. Stored values then start with `fernet:`; tokens stored before the key was set stay
readable (and are encrypted at the next install). Without the key, tokens are stored as slack_sdk stores them and
`serve` warns at start. A key is a Fernet key:

    python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"

Key rotation: `GPUBOT_SECRET_KEY=new,old` (cryptography's MultiFernet) encrypts with `new` and reads tokens under
either; `gpubot db rotate-key` then re-encrypts every stored token with `new` in one transaction
(`rotate_tokens`), after which `old` can be dropped. `undecryptable_tokens()` counts the stored tokens no key
opens (said at `serve` start: those workspaces would be asked to reinstall).

`find_team_bot(store, team)` finds a workspace's bot by team id alone, whether the workspace is on its own or part
of an Enterprise Grid org: installed on its own (its installation then carries `enterprise_id`, which slack_sdk's
lookup needs), or through an org-wide install (which names only the org: Slack's `auth.teams.list` says which
workspaces the org's bot is granted to). This is how the digest and price alerts post to Grid workspaces.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from functools import cache

import sqlalchemy as sa
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

from knowledge.errors import UserError

log = logging.getLogger("gpubot.oauth")
PREFIX = "fernet:"
TOKEN_FIELDS = ("bot_token", "bot_refresh_token", "user_token", "user_refresh_token")


class SecretKeyError(UserError, ValueError):
    """GPUBOT_SECRET_KEY is set but is not a Fernet key."""


@cache
def _fernet(keys: str):
    from cryptography.fernet import Fernet, MultiFernet

    try:
        return MultiFernet([Fernet(key.strip().encode()) for key in keys.split(",") if key.strip()])
    except ValueError:
        raise SecretKeyError(
            "GPUBOT_SECRET_KEY is not a Fernet key, or a comma-separated list of them (new,old; each 32 url-safe "
            'base64-encoded bytes); make one with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())"'
        ) from None


def cipher():
    """The MultiFernet of GPUBOT_SECRET_KEY (`new,old,...`: encrypts with the first, decrypts with any), or None
    when it is not set."""
    from knowledge.config import config

    keys = (config().secret("gpubot_secret_key") or "").strip().strip(",")
    return _fernet(keys) if keys else None


def encrypt(value: str | None) -> str | None:
    fernet = cipher()
    if not value or fernet is None or value.startswith(PREFIX):
        return value
    return PREFIX + fernet.encrypt(value.encode()).decode()


def decrypt(value: str | None) -> str | None:
    if not value or not value.startswith(PREFIX):
        return value
    fernet = cipher()
    if fernet is None:
        log.error(
            "a stored token is encrypted but GPUBOT_SECRET_KEY is not set: the workspace must be reinstalled "
            "or the key restored"
        )
        return None
    from cryptography.fernet import InvalidToken

    try:
        return fernet.decrypt(value[len(PREFIX) :].encode()).decode()
    except InvalidToken:
        log.error("a stored token does not decrypt with GPUBOT_SECRET_KEY (another key?)")
        return None


def _with(entity, transform):
    changed = copy.copy(entity)
    for field in TOKEN_FIELDS:
        if hasattr(changed, field):
            setattr(changed, field, transform(getattr(changed, field)))
    return changed


class EncryptedInstallationStore(SQLAlchemyInstallationStore):
    """slack_sdk's SQLAlchemy installation store, tokens encrypted at rest (when GPUBOT_SECRET_KEY is set)."""

    def save(self, installation: Installation):
        return super().save(_with(installation, encrypt))

    def save_bot(self, bot: Bot):
        return super().save_bot(_with(bot, encrypt))

    @classmethod
    def build_installation_entity(cls, row) -> Installation:
        return _with(super().build_installation_entity(row), decrypt)

    @classmethod
    def build_bot_entity(cls, row) -> Bot:
        return _with(super().build_bot_entity(row), decrypt)


TOKEN_TABLES = ("slack_bots", "slack_installations")  # slack_sdk's SQLAlchemyInstallationStore tables


def _token_rows(conn: sa.Connection):
    """(table, id, column, value) of every stored token (of every client id)."""
    inspector = sa.inspect(conn)
    for name in TOKEN_TABLES:
        if not inspector.has_table(name):
            continue
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        columns = [c for c in TOKEN_FIELDS if c in table.c]
        for row in conn.execute(sa.select(table.c.id, *(table.c[c] for c in columns))).mappings():
            for column in columns:
                if row[column]:
                    yield table, row["id"], column, row[column]


def undecryptable_tokens(engine: sa.Engine) -> int:
    """How many stored tokens no key of GPUBOT_SECRET_KEY decrypts (0 without encrypted tokens)."""
    from cryptography.fernet import InvalidToken

    fernet = cipher()
    with engine.connect() as conn:
        found = [value for _t, _i, _c, value in _token_rows(conn) if value.startswith(PREFIX)]
    if fernet is None:
        return len(found)
    bad = 0
    for value in found:
        try:
            fernet.decrypt(value[len(PREFIX) :].encode())
        except InvalidToken:
            bad += 1
    return bad


def rotate_tokens(engine: sa.Engine) -> tuple[int, int]:
    """Re-encrypt every stored token with the first key of GPUBOT_SECRET_KEY (plain ones encrypted too), in one
    transaction: (re-encrypted, left as they were because no key decrypts them)."""
    from cryptography.fernet import InvalidToken

    fernet = cipher()
    if fernet is None:
        raise SecretKeyError("GPUBOT_SECRET_KEY is not set: there is no key to rotate to")
    rotated = failed = 0
    with engine.begin() as conn:
        for table, row_id, column, value in list(_token_rows(conn)):
            try:
                if value.startswith(PREFIX):
                    new = PREFIX + fernet.rotate(value[len(PREFIX) :].encode()).decode()
                else:
                    new = PREFIX + fernet.encrypt(value.encode()).decode()
            except InvalidToken:
                failed += 1
                continue
            conn.execute(table.update().where(table.c.id == row_id).values({column: new}))
            rotated += 1
    return rotated, failed


def enterprise_of(store: SQLAlchemyInstallationStore, team_id: str) -> str | None:
    """The Enterprise Grid org of workspace `team_id` as its newest installation says (None: not on Grid)."""
    c = store.bots.c
    with store.engine.connect() as conn:
        return conn.execute(
            sa.select(c.enterprise_id)
            .where(c.client_id == store.client_id, c.team_id == team_id)
            .order_by(c.installed_at.desc())
            .limit(1)
        ).scalar()


def find_team_bot(
    store: SQLAlchemyInstallationStore,
    team_id: str,
    enterprise_id: str | None = None,
    *,
    granted: Callable[[Bot], set[str]] | None = None,
) -> Bot | None:
    """Workspace `team_id`'s bot, looked up with its enterprise id (given, or found from its installation); for a
    workspace of an org-wide install (whose installation names only the org), the org's bot that Slack says
    (`auth.teams.list`, or `granted`) is granted to the workspace."""
    enterprise_id = enterprise_id or enterprise_of(store, team_id)
    bot = store.find_bot(enterprise_id=enterprise_id, team_id=team_id)
    if bot is None and enterprise_id:  # an org-wide install serves every workspace of the org
        bot = store.find_bot(enterprise_id=enterprise_id, team_id=None, is_enterprise_install=True)
        if bot is not None:
            _remember(enterprise_id, {team_id})
    if bot is None and not enterprise_id:
        granted = granted or granted_teams
        bot = next((org for org in org_wide_bots(store) if team_id in granted(org)), None)
    return bot


def org_wide_bots(store: SQLAlchemyInstallationStore) -> list[Bot]:
    """The bot of every org-wide (Enterprise Grid) install, newest per org."""
    c = store.bots.c
    with store.engine.connect() as conn:
        orgs = (
            conn.execute(
                sa.select(c.enterprise_id)
                .where(c.client_id == store.client_id, c.is_enterprise_install.is_(True), c.enterprise_id.is_not(None))
                .distinct()
            )
            .scalars()
            .all()
        )
    found = [store.find_bot(enterprise_id=org, team_id=None, is_enterprise_install=True) for org in orgs]
    return [bot for bot in found if bot is not None and bot.bot_token]


GRANTS_TTL = 60.0  # seconds an org's list of granted workspaces is reused (auth.teams.list is rate-limit tier 2)
_grants: dict[tuple[str, str | None, str | None], tuple[float, set[str]]] = {}


def granted_teams(bot: Bot, api_url: str | None = None) -> set[str]:
    """The workspaces Slack says an org-wide bot is granted to (`auth.teams.list`, reused for `GRANTS_TTL`
    seconds; empty when Slack refuses)."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    from bot.settings import load_settings

    url = api_url or load_settings().slack_api_url
    key = (url, bot.enterprise_id, bot.bot_id)
    cached = _grants.get(key)
    if cached is not None and time.monotonic() - cached[0] < GRANTS_TTL:
        return cached[1]
    client = WebClient(
        token=bot.bot_token, base_url=url, timeout=30, retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=3)]
    )
    teams: set[str] = set()
    cursor = None
    try:
        for _page in range(50):  # 1000 workspaces a page
            response = client.auth_teams_list(limit=1000, **({"cursor": cursor} if cursor else {}))
            teams.update(t["id"] for t in response.get("teams") or () if t.get("id"))
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
    except SlackApiError as exc:  # token_revoked, account_inactive (the org uninstalled), missing_scope, ...
        log.warning("cannot list the workspaces of org %s (%s)", bot.enterprise_id, exc.response.get("error"))
        return teams
    except Exception as exc:  # noqa: BLE001 - unreachable API, bad answer: no workspace found, never a raise
        log.warning("cannot list the workspaces of org %s (%s)", bot.enterprise_id, exc)
        return set()
    _grants[key] = (time.monotonic(), teams)
    if bot.enterprise_id:
        _remember(bot.enterprise_id, teams)
    return teams


def forget_grants(enterprise_id: str) -> None:
    """Drop the cached `auth.teams.list` answers of an org (its install is gone)."""
    for key in [k for k in _grants if k[1] == enterprise_id]:
        _grants.pop(key, None)


def _remember(enterprise_id: str, teams: set[str]) -> None:
    """Record the workspaces the org's install serves (`knowledge.state.grid_members`), for its uninstall."""
    from knowledge.state import grid_members

    try:
        grid_members.record(enterprise_id, teams)
    except Exception:  # noqa: BLE001 - bookkeeping never fails a lookup
        log.exception("cannot record the workspaces of org %s", enterprise_id)
