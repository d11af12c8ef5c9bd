"""What each live price source last did, in the shared state: validators, last success, rows, last error.

One row per source (`live_sources`), written by whichever process refreshed it (the clock, `gpubot prices
refresh`): the ETag / Last-Modified to send next time, when it was last attempted, checked (a 200 or a 304),
last succeeded and with how many rows, the last error and when, and when it is next due. `gpubot prices sources`
and answers read it; nothing on the answer path writes it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.clock import utc_now
from knowledge.state.db import engine, metadata

__all__ = ["SourceState", "live_sources", "read_all", "read_one", "record"]

live_sources = sa.Table(
    "live_sources",
    metadata,
    sa.Column("name", sa.String(40), primary_key=True),
    sa.Column("etag", sa.String(300)),
    sa.Column("last_modified", sa.String(100)),
    sa.Column("attempted_at", sa.DateTime(timezone=True)),
    sa.Column("checked_at", sa.DateTime(timezone=True)),
    sa.Column("succeeded_at", sa.DateTime(timezone=True)),
    sa.Column("rows", sa.Integer),
    sa.Column("error", sa.Text),
    sa.Column("error_at", sa.DateTime(timezone=True)),
    sa.Column("next_run_at", sa.DateTime(timezone=True)),
    sa.Column("seconds", sa.Float),
)

_FIELDS = tuple(c.name for c in live_sources.columns)


@dataclass(frozen=True, slots=True)
class SourceState:
    name: str
    etag: str | None = None
    last_modified: str | None = None
    attempted_at: dt.datetime | None = None
    checked_at: dt.datetime | None = None
    succeeded_at: dt.datetime | None = None
    rows: int | None = None
    error: str | None = None
    error_at: dt.datetime | None = None
    next_run_at: dt.datetime | None = None
    seconds: float | None = None

    def as_json(self) -> dict:
        return {
            k: (v.isoformat() if isinstance(v, dt.datetime) else v) for k, v in zip(_FIELDS, self.values(), strict=True)
        }

    def values(self) -> tuple:
        return tuple(getattr(self, k) for k in _FIELDS)


def _state(row) -> SourceState:
    values = dict(zip(_FIELDS, row, strict=True))
    for key, value in values.items():
        if isinstance(value, dt.datetime):
            values[key] = utc_now(value)
    return SourceState(**values)


def read_all() -> dict[str, SourceState]:
    with engine().connect() as conn:
        rows = conn.execute(sa.select(*live_sources.columns).order_by(live_sources.c.name)).all()
    return {row[0]: _state(row) for row in rows}


def read_one(name: str) -> SourceState:
    with engine().connect() as conn:
        row = conn.execute(sa.select(*live_sources.columns).where(live_sources.c.name == name)).first()
    return _state(row) if row else SourceState(name)


def record(name: str, **values) -> None:
    """Set these columns of `name`'s row (created on first use); two writers at once both land."""
    values = {k: v for k, v in values.items() if k in _FIELDS and k != "name"}
    for _attempt in range(3):
        with engine().begin() as conn:
            done = conn.execute(live_sources.update().where(live_sources.c.name == name).values(**values)).rowcount
            if done:
                return
            try:
                with conn.begin_nested():
                    conn.execute(live_sources.insert().values(name=name, **values))
                return
            except IntegrityError:
                continue  # another process inserted the row first: update it
