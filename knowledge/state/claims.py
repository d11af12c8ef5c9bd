"""Exactly-once handling of Slack deliveries: leased claims in the shared state, with a per-process fallback.

`claim(key)` says whether this process should handle a delivery (an event, a message, a signed request):

- The claim is a row in `event_claims` with a lease (`GPUBOT_CLAIM_LEASE_SECONDS`, default 60). While this process
  works on it a heartbeat thread keeps the lease alive; `finish(key)` marks it done, for good. A worker that dies
  mid-way stops renewing, so once the lease has run out Slack's next retry (at +1 and +5 minutes) takes it over and
  is answered: nothing claimed is lost, nothing done is answered again.
- The ack never waits on the database: every call goes through a small thread pool and gives up after
  `GPUBOT_CLAIM_TIMEOUT` seconds (default 0.5), however long a lock or an unreachable server would hold it. Then
  the claim is decided in memory (this process remembers what it handled), and a delivery that Slack marks as a
  retry (`X-Slack-Retry-Num` >= 1) is taken as handled already: a locked state never produces a second reply.
- One clock: lease times are written and compared on the database's clock (`now()` on PostgreSQL,
  `julianday('now')` on SQLite), never on this machine's, so a machine whose clock runs ahead cannot take over a
  live lease.
- `release(key)` gives a claim up unfinished (a reply Slack refused): Slack's own retry of the event then handles
  it. `maybe_done=True` (the post may have reached Slack: it timed out) lets the retry take it over as from a worker
  that died, and `taken_over(key)` tells the taker to look for the earlier reply before posting
  (`bot.slack.reply_once`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.config import ConfigError, config
from knowledge.state.db import engine, metadata

log = logging.getLogger("gpubot.claims")

event_claims = sa.Table(
    "event_claims",
    metadata,
    sa.Column("claim_key", sa.String(200), primary_key=True),
    sa.Column("owner", sa.String(64), nullable=False),
    sa.Column("lease_until", sa.Float, nullable=False),
    sa.Column("done_at", sa.Float),
    sa.Column("claimed_at", sa.Float, nullable=False),
)

OWNER = f"{os.uname().nodename[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
MAX_HOLD_SECONDS = 600.0  # a claim nobody finishes (a no-op event) stops being renewed after this
KEEP_SECONDS = 6 * 3600.0  # finished claims are kept this long (Slack retries within minutes)
_MEMORY_SIZE = 20_000

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gpubot-claims")
_lock = threading.Lock()
_pending: set[str] = set()  # keys being claimed right now by a thread of this process
_held: dict[str, float] = {}  # key -> when this process claimed it (renewed by the heartbeat)
_seen: OrderedDict[str, None] = OrderedDict()  # keys this process won (in the database or here), newest last
_taken: OrderedDict[str, None] = OrderedDict()  # keys this process won by taking over an earlier holder's claim
_heartbeat: threading.Thread | None = None
_owner_pid = os.getpid()


def lease_seconds() -> float:
    return config().gpubot_claim_lease_seconds


def claim_timeout() -> float:
    return config().gpubot_claim_timeout


def claim(key: str, *, retry_num: int = 0, hold: bool = True, if_unrecorded: bool = True) -> bool:
    """True if this process should handle `key` (and now holds it); False if it is handled or being handled.

    `hold=False` records it as handled at once (a signed request seen before is a replay: nothing to finish).
    `if_unrecorded`: the answer for a first delivery the database cannot record (locked, unreachable), decided on
    this process's memory alone; False refuses what other workers could not recognise again (replays)."""
    key = key[:200]
    _after_fork()
    with _lock:
        if key in _seen or key in _pending:
            return False  # this process has it already (whatever the database says, or cannot say)
        _pending.add(key)
    now = time.time()
    try:
        try:
            won = _bounded(_claim_in_db, key, lease_seconds(), hold)
        except Exception as exc:  # locked, unreachable, too slow: decide here, never make the ack wait
            if retry_num > 0 or not if_unrecorded:
                log.warning(
                    "state database unavailable (%s); %s of %s taken as handled",
                    _why(exc),
                    f"retry {retry_num}" if retry_num else "a delivery that cannot be recorded",
                    key,
                )
                won = False
            else:
                log.warning(
                    "state database unavailable (%s); handling %s on this process's record only", _why(exc), key
                )
                won = True
        with _lock:
            if won:
                _remember(key)
                if hold:
                    _held[key] = now
    finally:
        with _lock:
            _pending.discard(key)
    if won and hold:
        _start_heartbeat()
    return won


def event_key(body: dict) -> str:
    """What identifies one Slack event across its retries: its `event_id` (else team, channel and ts)."""
    event = body.get("event") or {}
    return str(body.get("event_id") or f"{body.get('team_id')}:{event.get('channel')}:{event.get('ts')}")


def finish(key: str) -> None:
    """`key` is handled for good: no retry and no other process handles it again. Best effort, bounded."""
    key = key[:200]
    with _lock:
        _held.pop(key, None)
    try:
        _bounded(_finish_in_db, key)
    except Exception as exc:  # locked, unreachable, too slow: the lease bounds the claim anyway
        log.warning("could not mark %s handled (%s); its lease runs out instead", key, _why(exc))


def release(key: str, *, maybe_done: bool = False) -> None:
    """`key` was not handled after all (its reply failed): Slack's next retry of it is handled, here or elsewhere.

    `maybe_done`: the work may have happened (a post that timed out), so the retry takes the claim over and is
    told so (`taken_over`), instead of starting afresh. Best effort, bounded: else the lease runs out."""
    key = key[:200]
    with _lock:
        _held.pop(key, None)
        _seen.pop(key, None)
        _taken.pop(key, None)
    try:
        _bounded(_release_in_db, key, maybe_done)
    except Exception as exc:  # locked, unreachable, too slow: the lease bounds the claim anyway
        log.warning("could not release %s (%s); its lease runs out instead", key, _why(exc))


def taken_over(key: str) -> bool:
    """Whether this process's claim of `key` took over one that another handler (dead, or unsure) had."""
    with _lock:
        return key[:200] in _taken


def bounded(function, *args):
    """`function(*args)`, given up after GPUBOT_CLAIM_TIMEOUT seconds (`concurrent.futures.TimeoutError`): state
    reads on the way to an ack (a channel's settings) never wait on a locked or unreachable database."""
    _after_fork()
    return _pool.submit(function, *args).result(timeout=claim_timeout())


_bounded = bounded


def _why(exc: BaseException) -> str:
    return "timed out" if isinstance(exc, FutureTimeout) else f"{type(exc).__name__}: {str(exc)[:200]}"


def db_now(conn: sa.Connection) -> sa.ColumnElement[float]:
    """The database's clock, in Unix seconds: the one clock every process's leases are written and compared on."""
    if conn.dialect.name == "postgresql":
        return sa.cast(sa.func.extract("epoch", sa.func.now()), sa.Float)
    return (sa.func.julianday("now") - 2440587.5) * 86400.0


def _claim_in_db(key: str, lease: float, hold: bool) -> bool:
    try:
        with engine().begin() as conn:
            now = db_now(conn)
            conn.execute(
                event_claims.insert().values(
                    claim_key=key, owner=OWNER, lease_until=now + lease, claimed_at=now, done_at=None if hold else now
                )
            )
        return True
    except IntegrityError:
        pass
    with engine().begin() as conn:
        now = db_now(conn)
        taken = conn.execute(  # a claim whose holder stopped renewing it (died) is taken over
            event_claims.update()
            .where(event_claims.c.claim_key == key, event_claims.c.done_at.is_(None), event_claims.c.lease_until < now)
            .values(owner=OWNER, lease_until=now + lease, claimed_at=now, done_at=None if hold else now)
        ).rowcount
    if taken:
        log.warning("took over %s: its first handler stopped renewing its claim (or was unsure it was done)", key)
        with _lock:
            _taken[key] = None
            while len(_taken) > _MEMORY_SIZE:
                _taken.popitem(last=False)
    return bool(taken)


def _finish_in_db(key: str) -> None:
    with engine().begin() as conn:
        now = db_now(conn)
        conn.execute(event_claims.update().where(event_claims.c.claim_key == key).values(done_at=now))
        if int(time.time()) % 97 == 0:  # occasional cleanup keeps the table small
            conn.execute(
                event_claims.delete().where(
                    sa.or_(event_claims.c.done_at < now - KEEP_SECONDS, event_claims.c.lease_until < now - KEEP_SECONDS)
                )
            )


def _release_in_db(key: str, maybe_done: bool) -> None:
    mine = sa.and_(event_claims.c.claim_key == key, event_claims.c.owner == OWNER, event_claims.c.done_at.is_(None))
    with engine().begin() as conn:
        if maybe_done:  # an expired lease: the next handler takes it over, and looks before it posts
            conn.execute(event_claims.update().where(mine).values(lease_until=0.0))
        else:  # never claimed as far as anyone is concerned: the next handler starts afresh
            conn.execute(event_claims.delete().where(mine))


def _renew(keys: list[str]) -> None:
    with engine().begin() as conn:
        conn.execute(
            event_claims.update()
            .where(event_claims.c.claim_key.in_(keys), event_claims.c.owner == OWNER, event_claims.c.done_at.is_(None))
            .values(lease_until=db_now(conn) + lease_seconds())
        )


def _beat() -> None:
    renewed, every = 0.0, 1.0
    while True:
        try:  # an environment made invalid after start keeps the last good interval (the thread must live)
            every = max(0.05, lease_seconds() / 3)  # renewed three times per lease
        except ConfigError as exc:
            log.debug("claim lease setting unreadable, keeping %.2f s (%s)", every, exc)
        time.sleep(min(every, 1.0))
        now = time.time()
        if now - renewed < every:
            continue
        with _lock:
            for key in [k for k, since in _held.items() if now - since > MAX_HOLD_SECONDS]:
                del _held[key]
            keys = list(_held)
        if keys:
            try:
                _renew(keys)
                renewed = now
            except Exception as exc:  # the heartbeat thread must live: the next tick tries again
                log.warning("could not renew %d claims (%s)", len(keys), _why(exc))


def _start_heartbeat() -> None:
    global _heartbeat
    with _lock:
        if _heartbeat is None or not _heartbeat.is_alive():
            _heartbeat = threading.Thread(target=_beat, name="gpubot-claims-heartbeat", daemon=True)
            _heartbeat.start()


def _remember(key: str) -> None:
    _seen[key] = None
    while len(_seen) > _MEMORY_SIZE:
        _seen.popitem(last=False)


def _after_fork() -> None:
    """A forked worker starts with its own pool, heartbeat and owner id (threads do not survive a fork)."""
    global _pool, _heartbeat, _owner_pid, OWNER
    if os.getpid() != _owner_pid:
        _owner_pid, _heartbeat = os.getpid(), None
        _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gpubot-claims")
        OWNER = f"{os.uname().nodename[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        _held.clear()


def forget_local() -> None:
    """Forget what this process handled (tests: a fresh process on another machine)."""
    with _lock:
        _seen.clear()
        _held.clear()
        _taken.clear()
