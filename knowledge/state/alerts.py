"""Price alerts: a channel's parsed query plus a threshold, and the record of every firing (state database).

An alert watches the cheapest matching orderable offer in the knowledge base (GPU, count, pricing model,
providers, regions; vGPU slices only when the alert allows them; GPU-only figures never) in USD per GPU-hour.

Stock alerts (`AlertSpec.stock == "in_stock"`, "/gpu alert H100 on runpod in stock"): the cheapest matching offer a
live source reports `in_stock` or `low` is due when the alert is armed; the alert re-arms once every matching offer
with stock data is out of stock again, so it posts once each time stock returns (same ledger, same generations).

Crossing rules (`evaluate`):
- *armed* and the price is at or below the threshold: the alert is due, and fires once;
- after firing it is disarmed until the price has gone back above the threshold by `HYSTERESIS` (5 %), which
  re-arms it for the next crossing (a new `generation`);
- an alert created while the price is already at or below its threshold starts disarmed: it waits for the next
  crossing. A price that only rises never fires.

Tables (on `knowledge.state.db.metadata`; migration `0003_alerts`):
- `price_alerts`: one row per alert: team, channel, the text asked, the parsed query (`spec`, JSON), the threshold
  in USD (and as asked: amount and currency), `armed`, `generation`, the last price seen and when.
- `price_alert_firings`: one row per (alert, generation), posted once under the digest's claim -> post -> record
  protocol (`knowledge.state.post_once`): once across clocks and workers on one database, never twice after a crash
  between post and record, `unverified` (not posted again) when the channel cannot be checked.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

import sqlalchemy as sa

from knowledge.clock import utc_now
from knowledge.errors import UserError
from knowledge.state import db as state
from knowledge.state import post_once
from knowledge.state.db import metadata
from knowledge.state.post_once import MAX_ATTEMPTS, Claim, Ledger

__all__ = [
    "HYSTERESIS",
    "MAX_ATTEMPTS",
    "Alert",
    "AlertError",
    "AlertSpec",
    "Claim",
    "Due",
    "best_offer",
    "claim_firing",
    "create_alert",
    "disarm",
    "evaluate",
    "finish_firing",
    "firings_of",
    "list_alerts",
    "remove_alert",
    "remove_team",
]

HYSTERESIS = 0.05  # re-armed only once the price is back above threshold * (1 + 5 %)
PRICINGS = ("on_demand", "spot", "reserved_1y", "reserved_3y")
_CHANNEL = re.compile(r"^[A-Za-z0-9_#-]{1,80}$")

alerts = sa.Table(
    "price_alerts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("team", sa.String(40), nullable=False),
    sa.Column("channel", sa.String(80), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("spec", sa.Text, nullable=False),  # JSON AlertSpec
    sa.Column("threshold_usd", sa.Float, nullable=False),
    sa.Column("threshold_amount", sa.Float, nullable=False),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("language", sa.String(8), nullable=False),
    sa.Column("armed", sa.Boolean, nullable=False),
    sa.Column("generation", sa.Integer, nullable=False),
    sa.Column("last_price", sa.Float, nullable=True),
    sa.Column("last_offer", sa.Text, nullable=True),
    sa.Column("last_checked_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("created_by", sa.String(40), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_price_alerts_team_channel", "team", "channel"),
)

firings = sa.Table(
    "price_alert_firings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("alert_id", sa.Integer, nullable=False),
    sa.Column("generation", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # claimed | sent | failed | unverified
    sa.Column("claim_token", sa.String(64), nullable=False),
    sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("retryable", sa.Boolean, nullable=False),
    sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("message_ts", sa.String(40), nullable=True),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("price", sa.Float, nullable=False),
    sa.Column("previous_price", sa.Float, nullable=True),
    sa.Column("previous_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("offer", sa.Text, nullable=False),
    sa.UniqueConstraint("alert_id", "generation", name="uq_price_alert_firings_alert_generation"),
)


class AlertError(UserError, ValueError):
    """An alert that cannot be created or changed (the message says why, for the user)."""


@dataclass(frozen=True, slots=True)
class AlertSpec:
    """What an alert watches: the parsed query's GPU, count, pricing model, providers, regions, vGPU or not."""

    gpus: tuple[str, ...]
    pricing: str = "on_demand"
    gpu_count: float | None = None
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    allow_vgpu: bool = False
    stock: str | None = None  # "in_stock": fires when a matching offer is in stock again (no price threshold)

    def as_json(self) -> dict:
        return {
            **asdict(self),
            "gpus": list(self.gpus),
            "providers": list(self.providers),
            "regions": list(self.regions),
        }

    @classmethod
    def from_json(cls, data: dict) -> AlertSpec:
        return cls(
            tuple(data["gpus"]),
            data.get("pricing") or "on_demand",
            data.get("gpu_count"),
            tuple(data.get("providers") or ()),
            tuple(data.get("regions") or ()),
            bool(data.get("allow_vgpu")),
            data.get("stock") or None,
        )


@dataclass(frozen=True, slots=True)
class Alert:
    id: int
    team: str
    channel: str
    text: str
    spec: AlertSpec
    threshold_usd: float
    threshold_amount: float
    currency: str
    language: str
    armed: bool
    generation: int
    last_price: float | None
    last_offer: dict | None
    last_checked_at: dt.datetime | None
    created_at: dt.datetime

    @property
    def rearm_above(self) -> float:
        return self.threshold_usd * (1 + HYSTERESIS)

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "team": self.team,
            "channel": self.channel,
            "text": self.text,
            "query": self.spec.as_json(),
            "threshold_usd_per_gpu_hour": self.threshold_usd,
            "threshold": {"amount": self.threshold_amount, "currency": self.currency},
            "language": self.language,
            "armed": self.armed,
            "generation": self.generation,
            "last_price_per_gpu_hour": self.last_price,
            "last_offer": self.last_offer,
            "last_checked_at": self.last_checked_at.isoformat() if self.last_checked_at else None,
            "created_at": self.created_at.isoformat(),
            "rearm_above": round(self.rearm_above, 9),
        }


@dataclass(frozen=True, slots=True)
class Due:
    """An armed alert whose price is now at or below its threshold: to be posted once."""

    alert: Alert
    offer: dict
    price: float
    previous_price: float | None
    previous_at: dt.datetime | None


def _alert(row) -> Alert:
    return Alert(
        row.id,
        row.team,
        row.channel,
        row.text,
        AlertSpec.from_json(json.loads(row.spec)),
        row.threshold_usd,
        row.threshold_amount,
        row.currency,
        row.language,
        bool(row.armed),
        row.generation,
        row.last_price,
        json.loads(row.last_offer) if row.last_offer else None,
        utc_now(row.last_checked_at) if row.last_checked_at else None,
        utc_now(row.created_at),
    )


_OFFER_KEYS = (
    "provider",
    "instance_type",
    "region",
    "zone",
    "pricing",
    "gpu",
    "accelerator",
    "gpu_count",
    "price_per_hour",
    "price_per_gpu_hour",
    "currency",
    "price_per_hour_usd",
    "price_per_gpu_hour_usd",
    "source",
    "as_of",
    "as_of_known",
    "vgpu",
    "fetched_at",
    "stock",
    "stock_read_at",
)
AVAILABLE = ("in_stock", "low")


def best_offer(kb, spec: AlertSpec) -> dict | None:
    """The cheapest orderable offer matching `spec` (USD per GPU-hour), or None when nothing matches."""
    from knowledge.kb.reader import GpuRef

    rows = kb.offers(
        gpus=[GpuRef.parse(g) for g in spec.gpus],
        pricing=spec.pricing,
        providers=spec.providers,
        regions=spec.regions,
        gpu_count=spec.gpu_count,
    )
    for row in rows:
        if "GPU only" in row["instance_type"] or (row.get("vgpu") and not spec.allow_vgpu):
            continue
        if spec.stock and row.get("stock") not in AVAILABLE:
            continue  # a stock alert watches the cheapest offer a source says can be had now
        return {k: row.get(k) for k in _OFFER_KEYS}
    return None


def stock_known(kb, spec: AlertSpec) -> bool:
    """Whether any offer matching a stock alert carries stock data (else "not in stock" is unknown, not out)."""
    return any(
        row.get("stock")
        for row in kb.offers(
            gpus=[_ref(g) for g in spec.gpus],
            pricing=spec.pricing,
            providers=spec.providers,
            regions=spec.regions,
            gpu_count=spec.gpu_count,
        )
    )


def _ref(name: str):
    from knowledge.kb.reader import GpuRef

    return GpuRef.parse(name)


# --- alerts ------------------------------------------------------------------------------------------------------


def create_alert(
    team: str,
    channel: str,
    text: str,
    spec: AlertSpec,
    *,
    threshold_usd: float,
    amount: float | None = None,
    currency: str = "USD",
    language: str = "en",
    kb,
    created_by: str | None = None,
    now: dt.datetime | None = None,
) -> tuple[Alert, dict]:
    """Store an alert and look at the price at once: (alert, cheapest offer now).

    An alert created at or below its threshold starts disarmed (`alert.armed` False): it waits for the next
    crossing. Raises `AlertError` when nothing matches (there would be no price to watch).
    """
    channel = (channel or "").strip()
    if not _CHANNEL.match(channel):
        raise AlertError(f"{channel!r} is not a Slack channel id (e.g. C0123456789)")
    if not spec.gpus:
        raise AlertError("an alert needs a GPU, e.g. `H100 spot below 2.50`")
    if spec.pricing not in PRICINGS:
        raise AlertError(f"unknown pricing model {spec.pricing!r}")
    if not threshold_usd > 0 and not spec.stock:
        raise AlertError("the threshold must be a positive price per GPU-hour")
    offer, in_stock = _watched(kb, spec)
    if offer is None:
        raise AlertError("no offer matches this alert, so there is no price to watch")
    now = utc_now(now)
    price = offer["price_per_gpu_hour_usd"]
    row = dict(
        team=team or "default",
        channel=channel,
        text=text[:2000],
        spec=json.dumps(spec.as_json()),
        threshold_usd=threshold_usd,
        threshold_amount=amount if amount is not None else threshold_usd,
        currency=currency,
        language=language,
        armed=not in_stock if spec.stock else price > threshold_usd,
        generation=1,
        last_price=price,
        last_offer=json.dumps(offer),
        last_checked_at=now,
        created_by=created_by,
        created_at=now,
    )
    with state.engine().begin() as conn:
        inserted = conn.execute(alerts.insert().values(**row)).inserted_primary_key
    assert inserted is not None
    found = get_alert(inserted[0])
    assert found is not None
    return found, offer


def _watched(kb, spec: AlertSpec) -> tuple[dict | None, bool]:
    """(the offer an alert watches now, whether it is in stock); a stock alert with no stock data is refused."""
    offer = best_offer(kb, spec)
    if not spec.stock or offer is not None:
        return offer, True
    if not stock_known(kb, spec):
        raise AlertError("no source reports stock for the offers this alert matches, so there is no stock to watch")
    return best_offer(kb, replace(spec, stock=None)), False  # the price, while out of stock


def get_alert(alert_id: int) -> Alert | None:
    with state.engine().connect() as conn:
        row = conn.execute(sa.select(alerts).where(alerts.c.id == alert_id)).first()
    return _alert(row) if row else None


def list_alerts(team: str | None = None, channel: str | None = None) -> list[Alert]:
    """Alerts (of one team, one channel, or all), oldest first."""
    query = sa.select(alerts).order_by(alerts.c.id)
    if team is not None:
        query = query.where(alerts.c.team == team)
    if channel is not None:
        query = query.where(alerts.c.channel == channel)
    with state.engine().connect() as conn:
        return [_alert(r) for r in conn.execute(query)]


def remove_alert(team: str, alert_id: int, channel: str | None = None) -> bool:
    """Delete an alert of `team` (and of `channel` when given) with its firings; False when there is none."""
    where = [alerts.c.id == alert_id, alerts.c.team == team]
    if channel is not None:
        where.append(alerts.c.channel == channel)
    with state.engine().begin() as conn:
        done = conn.execute(alerts.delete().where(*where)).rowcount
        if done:
            conn.execute(firings.delete().where(firings.c.alert_id == alert_id))
    return bool(done)


def remove_team(team: str) -> int:
    """Delete every alert of a workspace (the app was uninstalled) and their firings; how many alerts."""
    with state.engine().begin() as conn:
        ids = [r[0] for r in conn.execute(sa.select(alerts.c.id).where(alerts.c.team == team))]
        if ids:
            conn.execute(firings.delete().where(firings.c.alert_id.in_(ids)))
            conn.execute(alerts.delete().where(alerts.c.id.in_(ids)))
    return len(ids)


# --- crossings ---------------------------------------------------------------------------------------------------


def evaluate(
    kb, now: dt.datetime | None = None, *, record: bool = True, alert_ids: Iterable[int] | None = None
) -> list[Due]:
    """Every alert against the knowledge base's prices now: the due ones (armed, at or below the threshold).

    With `record`, disarmed alerts whose price is back above the threshold by 5 % are re-armed (compare-and-swap:
    once across workers) and each alert's last price is updated. Without it nothing is written (a dry run).
    """
    now = utc_now(now)
    wanted = set(alert_ids) if alert_ids is not None else None
    due: list[Due] = []
    for alert in list_alerts():
        if wanted is not None and alert.id not in wanted:
            continue
        offer = best_offer(kb, alert.spec)
        if alert.spec.stock:  # in stock: due when armed; known out of stock again: re-armed
            fired, rearm = offer is not None, offer is None and stock_known(kb, alert.spec)
        else:
            fired = offer is not None and offer["price_per_gpu_hour_usd"] <= alert.threshold_usd
            rearm = offer is not None and offer["price_per_gpu_hour_usd"] > alert.rearm_above
        if offer is None:
            if record and rearm and not alert.armed:
                _rearm(alert)
            continue  # nothing orderable (or in stock) matches now
        price = offer["price_per_gpu_hour_usd"]
        if alert.armed and fired:
            due.append(Due(alert, offer, price, alert.last_price, alert.last_checked_at))
        elif record and not alert.armed and rearm:
            _rearm(alert)
        if record:
            with state.engine().begin() as conn:
                conn.execute(
                    alerts.update()
                    .where(alerts.c.id == alert.id)
                    .values(last_price=price, last_offer=json.dumps(offer), last_checked_at=now)
                )
    return due


def _rearm(alert: Alert) -> None:
    with state.engine().begin() as conn:
        conn.execute(
            alerts.update()
            .where(alerts.c.id == alert.id, alerts.c.generation == alert.generation, alerts.c.armed.is_(False))
            .values(armed=True, generation=alert.generation + 1)
        )


def disarm(alert_id: int, generation: int) -> bool:
    """The alert fired for `generation`: wait for the price to rise above the threshold by 5 % again."""
    with state.engine().begin() as conn:
        return bool(
            conn.execute(
                alerts.update().where(alerts.c.id == alert_id, alerts.c.generation == generation).values(armed=False)
            ).rowcount
        )


_ledger = Ledger(firings)


def claim_firing(
    due: Due, *, now: dt.datetime | None = None, stale_after: dt.timedelta = post_once.STALE_AFTER
) -> Claim | str:
    """Claim the right to post `due` (its alert's current generation): a `Claim`, or why not
    (`sent`, `unverified`, `failed`, `in_progress`)."""
    latest = {"price": due.price, "offer": json.dumps(due.offer)}  # a take-over keeps the first previous price
    return _ledger.claim(
        {"alert_id": due.alert.id, "generation": due.alert.generation},
        now=now,
        stale_after=stale_after,
        values={**latest, "previous_price": due.previous_price, "previous_at": due.previous_at},
        retake=latest,
    )


def finish_firing(
    claim: Claim,
    status: str,
    *,
    message_ts: str | None = None,
    error: str | None = None,
    retryable: bool = False,
    now: dt.datetime | None = None,
) -> bool:
    """Record how a claimed firing ended (`sent`, `failed`, or `unverified`: an earlier attempt may have posted and
    the channel cannot be checked); False if the claim was taken over meanwhile."""
    if status not in ("sent", "failed", "unverified"):
        raise ValueError(f"unknown firing status {status!r}")
    return _ledger.record(claim, status, message_ts=message_ts, error=error, retryable=retryable, now=now)


def firings_of(alert_id: int | None = None) -> list[dict]:
    """The firing records (oldest first), for reports and tests."""
    query = sa.select(firings).order_by(firings.c.id)
    if alert_id is not None:
        query = query.where(firings.c.alert_id == alert_id)
    with state.engine().connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]
