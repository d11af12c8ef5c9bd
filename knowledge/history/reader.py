"""Reading the recorded price history: the `HistoryReader` interface and its implementation over the state database.

Handlers get a reader injected by the edge (`bot.pipeline`, `bot.history_cmd`) and never touch the state database
themselves; a test can hand them any object with these methods (an in-memory fake, say). Recording lives in
`knowledge.history.snapshots` (and `knowledge.history.baselines`), never here.

`StateHistoryReader` runs one set of SQL statements two ways: on a SQLite state file already at the newest
migration, with the plain `sqlite3` driver (read-only; no SQLAlchemy or Alembic start-up, about 0.3 s of a CLI
run); otherwise (PostgreSQL, a schema to migrate, a file that cannot be opened read-only) through
`knowledge.state.db.engine()`, which creates and migrates the schema first, as every state access does.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from knowledge.clock import utc_now
from knowledge.history.models import Snapshot, SnapshotOffer
from knowledge.state.schema import sqlite_at_head
from knowledge.state.url import database_url

__all__ = ["HistoryReader", "StateHistoryReader", "state_reader"]

Variant = tuple[str, str, float | None, str]  # (family, accelerator, memory GB, provider)


class HistoryReader(Protocol):
    """What handlers and series read of the recorded price history (all read-only)."""

    def providers(self) -> list[str]:
        """Providers with at least one snapshot, sorted."""
        ...

    def snapshots_of(self, provider: str, since: dt.datetime | None = None) -> list[Snapshot]:
        """A provider's snapshots, oldest (lowest seq) first; with `since`, only those taken at or after it."""
        ...

    def latest_snapshot(self, provider: str) -> Snapshot | None:
        """The provider's newest snapshot (highest seq)."""
        ...

    def snapshot(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot with this id."""
        ...

    def offers(
        self,
        snapshot_ids: Sequence[int],
        *,
        gpu: str | None = None,
        pricings: Sequence[str] = (),
        regions: Sequence[str] = (),
    ) -> list[SnapshotOffer]:
        """The offers of these snapshots; `gpu` a family, `pricings` models, `regions` lower-case region names."""
        ...

    def variants(self, snapshot_ids: Sequence[int]) -> list[Variant]:
        """Distinct (family, accelerator, memory, provider) of the GPUs offered in these snapshots."""
        ...


_SNAPSHOT = "SELECT id, provider, seq, source, kind, taken_at, content_hash, offers FROM snapshots"
_OFFER = f"SELECT {', '.join(SnapshotOffer._fields)} FROM snapshot_offers"


def _utc(value: Any) -> dt.datetime:
    """A stored time as an aware UTC datetime (SQLite keeps `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, PostgreSQL a
    timestamptz)."""
    return utc_now(dt.datetime.fromisoformat(value) if isinstance(value, str) else value)


def _snapshot(row: Sequence) -> Snapshot:
    return Snapshot(row[0], row[1], row[2], row[3], row[4], _utc(row[5]), row[6], row[7])


def _offer(row: Sequence) -> SnapshotOffer:
    offer = SnapshotOffer(*row)
    return offer._replace(vgpu=bool(offer.vgpu))  # vgpu: 0/1 in SQLite


def _in(name: str, values: Iterable, params: dict) -> str:
    """`:name0, :name1, ...` for an IN list, with the values put in `params` (named style, both drivers)."""
    keys = []
    for n, value in enumerate(values):
        params[f"{name}{n}"] = value
        keys.append(f":{name}{n}")
    return ", ".join(keys)


class StateHistoryReader:
    """The recorded price history in the state database at `url` (default: `DATABASE_URL`'s)."""

    def __init__(self, url: str | None = None):
        self.url = url or database_url()
        self._sqlite = self.url.startswith("sqlite")
        self._file = Path(self.url.removeprefix("sqlite:///")) if self.url.startswith("sqlite:///") else None
        self._quick = False  # the file was found at the newest migration: read it with the plain driver

    # --- the two ways to run a statement ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        """A read-only connection to a SQLite state file at the newest migration, or None (use SQLAlchemy)."""
        if self._file is None or not self._file.exists():
            return None
        try:
            conn = sqlite3.connect(f"file:{self._file}?mode=ro", uri=True, timeout=5.0, check_same_thread=False)
        except sqlite3.Error:
            return None
        if not self._quick:
            if not sqlite_at_head(conn):
                conn.close()
                return None
            self._quick = True
        return conn

    def _rows(self, sql: str, params: dict | None = None) -> list[tuple]:
        params = params or {}
        conn = self._connect()
        if conn is not None:
            try:
                return conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError:
                self._quick = False  # e.g. a table missing after all: let SQLAlchemy create and migrate
            finally:
                conn.close()
        import sqlalchemy as sa

        from knowledge.state import db as state

        with state.engine().connect() as sa_conn:
            return [tuple(row) for row in sa_conn.execute(sa.text(sql), params)]

    def _time(self, value: dt.datetime) -> Any:
        """A bound time: SQLite compares the stored text, PostgreSQL a timestamptz."""
        when = utc_now(value)
        return when.strftime("%Y-%m-%d %H:%M:%S.%f") if self._sqlite else when

    # --- HistoryReader ---------------------------------------------------------------------------------------

    def providers(self) -> list[str]:
        return sorted(row[0] for row in self._rows("SELECT DISTINCT provider FROM snapshots"))

    def snapshots_of(self, provider: str, since: dt.datetime | None = None) -> list[Snapshot]:
        params: dict = {"provider": provider}
        sql = f"{_SNAPSHOT} WHERE provider = :provider"
        if since is not None:
            sql += " AND taken_at >= :since"
            params["since"] = self._time(since)
        return [_snapshot(row) for row in self._rows(sql + " ORDER BY seq", params)]

    def latest_snapshot(self, provider: str) -> Snapshot | None:
        rows = self._rows(f"{_SNAPSHOT} WHERE provider = :provider ORDER BY seq DESC LIMIT 1", {"provider": provider})
        return _snapshot(rows[0]) if rows else None

    def snapshot(self, snapshot_id: int) -> Snapshot | None:
        rows = self._rows(f"{_SNAPSHOT} WHERE id = :id", {"id": snapshot_id})
        return _snapshot(rows[0]) if rows else None

    def offers(
        self,
        snapshot_ids: Sequence[int],
        *,
        gpu: str | None = None,
        pricings: Sequence[str] = (),
        regions: Sequence[str] = (),
    ) -> list[SnapshotOffer]:
        if not snapshot_ids:
            return []
        params: dict = {}
        sql = f"{_OFFER} WHERE snapshot_id IN ({_in('s', snapshot_ids, params)})"
        if gpu is not None:
            sql += " AND gpu = :gpu"
            params["gpu"] = gpu
        if pricings:
            sql += f" AND pricing IN ({_in('p', pricings, params)})"
        if regions:
            sql += f" AND lower(region) IN ({_in('r', regions, params)})"
        return [_offer(row) for row in self._rows(sql, params)]

    def variants(self, snapshot_ids: Sequence[int]) -> list[Variant]:
        if not snapshot_ids:
            return []
        params: dict = {}
        sql = (
            "SELECT DISTINCT gpu, accelerator, gpu_memory_gb, provider FROM snapshot_offers "
            f"WHERE snapshot_id IN ({_in('s', snapshot_ids, params)})"
        )
        return [(row[0], row[1], row[2], row[3]) for row in self._rows(sql, params)]

    # --- for the edges -----------------------------------------------------------------------------------------

    def seq_summary(self) -> dict[str, tuple[int, int]]:
        """provider -> (number of snapshots, lowest seq): enough to tell whether a baseline is still missing."""
        rows = self._rows("SELECT provider, COUNT(*), MIN(seq) FROM snapshots GROUP BY provider")
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}


_readers: dict[str, StateHistoryReader] = {}
_lock = threading.Lock()


def state_reader() -> StateHistoryReader:
    """The reader of the current state database (one per `DATABASE_URL`, shared by threads)."""
    url = database_url()
    reader = _readers.get(url)
    if reader is None:
        with _lock:
            reader = _readers.setdefault(url, StateHistoryReader(url))
    return reader
