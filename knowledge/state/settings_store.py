"""Workspace and channel settings, in the state database (`knowledge.state.db`).

One table, `channel_settings`: one row per (team_id, channel_id, key), `channel_id` '' for the workspace, the value
as JSON, who set it and when. The primary key is that triple, so a setting is written with one
`INSERT ... ON CONFLICT DO UPDATE` (SQLite and PostgreSQL dialect inserts): two workers setting the same key at
the same moment leave one row, the last write.

Keys and the values they accept (validated and normalised by `normalize`, which raises `SettingError` with
did-you-mean suggestions):

    providers  provider ids of the knowledge base ("aws,alibaba"; aliases such as "aliyun" are accepted)
    regions    region ids of the knowledge base ("us-east-1,cn-hangzhou")
    currency   USD or CNY
    language   en or zh
    pricing    on_demand, spot, reserved_1y or reserved_3y ("on-demand", "1y" ... are accepted)
    budget     an hourly cap, read at the edge by the question's budget grammar (`handlers.parse.budget.read`: "2
               USD/GPU-hour", "$20/hour", "预算每小时20元") and handed over typed (amount, currency, per):
               stored as {"amount", "currency", "per"}, `per` "gpu_hour" or "instance_hour". A value stored before
               `per` existed ({"amount", "currency"}) was a cap per GPU-hour and is read as one.

`get_settings(team, channel)` is the effective view: the channel's value, else the workspace's, else gpubot's
default (None: nothing set); it is a dict with an `origins` attribute naming where each value came from
("channel", "workspace" or "default").
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa

from knowledge.clock import utc_now
from knowledge.errors import UserError
from knowledge.state import db as state
from knowledge.state.db import metadata

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

__all__ = [
    "CURRENCIES",
    "KEYS",
    "LANGUAGES",
    "PRICINGS",
    "WORKSPACE",
    "EffectiveSettings",
    "SettingError",
    "clear",
    "delete_team",
    "format_value",
    "get_settings",
    "key_of",
    "normalize",
    "scope_settings",
    "set_setting",
]

KEYS = ("providers", "regions", "currency", "language", "pricing", "budget")
WORKSPACE = ""  # the channel id of workspace-wide settings
CURRENCIES = ("USD", "CNY")
LANGUAGES = ("en", "zh")
PRICINGS = ("on_demand", "spot", "reserved_1y", "reserved_3y")
BUDGET_PERS = ("gpu_hour", "instance_hour")  # what a stored budget caps
DEFAULTS: dict[str, Any] = dict.fromkeys(KEYS)  # nothing set: every question decides for itself

_KEY_ALIASES = {
    "provider": "providers",
    "providers": "providers",
    "cloud": "providers",
    "clouds": "providers",
    "region": "regions",
    "regions": "regions",
    "currency": "currency",
    "currencies": "currency",
    "language": "language",
    "lang": "language",
    "languages": "language",
    "pricing": "pricing",
    "price_model": "pricing",
    "pricing_model": "pricing",
    "budget": "budget",
    "max_price": "budget",
}
_PRICING_ALIASES = {
    "on_demand": "on_demand",
    "ondemand": "on_demand",
    "on-demand": "on_demand",
    "od": "on_demand",
    "spot": "spot",
    "preemptible": "spot",
    "reserved_1y": "reserved_1y",
    "reserved-1y": "reserved_1y",
    "1y": "reserved_1y",
    "reserved1y": "reserved_1y",
    "reserved_3y": "reserved_3y",
    "reserved-3y": "reserved_3y",
    "3y": "reserved_3y",
    "reserved3y": "reserved_3y",
}
_LANGUAGE_ALIASES = {"en": "en", "english": "en", "zh": "zh", "chinese": "zh", "cn": "zh", "中文": "zh"}
_CURRENCY_ALIASES = {
    "usd": "USD",
    "$": "USD",
    "us$": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "cny": "CNY",
    "rmb": "CNY",
    "¥": "CNY",
    "yuan": "CNY",
    "元": "CNY",
}
_SPLIT = re.compile(r"[\s,，、;]+")
_LIST_SPLIT = re.compile(r"[,，、;]+")

settings_table = sa.Table(
    "channel_settings",
    metadata,
    sa.Column("team_id", sa.String(40), primary_key=True),
    sa.Column("channel_id", sa.String(80), primary_key=True),  # '' = the whole workspace
    sa.Column("key", sa.String(32), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),  # JSON
    sa.Column("updated_by", sa.String(40), nullable=True),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)


class SettingError(UserError, ValueError):
    """A setting the user asked for is not valid; `suggestions` are what they may have meant."""

    def __init__(self, message: str, suggestions: Iterable[str] = (), *, key: str | None = None) -> None:
        super().__init__(message)
        self.suggestions = tuple(suggestions)
        self.key = key


class EffectiveSettings(dict):
    """key -> effective value (None when unset), with `origins`: key -> "channel" | "workspace" | "default"."""

    def __init__(self, values: Mapping[str, Any], origins: Mapping[str, str]) -> None:
        super().__init__(values)
        self.origins = dict(origins)

    def origin(self, key: str) -> str:
        return self.origins.get(key, "channel" if self.get(key) is not None else "default")


# --- validation ----------------------------------------------------------------------------------------------


def key_of(raw: str) -> str:
    """The setting key `raw` names ("provider" -> "providers"); `SettingError` with suggestions otherwise."""
    word = raw.strip().lower().replace("-", "_")
    if word in _KEY_ALIASES:
        return _KEY_ALIASES[word]
    import difflib

    close = difflib.get_close_matches(word, list(_KEY_ALIASES), n=3, cutoff=0.6)
    suggestions = list(dict.fromkeys(_KEY_ALIASES[c] for c in close))
    raise SettingError(f"unknown setting {raw!r}", suggestions)


def _words(value: Any) -> list[str]:
    if isinstance(value, str):
        return [w for w in _SPLIT.split(value.strip()) if w]
    return [str(w).strip() for w in value or () if str(w).strip()]


def _names(words: list[str], names: Mapping[str, str], kind: str, what: str, key: str) -> list[str]:
    """Exact names only (an alias is fine); anything else is refused with the closest names as suggestions."""
    from knowledge.names import Ambiguous, Resolved, name_index

    index = name_index(names, kind=kind)
    out: list[str] = []
    pieces: list[str] = []
    for word in words:  # "Tencent Cloud" is one name; "aws alibaba" two
        pieces += [word] if isinstance(index.exact(word), Resolved) else word.split()
    for word in pieces:
        exact = index.exact(word)
        if isinstance(exact, Resolved):
            if exact.name not in out:
                out.append(exact.name)
            continue
        found = index.resolve(word)
        if isinstance(found, Resolved):
            suggestions: tuple[str, ...] = (found.name,)
        elif isinstance(found, Ambiguous):
            suggestions = found.candidates
        else:
            suggestions = found.suggestions
        raise SettingError(f"unknown {what} {word!r}", suggestions[:3], key=key)
    if not out:
        raise SettingError(f"name at least one {what}", key=key)
    return out


class TypedBudget(Protocol):
    """A budget as the edge read it (`handlers.models.Budget`)."""

    amount: float
    currency: str
    per: str


def _budget(value: TypedBudget | Mapping) -> dict[str, Any]:
    """The stored form of a typed budget, validated: a positive finite amount, USD or CNY, per (GPU-)hour."""
    if isinstance(value, str):
        raise SettingError(
            f"a budget is read by the budget grammar before it is stored, not as {value!r}", key="budget"
        )
    get = value.get if isinstance(value, Mapping) else lambda name: getattr(value, name, None)
    amount, currency, per = get("amount"), str(get("currency") or "USD").upper(), get("per") or "gpu_hour"
    if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount) or amount <= 0:
        raise SettingError(f"the budget must be a positive price, not {amount!r}", key="budget")
    if currency not in CURRENCIES:
        raise SettingError(f"unknown currency {currency!r} in the budget", CURRENCIES, key="budget")
    if per not in BUDGET_PERS:
        raise SettingError("a budget setting caps a price per GPU-hour or per hour", key="budget")
    return {"amount": round(float(amount), 6), "currency": currency, "per": per}


def _stored(key: str, value: Any) -> Any:
    """A stored value as it is read: a budget stored before `per` existed capped a GPU-hour."""
    if key == "budget" and isinstance(value, dict) and "per" not in value:
        return {**value, "per": "gpu_hour"}
    return value


def _choice(value: Any, aliases: Mapping[str, str], allowed: tuple[str, ...], what: str, key: str) -> str:
    words = _words(value)
    word = words[0].lower() if len(words) == 1 else " ".join(words).lower()
    if word in aliases:
        return aliases[word]
    import difflib

    close = difflib.get_close_matches(word, list(aliases), n=3, cutoff=0.5)
    suggestions = list(dict.fromkeys(aliases[c] for c in close)) or list(allowed)
    raise SettingError(
        f"unknown {what} {' '.join(words) or value!r}; choose {', '.join(allowed)}", suggestions, key=key
    )


def normalize(key: str, value: Any, kb=None) -> Any:
    """The stored form of `value` for `key`, validated against the knowledge base (`SettingError` if invalid)."""
    key = key_of(key)
    if key in ("providers", "regions"):
        if kb is None:
            from knowledge.kb.opener import open_kb

            kb = open_kb()
        items = [w.strip() for w in _LIST_SPLIT.split(value) if w.strip()] if isinstance(value, str) else _words(value)
        if key == "providers":
            return _names(items, kb.provider_names, "provider", "provider", key)
        return _names(items, {r: r for r in kb.regions}, "region", "region", key)
    if key == "currency":
        return _choice(value, _CURRENCY_ALIASES, CURRENCIES, "currency", key)
    if key == "language":
        return _choice(value, _LANGUAGE_ALIASES, LANGUAGES, "language", key)
    if key == "pricing":
        return _choice(
            str(value).replace(" ", "_") if isinstance(value, str) else value,
            _PRICING_ALIASES,
            PRICINGS,
            "pricing",
            key,
        )
    return _budget(value)


def format_value(key: str, value: Any) -> str:
    """A setting's value as people write it ("aws, alibaba", "2 USD/GPU-hour")."""
    if value is None:
        return "—"
    if key == "budget":
        unit = "/hour" if value.get("per") == "instance_hour" else "/GPU-hour"
        return f"{float(value['amount']):g} {value['currency']}{unit}"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


# --- storage -------------------------------------------------------------------------------------------------


def _upsert(conn: sa.Connection, row: dict) -> None:
    name = conn.dialect.name
    if name in ("sqlite", "postgresql"):
        if name == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as sqlite_insert

            stmt: sqlite.Insert | postgresql.Insert = sqlite_insert(settings_table).values(**row)
        else:
            from sqlalchemy.dialects.postgresql import insert as postgresql_insert

            stmt = postgresql_insert(settings_table).values(**row)
        conn.execute(
            stmt.on_conflict_do_update(
                index_elements=[settings_table.c.team_id, settings_table.c.channel_id, settings_table.c.key],
                set_={
                    "value": stmt.excluded.value,
                    "updated_by": stmt.excluded.updated_by,
                    "updated_at": stmt.excluded.updated_at,
                },
            )
        )
        return
    t = settings_table.c  # another database: update, else insert (the primary key still keeps one row)
    done = conn.execute(
        settings_table.update()
        .where(t.team_id == row["team_id"], t.channel_id == row["channel_id"], t.key == row["key"])
        .values(**row)
    ).rowcount
    if not done:
        conn.execute(settings_table.insert().values(**row))


def _team(team: str) -> str:
    team = (team or "").strip()
    if not team:
        raise SettingError("settings need a Slack team (workspace) id")
    return team


def set_setting(team: str, channel: str | None, key: str, value: Any, *, kb=None, updated_by: str | None = None) -> Any:
    """Validate and store a setting for a channel (`channel` '' or None: the workspace); returns the stored value."""
    key = key_of(key)
    stored = normalize(key, value, kb)
    row = {
        "team_id": _team(team),
        "channel_id": (channel or WORKSPACE).strip(),
        "key": key,
        "value": json.dumps(stored, ensure_ascii=False),
        "updated_by": updated_by,
        "updated_at": utc_now(),
    }
    with state.engine().begin() as conn:
        _upsert(conn, row)
    return stored


def scope_settings(team: str, channel: str | None) -> dict[str, Any]:
    """The settings stored for exactly one scope (a channel, or '' / None for the workspace)."""
    t = settings_table.c
    with state.engine().connect() as conn:
        rows = conn.execute(
            sa.select(t.key, t.value).where(t.team_id == _team(team), t.channel_id == (channel or WORKSPACE))
        ).all()
    return {row.key: _stored(row.key, json.loads(row.value)) for row in rows if row.key in KEYS}


@cache
def _settings_query() -> sa.Select:
    """The statement `get_settings` runs for every question, built once (building it cost more than running it)."""
    t = settings_table.c
    return sa.select(t.channel_id, t.key, t.value).where(
        t.team_id == sa.bindparam("team"), t.channel_id.in_(sa.bindparam("scopes", expanding=True))
    )


def get_settings(team: str, channel: str | None) -> EffectiveSettings:
    """The effective settings of a channel: channel value, else workspace value, else the default (None)."""
    scopes = [WORKSPACE] if not channel else [channel, WORKSPACE]
    with state.engine().connect() as conn:
        rows = conn.execute(_settings_query(), {"team": _team(team), "scopes": scopes}).all()
    found: dict[tuple[str, str], Any] = {(r.channel_id, r.key): _stored(r.key, json.loads(r.value)) for r in rows}
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for key in KEYS:
        if channel and (channel, key) in found:
            values[key], origins[key] = found[(channel, key)], "channel"
        elif (WORKSPACE, key) in found:
            values[key], origins[key] = found[(WORKSPACE, key)], "workspace"
        else:
            values[key], origins[key] = DEFAULTS[key], "default"
    return EffectiveSettings(values, origins)


def clear(team: str, channel: str | None, key: str | None = None) -> int:
    """Remove one setting (or, with `key` None, every setting) of one scope; returns how many rows went."""
    t = settings_table.c
    where = [t.team_id == _team(team), t.channel_id == (channel or WORKSPACE)]
    if key is not None:
        where.append(t.key == key_of(key))
    with state.engine().begin() as conn:
        return conn.execute(settings_table.delete().where(*where)).rowcount


def delete_team(team: str) -> int:
    """Remove every setting of a workspace and of its channels (the app was uninstalled)."""
    with state.engine().begin() as conn:
        return conn.execute(settings_table.delete().where(settings_table.c.team_id == _team(team))).rowcount
