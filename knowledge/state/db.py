"""gpubot's persistent state: everything that is not rebuilt from bundled data.

Price snapshots and history, digest subscriptions and the record of what was posted, channel and workspace
settings, Slack installations and the record of events already handled live here, never in the knowledge base,
so rebuilding the knowledge base or upgrading gpubot loses none of it.

`DATABASE_URL` selects the database: by default a SQLite file `state.db` in `GPUBOT_HOME`; a
`postgresql://...` URL puts the state in PostgreSQL, shared by every process on every machine. Tables are
SQLAlchemy Core tables on one `metadata`; modules that own state (history, subscriptions, settings) define their
tables on it. "Once" is enforced by the database (unique keys), never by in-process locks.
"""

from __future__ import annotations

import fcntl
import sqlite3
import threading
import time
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.paths import home
from knowledge.state.limits import guard
from knowledge.state.presence import StateError, StateUnavailableError, watch
from knowledge.state.schema import head_revision
from knowledge.state.url import database_url

metadata = sa.MetaData()

handled_events = sa.Table(
    "handled_events",
    metadata,
    sa.Column("event_key", sa.String(200), primary_key=True),
    sa.Column("handled_at", sa.Float, nullable=False),
)

_init_lock = threading.Lock()
MIGRATION_LOCK_KEY = 7_227_001  # pg_advisory_lock key for schema migrations


class StateBusyError(StateError):
    """The SQLite state database stayed locked by another process for longer than the busy timeout.

    Nothing of the failed operation was written (its transaction was rolled back); trying again is safe."""


def busy_timeout() -> float:
    """Seconds a write waits for another process's lock on the SQLite state database (GPUBOT_DB_BUSY_TIMEOUT)."""
    from knowledge.config import config

    return config().gpubot_db_busy_timeout


@cache
def _engine_for(url: str) -> sa.Engine:
    if url.startswith("sqlite"):
        where = url.removeprefix("sqlite:///")
        if where and where != url and where != ":memory:":
            from knowledge.state.private_files import private_file

            private_file(Path(where))  # 0600 before SQLite creates it 0644 (its -wal/-shm follow its mode)
        timeout = busy_timeout()
        engine = sa.create_engine(url, connect_args={"timeout": timeout, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(connection, _record) -> None:  # concurrent readers, one writer, no lost writes
            cursor = connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: no corruption, survives process crashes
            cursor.close()

        @sa.event.listens_for(engine, "handle_error")
        def _locked(context) -> None:  # "database is locked" after the wait: say what happened and what to do
            error = context.original_exception
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error).lower():
                where = url.removeprefix("sqlite:///")
                raise StateBusyError(
                    f"the state database {where} is locked by another process (waited {timeout:g} s, "
                    "GPUBOT_DB_BUSY_TIMEOUT); nothing was written, try again"
                ) from error

        guard(engine)
        if where and where != url and where != ":memory:":
            watch(engine, Path(where))  # deleted or replaced under a running process: refused, then reconnected
        return engine
    engine = sa.create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=5, connect_args={"connect_timeout": 5}
    )  # an unreachable server fails, never hangs
    guard(engine)  # the same length limits as SQLite: refused before PostgreSQL would raise a DataError
    _unreachable_is_unavailable(engine)
    return engine


def _unreachable_is_unavailable(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "handle_error")
    def _down(context) -> None:  # the server is down or went away: say so, in one line
        if context.is_disconnect or isinstance(context.sqlalchemy_exception, sa.exc.OperationalError):
            first = (str(context.original_exception).strip().splitlines() or ["unreachable"])[0][:200]
            raise StateUnavailableError(f"the state database cannot be reached ({first}); nothing was written")


def engine() -> sa.Engine:
    """The state database engine, with every table created (idempotent, safe from many processes)."""
    url = database_url()
    eng = _engine_for(url)
    if not getattr(eng, "_gpubot_ready", False):
        with _init_lock:
            if not getattr(eng, "_gpubot_ready", False):
                if not _schema_is_current(eng):  # Alembic (~0.1 s to import) only when there is something to do
                    upgrade(eng)
                eng._gpubot_ready = True  # type: ignore[attr-defined]
    return eng


def _schema_is_current(eng: sa.Engine) -> bool:
    """The database is at the newest migration already (no lock, no Alembic); False when it cannot say."""
    try:
        with eng.connect() as conn:
            versions = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    except sa.exc.SQLAlchemyError:
        return False
    return versions == [head_revision()]


def upgrade(eng: sa.Engine | None = None) -> None:
    """Bring the schema to the newest migration (Alembic, `knowledge/state/migrations`).

    Safe to run from every worker at start-up: one process migrates at a time (a PostgreSQL advisory lock, or
    a file lock beside a SQLite database) and the others then find nothing to do.
    """
    from alembic import command
    from alembic.config import Config

    own = eng is None  # an engine made here for the migration is closed here (its connection never leaks)
    eng = eng or _engine_for(database_url())
    try:
        with _migration_lock(eng) as conn:
            config = Config()
            config.set_main_option("script_location", str(Path(__file__).resolve().parent / "migrations"))
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
            conn.commit()
    finally:
        if own:
            eng.dispose()


@contextmanager
def _migration_lock(eng: sa.Engine):
    if eng.dialect.name == "postgresql":
        with eng.connect() as conn:
            conn.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            conn.commit()
            try:
                yield conn
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK_KEY})
                conn.commit()
        return
    database = eng.url.database
    lock_path = f"{database}.migrate.lock" if database and database != ":memory:" else None
    handle = open(lock_path, "a+") if lock_path else None  # noqa: SIM115 - held for the whole migration
    try:
        if handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
        with eng.connect() as conn:
            yield conn
    finally:
        if handle:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()


def loose_modes() -> list[str]:
    """Warnings for gpubot's home and SQLite state files readable by others (see `knowledge.state.private_files`)."""
    from knowledge.state.private_files import loose

    url = database_url()
    state_file = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    return loose(home(), state_file)


def load_table_owners() -> None:
    """Import the modules that define tables on `metadata`, so that migrations see every table."""
    import importlib

    for module in (
        "knowledge.catalog.imports",
        "knowledge.history.snapshots",
        "knowledge.state.subscriptions",
        "knowledge.state.settings_store",
        "knowledge.state.claims",
        "knowledge.state.grid_members",
        "knowledge.state.live_sources",
    ):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def claim_event(key: str, ttl_seconds: float = 6 * 3600) -> bool:
    """Record that an event is being handled; False if any process already claimed it (Slack retries)."""
    now = time.time()
    eng = engine()
    try:
        with eng.begin() as conn:
            conn.execute(handled_events.insert().values(event_key=key[:200], handled_at=now))
    except IntegrityError:
        return False
    if int(now) % 97 == 0:  # occasional cleanup keeps the table small
        with eng.begin() as conn:
            conn.execute(handled_events.delete().where(handled_events.c.handled_at < now - ttl_seconds))
    return True


def release_event(key: str) -> None:
    """Forget a claim whose work failed, so the user's next attempt (a second click) is handled (issue 24)."""
    with engine().begin() as conn:
        conn.execute(handled_events.delete().where(handled_events.c.event_key == key[:200]))
