"""The values of the price history: snapshots, the changes between two of them, and a digest of every provider's.

Plain frozen dataclasses with their JSON shapes; `knowledge.history.snapshots` stores and reads them (and
re-exports them:
they are its interface).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass
from typing import NamedTuple

from knowledge.errors import GpubotError

BASELINE_SEQ = 0  # the bundled catalog, recorded before a provider's first refresh
PRICINGS = ("on_demand", "spot", "reserved_1y", "reserved_3y")


class HistoryError(GpubotError, RuntimeError):
    """Price history could not be read or written (the message says why)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One recorded snapshot of a provider's prices."""

    id: int
    provider: str
    seq: int
    source: str
    kind: str
    taken_at: dt.datetime
    content_hash: str
    offers: int

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "provider": self.provider,
            "seq": self.seq,
            "source": self.source,
            "kind": self.kind,
            "taken_at": self.taken_at.isoformat(),
            "offers": self.offers,
        }


class SnapshotOffer(NamedTuple):
    """One region-level offer of a recorded snapshot (a row of `snapshot_offers`); prices per instance-hour."""

    snapshot_id: int
    provider: str
    instance_type: str
    region: str
    pricing: str
    gpu: str
    accelerator: str
    gpu_memory_gb: float | None
    gpu_count: float
    zone: str | None
    price_per_hour_usd: float
    price_per_gpu_hour_usd: float
    price_per_hour: float
    currency: str
    vgpu: bool
    stock: str | None = None  # in_stock | low | out_of_stock, where a live source reported it (issue 28)


@dataclass(frozen=True, slots=True)
class SnapshotResult:
    """What `record_snapshot` did: `created` is False when the content equals the latest snapshot's."""

    snapshot: Snapshot
    created: bool


@dataclass(frozen=True, slots=True)
class Change:
    """One added, removed or re-priced offer. Prices are USD per instance-hour (None: no offer on that side)."""

    provider: str
    instance_type: str
    gpu: str
    region: str
    pricing: str
    old: float | None
    new: float | None
    change_pct: float | None
    gpu_count: float
    gpu_memory_gb: float | None
    currency: str
    old_native: float | None
    new_native: float | None
    old_stock: str | None = None  # a stock change: what a live source said before and now
    new_stock: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.provider, self.instance_type, self.region, self.pricing

    def as_json(self) -> dict:
        data = asdict(self)
        if data["change_pct"] is not None:
            data["change_pct"] = round(data["change_pct"], 4)
        return data


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Offers added, removed and re-priced between two snapshots of one provider."""

    added: tuple[Change, ...] = ()
    removed: tuple[Change, ...] = ()
    changed: tuple[Change, ...] = ()
    threshold_pct: float = 1.0
    small: tuple[Change, ...] = ()  # price moves smaller than the threshold, left out of `changed`
    stock: tuple[Change, ...] = ()  # offers whose stock changed (in stock, low, out of stock)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.stock)

    @property
    def below_threshold(self) -> int:
        return len(self.small)

    def filtered(self, keep) -> ChangeSet:
        """The same change set with only the changes for which `keep(change)` is true."""
        return ChangeSet(
            tuple(c for c in self.added if keep(c)),
            tuple(c for c in self.removed if keep(c)),
            tuple(c for c in self.changed if keep(c)),
            self.threshold_pct,
            tuple(c for c in self.small if keep(c)),
            tuple(c for c in self.stock if keep(c)),
        )


@dataclass(frozen=True, slots=True)
class ProviderDiff:
    """One provider's changes from `old` to `new` (old None: only one snapshot, nothing to compare)."""

    provider: str
    old: Snapshot | None
    new: Snapshot
    changes: ChangeSet


@dataclass(frozen=True, slots=True)
class Digest:
    """Changes for every provider with history, in provider order."""

    providers: tuple[ProviderDiff, ...] = ()
    threshold_pct: float = 1.0
    since: str | None = None
    gpus: tuple[str, ...] = ()

    @property
    def added(self) -> list[Change]:
        return [c for p in self.providers for c in p.changes.added]

    @property
    def removed(self) -> list[Change]:
        return [c for p in self.providers for c in p.changes.removed]

    @property
    def changed(self) -> list[Change]:
        return [c for p in self.providers for c in p.changes.changed]

    @property
    def stock(self) -> list[Change]:
        return [c for p in self.providers for c in p.changes.stock]

    def __bool__(self) -> bool:
        return any(p.changes for p in self.providers)

    def snapshot_ids(self) -> dict[str, int]:
        """provider -> id of the newest snapshot covered (where the next digest starts)."""
        return {p.provider: p.new.id for p in self.providers}

    def filtered(self, keep) -> Digest:
        return Digest(
            tuple(ProviderDiff(p.provider, p.old, p.new, p.changes.filtered(keep)) for p in self.providers),
            self.threshold_pct,
            self.since,
            self.gpus,
        )

    def to_json(self) -> dict:
        """The JSON of `gpubot digest --json`: changes, added and removed share one record shape."""
        return {
            "changes": [c.as_json() for c in self.changed],
            "added": [c.as_json() for c in self.added],
            "removed": [c.as_json() for c in self.removed],
            "stock": [c.as_json() for c in self.stock],
            "unit": "USD per instance-hour (old/new); old_native/new_native in the vendor's currency",
            "threshold_pct": self.threshold_pct,
            "since": self.since,
            "gpus": list(self.gpus),
            "snapshots": [
                {
                    "provider": p.provider,
                    "old": p.old.as_json() if p.old else None,
                    "new": p.new.as_json(),
                    "changes": len(p.changes.changed),
                    "added": len(p.changes.added),
                    "removed": len(p.changes.removed),
                    "below_threshold": p.changes.below_threshold,
                }
                for p in self.providers
            ],
        }
