"""An in-memory `knowledge.history.reader.HistoryReader` (plain lists, no database), and a small hand-made history
of AWS A100 spot prices to feed it and the real state database alike."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from knowledge.history.models import Snapshot, SnapshotOffer

OLD = dt.datetime(2026, 11, 2, 6, tzinfo=dt.UTC)
NEW = dt.datetime(2026, 12, 1, 6, tzinfo=dt.UTC)


def offer(instance_type: str, region: str, per_hour: float, gpus: int = 8, pricing: str = "spot") -> dict:
    """A region-level A100 offer as `knowledge.history.snapshots.record_snapshot` takes it."""
    return {
        "instance_type": instance_type,
        "region": region,
        "pricing": pricing,
        "gpu": "A100",
        "accelerator": "A100",
        "gpu_memory_gb": 40.0,
        "gpu_count": float(gpus),
        "price_per_hour_usd": per_hour,
        "price_per_gpu_hour_usd": per_hour / gpus,
        "price_per_hour": per_hour,
        "currency": "USD",
    }


# AWS A100 spot: us-east-1 $16.00 -> $12.00 per instance-hour (8 GPUs: $2.00 -> $1.50 per GPU-hour, -25 %),
# us-west-2 $17.60 in both, and one offer withdrawn (eu-west-1) in the newer snapshot.
SNAPSHOTS = [
    (
        "aws",
        "old catalog",
        OLD,
        [
            offer("p4d.24xlarge", "us-east-1", 16.0),
            offer("p4d.24xlarge", "us-west-2", 17.6),
            offer("p4d.24xlarge", "eu-west-1", 19.2),
        ],
    ),
    ("aws", "new catalog", NEW, [offer("p4d.24xlarge", "us-east-1", 12.0), offer("p4d.24xlarge", "us-west-2", 17.6)]),
]


class MemoryReader:
    """The recorded history as plain lists: `snapshots` in recording order, each with its offers."""

    def __init__(self, snapshots: Sequence[tuple[str, str, dt.datetime, list[dict]]] = SNAPSHOTS):
        self._snapshots: list[Snapshot] = []
        self._offers: list[SnapshotOffer] = []
        self.calls: list[str] = []
        for n, (provider, source, taken_at, offers) in enumerate(snapshots, start=1):
            seq = 1 + sum(s.provider == provider for s in self._snapshots)
            self._snapshots.append(Snapshot(n, provider, seq, source, "catalog", taken_at, f"hash{n}", len(offers)))
            for o in offers:
                self._offers.append(SnapshotOffer(snapshot_id=n, provider=provider, zone=None, vgpu=False, **o))

    def providers(self) -> list[str]:
        self.calls.append("providers")
        return sorted({s.provider for s in self._snapshots})

    def snapshots_of(self, provider: str, since: dt.datetime | None = None) -> list[Snapshot]:
        self.calls.append("snapshots_of")
        found = [s for s in self._snapshots if s.provider == provider and (since is None or s.taken_at >= since)]
        return sorted(found, key=lambda s: s.seq)

    def latest_snapshot(self, provider: str) -> Snapshot | None:
        found = self.snapshots_of(provider)
        return found[-1] if found else None

    def snapshot(self, snapshot_id: int) -> Snapshot | None:
        return next((s for s in self._snapshots if s.id == snapshot_id), None)

    def offers(
        self,
        snapshot_ids: Sequence[int],
        *,
        gpu: str | None = None,
        pricings: Sequence[str] = (),
        regions: Sequence[str] = (),
    ) -> list[SnapshotOffer]:
        self.calls.append("offers")
        return [
            o
            for o in self._offers
            if o.snapshot_id in snapshot_ids
            and (gpu is None or o.gpu == gpu)
            and (not pricings or o.pricing in pricings)
            and (not regions or o.region.lower() in regions)
        ]

    def variants(self, snapshot_ids: Sequence[int]) -> list[tuple[str, str, float | None, str]]:
        return sorted(
            {(o.gpu, o.accelerator, o.gpu_memory_gb, o.provider) for o in self._offers if o.snapshot_id in snapshot_ids}
        )
