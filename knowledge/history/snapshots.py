"""Price history: every import or refresh of a provider's prices is a snapshot, kept forever in the state database.

Tables (on `knowledge.state.db.metadata`, so `gpubot db upgrade` creates them and a knowledge-base rebuild never
touches them):

- `snapshots`: one row per recorded snapshot: `provider`, `seq` (1, 2, 3 ... per provider; 0 is reserved for the
  bundled-catalog baseline), `source`, `kind` (`catalog`, `api`, `bundled`), `taken_at`, `recorded_at`,
  `content_hash` and the number of offers. `(provider, seq)` is unique: that key is what orders a provider's
  history and what makes two processes recording at the same moment store one snapshot, not two.
- `snapshot_offers`: the region-level offers of a snapshot, one per (instance type, region, pricing model), as
  `knowledge.catalog.offers.convert` computes them (a zone-priced catalog gives the region's lowest price over its
  zones),
  with the price per instance-hour in USD and in the vendor's currency, the GPU family, memory and count.

Recording is idempotent: the content hash covers the offers and their prices (not the source name or date), and a
snapshot whose content equals the provider's latest snapshot is not stored again, also when two processes do it
at once (the loser's insert hits the unique key, it looks again and finds the same content). Content that moves
back to an older state (A, B, A) is recorded: prices really moved back, and the digest says so.

Reading goes through `knowledge.history.reader` (the lookups here are its state-database reader, kept for the
edges); `changes(old, new)` and `diff_since` are `knowledge.history.diff`'s, over the same reader.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import math
import operator
from collections.abc import Iterable, Mapping
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from knowledge.clock import utc_now as _utc
from knowledge.history import diff as history_diff
from knowledge.history.models import (
    BASELINE_SEQ,
    PRICINGS,
    Change,
    ChangeSet,
    Digest,
    HistoryError,
    ProviderDiff,
    Snapshot,
    SnapshotResult,
)
from knowledge.history.reader import state_reader
from knowledge.state import db as state
from knowledge.state import limits
from knowledge.state.db import metadata

__all__ = [
    "BASELINE_SEQ",
    "Change",
    "ChangeSet",
    "Digest",
    "HistoryError",
    "ProviderDiff",
    "Snapshot",
    "SnapshotResult",
    "changes",
    "content_hash",
    "diff_since",
    "ensure_baselines",
    "latest_snapshot",
    "offers_from_catalog",
    "offers_of",
    "previous_snapshot",
    "providers",
    "record_snapshot",
    "snapshot",
    "snapshot_before",
    "snapshots_of",
]

_KEY_COLUMNS = ("instance_type", "region", "pricing")

snapshots = sa.Table(
    "snapshots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("provider", sa.String(40), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("content_hash", sa.String(64), nullable=False),
    sa.Column("offers", sa.Integer, nullable=False),
    sa.UniqueConstraint("provider", "seq", name="uq_snapshots_provider_seq"),
    sa.Index("ix_snapshots_provider_hash", "provider", "content_hash"),
)

snapshot_offers = sa.Table(
    "snapshot_offers",
    metadata,
    sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("snapshots.id", ondelete="CASCADE"), nullable=False),
    sa.Column("provider", sa.String(40), nullable=False),
    sa.Column("instance_type", sa.String(200), nullable=False),
    sa.Column("region", sa.String(80), nullable=False),
    sa.Column("pricing", sa.String(20), nullable=False),
    sa.Column("gpu", sa.String(80), nullable=False),
    sa.Column("accelerator", sa.String(120), nullable=False),
    sa.Column("gpu_memory_gb", sa.Float, nullable=True),
    sa.Column("gpu_count", sa.Float, nullable=False),
    sa.Column("zone", sa.String(80), nullable=True),
    sa.Column("price_per_hour_usd", sa.Float, nullable=False),
    sa.Column("price_per_gpu_hour_usd", sa.Float, nullable=False),
    sa.Column("price_per_hour", sa.Float, nullable=False),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("vgpu", sa.Boolean, nullable=False, default=False),
    sa.Column("stock", sa.String(16), nullable=True),  # migration 0006
    sa.UniqueConstraint("snapshot_id", "instance_type", "region", "pricing", name="uq_snapshot_offers_key"),
    sa.Index("ix_snapshot_offers_gpu", "provider", "gpu", "pricing"),
)


# --- recording -------------------------------------------------------------------------------------------------


def _number(value: object, what: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise HistoryError(f"{what} is not a number: {value!r}") from None
    if not math.isfinite(number) or number <= 0:
        raise HistoryError(f"{what} must be a positive price, not {value!r}")
    return number


def _offer_rows(provider: str, offers: Iterable[Mapping]) -> list[dict]:
    """Validated snapshot rows, one per (instance type, region, pricing): the cheapest where a source repeats one."""
    best: dict[tuple, dict] = {}
    for offer in offers:
        pricing = offer.get("pricing")
        if pricing not in PRICINGS:
            raise HistoryError(f"unknown pricing model {pricing!r} in an offer for {offer.get('instance_type')!r}")
        usd = offer.get("price_per_hour_usd")
        if usd.__class__ is not float or not 0 < usd < math.inf:  # else what `_number` would return: itself
            usd = _number(usd, f"{_what(offer, pricing)}: price_per_hour_usd")
        native = offer.get("price_per_hour", usd)
        if native.__class__ is not float or not 0 < native < math.inf:
            native = _number(native, f"{_what(offer, pricing)}: price_per_hour")
        gpu_count = float(offer.get("gpu_count") or 0)
        row = {
            "provider": provider,
            "instance_type": str(offer["instance_type"]),
            "region": str(offer["region"]),
            "pricing": pricing,
            "gpu": str(offer.get("gpu") or offer.get("accelerator") or ""),
            "accelerator": str(offer.get("accelerator") or offer.get("gpu") or ""),
            "gpu_memory_gb": offer.get("gpu_memory_gb"),
            "gpu_count": gpu_count,
            "zone": offer.get("zone") or None,
            "price_per_hour_usd": usd,
            "price_per_gpu_hour_usd": float(
                offer.get("price_per_gpu_hour_usd") or (usd / gpu_count if gpu_count else usd)
            ),
            "price_per_hour": native,
            "currency": str(offer.get("currency") or "USD"),
            "vgpu": bool(offer.get("vgpu")),
            "stock": offer.get("stock") or None,
        }
        if not row["instance_type"] or not row["region"]:
            raise HistoryError(f"an offer without instance type or region: {_what(offer, pricing)}")
        key = _key(row)
        if key not in best or best[key]["price_per_hour_usd"] > usd:
            best[key] = row
    return sorted(best.values(), key=_key)


_key = operator.itemgetter(*_KEY_COLUMNS)


def _what(offer: Mapping, pricing: object) -> str:
    """An offer in an error message: "<instance type> <region> <pricing>"."""
    return f"{offer.get('instance_type')} {offer.get('region')} {pricing}"


def content_hash(rows: Iterable[Mapping]) -> str:
    """SHA-256 over the offers' keys, GPUs and prices (rounded to 1e-9), independent of order and source name."""
    lines = sorted(
        "\t".join(
            [
                r["instance_type"],
                r["region"],
                r["pricing"],
                r["gpu"],
                f"{r['gpu_count']:.6g}",
                f"{r['price_per_hour_usd']:.9f}",
                f"{r['price_per_hour']:.9f}",
                r["currency"],
                *([r["stock"]] if r.get("stock") else []),  # stock only where reported: older hashes unchanged
            ]
        )
        for r in rows
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _snapshot(row) -> Snapshot:
    return Snapshot(
        row.id, row.provider, row.seq, row.source, row.kind, _utc(row.taken_at), row.content_hash, row.offers
    )


def record_snapshot(
    provider: str,
    offers: Iterable[Mapping],
    source: str,
    taken_at: dt.datetime | None = None,
    *,
    kind: str = "catalog",
    seq: int | None = None,
    conn: sa.Connection | None = None,
) -> SnapshotResult:
    """Store one snapshot of `provider`'s offers in one transaction; unchanged content stores nothing.

    Raises `HistoryError` for an invalid offer (nothing is stored). `seq` is for the bundled baseline only.
    `conn`: record inside the caller's open transaction (an import and its snapshot are one unit), in one attempt:
    a concurrent writer's `IntegrityError` reaches the caller, who retries its whole transaction.
    """
    provider = provider.strip().lower()
    rows = _offer_rows(provider, offers)
    if not rows:
        raise HistoryError(f"no offers to record for {provider}")
    new = Snapshot(
        0, provider, -1 if seq is None else seq, source[:2000], kind, _utc(taken_at), content_hash(rows), len(rows)
    )
    if conn is not None:
        return _store(conn, rows, new, _latest_on(conn, provider))
    eng = state.engine()
    for _attempt in range(20):
        latest = latest_snapshot(provider)
        try:
            with eng.begin() as own:
                return _store(own, rows, new, latest)
        except IntegrityError:
            if seq is not None:  # the baseline slot is taken: someone else recorded it
                found = _by_seq(provider, seq)
                if found is None:
                    raise
                return SnapshotResult(found, created=False)
            newer = latest_snapshot(provider)
            if newer is None or (latest is not None and newer.seq == latest.seq):
                raise  # not a race with another writer: a real integrity problem
            continue  # another process recorded a snapshot first: compare with it
    raise HistoryError(f"could not record a snapshot for {provider}: too many concurrent writers")


def _store(conn: sa.Connection, rows: list[dict], new: Snapshot, latest: Snapshot | None) -> SnapshotResult:
    """Insert `new` on `conn` (its id filled in; seq -1: the one after `latest`, none if the content is the same)."""
    if new.seq < 0 and latest is not None and latest.content_hash == new.content_hash:
        return SnapshotResult(latest, created=False)
    if new.seq < 0:
        new = dataclasses.replace(new, seq=latest.seq + 1 if latest else 1)
    values = {k: getattr(new, k) for k in ("provider", "seq", "source", "kind", "taken_at", "content_hash", "offers")}
    key = conn.execute(snapshots.insert().values(**values, recorded_at=_utc(None))).inserted_primary_key
    assert key is not None  # an INSERT always has one
    new = dataclasses.replace(new, id=key[0])
    _insert_offers(conn, new.id, rows)
    return SnapshotResult(new, created=True)


_OFFER_COLUMNS = tuple(c.name for c in snapshot_offers.columns if c.name != "snapshot_id")
_PLACEHOLDER = {"qmark": "?", "format": "%s", "pyformat": "%s"}  # sqlite3; psycopg


def _insert_offers(conn: sa.Connection, snapshot_id: int, rows: list[dict]) -> None:
    """The snapshot's offer rows, through the driver's own `executemany` on `conn` (the caller's transaction).

    A Core `insert()` of 100,000 rows spent 2 of its 2.5 s building and processing per-row parameters; the rows are
    already validated Python values (str, float, bool, None) that both drivers bind as the Core types would (a bool
    is an integer in SQLite, a boolean in PostgreSQL). The state's length limits are checked first, over the
    parameters' columns, as the guard checks every Core INSERT (`knowledge.state.limits`: the same
    `ValueTooLongError`)."""
    values = operator.itemgetter(*_OFFER_COLUMNS)
    params = [(snapshot_id, *values(row)) for row in rows]
    names = ("snapshot_id", *_OFFER_COLUMNS)
    limits.check_columns(snapshot_offers, names, params)
    mark = _PLACEHOLDER[conn.dialect.paramstyle]
    quote = conn.dialect.identifier_preparer.quote
    columns, marks = ", ".join(quote(n) for n in names), ", ".join([mark] * len(names))
    sql = f"INSERT INTO {quote(snapshot_offers.name)} ({columns}) VALUES ({marks})"
    conn.exec_driver_sql(sql, params)


# --- lookups ---------------------------------------------------------------------------------------------------


def _select():
    return sa.select(snapshots)


def _by_seq(provider: str, seq: int) -> Snapshot | None:
    with state.engine().connect() as conn:
        row = conn.execute(_select().where(snapshots.c.provider == provider, snapshots.c.seq == seq)).first()
    return _snapshot(row) if row else None


def snapshot(snapshot_id: int) -> Snapshot | None:
    """The snapshot with this id."""
    return state_reader().snapshot(snapshot_id)


def providers() -> list[str]:
    """Providers with at least one snapshot, sorted."""
    return state_reader().providers()


def snapshots_of(provider: str, since: dt.datetime | None = None) -> list[Snapshot]:
    """A provider's snapshots, oldest first (optionally only those taken at or after `since`)."""
    return state_reader().snapshots_of(provider, since)


def latest_snapshot(provider: str) -> Snapshot | None:
    """The provider's newest snapshot (highest seq)."""
    return state_reader().latest_snapshot(provider)


def _latest_on(conn: sa.Connection, provider: str) -> Snapshot | None:
    row = conn.execute(
        _select().where(snapshots.c.provider == provider).order_by(snapshots.c.seq.desc()).limit(1)
    ).first()
    return _snapshot(row) if row else None


def previous_snapshot(current: Snapshot) -> Snapshot | None:
    """The snapshot recorded just before `current` for the same provider."""
    return history_diff.previous_snapshot(state_reader(), current)


def snapshot_before(provider: str, when: dt.datetime) -> Snapshot | None:
    """The state of `provider`'s prices at `when`: its newest snapshot taken before that moment."""
    return history_diff.snapshot_before(state_reader(), provider, when)


def offers_of(snap: Snapshot | int) -> dict[tuple[str, str, str], dict]:
    """A snapshot's offers keyed by (instance type, region, pricing)."""
    return history_diff.offers_of(state_reader(), snap)


# --- changes (`knowledge.history.diff`, over the state database) -----------------------------------------------


def changes(old: Snapshot | None, new: Snapshot, threshold_pct: float = 1.0) -> ChangeSet:
    """Offers added, removed and re-priced by at least `threshold_pct` percent (USD) from `old` to `new`."""
    return history_diff.changes(state_reader(), old, new, threshold_pct)


def diff_since(
    *,
    since: dt.date | dt.datetime | None = None,
    start_ids: Mapping[str, int] | None = None,
    threshold_pct: float = 1.0,
    provider_names: Iterable[str] | None = None,
) -> Digest:
    """Each provider's changes up to its latest snapshot (`knowledge.history.diff.diff_since`)."""
    return history_diff.diff_since(
        state_reader(),
        since=since,
        start_ids=start_ids,
        threshold_pct=threshold_pct,
        provider_names=provider_names,
    )


# --- catalogs and the bundled baseline -------------------------------------------------------------------------


def offers_from_catalog(
    provider: str,
    path: str | Path,
    *,
    hosts_path: str | Path | None = None,
    currency: str = "USD",
    usd_per_unit: float = 1.0,
    source: str,
    as_of: str,
) -> list[dict]:
    """Region-level offers of one catalog file, through the same importer and `convert` as the knowledge base.

    Host-VM rows come from the catalog itself when it has them (a full SkyPilot GCP file), else from `hosts_path`.
    Raises `knowledge.catalog.reader.CatalogError` for a malformed file.
    """
    from knowledge.catalog.offers import convert
    from knowledge.catalog.reader import (  # here: recording and reading need no importer
        CatalogError,
        CatalogRow,
        read_catalog,
    )
    from knowledge.catalog.sources import CatalogSource

    catalog = read_catalog(path)
    if not catalog.rows:
        raise CatalogError(path, "no accelerator rows (only host-VM rows)")
    hosts: tuple[CatalogRow, ...] = ()
    if hosts_path and not catalog.hosts:
        hosts = read_catalog(hosts_path).hosts
    src = CatalogSource(
        provider, Path(path), Path(hosts_path) if hosts_path else None, currency, usd_per_unit, as_of, source
    )
    result = convert(provider, catalog, hosts=hosts, currency=src.currency_info(), source=source, as_of=as_of)
    if not result.offers:
        raise CatalogError(path, "no priced offers in this file (every price empty or skipped)")
    return result.offers


def ensure_baselines(provider_names: Iterable[str] | None = None) -> list[SnapshotResult]:
    """Record each bundled catalog as its provider's baseline (seq 0) where history cannot yet show a change.

    A provider with no snapshot gets its bundled catalog as the starting point; a provider whose only snapshot
    came from a refresh gets the bundled catalog recorded *before* it, so the first digest after a fresh install
    and one refresh shows what that refresh changed. Providers with two or more snapshots are left alone, and so
    is a single snapshot equal to the bundled catalog. Safe to call from many processes at once.
    """
    from knowledge.catalog.sources import bundled_catalogs

    wanted = {p.lower() for p in provider_names} if provider_names else None
    results = []
    for src in bundled_catalogs():
        if wanted is not None and src.provider not in wanted:
            continue
        existing = snapshots_of(src.provider)
        if len(existing) >= 2 or any(s.seq == BASELINE_SEQ for s in existing):
            continue
        offers = offers_from_catalog(
            src.provider,
            src.path,
            hosts_path=src.hosts_path,
            currency=src.currency,
            usd_per_unit=src.usd_per_unit,
            source=src.source,
            as_of=src.as_of,
        )
        rows = _offer_rows(src.provider, offers)
        if existing and existing[0].content_hash == content_hash(rows):
            continue
        taken = dt.datetime.now(dt.UTC)
        if existing:
            taken = min(taken, existing[0].taken_at - dt.timedelta(seconds=1))
        results.append(
            record_snapshot(src.provider, rows, f"bundled: {src.source}", taken, kind="bundled", seq=BASELINE_SEQ)
        )
    return results
