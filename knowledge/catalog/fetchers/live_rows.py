"""What a live source's parser returns, and how it becomes a catalog the importer reads (SkyPilot's CSV format).

A parser turns one response into `LiveData`: rows keyed like the catalog (instance type, region, zone) with the
prices and stock it read, the time it read them and how to cite it. `to_catalog` writes the provider's catalog
for the importer, so a live price goes through the same conversion as every bundled one (one GPU identity,
orderability, quirks, zones, the two-source check):

- `replace` (RunPod, Vast: the source lists every offer): the rows are the catalog;
- `price` / `spot` (AWS Price List, OCI / AWS spot feed: the source has one price of offers whose shape comes
  from elsewhere): the provider's current catalog (its latest import, else the bundled file) with that column
  replaced where the source priced the row; rows it did not price keep their figure and their own date.

Six optional columns carry where and when each figure was read: `PriceSource`, `PriceFetchedAt`, `SpotSource`,
`SpotFetchedAt`, `Stock` (`in_stock`, `low`, `out_of_stock`) and `StockReadAt` (ISO UTC times). Three more carry
the AWS reserved terms a source read (the AWS Price List): `Reserved` (term key=effective USD/h;...: the keys of
the bundled reserved file, `knowledge.catalog.reader.reserved_cell`), `ReservedSource` and `ReservedFetchedAt`;
the knowledge-base build prices those terms from them instead of the bundled file (`knowledge.facts.pricing`).
Every zone row of an instance type and region carries its region's terms, so that a zone row is never without them.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass, field

from knowledge.catalog.reader import reserved_cell

__all__ = [
    "LIVE_COLUMNS",
    "RESERVED_COLUMNS",
    "STOCK_VALUES",
    "LiveData",
    "LiveRow",
    "carry",
    "newest_stamp",
    "restamp",
    "to_catalog",
]

RESERVED_COLUMNS = ("Reserved", "ReservedSource", "ReservedFetchedAt")
LIVE_COLUMNS = ("PriceSource", "PriceFetchedAt", "SpotSource", "SpotFetchedAt", "Stock", "StockReadAt")
STOCK_VALUES = ("in_stock", "low", "out_of_stock")
_BASE = ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo")
HEADER = (*_BASE, "Price", "SpotPrice", "Region", "AvailabilityZone", *LIVE_COLUMNS)


@dataclass(frozen=True, slots=True)
class LiveRow:
    """One offer (or one price of an offer) as a source gave it; prices are USD per instance-hour."""

    instance_type: str
    region: str  # "*": every region of this instance type (OCI prices a shape the same everywhere)
    price: float | None = None
    spot_price: float | None = None
    accelerator: str = ""
    accelerator_count: float = 0.0
    vcpus: float | None = None
    memory_gib: float | None = None
    gpu_info: str = ""
    zone: str = ""
    stock: str | None = None
    reserved: tuple[tuple[str, float], ...] = ()  # (AWS term key, effective USD/h), the region's reserved terms

    def __post_init__(self) -> None:
        if self.stock is not None and self.stock not in STOCK_VALUES:
            raise ValueError(f"stock {self.stock!r} is not one of {', '.join(STOCK_VALUES)}")


@dataclass(slots=True)
class LiveData:
    """A parsed response: rows, what was left out (reason -> count), when it was read and how to cite it."""

    source: str  # the lower-case source name (aws_spot, runpod, ...)
    provider: str  # the catalog it feeds (aws, runpod, vast, oci)
    mode: str  # replace | price | spot
    cite: str  # the vendor endpoint, as a user can open it
    fetched_at: dt.datetime
    rows: list[LiveRow] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    history_url: str | None = None  # where past versions are listed (the AWS Price List's version index)
    warnings: list[str] = field(default_factory=list)  # parts left out (an AWS region over its budget)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    @property
    def stamp(self) -> str:
        return self.fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _replaced(data: LiveData) -> list[dict]:
    rows = []
    for row in data.rows:
        rows.append(
            {
                "InstanceType": row.instance_type,
                "AcceleratorName": row.accelerator,
                "AcceleratorCount": _num(row.accelerator_count),
                "vCPUs": _num(row.vcpus),
                "MemoryGiB": _num(row.memory_gib),
                "GpuInfo": row.gpu_info or row.accelerator,
                "Price": _num(row.price),
                "SpotPrice": _num(row.spot_price),
                "Region": row.region,
                "AvailabilityZone": row.zone,
                "PriceSource": data.cite if row.price is not None else "",
                "PriceFetchedAt": data.stamp if row.price is not None else "",
                "SpotSource": data.cite if row.spot_price is not None else "",
                "SpotFetchedAt": data.stamp if row.spot_price is not None else "",
                "Stock": row.stock or "",
                "StockReadAt": data.stamp if row.stock else "",
            }
        )
    return rows


def _merged(data: LiveData, base_text: str) -> tuple[list[str], list[dict], int]:
    """The base catalog with one price column replaced where `data` priced the row; (header, rows, updated)."""
    column, stamp_col, source_col = (
        ("SpotPrice", "SpotFetchedAt", "SpotSource")
        if data.mode == "spot"
        else ("Price", "PriceFetchedAt", "PriceSource")
    )
    prices: dict[tuple[str, str], float | None] = {}
    terms: dict[tuple[str, str], str] = {}
    for row in data.rows:
        prices[(row.instance_type, row.region)] = row.spot_price if data.mode == "spot" else row.price
        if row.reserved:
            terms[(row.instance_type, row.region)] = reserved_cell(row.reserved)
    reader = csv.DictReader(io.StringIO(base_text))
    header = list(reader.fieldnames or [])
    header += [c for c in ("SpotPrice", *LIVE_COLUMNS) if c not in header]
    if terms:
        header += [c for c in RESERVED_COLUMNS if c not in header]
    out, updated = [], 0
    for record in reader:
        key = (record.get("InstanceType", ""), record.get("Region", ""))
        price = prices.get(key, prices.get((key[0], "*")))
        if not record.get("AcceleratorName"):
            out.append(record)
            continue
        if price is not None:
            record[column], record[stamp_col], record[source_col] = _num(price), data.stamp, data.cite
        if key in terms:
            record.update(zip(RESERVED_COLUMNS, (terms[key], data.cite, data.stamp), strict=True))
        updated += price is not None or key in terms
        out.append(record)
    return header, out, updated


def to_catalog(data: LiveData, base_text: str | None = None) -> tuple[str, int]:
    """(catalog CSV text, rows carrying a figure of this fetch). `base_text` is needed for `price`/`spot`."""
    if data.mode == "replace":
        header, rows = list(HEADER), _replaced(data)
        updated = len(rows)
    else:
        if base_text is None:
            raise ValueError(f"{data.source}: a {data.mode} update needs the provider's current catalog")
        header, rows, updated = _merged(data, base_text)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", extrasaction="ignore", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue(), updated


_STAMPS = (("PriceSource", "PriceFetchedAt"), ("SpotSource", "SpotFetchedAt"), ("ReservedSource", "ReservedFetchedAt"))


def newest_stamp(text: str, url: str) -> str | None:
    """The newest time a figure of the source at `url` was read, in a catalog (None: it holds none)."""
    stamps = [
        record[when]
        for record in csv.DictReader(io.StringIO(text))
        for source, when in _STAMPS
        if url in (record.get(source) or "") and record.get(when)
    ]
    return max(stamps) if stamps else None


def restamp(text: str, url: str, stamp: str) -> str:
    """The catalog with every figure (and stock) of the source at `url` marked as read at `stamp`: a 304 said that
    what we hold is what the source serves now."""
    reader = csv.DictReader(io.StringIO(text))
    header = list(reader.fieldnames or [])
    rows = []
    for record in reader:
        cited = False
        for source, when in _STAMPS:
            if url in (record.get(source) or ""):
                record[when], cited = stamp, True
        if cited and record.get("StockReadAt"):
            record["StockReadAt"] = stamp
        rows.append(record)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


_CARRIED = (
    ("Price", "PriceSource", "PriceFetchedAt"),
    ("SpotPrice", "SpotSource", "SpotFetchedAt"),
    RESERVED_COLUMNS,
)


def carry(new_text: str, old_text: str) -> tuple[str, int]:
    """(the new catalog with the live figures of the old one carried onto the same rows, rows carried).

    A daily catalog refresh replaces a provider's whole catalog; where a live source had priced a row (same
    instance type, region and zone) its figure, source and time stay, so that the daily file never turns a
    live price back into an older one until that source's next run."""
    key = ("InstanceType", "Region", "AvailabilityZone")
    live: dict[tuple, dict] = {}
    for record in csv.DictReader(io.StringIO(old_text)):
        if any(record.get(when) for _, _, when in _CARRIED):
            live[tuple(record.get(k, "") for k in key)] = record
    if not live:
        return new_text, 0
    reader = csv.DictReader(io.StringIO(new_text))
    header = list(reader.fieldnames or [])
    header += [c for c in ("SpotPrice", *LIVE_COLUMNS) if c not in header]
    if any(old.get("ReservedFetchedAt") for old in live.values()):
        header += [c for c in RESERVED_COLUMNS if c not in header]
    rows, carried = [], 0
    for record in reader:
        old = live.get(tuple(record.get(k, "") for k in key))
        if old is not None and record.get("AcceleratorName"):
            for columns in _CARRIED:
                if old.get(columns[2]):
                    record.update({c: old.get(c, "") for c in columns})
            record.update({c: old.get(c, "") for c in ("Stock", "StockReadAt")})
            carried += 1
        rows.append(record)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue(), carried
