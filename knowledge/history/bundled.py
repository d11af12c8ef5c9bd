"""Bundled price history: GCP's weekly billing-catalog prices, 2022-02 to 2026-07, as points of the `gcp` series.

The data is `knowledge/data/history/gcp_weekly/` (Cyclenerd's `pricing.yml`, Apache-2.0; provenance, attribution
and caveats in its README.md): change points only, one row per (machine type, region) whenever a price changed.
At knowledge-base build time (`write`) the change points are replayed into price intervals, one per (machine type,
region, pricing model) and run of snapshots with the same price, in two tables of the knowledge base:

- `history_snapshots`: every snapshot the file knows (`idx` 0, 1, ... by date), its commit, date and source;
- `history_intervals`: an offer's price from snapshot `first_idx` to `last_idx` (inclusive), per GPU-hour too.

A query (in `knowledge.history.series`) reads one GPU's intervals and expands them into one point per snapshot: the
lowest and median price per GPU-hour over the offers alive in that snapshot, exactly as recorded snapshots are
summarised. Rules:

- prices are Cyclenerd's whole-VM figures (GPUs, vCPUs, RAM and, for a2-ultragpu and a3, the attached local SSD);
  committed-use prices are per month and become hourly at / 730;
- a change smaller than 0.01 % (the README's float noise: 88.49 stored as 88.4899999025753) is not a change;
- N1 host rows carry no GPU (the attached GPUs were never published as SKUs) and are left out;
- a snapshot where nothing changed is not in the file: the file knows 159 of the 290 weekly versions, and a price
  holds until the next known snapshot (between them nothing moved);
- a region missing from the source is missing here (not sold there, or a SKU Cyclenerd could not find);
- an entry listed by one version and removed by the next (a3-megagpu-8g in 31 regions on 2024-08-17, priced
  without its GPUs) is not an offer and is left out.
"""

from __future__ import annotations

import csv
import datetime as dt
import sqlite3
from pathlib import Path
from typing import NamedTuple

from knowledge.paths import DATA_DIR

__all__ = ["ATTRIBUTION", "CHANGES_FILE", "SERIES", "TABLES", "replay", "write"]

HISTORY_DIR = DATA_DIR / "history"
CHANGES_FILE = HISTORY_DIR / "gcp_weekly" / "gcp_gpu_price_changes.csv"
GPU_NAMES_FILE = HISTORY_DIR / "gcp_weekly_gpus.csv"
PROVIDER = "gcp"
SERIES = "gcp_weekly"  # the `series` of these points; recorded snapshots are "snapshots"
NOISE = 1e-4  # relative: smaller moves are float noise, not price changes
HOURS_PER_MONTH = 730
COLUMNS = (
    ("on_demand", "hour", 1.0),
    ("spot", "hour_spot", 1.0),
    ("reserved_1y", "month_1y", HOURS_PER_MONTH),
    ("reserved_3y", "month_3y", HOURS_PER_MONTH),
)
ATTRIBUTION = (
    'GCP price history: Nils Knieling, "google-cloud-pricing-cost-calculator" pricing.yml '
    "(https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator), 290 weekly versions "
    "2022-02-09 to 2026-07-30, Apache License 2.0. Modified: GPU machine types and N1 hosts extracted, "
    "change points only."
)

_SCHEMA = """
CREATE TABLE history_snapshots (provider TEXT NOT NULL, idx INTEGER NOT NULL, taken_at TEXT NOT NULL,
    commit_id TEXT NOT NULL, source TEXT NOT NULL, PRIMARY KEY (provider, idx));
CREATE TABLE history_intervals (provider TEXT NOT NULL, gpu TEXT NOT NULL, pricing TEXT NOT NULL,
    instance_type TEXT NOT NULL, region TEXT NOT NULL, accelerator TEXT NOT NULL, gpu_memory_gb REAL,
    gpu_count REAL NOT NULL, vgpu INTEGER NOT NULL, price_per_hour_usd REAL NOT NULL,
    price_per_gpu_hour_usd REAL NOT NULL, first_idx INTEGER NOT NULL, last_idx INTEGER NOT NULL,
    source TEXT NOT NULL);
"""
TABLES = ("history_snapshots", "history_intervals")  # what `write` creates
_INDEX = "CREATE INDEX ix_history_intervals ON history_intervals (provider, gpu, pricing)"


class Offer(NamedTuple):
    """One offer alive in a snapshot (the attributes `knowledge.history.series` summarises)."""

    instance_type: str
    region: str
    accelerator: str
    gpu_memory_gb: float | None
    price_per_gpu_hour_usd: float
    price_per_hour_usd: float
    price_per_hour: float
    currency: str = "USD"


def _gpu_names() -> dict[str, dict]:
    with GPU_NAMES_FILE.open(encoding="utf-8", newline="") as handle:
        return {row["source_gpu"]: row for row in csv.DictReader(handle)}


def snapshot_source(commit: str) -> str:
    return (
        f"GCP billing catalog, weekly (Cyclenerd/google-cloud-pricing-cost-calculator@{commit[:12]}:pricing.yml, "
        "Apache-2.0)"
    )


_COLUMNS = ("snapshot_commit", "snapshot_date", "name", "gpu_name", "gpu_count", "region", "change", "source")


def replay(path: Path = CHANGES_FILE) -> tuple[list[tuple], list[tuple]]:
    """(snapshot rows, interval rows) for the two tables, from the change-point file."""
    names = _gpu_names()
    col, prices, rows = _read_changes(path)
    c_commit, c_date, c_name, c_gpu = col["snapshot_commit"], col["snapshot_date"], col["name"], col["gpu_name"]
    c_count, c_region, c_change, c_source = col["gpu_count"], col["region"], col["change"], col["source"]
    dates = sorted({(_utc(r[c_date]), r[c_commit]) for r in rows})
    index = {commit: n for n, (_, commit) in enumerate(dates)}
    snapshots = [
        (PROVIDER, n, when.isoformat(), commit, snapshot_source(commit)) for n, (when, commit) in enumerate(dates)
    ]
    rows.sort(key=lambda r: index[r[c_commit]])  # stable: the file's order within a snapshot
    skip = _one_version_listings(rows, index, c_commit, c_name, c_region, c_change)
    gpu_of: dict[str, tuple[dict, float]] = {}
    open_: dict[tuple[str, str, str], list] = {}
    intervals: list[tuple] = []
    for row in rows:
        name = row[c_name]
        if row[c_gpu]:
            if row[c_gpu] not in names:
                raise ValueError(f"{path.name}: GPU {row[c_gpu]!r} is not in {GPU_NAMES_FILE.name}")
            gpu_of[name] = (names[row[c_gpu]], float(row[c_count]))
        if name not in gpu_of or (name, row[c_region]) in skip:
            continue  # an N1 host (no GPU price in this source), or a listing withdrawn at once
        idx = index[row[c_commit]]
        removed = row[c_change] == "removed"
        for pricing, column, divisor in prices:
            text = "" if removed else row[column]
            value = float(text) / divisor if text else None
            key = (name, row[c_region], pricing)
            current = open_.get(key)
            if current is not None and value is not None and abs(value - current[0]) <= NOISE * current[0]:
                continue
            if current is not None:
                intervals.append(_interval(key, open_.pop(key), idx - 1, gpu_of))
            if value is not None and value > 0:
                open_[key] = [value, idx, row[c_source]]
    for key in list(open_):
        intervals.append(_interval(key, open_.pop(key), len(dates) - 1, gpu_of))
    return snapshots, intervals


def _read_changes(path: Path) -> tuple[dict[str, int], list[tuple[str, int, float]], list[list[str]]]:
    """The change-point file's column positions, its price columns ((pricing, position, divisor) of COLUMNS), and
    its rows, N1 hosts without a GPU left out."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        col = {name: header.index(name) for name in _COLUMNS}
        prices = [(pricing, header.index(column), divisor) for pricing, column, divisor in COLUMNS]
        c_gpu, c_name = col["gpu_name"], col["name"]
        rows = [r for r in reader if r[c_gpu] or not r[c_name].startswith("n1-")]  # N1 hosts carry no GPU
    return col, prices, rows


def _interval(key: tuple[str, str, str], opened: list, last: int, gpu_of: dict[str, tuple[dict, float]]) -> tuple:
    """The interval row of a price that held from snapshot `opened[1]` to `last` (`opened`: price, first, source)."""
    price, first, source = opened
    name, region, pricing = key
    info, count = gpu_of[name]
    memory = float(info["gpu_memory_gb"]) if info["gpu_memory_gb"] else None
    return (
        PROVIDER,
        info["gpu"],
        pricing,
        name,
        region,
        info["accelerator"],
        memory,
        count,
        int(count < 1),
        price,
        price / count,
        first,
        last,
        source,
    )


def _one_version_listings(rows, index, c_commit, c_name, c_region, c_change) -> set[tuple[str, str]]:
    """(machine type, region) entries listed by one version only and removed by the next: not offers.

    The README's 36 `removed` rows: a3-megagpu-8g appeared in 31 extra regions on 2024-08-17 with prices that lack
    the GPU SKU (8x H100 for $13/h) and was dropped a version later. Long-lived entries that left are kept.
    """
    first: dict[tuple[str, str], int] = {}
    skip = set()
    for row in rows:
        key, idx = (row[c_name], row[c_region]), index[row[c_commit]]
        if row[c_change] == "first":
            first[key] = idx
        elif row[c_change] == "removed" and first.get(key) == idx - 1:
            skip.add(key)
    return skip


REPLAY_VERSION = 1  # bump when `replay` changes what it computes


def _cached_replay() -> tuple[list, list]:
    """`replay()`, kept in GPUBOT_HOME/cache for the same bundled files: later builds skip parsing 8.5 MB of CSV."""
    import hashlib
    import json
    import os

    from knowledge.paths import home

    files = (CHANGES_FILE, GPU_NAMES_FILE, Path(__file__))  # this module too: changed code replays anew
    stats = [f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in files]
    key = hashlib.sha1(f"{REPLAY_VERSION};{';'.join(stats)}".encode()).hexdigest()[:20]
    path = home() / "cache" / f"history_bundled-{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [tuple(r) for r in data["snapshots"]], [tuple(r) for r in data["intervals"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    snapshots, intervals = replay()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"snapshots": snapshots, "intervals": intervals}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a cache is an optimisation: the build goes on without it
        pass
    return snapshots, intervals


def write(conn: sqlite3.Connection) -> int:
    """Create and fill the two tables in a knowledge base being built; returns the number of intervals."""
    snapshots, intervals = _cached_replay()
    conn.executescript(_SCHEMA)
    conn.executemany("INSERT INTO history_snapshots VALUES (?, ?, ?, ?, ?)", snapshots)
    conn.executemany("INSERT INTO history_intervals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", intervals)
    conn.execute(_INDEX)  # after the rows: one sort instead of 21,000 index updates
    return len(intervals)


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.UTC)
