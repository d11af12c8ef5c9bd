"""Digest subscriptions and the record of digest posts, in the state database (`knowledge.state.db`).

Tables:

- `digest_subscriptions`: one row per (team, channel): the local hour and timezone of the daily post, the GPU
  families of interest (empty: all), the change threshold in percent, whether to attach a chart, quiet mode
  (`quiet`: nothing to report -> no post; otherwise a one-line "no changes"), the language, and whether the
  subscription is active (a channel that refuses a post with `not_in_channel`/`channel_not_found`/`is_archived`
  is paused at once, with the reason, and `created_by` is told; subscribing again switches it back on).
- `digest_posts`: one row per (team, channel, period), the period being the subscription's local date, posted
  once under the claim -> post -> record protocol of `knowledge.state.post_once` (across restarts, retries, a crash
  mid-run and two clock processes on two machines; statuses `claimed`, `sent`, `skipped` for quiet with nothing
  to report, `failed`, `unverified`). A channel error is `failed` for good in that period.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.clock import utc_now
from knowledge.state import db as state
from knowledge.state import post_once
from knowledge.state.db import metadata
from knowledge.state.post_once import MAX_ATTEMPTS, Claim, Ledger

__all__ = [
    "MAX_ATTEMPTS",
    "Claim",
    "Subscription",
    "claim_post",
    "finish_post",
    "get_subscription",
    "last_delivered",
    "list_subscriptions",
    "pause",
    "period_for",
    "posts_for",
    "resolve_gpus",
    "subscribe",
    "subscriber",
    "unsubscribe",
]

DEFAULT_TEAM = "default"  # the CLI's team when none is given (single-workspace installs)
_CHANNEL = re.compile(r"^[A-Za-z0-9_#-]{1,80}$")

subscriptions = sa.Table(
    "digest_subscriptions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("team", sa.String(40), nullable=False),
    sa.Column("channel", sa.String(80), nullable=False),
    sa.Column("hour", sa.Integer, nullable=False, default=9),
    sa.Column("timezone", sa.String(64), nullable=False, default="UTC"),
    sa.Column("gpus", sa.Text, nullable=False, default=""),  # comma-separated family names; empty = all
    sa.Column("threshold_pct", sa.Float, nullable=False, default=1.0),
    sa.Column("charts", sa.Boolean, nullable=False, default=True),
    sa.Column("quiet", sa.Boolean, nullable=False, default=False),
    sa.Column("language", sa.String(8), nullable=False, default="en"),
    sa.Column("active", sa.Boolean, nullable=False, default=True),
    sa.Column("disabled_reason", sa.Text, nullable=True),
    sa.Column("created_by", sa.String(40), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("team", "channel", name="uq_digest_subscriptions_team_channel"),
)

posts = sa.Table(
    "digest_posts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("team", sa.String(40), nullable=False),
    sa.Column("channel", sa.String(80), nullable=False),
    sa.Column("period", sa.String(10), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("claim_token", sa.String(64), nullable=False),
    sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=1),
    sa.Column("retryable", sa.Boolean, nullable=False, default=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("message_ts", sa.String(40), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("snapshot_ids", sa.Text, nullable=True),  # JSON provider -> newest snapshot id the post covered
    sa.Column("changes", sa.Integer, nullable=True),
    sa.UniqueConstraint("team", "channel", "period", name="uq_digest_posts_team_channel_period"),
)


@dataclass(frozen=True, slots=True)
class Subscription:
    """A channel's daily digest settings."""

    team: str
    channel: str
    hour: int
    timezone: str
    gpus: tuple[str, ...]
    threshold_pct: float
    charts: bool
    quiet: bool
    language: str
    active: bool
    disabled_reason: str | None

    def as_json(self) -> dict:
        data = asdict(self)
        data["gpus"] = list(self.gpus)
        return data


def _subscription(row) -> Subscription:
    return Subscription(
        row.team,
        row.channel,
        row.hour,
        row.timezone,
        tuple(g for g in row.gpus.split(",") if g),
        row.threshold_pct,
        row.charts,
        row.quiet,
        row.language,
        row.active,
        row.disabled_reason,
    )


def resolve_gpus(names: Iterable[str]) -> tuple[str, ...]:
    """GPU family names as the knowledge base spells them ("h100" -> "H100"); ValueError names an unknown one."""
    from knowledge.facts.reference import gpu_families

    index: dict[str, str] = {}
    for family in gpu_families():
        for alias in (family.name, *family.aliases, *family.spec_models):
            index.setdefault(alias.lower(), family.name)
    resolved: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        found = index.get(name.lower()) or index.get(name.lower().replace("-", " "))
        if found is None:
            import difflib

            close = difflib.get_close_matches(name.lower(), list(index), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(index[c] for c in close)}?" if close else ""
            raise ValueError(f"unknown GPU family {name!r}{hint}")
        if found not in resolved:
            resolved.append(found)
    return tuple(resolved)


@cache
def _zones() -> frozenset[str]:
    """Every IANA zone name this machine knows (zoneinfo's own list)."""
    return frozenset(available_timezones())


def _validate(options: Mapping) -> dict:
    values = {k: v for k, v in options.items() if v is not None}
    if "hour" in values and not (isinstance(values["hour"], int) and 0 <= values["hour"] <= 23):
        raise ValueError(f"hour must be 0..23, not {values['hour']!r}")
    if "timezone" in values and values["timezone"] not in _zones():  # "America" is a folder, not a zone
        raise ValueError(f"unknown timezone {str(values['timezone'])[:60]!r} (e.g. UTC, Europe/Berlin)")
    if "gpus" in values:
        gpus = values["gpus"]
        values["gpus"] = ",".join(resolve_gpus(gpus.split(",") if isinstance(gpus, str) else gpus))
    if "threshold_pct" in values:
        values["threshold_pct"] = float(values["threshold_pct"])
        if not 0 <= values["threshold_pct"] < 1000:
            raise ValueError("threshold must be a percentage between 0 and 1000")
    if "language" in values and values["language"] not in ("en", "zh"):
        raise ValueError("language must be en or zh")
    for flag in ("charts", "quiet"):
        if flag in values:
            values[flag] = bool(values[flag])
    return values


def subscribe(
    team: str,
    channel: str,
    *,
    hour: int | None = None,
    timezone: str | None = None,
    gpus: Iterable[str] | str | None = None,
    threshold_pct: float | None = None,
    charts: bool | None = None,
    quiet: bool | None = None,
    language: str | None = None,
    created_by: str | None = None,
) -> Subscription:
    """Subscribe a channel (or update its subscription and switch it back on); options left None keep their
    current value (or the default: 09:00 UTC, all GPUs, 1%, charts on, one-line "no changes", English)."""
    team, channel = (team or DEFAULT_TEAM).strip(), channel.strip()
    if not _CHANNEL.match(channel):
        raise ValueError(f"{channel!r} is not a Slack channel id (e.g. C0123456789)")
    values = _validate(
        {
            "hour": hour,
            "timezone": timezone,
            "gpus": gpus,
            "threshold_pct": threshold_pct,
            "charts": charts,
            "quiet": quiet,
            "language": language,
        }
    )
    _upsert(team, channel, values, created_by)
    found = get_subscription(team, channel)
    assert found is not None
    return found


_DEFAULTS = {  # a new subscription's options not given
    "hour": 9,
    "timezone": "UTC",
    "gpus": "",
    "threshold_pct": 1.0,
    "charts": True,
    "quiet": False,
    "language": "en",
}


def _upsert(team: str, channel: str, values: dict, created_by: str | None) -> None:
    """Update the channel's subscription with `values` and switch it on, else insert it (the defaults for the rest);
    a concurrent insert of the same channel is retried as an update."""
    now = utc_now()
    eng = state.engine()
    update = {**values, "active": True, "disabled_reason": None, "updated_at": now}
    for _attempt in range(3):
        with eng.begin() as conn:
            done = conn.execute(
                subscriptions.update()
                .where(subscriptions.c.team == team, subscriptions.c.channel == channel)
                .values(**update)
            ).rowcount
        if done:
            return
        row = {
            **_DEFAULTS,
            **values,
            "team": team,
            "channel": channel,
            "active": True,
            "created_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        try:
            with eng.begin() as conn:
                conn.execute(subscriptions.insert().values(**row))
            return
        except IntegrityError:
            continue  # subscribed by someone else a moment ago: update that row instead


def unsubscribe(team: str, channel: str) -> bool:
    """Remove a channel's subscription; False when there was none. The record of past posts is kept."""
    with state.engine().begin() as conn:
        return bool(
            conn.execute(
                subscriptions.delete().where(
                    subscriptions.c.team == (team or DEFAULT_TEAM), subscriptions.c.channel == channel
                )
            ).rowcount
        )


def get_subscription(team: str, channel: str) -> Subscription | None:
    with state.engine().connect() as conn:
        row = conn.execute(
            sa.select(subscriptions).where(
                subscriptions.c.team == (team or DEFAULT_TEAM), subscriptions.c.channel == channel
            )
        ).first()
    return _subscription(row) if row else None


def list_subscriptions(team: str | None = None, *, active_only: bool = False) -> list[Subscription]:
    """Subscriptions (of one team, or all), by team and channel."""
    query = sa.select(subscriptions).order_by(subscriptions.c.team, subscriptions.c.channel)
    if team is not None:
        query = query.where(subscriptions.c.team == team)
    if active_only:
        query = query.where(subscriptions.c.active.is_(True))
    with state.engine().connect() as conn:
        return [_subscription(r) for r in conn.execute(query)]


def period_for(sub: Subscription, now: dt.datetime | None = None) -> tuple[str, bool]:
    """(period, due): the subscription's local date at `now`, and whether its hour has come that day."""
    local = utc_now(now).astimezone(ZoneInfo(sub.timezone))
    return local.date().isoformat(), local.hour >= sub.hour


# --- the claim protocol (`knowledge.state.post_once`) -----------------------------------------------------------------

_ledger = Ledger(posts)


def claim_post(
    team: str,
    channel: str,
    period: str,
    *,
    now: dt.datetime | None = None,
    stale_after: dt.timedelta = post_once.STALE_AFTER,
) -> Claim | str:
    """Claim (team, channel, period) for posting: a `Claim`, or the reason it is not ours
    (`sent`, `skipped`, `failed`, `unverified`, `in_progress`)."""
    return _ledger.claim({"team": team, "channel": channel, "period": period}, now=now, stale_after=stale_after)


def finish_post(
    claim: Claim,
    status: str,
    *,
    message_ts: str | None = None,
    error: str | None = None,
    retryable: bool = False,
    snapshot_ids: Mapping[str, int] | None = None,
    changes: int | None = None,
    now: dt.datetime | None = None,
) -> bool:
    """Record the outcome of a claim (`sent`, `skipped`, `failed`, or `unverified`: an earlier attempt may have
    posted and the channel cannot be checked); False if the claim was taken over."""
    ids = json.dumps(dict(snapshot_ids)) if snapshot_ids is not None else None
    return _ledger.record(
        claim,
        status,
        message_ts=message_ts,
        error=error,
        retryable=retryable,
        now=now,
        values={"changes": changes, "snapshot_ids": ids},
    )


def last_delivered(team: str, channel: str) -> dict[str, int] | None:
    """provider -> newest snapshot id covered by the channel's last digest (posted or quietly skipped)."""
    with state.engine().connect() as conn:
        row = conn.execute(
            sa.select(posts.c.snapshot_ids)
            .where(
                posts.c.team == team,
                posts.c.channel == channel,
                posts.c.status.in_(("sent", "skipped")),
                posts.c.snapshot_ids.is_not(None),
            )
            .order_by(posts.c.finished_at.desc(), posts.c.id.desc())
            .limit(1)
        ).first()
    return {k: int(v) for k, v in json.loads(row[0]).items()} if row else None


def posts_for(team: str | None = None, channel: str | None = None) -> list[dict]:
    """The post records (newest period first), for reports and tests."""
    query = sa.select(posts).order_by(posts.c.period.desc(), posts.c.team, posts.c.channel)
    if team is not None:
        query = query.where(posts.c.team == team)
    if channel is not None:
        query = query.where(posts.c.channel == channel)
    with state.engine().connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def pause(team: str, channel: str, reason: str) -> bool:
    """Switch a subscription off because its channel refuses posts (`reason`: the Slack error); True when it was
    active (the caller then tells its subscriber, once). Subscribing again switches it back on."""
    with state.engine().begin() as conn:
        done = conn.execute(
            subscriptions.update()
            .where(subscriptions.c.team == team, subscriptions.c.channel == channel, subscriptions.c.active.is_(True))
            .values(active=False, disabled_reason=reason, updated_at=utc_now())
        )
    return bool(done.rowcount)


def subscriber(team: str, channel: str) -> str | None:
    """The Slack user who subscribed the channel (None when subscribed from the CLI)."""
    with state.engine().connect() as conn:
        return conn.execute(
            sa.select(subscriptions.c.created_by).where(
                subscriptions.c.team == team, subscriptions.c.channel == channel
            )
        ).scalar()
