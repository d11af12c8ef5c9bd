"""The record of every change to channel and workspace settings and digest subscriptions: who, when, old, new.

    record(team, channel, key, old, new, changed_by=..., via=...)   one row per change (nothing when old == new)
    recent(team, channel, limit=5) -> list[Change]                  newest first: that channel's and the workspace's
    delete_team(team) -> int                                        the app left the workspace

`channel` '' is the workspace; `key` is a setting key (`providers`, `budget`, ...) or `digest`; `old` / `new` are
the stored values (JSON), None when unset. Table `settings_changes` on `knowledge.state.db.metadata` (migration
`0002_slack`).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from knowledge.state import db as state
from knowledge.state.db import metadata

__all__ = ["Change", "changes_table", "delete_team", "recent", "record"]

changes_table = sa.Table(
    "settings_changes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("team_id", sa.String(40), nullable=False),
    sa.Column("channel_id", sa.String(80), nullable=False),  # '' = the whole workspace
    sa.Column("key", sa.String(32), nullable=False),  # a setting key, or "digest"
    sa.Column("old_value", sa.Text, nullable=True),  # JSON; NULL = was not set
    sa.Column("new_value", sa.Text, nullable=True),  # JSON; NULL = removed
    sa.Column("changed_by", sa.String(40), nullable=True),  # Slack user id
    sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("via", sa.String(20), nullable=True),  # slash | home | cli
    sa.Index("ix_settings_changes_scope", "team_id", "channel_id", "changed_at"),
)


@dataclass(frozen=True)
class Change:
    team: str
    channel: str
    key: str
    old: Any
    new: Any
    changed_by: str | None
    changed_at: dt.datetime
    via: str | None


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def record(
    team: str,
    channel: str | None,
    key: str,
    old: Any,
    new: Any,
    *,
    changed_by: str | None,
    via: str = "slash",
    now: dt.datetime | None = None,
) -> bool:
    """Record one change; False (nothing written) when the value did not change."""
    if _dump(old) == _dump(new):
        return False
    row = {
        "team_id": team,
        "channel_id": channel or "",
        "key": key,
        "old_value": _dump(old),
        "new_value": _dump(new),
        "changed_by": changed_by,
        "changed_at": now or dt.datetime.now(dt.UTC),
        "via": via,
    }
    with state.engine().begin() as conn:
        conn.execute(changes_table.insert().values(**row))
    return True


def recent(team: str, channel: str | None, limit: int = 5) -> list[Change]:
    """The newest changes of the channel and of the workspace (newest first)."""
    c = changes_table.c
    scopes = sorted({channel or "", ""})
    with state.engine().connect() as conn:
        rows = conn.execute(
            sa.select(changes_table)
            .where(c.team_id == team, c.channel_id.in_(scopes))
            .order_by(c.changed_at.desc(), c.id.desc())
            .limit(limit)
        ).all()
    out = []
    for r in rows:
        at = r.changed_at if r.changed_at.tzinfo else r.changed_at.replace(tzinfo=dt.UTC)  # SQLite drops it
        out.append(
            Change(
                r.team_id,
                r.channel_id,
                r.key,
                None if r.old_value is None else json.loads(r.old_value),
                None if r.new_value is None else json.loads(r.new_value),
                r.changed_by,
                at,
                r.via,
            )
        )
    return out


def delete_team(team: str) -> int:
    with state.engine().begin() as conn:
        return conn.execute(changes_table.delete().where(changes_table.c.team_id == team)).rowcount
