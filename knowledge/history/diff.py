"""What changed between snapshots, read through any `HistoryReader` (pure over what the reader returns).

`changes(reader, old, new)` compares two snapshots at the granularity of the digest: offers added, offers removed,
and price changes of at least `threshold_pct` per (provider, instance type, region, pricing model). An offer gaining
or losing a spot price is an added or removed spot offer, never a price change. `diff_since(reader, ...)` does that
for every provider, from where a channel's last digest ended, from a date, or from the previous snapshot.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace

from knowledge.clock import utc_now
from knowledge.history.models import Change, ChangeSet, Digest, HistoryError, ProviderDiff, Snapshot
from knowledge.history.reader import HistoryReader

__all__ = ["changes", "diff_since", "offers_of", "previous_snapshot", "snapshot_before"]


def offers_of(reader: HistoryReader, snap: Snapshot | int) -> dict[tuple[str, str, str], dict]:
    """A snapshot's offers keyed by (instance type, region, pricing)."""
    snapshot_id = snap.id if isinstance(snap, Snapshot) else snap
    return {(o.instance_type, o.region, o.pricing): o._asdict() for o in reader.offers([snapshot_id])}


def previous_snapshot(reader: HistoryReader, current: Snapshot) -> Snapshot | None:
    """The snapshot recorded just before `current` for the same provider."""
    earlier = [s for s in reader.snapshots_of(current.provider) if s.seq < current.seq]
    return earlier[-1] if earlier else None


def snapshot_before(reader: HistoryReader, provider: str, when: dt.datetime) -> Snapshot | None:
    """The state of `provider`'s prices at `when`: its newest snapshot taken before that moment."""
    when = utc_now(when)
    earlier = [s for s in reader.snapshots_of(provider) if s.taken_at < when]
    return earlier[-1] if earlier else None


def _change(provider: str, old: dict | None, new: dict | None) -> Change:
    ref = new or old
    assert ref is not None
    old_usd = old["price_per_hour_usd"] if old else None
    new_usd = new["price_per_hour_usd"] if new else None
    pct = (new_usd - old_usd) / old_usd * 100 if old_usd and new_usd else None
    return Change(
        provider=provider,
        instance_type=ref["instance_type"],
        gpu=ref["gpu"],
        region=ref["region"],
        pricing=ref["pricing"],
        old=old_usd,
        new=new_usd,
        change_pct=pct,
        gpu_count=ref["gpu_count"],
        gpu_memory_gb=ref["gpu_memory_gb"],
        currency=ref["currency"],
        old_native=old["price_per_hour"] if old else None,
        new_native=new["price_per_hour"] if new else None,
    )


def changes(reader: HistoryReader, old: Snapshot | None, new: Snapshot, threshold_pct: float = 1.0) -> ChangeSet:
    """Offers added, removed and re-priced by at least `threshold_pct` percent (USD) from `old` to `new`."""
    if old is not None and old.provider != new.provider:
        raise HistoryError(f"cannot compare a {old.provider} snapshot with a {new.provider} snapshot")
    before = offers_of(reader, old) if old is not None else {}
    after = offers_of(reader, new)
    added = [_change(new.provider, None, after[k]) for k in sorted(after.keys() - before.keys())]
    removed = [_change(new.provider, before[k], None) for k in sorted(before.keys() - after.keys())]
    changed: list[Change] = []
    small: list[Change] = []
    for key in sorted(before.keys() & after.keys()):
        a, b = before[key]["price_per_hour_usd"], after[key]["price_per_hour_usd"]
        if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            continue
        change = _change(new.provider, before[key], after[key])
        (changed if abs(change.change_pct or 0.0) + 1e-9 >= threshold_pct else small).append(change)
    stock = [
        replace(_change(new.provider, before[k], after[k]), old_stock=before[k]["stock"], new_stock=after[k]["stock"])
        for k in sorted(before.keys() & after.keys())
        if before[k].get("stock") and after[k].get("stock") and before[k]["stock"] != after[k]["stock"]
    ]
    return ChangeSet(tuple(added), tuple(removed), tuple(changed), threshold_pct, tuple(small), tuple(stock))


def _day_start(value: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return utc_now(value)
    return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)


def diff_since(
    reader: HistoryReader,
    *,
    since: dt.date | dt.datetime | None = None,
    start_ids: Mapping[str, int] | None = None,
    threshold_pct: float = 1.0,
    provider_names: Iterable[str] | None = None,
) -> Digest:
    """Each provider's changes up to its latest snapshot.

    The starting point, per provider: the snapshot in `start_ids` (where a channel's last digest ended), else the
    state at `since` (the newest snapshot taken before that day began, or the provider's first one when all are
    newer), else the previous snapshot.
    """
    start_ids = dict(start_ids or {})
    wanted = [p.lower() for p in provider_names] if provider_names else reader.providers()
    diffs = []
    for provider in wanted:
        new = reader.latest_snapshot(provider)
        if new is None:
            continue
        old: Snapshot | None
        if provider in start_ids:
            old = reader.snapshot(start_ids[provider])
        elif since is not None:
            first = reader.snapshots_of(provider)[:1]
            old = snapshot_before(reader, provider, _day_start(since)) or (first[0] if first else None)
        else:
            old = previous_snapshot(reader, new)
        if old is None or old.id == new.id:
            diffs.append(ProviderDiff(provider, old, new, ChangeSet(threshold_pct=threshold_pct)))
        else:
            diffs.append(ProviderDiff(provider, old, new, changes(reader, old, new, threshold_pct)))
    label = since.isoformat() if since is not None else None
    return Digest(tuple(diffs), threshold_pct, label)
