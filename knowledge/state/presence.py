"""A state database that knows when it is gone: nothing is confirmed that is not stored.

A pooled SQLite connection keeps writing to its file after the file was deleted or replaced (it holds the old
inode): the change is "saved", the same process sees it, and a restart or the CLI never does. So every SQLite
connection remembers the identity (device + inode) of the file it opened, and each checkout from the pool compares
it with the file now at that path:

    the file is gone          StateUnavailableError; no new empty database is created in its place
    another file is there     StateUnavailableError for this operation; the pool is emptied, the schema checked
                              again and the next operation reconnects to the file that is there now

SQLite's own refusals (read-only file or directory, disk full, I/O error, the file cannot be opened) and an
unreachable PostgreSQL become `StateUnavailableError` too. Users are told "settings can't be saved right now;
nothing was changed; try again in a minute" (`state.unavailable`), the CLI one line, `/healthz` which (`health`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import sqlalchemy as sa

from knowledge.errors import GpubotError

__all__ = ["StateError", "StateUnavailableError", "health", "state_error_text", "watch"]

_SQLITE_REFUSALS = (
    "readonly database",
    "database or disk is full",
    "disk i/o error",
    "unable to open database file",
)


class StateError(GpubotError, RuntimeError):
    """The state database cannot do what was asked right now; nothing of it was written (safe to try again)."""


class StateUnavailableError(StateError):
    """The state database is gone, replaced, read-only, full or unreachable."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def watch(engine: sa.Engine, path: Path) -> None:
    """Make `engine`'s connections to the SQLite file `path` refuse to work once the file is gone or replaced."""
    state = {"opened": False}

    @sa.event.listens_for(engine, "do_connect")
    def _before_open(dialect, record, cargs, cparams):
        if state["opened"] and _identity(path) is None:  # never create an empty database in a deleted one's place
            raise StateUnavailableError(f"the state database {path} is gone (deleted or moved); nothing was written")
        return None

    @sa.event.listens_for(engine, "connect")
    def _opened(dbapi_connection, record) -> None:
        record.info["identity"] = _identity(path)
        state["opened"] = True

    @sa.event.listens_for(engine, "checkout")
    def _still_there(dbapi_connection, record, proxy) -> None:
        now = _identity(path)
        if now is not None and now == record.info.get("identity"):
            return
        engine.pool.dispose()  # every pooled connection holds the old file
        engine._gpubot_ready = False  # type: ignore[attr-defined]  # the file there now: its schema checked again
        what = "is gone (deleted or moved)" if now is None else "was replaced by another file"
        raise StateUnavailableError(f"the state database {path} {what}; nothing was written")

    @sa.event.listens_for(engine, "handle_error")
    def _refused(context) -> None:
        error = context.original_exception
        message = str(error).lower()
        if isinstance(error, sqlite3.OperationalError) and any(m in message for m in _SQLITE_REFUSALS):
            raise StateUnavailableError(f"the state database {path} refused the write ({error}); nothing was written")


def state_error_text(exc: BaseException) -> str | None:
    """One line for a state database problem (this module's errors, a locked or unreachable database), else None."""
    if isinstance(exc, StateError):  # StateBusyError (`knowledge.state.db`) too
        return str(exc)
    if isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError):
        first = str(getattr(exc, "orig", exc) or exc).strip().splitlines()
        return f"the state database cannot be reached ({first[0][:200] if first else type(exc).__name__})"
    return None


def health(engine_of: Callable[[], sa.Engine]) -> str:
    """`ok`, `read-only` (readable, but writes cannot be made) or `unavailable` (gone, replaced, unreachable) for
    the state database `engine_of()` gives (`knowledge.state.db.engine`)."""
    try:
        return _bounded(_probe, engine_of)  # gone or replaced: refused at checkout
    except Exception:  # noqa: BLE001 - unreachable, gone, replaced, too slow to answer: cannot write now
        return "unavailable"


HEALTH_TIMEOUT = 2.0  # seconds /healthz waits for the state database to answer
_pools: dict[int, ThreadPoolExecutor] = {}


def _bounded(function, *args):
    """`function(*args)` on this process's own probe thread (threads do not survive a fork), within HEALTH_TIMEOUT."""
    pool = _pools.get(os.getpid())
    if pool is None:
        pool = _pools[os.getpid()] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpubot-health")
    return pool.submit(function, *args).result(timeout=HEALTH_TIMEOUT)


def _probe(engine_of: Callable[[], sa.Engine]) -> str:
    eng = engine_of()
    with eng.connect() as conn:
        if eng.dialect.name == "postgresql":
            read_only = conn.execute(sa.text("SHOW transaction_read_only")).scalar() == "on"
        else:
            read_only = bool(conn.execute(sa.text("PRAGMA query_only")).scalar())
    where = eng.url.database if eng.dialect.name == "sqlite" else None
    if where and where != ":memory:":
        path = Path(where)
        read_only = read_only or not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        read_only = read_only or _full(path.parent)
    return "read-only" if read_only else "ok"


def _full(directory: Path) -> bool:
    try:
        stat = os.statvfs(directory)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < 1024 * 1024  # under 1 MB left: SQLite's next write may fail
