"""Price history as series: for each provider and pricing model, one point per recorded snapshot.

A point is the lowest price per GPU-hour over the snapshot's offers of one GPU (a bare family such as `A100`
covers every variant the knowledge base files under that family, `A100` and `A100-80GB`; `A100 80GB` only that
variant), the median over the same offers, how many offers there were, and which offer was cheapest. Offers are
the snapshot's region-level offers (`knowledge.history.snapshots`): a zone-priced catalog gives the region's
lowest price
over its zones, and a fractional or vGPU offer is already scaled to a whole GPU. GPU-only figures (a GCP GPU whose
host-VM price is unknown) are not what anyone pays and are left out (counted in `excluded_gpu_only`).

Prices are USD per GPU-hour; where a provider quotes another currency (Alibaba, Tencent: CNY) the native figures
are there too. Reading only: the recorded snapshots come through a `knowledge.history.reader.HistoryReader`
(`reader=`; the state database's by default), and nothing here records a snapshot.

    series("A100", provider="aws", pricing="spot")  ->  [Point(seq=1, ...), Point(seq=2, ...)]
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import sqlite3
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from knowledge.errors import UserError
from knowledge.history import bundled as hb
from knowledge.history.models import PRICINGS, HistoryError, Snapshot
from knowledge.history.reader import HistoryReader, state_reader
from knowledge.kb.reader import GpuRef

__all__ = [
    "Point",
    "UnknownGpu",
    "history_families",
    "mark_source_changes",
    "resolve_gpu",
    "segments",
    "series",
    "to_json",
]

PRICING_ORDER = {p: n for n, p in enumerate(PRICINGS)}
GPU_ONLY = "GPU only"  # marker in the instance type of a GPU-only figure (knowledge.catalog.offers.convert)


class UnknownGpu(UserError, HistoryError):
    """No GPU of that name in the price history or the knowledge base's reviewed names."""

    def __init__(self, name: str, suggestions: list[str]):
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"no price history for a GPU called {name!r}{hint}")
        self.name = name
        self.suggestions = suggestions


@dataclass(frozen=True, slots=True)
class Point:
    """One GPU's prices in one snapshot of one provider, under one pricing model (USD per GPU-hour)."""

    provider: str
    gpu: str  # what was asked, as resolved: "A100" (every variant) or "A100 80GB" (one)
    pricing: str
    snapshot_id: int | None  # None: a bundled-history point (no recorded snapshot)
    seq: int | None
    taken_at: dt.datetime
    source: str
    min_price_per_gpu_hour: float
    median_price_per_gpu_hour: float
    offers: int
    cheapest_instance_type: str
    cheapest_region: str
    currency: str = "USD"  # the vendor's currency; the *_native figures are in it (None when USD)
    min_price_native: float | None = None
    median_price_native: float | None = None
    accelerators: tuple[str, ...] = ()  # catalog names covered, e.g. ("A100", "A100-80GB")
    region_minima: tuple[tuple[str, float], ...] = ()  # (region, lowest USD per GPU-hour there), cheapest first
    excluded_gpu_only: int = 0
    series: str = "snapshots"  # where the point comes from: recorded snapshots, or bundled history ("gcp_weekly")
    source_changed: bool = False  # the previous point of the same series came from another source

    @property
    def key(self) -> tuple[str, str, str]:
        """The series this point belongs to: (gpu, provider, pricing)."""
        return self.gpu, self.provider, self.pricing

    def as_json(self) -> dict:
        data = {
            "provider": self.provider,
            "gpu": self.gpu,
            "pricing": self.pricing,
            "taken_at": self.taken_at.isoformat(),
            "source": self.source,
            "min_price_per_gpu_hour": round(self.min_price_per_gpu_hour, 9),
            "median_price_per_gpu_hour": round(self.median_price_per_gpu_hour, 9),
            "offers": self.offers,
            "cheapest": {"instance_type": self.cheapest_instance_type, "region": self.cheapest_region},
            "currency": "USD",
            "snapshot": {"id": self.snapshot_id, "seq": self.seq},
            "accelerators": list(self.accelerators),
        }
        if self.currency != "USD":
            data["native"] = {
                "currency": self.currency,
                "min_price_per_gpu_hour": self.min_price_native,
                "median_price_per_gpu_hour": self.median_price_native,
            }
        if self.excluded_gpu_only:
            data["excluded_gpu_only"] = self.excluded_gpu_only
        data["series"] = self.series
        data["source_changed"] = self.source_changed
        return data


def segments(points: Iterable[Point]) -> list[dict]:
    """Runs of points of one series (gpu, provider, pricing) from one source: a new run where the source changes."""
    out: list[dict] = []
    last: dict[tuple, dict] = {}
    for p in points:
        run = last.get(p.key)
        if run is None or p.source_changed:
            run = {
                "gpu": p.gpu,
                "provider": p.provider,
                "pricing": p.pricing,
                "series": p.series,
                "from": p.taken_at.isoformat(),
                "to": p.taken_at.isoformat(),
                "points": 0,
                "source": p.source,
            }
            out.append(run)
            last[p.key] = run
        run["to"], run["points"] = p.taken_at.isoformat(), run["points"] + 1
        run["source"] = p.source  # the newest point's source
    return out


def mark_source_changes(points: Iterable[Point]) -> list[Point]:
    """Points sorted by series and time, each flagged `source_changed` where its series' source differs from the
    previous point's (bundled weekly history, then recorded snapshots): never spliced silently."""
    ordered = sorted(
        points,
        key=lambda p: (
            p.provider,
            PRICING_ORDER.get(p.pricing, 9),
            p.gpu,
            p.taken_at,
            p.seq if p.seq is not None else -1,
        ),
    )
    out: list[Point] = []
    previous: dict[tuple, Point] = {}
    for p in ordered:
        before = previous.get(p.key)
        if before is not None and before.series != p.series:
            p = replace(p, source_changed=True)
        previous[p.key] = p
        out.append(p)
    return out


def to_json(points: Iterable[Point]) -> dict:
    """The JSON of `gpubot history --json`."""
    points = list(points)
    return {
        "history": [p.as_json() for p in points],
        "segments": segments(points),
        "unit": "USD per GPU-hour; native: the vendor's currency where it is not USD",
    }


# --- names -------------------------------------------------------------------------------------------------------


def _latest_ids(reader: HistoryReader, providers: Iterable[str] | None = None) -> list[int]:
    names = list(providers) if providers else reader.providers()
    return [s.id for s in (reader.latest_snapshot(p) for p in names) if s is not None]


def _variants(
    reader: HistoryReader, providers: Iterable[str] | None = None
) -> list[tuple[str, str, float | None, str]]:
    """(family, accelerator, memory, provider) of every GPU in the providers' latest snapshots."""
    return reader.variants(_latest_ids(reader, providers))


def history_families(providers: Iterable[str] | None = None, *, reader: HistoryReader | None = None) -> list[str]:
    """GPU families in the providers' latest snapshots (all providers by default): the most widely offered first."""
    where: dict[str, set[str]] = defaultdict(set)
    for family, _, _, provider in _variants(reader or state_reader(), providers):
        where[family].add(provider)
    return sorted(where, key=lambda f: (-len(where[f]), f.lower()))


def _reviewed_aliases() -> dict[str, str]:
    """Every name a GPU family goes by in the reviewed data (lower-cased) -> family (no knowledge-base build)."""
    from knowledge.facts.reference import gpu_families

    index: dict[str, str] = {}
    for family in gpu_families():
        for alias in (family.name, *family.aliases, *family.spec_models):
            index.setdefault(alias.lower(), family.name)
    return index


def resolve_gpu(
    name: str | GpuRef, providers: Iterable[str] | None = None, kb=None, *, reader: HistoryReader | None = None
) -> GpuRef:
    """The GPU as the price history spells it: "a100" -> A100; "A100-80GB" -> A100 80GB; "h100 sxm" -> H100.

    The ladder: a family in the history (case-insensitive), a catalog accelerator name (which fixes the memory
    variant when it has one), an alias from the reviewed GPU data or the knowledge base (`kb.gpu_names`).
    Raises `UnknownGpu` with close matches otherwise; it never guesses.
    """
    ref = name if isinstance(name, GpuRef) else GpuRef.parse(str(name))
    reader = reader or state_reader()
    variants = _variants(reader, providers) or _variants(reader)
    families = {family.lower(): family for family, _, _, _ in variants}
    key = ref.family.strip().lower()
    if key in families:
        return GpuRef(families[key], ref.memory_gb)
    by_accelerator: dict[str, set[tuple[str, float | None]]] = defaultdict(set)
    for family, accelerator, memory, _ in variants:
        by_accelerator[accelerator.lower()].add((family, memory))
    found = by_accelerator.get(key)
    if found and len({f for f, _ in found}) == 1:
        family = next(iter(found))[0]
        memories = {m for _, m in found if m}
        memory = ref.memory_gb or (next(iter(memories)) if len(memories) == 1 else None)
        return GpuRef(family, memory)
    aliases = _reviewed_aliases()
    if kb is not None:
        for alias, family in kb.gpu_names.items():
            aliases.setdefault(alias, family)
    named = aliases.get(key) or aliases.get(key.replace("-", " "))
    if named is not None:
        return GpuRef(families.get(named.lower(), named), ref.memory_gb)
    pool = sorted({*families.values(), *aliases.values()})
    close = difflib.get_close_matches(key, [p.lower() for p in pool], n=3, cutoff=0.6)
    spelled = {p.lower(): p for p in pool}
    raise UnknownGpu(str(name), [spelled[c] for c in close])


# --- series ------------------------------------------------------------------------------------------------------


def _names(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    items = [value] if isinstance(value, str) else list(value)
    return [v.strip().lower() for v in items if v and v.strip()]


def _since(value: dt.date | dt.datetime | str | None) -> dt.datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = dt.date.fromisoformat(value) if len(value) == 10 else dt.datetime.fromisoformat(value)
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)


def _matches(ref: GpuRef, row) -> bool:
    return ref.memory_gb is None or (row.gpu_memory_gb is not None and abs(row.gpu_memory_gb - ref.memory_gb) < 0.6)


def _point(ref: GpuRef, snap: Snapshot, pricing: str, rows: list, excluded: int) -> Point:
    rows = sorted(rows, key=lambda r: (r.price_per_gpu_hour_usd, r.instance_type, r.region))
    cheapest = rows[0]
    prices = [r.price_per_gpu_hour_usd for r in rows]
    regions: dict[str, float] = {}
    for r in rows:
        regions.setdefault(r.region, r.price_per_gpu_hour_usd)  # rows are cheapest first
    currencies = {r.currency for r in rows}
    currency = currencies.pop() if len(currencies) == 1 else "USD"
    native_min = native_median = None
    if currency != "USD":
        natives = [r.price_per_gpu_hour_usd * r.price_per_hour / r.price_per_hour_usd for r in rows]
        native_min, native_median = natives[0], statistics.median(natives)
    return Point(
        provider=snap.provider,
        gpu=str(ref),
        pricing=pricing,
        snapshot_id=snap.id,
        seq=snap.seq,
        taken_at=snap.taken_at,
        source=snap.source,
        min_price_per_gpu_hour=cheapest.price_per_gpu_hour_usd,
        median_price_per_gpu_hour=statistics.median(prices),
        offers=len(rows),
        cheapest_instance_type=cheapest.instance_type,
        cheapest_region=cheapest.region,
        currency=currency,
        min_price_native=native_min,
        median_price_native=native_median,
        accelerators=tuple(sorted({r.accelerator for r in rows})),
        region_minima=tuple(regions.items()),
        excluded_gpu_only=excluded,
    )


def series(
    gpu: str | GpuRef,
    provider: str | Iterable[str] | None = None,
    region: str | Iterable[str] | None = None,
    pricing: str | Iterable[str] | None = None,
    since: dt.date | dt.datetime | str | None = None,
    *,
    kb=None,
    reader: HistoryReader | None = None,
    bundled: bool = True,
) -> list[Point]:
    """Points for `gpu`, ordered by provider, pricing model and snapshot (oldest first).

    `provider`, `region` and `pricing` take one name or several (None: all); `since` keeps the snapshots taken
    on or after that day (a date) or moment (a datetime). An empty list means no matching offer in any snapshot.
    Raises `UnknownGpu` for a name neither the history nor the reviewed GPU data knows. With `bundled`, the
    bundled weekly GCP history (`knowledge.history.bundled`, read from `kb` or the knowledge base) comes first in
    the `gcp` series; where its source gives way to recorded snapshots, the point says `source_changed`.
    `reader`: where the recorded snapshots are read (default: the state database).
    """
    reader = reader or state_reader()
    asked = _names(provider)
    providers = asked or reader.providers()
    ref = resolve_gpu(gpu, providers, kb=kb, reader=reader)
    regions, pricings = _names(region), _names(pricing)
    unknown = [p for p in pricings if p not in PRICING_ORDER]
    if unknown:
        raise ValueError(f"unknown pricing model {unknown[0]!r}: one of {', '.join(PRICINGS)}")
    start = _since(since)
    points: list[Point] = []
    for name in sorted(providers):
        snaps = {s.id: s for s in reader.snapshots_of(name, since=start)}
        if not snaps:
            continue
        groups: dict[tuple[int, str], list] = defaultdict(list)
        excluded: dict[tuple[int, str], int] = defaultdict(int)
        for row in reader.offers(list(snaps), gpu=ref.family, pricings=pricings, regions=regions):
            if not _matches(ref, row):
                continue
            key = (row.snapshot_id, row.pricing)
            if GPU_ONLY in row.instance_type:
                excluded[key] += 1
            else:
                groups[key].append(row)
        for (snapshot_id, price_model), rows in groups.items():
            points.append(_point(ref, snaps[snapshot_id], price_model, rows, excluded[(snapshot_id, price_model)]))
    if bundled and (not asked or "gcp" in asked):
        if kb is None:
            from knowledge.kb.opener import open_kb  # a caller without a knowledge base at hand (edges pass theirs)

            with contextlib.closing(open_kb()) as own:
                points += _bundled_points(own, ref, regions=regions, pricings=pricings, since=start)
        else:
            points += _bundled_points(kb.current(), ref, regions=regions, pricings=pricings, since=start)
    return mark_source_changes(points)


def _bundled_points(
    kb, ref, *, regions: Iterable[str] = (), pricings: Iterable[str] = (), since: dt.datetime | None = None
) -> list:
    """One `Point` per (pricing model, snapshot) of the bundled GCP history for `ref`.

    `ref` is a `GpuRef` (a family covers its variants; a memory variant only that one). An empty list when the
    knowledge base has no bundled history (an old build) or no offer matches.
    """
    conn = kb.conn
    try:
        snaps = conn.execute(
            "SELECT idx, taken_at, commit_id, source FROM history_snapshots WHERE provider = ? ORDER BY idx",
            (hb.PROVIDER,),
        ).fetchall()
    except sqlite3.OperationalError:  # a knowledge base built before bundled history existed
        return []
    regions, pricings = [r.lower() for r in regions], list(pricings)
    sql = (
        "SELECT pricing, instance_type, region, accelerator, gpu_memory_gb, price_per_gpu_hour_usd, "
        "price_per_hour_usd, first_idx, last_idx FROM history_intervals WHERE provider = ? AND gpu = ?"
    )
    params: list = [hb.PROVIDER, ref.family]
    if pricings:
        sql += f" AND pricing IN ({','.join('?' * len(pricings))})"
        params += pricings
    if regions:
        sql += f" AND lower(region) IN ({','.join('?' * len(regions))})"
        params += regions
    when = [dt.datetime.fromisoformat(s[1]).astimezone(dt.UTC) for s in snaps]
    start = 0
    if since is not None:
        start = next((n for n, t in enumerate(when) if t >= since), len(when))
        sql += " AND last_idx >= ?"
        params.append(start)
    buckets: dict[tuple[str, int], list[hb.Offer]] = defaultdict(list)
    for pricing, itype, region, accel, memory, per_gpu, per_hour, first, last in conn.execute(sql, params):
        if ref.memory_gb is not None and (memory is None or abs(memory - ref.memory_gb) >= 0.6):
            continue
        offer = hb.Offer(itype, region, accel, memory, per_gpu, per_hour, per_hour)
        for idx in range(max(first, start), last + 1):
            buckets[(pricing, idx)].append(offer)
    out = []
    for (pricing, idx), offers in buckets.items():
        snap = Snapshot(None, hb.PROVIDER, None, snaps[idx][3], hb.SERIES, when[idx], "", len(offers))  # type: ignore[arg-type]
        out.append(replace(_point(ref, snap, pricing, offers, 0), series=hb.SERIES))
    return out
