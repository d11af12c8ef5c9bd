"""Posting once: the claim -> post -> record protocol shared by the daily digest (`digest_posts`,
`knowledge.state.subscriptions`) and price alerts (`price_alert_firings`, `knowledge.state.alerts`).

Each thing to post has one row under a unique key ((team, channel, period) for a digest, (alert, generation) for
an alert). A sender *claims* the row (INSERT; the loser of a race gets an IntegrityError) before posting and
*records* the outcome after, on its claim token. A claim older than `stale_after` (a sender that died) may be
taken over, and so may a `failed` row whose error was transient, up to `MAX_ATTEMPTS`; every take-over is a
compare-and-swap UPDATE on the previous claim token, so exactly one sender wins it, on SQLite and PostgreSQL,
across workers, machines and clocks.

A sender that took a row over (`Claim.attempts` > 1) first looks in the channel for the earlier attempt's post
(`is_our_post`: the post's message metadata), so a crash between post and record never posts twice; when the
channel cannot be read it records `unverified` instead of posting blindly a second time.

Statuses: `claimed` (a sender is working on it), `sent` (posted; `message_ts` set), `skipped` (nothing to post),
`failed` (`retryable`: whether a later run may try again), `unverified` (an earlier attempt may have posted and the
channel could not be checked: not posted again, reported).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.clock import utc_now
from knowledge.state import db as state

__all__ = ["DONE", "FINAL", "MAX_ATTEMPTS", "STALE_AFTER", "Claim", "Ledger", "is_our_post"]

MAX_ATTEMPTS = 3  # transient failures per row before giving up
STALE_AFTER = dt.timedelta(minutes=30)  # a claim this old belongs to a sender that died
DONE = ("sent", "skipped", "unverified")  # never posted again
FINAL = ("sent", "skipped", "failed", "unverified")  # what a sender may record


@dataclass(frozen=True, slots=True)
class Claim:
    """The right to post one row's message (held by whoever holds `token`); `attempts` counts take-overs."""

    id: int
    token: str
    attempts: int


class Ledger:
    """One table of posts under the protocol: `id`, the key columns, `status`, `claim_token`, `claimed_at`,
    `attempts`, `retryable`, `finished_at`, `message_ts`, `error`, and whatever else the caller stores."""

    def __init__(self, table: sa.Table) -> None:
        self.table = table

    def claim(
        self,
        key: Mapping[str, Any],
        *,
        now: dt.datetime | None = None,
        stale_after: dt.timedelta = STALE_AFTER,
        values: Mapping[str, Any] | None = None,
        retake: Mapping[str, Any] | None = None,
    ) -> Claim | str:
        """Claim the row of `key` (created with `values`; a take-over sets `retake`): a `Claim`, or why it is not
        ours (`sent`, `skipped`, `unverified`, `failed`, `in_progress`)."""
        now = utc_now(now)
        token = uuid.uuid4().hex
        t = self.table
        eng = state.engine()
        fresh = {"status": "claimed", "claim_token": token, "claimed_at": now}
        try:
            with eng.begin() as conn:
                inserted = conn.execute(
                    t.insert().values(**key, **(values or {}), **fresh, attempts=1, retryable=False)
                ).inserted_primary_key
            assert inserted is not None
            return Claim(inserted[0], token, 1)
        except IntegrityError:
            pass
        with eng.connect() as conn:
            row = conn.execute(sa.select(t).where(*(t.c[k] == v for k, v in key.items()))).first()
        if row is None:  # deleted in between: very unlikely; let the next run try
            return "in_progress"
        if row.status in DONE:
            return str(row.status)
        if row.status == "failed" and not (row.retryable and row.attempts < MAX_ATTEMPTS):
            return "failed"
        if row.status == "claimed" and utc_now(row.claimed_at) > now - stale_after:
            return "in_progress"
        # a transient failure or a sender that died: take it over, if nobody else does first
        with eng.begin() as conn:
            won = conn.execute(
                t.update()
                .where(t.c.id == row.id, t.c.claim_token == row.claim_token, t.c.status == row.status)
                .values(**(retake or {}), **fresh, attempts=row.attempts + 1, error=None)
            ).rowcount
        return Claim(row.id, token, row.attempts + 1) if won else "in_progress"

    def record(
        self,
        claim: Claim,
        status: str,
        *,
        message_ts: str | None = None,
        error: str | None = None,
        retryable: bool = False,
        now: dt.datetime | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> bool:
        """Record how a claim ended (one of `FINAL`); False if the claim was taken over meanwhile."""
        if status not in FINAL:
            raise ValueError(f"unknown post status {status!r}")
        t = self.table
        with state.engine().begin() as conn:
            return bool(
                conn.execute(
                    t.update()
                    .where(t.c.id == claim.id, t.c.claim_token == claim.token)
                    .values(
                        status=status,
                        message_ts=message_ts,
                        error=error,
                        retryable=retryable,
                        finished_at=utc_now(now),
                        **(values or {}),
                    )
                ).rowcount
            )


def is_our_post(message: Mapping[str, Any], event_type: str, payload: Mapping[str, Any]) -> bool:
    """Whether a channel message is the post whose metadata is `event_type` with (at least) `payload`."""
    meta = message.get("metadata") or {}
    found = meta.get("event_payload") or {}
    return meta.get("event_type") == event_type and all(found.get(k) == v for k, v in payload.items())
