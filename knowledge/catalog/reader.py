"""Read a GPU instance catalog in SkyPilot's CSV format, for any cloud.

The importer is driven by the file's header, not by the cloud: columns may come in any order, and only
`AcceleratorName`, `AcceleratorCount`, `Price` and `Region` are required on accelerator rows. Rows with an empty
`AcceleratorName` are host-VM rows (GCP prices attached GPUs without their host VM; see `knowledge.catalog.offers`).

The format's traps are handled here, once: an empty `Price`/`SpotPrice` means "no offer" (never zero), a
`SpotPrice` of `0`/`0.00` also means "no spot offer" (counted in `Catalog.zero_spot`), a row without a region is
kept under the region `unknown` (counted in `Catalog.no_region`), exact duplicate rows are tolerated (GCP's source
repeats some), conflicting duplicates are an error, and every problem is reported as a `CatalogError` naming the
file, line and column, before anything is stored.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.errors import UserError
from knowledge.facts.pricing import AWS_TERM
from knowledge.numbers import NotFiniteError, decimal

REQUIRED = ("AcceleratorName", "AcceleratorCount", "Price", "Region")
KNOWN = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
    "AvailabilityZone",
    "Generation",
    "Arch",
    # written by the live sources (knowledge.catalog.fetchers.live_rows): where and when each figure was read
    "PriceSource",
    "PriceFetchedAt",
    "SpotSource",
    "SpotFetchedAt",
    "Stock",
    "StockReadAt",
    # AWS reserved terms a live source read (the AWS Price List): term key=effective USD/h;... (`reserved_cell`)
    "Reserved",
    "ReservedSource",
    "ReservedFetchedAt",
)
STOCK_VALUES = ("in_stock", "low", "out_of_stock")
MAX_BYTES = 200 * 1024 * 1024
UNKNOWN_REGION = "unknown"
DEFAULT_MAX_ROWS = 100_000


class CatalogError(UserError, ValueError):
    """A catalog file that cannot be imported; the message names file, line and column."""

    def __init__(self, path: str | Path, message: str, line: int | None = None, column: str | None = None):
        where = str(path)
        if line is not None:
            where += f", line {line}"
        if column:
            where += f", column {column}"
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.column = str(path), line, column
        self._given = (path, message, line, column)

    def __reduce__(self):  # pickled as made (an import's build in a forked child: `knowledge.kb.forked`)
        return type(self), self._given


@dataclass(frozen=True, slots=True)
class CatalogRow:
    """One row of a catalog; prices are USD per instance-hour (None = no offer)."""

    line: int
    instance_type: str
    accelerator: str
    accelerator_count: float
    vcpus: float | None
    memory_gib: float | None
    gpu_info: str
    price: float | None
    spot_price: float | None
    region: str
    zone: str
    generation: str
    arch: str
    live: tuple[str, ...] = ()  # PriceSource .. ReservedFetchedAt (LIVE), or () for a catalog without them

    def live_value(self, column: str) -> str:
        return self.live[LIVE.index(column)] if self.live else ""

    @property
    def is_host(self) -> bool:
        return not self.accelerator


@dataclass(frozen=True, slots=True)
class Catalog:
    """A validated catalog file: accelerator rows, host-VM rows, and what was tolerated."""

    path: str
    header: tuple[str, ...]
    rows: tuple[CatalogRow, ...]
    hosts: tuple[CatalogRow, ...]
    duplicates: int
    zero_spot: int = 0  # accelerator rows whose SpotPrice was 0: no spot offer
    no_region: int = 0  # rows without a region: kept under UNKNOWN_REGION


def _checked_number(
    text: str, path: str | Path, line: int, column: str, *, price: bool = False, zero_ok: bool = False
) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = decimal(text)  # ASCII decimals only: not 1_5, １２.5, Arabic-Indic digits, inf, 1e400
    except NotFiniteError:
        raise CatalogError(path, f"{text!r} is not a finite number", line, column) from None
    except ValueError:
        raise CatalogError(path, f"{text!r} is not a number", line, column) from None
    if not math.isfinite(value):
        raise CatalogError(path, f"{text!r} is not a finite number", line, column)
    if price and (value < 0 or (value == 0 and not zero_ok)):
        raise CatalogError(path, f"price {text} must be positive (leave the cell empty for 'no offer')", line, column)
    if not price and value < 0:
        raise CatalogError(path, f"{text} must not be negative", line, column)
    return value


_COMPARED = ("Price", "SpotPrice", "vCPUs", "MemoryGiB", "GpuInfo")  # what two rows for one offer must agree on


def _shown(value: object) -> str:
    return "empty" if value is None or value == "" else f"{value:g}" if isinstance(value, float) else str(value)


def read_catalog(path: str | Path) -> Catalog:
    """Parse and validate a catalog file; raise `CatalogError` on the first problem."""
    path = Path(path)
    raw = read_bounded(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CatalogError(
            path, f"not UTF-8 text (byte {raw[exc.start]:#x}); save the file as UTF-8", line, _column_at(raw, exc.start)
        ) from None
    return parse_catalog(text, path)


def max_rows() -> int:
    """Most rows (lines after the header) a catalog may have (GPUBOT_IMPORT_MAX_ROWS; default 100,000, ~30x the
    largest bundled one)."""
    from knowledge.config import config

    return config().gpubot_import_max_rows


def read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_BYTES and `max_rows()` lines, checked before and while reading
    (a device, a FIFO or a growing file is refused without reading more than the cap)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise CatalogError(path, "not a regular file (a device, a directory or a pipe)")
        if info.st_size > MAX_BYTES:
            raise CatalogError(path, f"file is larger than {MAX_BYTES // 2**20} MB")
        with open(path, "rb") as handle:  # streamed: never more than the cap in memory, even if the file grows
            chunks, size = [], 0
            while size <= MAX_BYTES and (chunk := handle.read(min(4 * 2**20, MAX_BYTES + 1 - size))):
                chunks.append(chunk)
                size += len(chunk)
            raw = b"".join(chunks)
    except OSError as exc:
        raise CatalogError(path, f"cannot read file ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise CatalogError(path, f"file is larger than {MAX_BYTES // 2**20} MB")
    lines = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
    rows, limit = max(lines - 1, 0), max_rows()  # the header line is not a row
    if rows > limit:
        raise CatalogError(
            path, f"file has {rows} rows, more than the {limit} a catalog may have (GPUBOT_IMPORT_MAX_ROWS)"
        )
    return raw


def _column_at(raw: bytes, offset: int) -> str:
    """The header name (else the 1-based number) of the CSV column holding byte `offset` (quotes are not
    considered: this only says where an undecodable byte is)."""
    start = raw.rfind(b"\n", 0, offset) + 1
    number = raw[start:offset].count(b",")
    header = raw.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip().split(",")
    name = header[number].strip() if number < len(header) and start > 0 else ""
    return name if name.isascii() and name.isidentifier() else str(number + 1)


# never in a text file (tabs and line ends are fine); C1 controls and bidi overrides would reach terminals and Slack
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


LIVE = KNOWN[KNOWN.index("PriceSource") :]


MAX_RESERVED_CELL = 4000  # twelve AWS terms take about 450 characters


def reserved_cell(terms: dict[str, float] | tuple[tuple[str, float], ...]) -> str:
    """A `Reserved` cell: `yrTerm1Standard.noUpfront=7.305;yrTerm1Standard.partialUpfront=6.957139;...` (sorted)."""
    return ";".join(f"{key}={float(rate)!r}" for key, rate in sorted(dict(terms).items()))


def parse_reserved_cell(text: str) -> dict[str, float]:
    """A `Reserved` cell's terms, term key -> effective USD per hour; ValueError saying what is wrong."""
    terms: dict[str, float] = {}
    for part in filter(None, text.split(";")):
        key, sep, rate = part.partition("=")
        if not sep or not AWS_TERM.match(key):
            raise ValueError(f"{part[:60]!r} is not term=rate with an AWS term key (yrTerm1Standard.noUpfront)")
        if key in terms:
            raise ValueError(f"term {key} twice")
        try:
            value = decimal(rate)
        except ValueError:
            raise ValueError(f"term {key}: {rate[:40]!r} is not a number") from None
        if value <= 0:
            raise ValueError(f"term {key}: the rate must be positive")
        terms[key] = value
    return terms


def _live_cells(cells: list[str], where: dict[str, int], path: str | Path, line: int) -> tuple[str, ...]:
    """The live columns of one row, checked: a known stock word, ISO UTC times, well-formed reserved terms."""
    values = tuple(cells[where[name]][: MAX_RESERVED_CELL if name == "Reserved" else 500] for name in LIVE)
    stock = values[LIVE.index("Stock")]
    if stock and stock not in STOCK_VALUES:
        raise CatalogError(path, f"stock {stock!r} is not one of {', '.join(STOCK_VALUES)}", line, "Stock")
    reserved = values[LIVE.index("Reserved")]
    if len(cells[where["Reserved"]]) > MAX_RESERVED_CELL:
        raise CatalogError(path, f"longer than {MAX_RESERVED_CELL} characters", line, "Reserved")
    try:
        parse_reserved_cell(reserved)
    except ValueError as exc:
        raise CatalogError(path, str(exc), line, "Reserved") from None
    for name in ("PriceFetchedAt", "SpotFetchedAt", "StockReadAt", "ReservedFetchedAt"):
        text = values[LIVE.index(name)]
        if text and not _ISO_UTC.match(text):
            raise CatalogError(path, f"{text!r} is not an ISO UTC time (2026-12-02T07:30:00Z)", line, name)
    return values


_ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def parse_catalog(text: str, path: str | Path = "<catalog>") -> Catalog:
    """Validate catalog text (see `read_catalog`)."""
    _refuse_control_characters(text, path)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = _header(reader, path)
    tally = _Tally()
    rows: list[CatalogRow] = []
    hosts: list[CatalogRow] = []
    seen: dict[tuple, tuple[tuple, int]] = {}  # offer key -> (what its rows must agree on, first line)
    try:
        for row in _rows(reader, header, path, tally):
            key = (row.instance_type, row.accelerator, row.accelerator_count, row.region, row.zone)
            value = (row.price, row.spot_price, row.vcpus, row.memory_gib, row.gpu_info)
            if key in seen:
                _refuse_conflict(path, key, value, *seen[key], row.line)
                tally.duplicates += 1
                continue
            seen[key] = (value, row.line)
            (hosts if row.is_host else rows).append(row)
    except csv.Error as exc:
        raise CatalogError(path, f"malformed CSV ({exc})", reader.line_num) from None
    if not rows and not hosts:
        raise CatalogError(path, "no data rows (the file ends after its header)", reader.line_num + 1)
    return Catalog(str(path), header, tuple(rows), tuple(hosts), tally.duplicates, tally.zero_spot, tally.no_region)


@dataclass(slots=True)
class _Tally:
    """What a catalog's rows needed tolerating, counted as they are read (see `Catalog`)."""

    duplicates: int = 0
    zero_spot: int = 0
    no_region: int = 0


def _refuse_control_characters(text: str, path: str | Path) -> None:
    control = _CONTROL.search(text)
    if control:
        at = control.start()
        line = text.count("\n", 0, at) + 1
        column = _column_at(text.encode("utf-8", "surrogatepass"), len(text[:at].encode("utf-8", "surrogatepass")))
        raise CatalogError(
            path, f"control character U+{ord(control.group()):04X} in a cell (a binary or damaged file?)", line, column
        )


def _header(reader: Iterator[list[str]], path: str | Path) -> tuple[str, ...]:
    """The stripped header: every required column, none twice."""
    try:
        header = tuple(cell.strip() for cell in next(reader))
    except StopIteration:
        raise CatalogError(path, "file is empty (expected a SkyPilot catalog header)", 1) from None
    except csv.Error as exc:
        raise CatalogError(path, f"malformed CSV ({exc})", 1) from None
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise CatalogError(path, f"missing column(s) {', '.join(missing)}; header is {','.join(header)}", 1, missing[0])
    if len(set(header)) != len(header):
        twice = next(name for name in header if header.count(name) > 1)
        raise CatalogError(path, "duplicate column names in header", 1, twice)
    return header


def _rows(reader: Any, header: tuple[str, ...], path: str | Path, tally: _Tally) -> Iterator[CatalogRow]:
    """Every data row checked, in file order (exact duplicates included); one loop, its lookups held in locals."""
    # where each column is in a stripped record; a column the file lacks reads the empty cell appended at the end
    where = {name: header.index(name) if name in header else len(header) for name in KNOWN}
    live = any(name in header for name in LIVE)
    i_type, i_acc, i_count, i_vcpus, i_memory, i_info, i_price, i_spot, i_region, i_zone, i_gen, i_arch = (
        where[name]
        for name in KNOWN[: -len(LIVE)]  # the columns a CatalogRow is built from, in KNOWN's order
    )
    numbers = _Numbers(path)
    plain, prices, host_prices, check = numbers.plain, numbers.prices, numbers.host_prices, numbers.check
    width = len(header)
    for record in reader:
        line = reader.line_num
        if not "".join(record).strip():  # an empty or blank line
            continue
        if len(record) != width:
            raise _width_error(path, header, len(record), line)
        cells = [c.strip() for c in record]
        cells.append("")  # the cell of every column the file lacks
        region = cells[i_region]
        if not region:
            region = UNKNOWN_REGION
            tally.no_region += 1
        accelerator = cells[i_acc]
        spot_text = cells[i_spot]
        if accelerator and spot_text:
            spot = (
                host_prices[spot_text] if spot_text in host_prices else check(host_prices, spot_text, line, "SpotPrice")
            )
            if spot == 0:
                spot_text = ""  # a catalog's 0.00 spot price: no spot offer
                tally.zero_spot += 1
        count = plain[t] if (t := cells[i_count]) in plain else check(plain, t, line, "AcceleratorCount")
        if accelerator and not count:
            raise CatalogError(path, "an accelerator row needs a positive AcceleratorCount", line, "AcceleratorCount")
        vcpus = plain[t] if (t := cells[i_vcpus]) in plain else check(plain, t, line, "vCPUs")
        memory_gib = plain[t] if (t := cells[i_memory]) in plain else check(plain, t, line, "MemoryGiB")
        # host-VM rows may be 0.0: the accelerator row already carries the whole price (GCP a4)
        known = prices if accelerator else host_prices
        price = known[t] if (t := cells[i_price]) in known else check(known, t, line, "Price")
        spot_price = known[spot_text] if spot_text in known else check(known, spot_text, line, "SpotPrice")
        live_cells = _live_cells(cells, where, path, line) if live else ()
        if not cells[i_type] and not accelerator:
            raise CatalogError(path, "row has neither an instance type nor an accelerator", line, "InstanceType")
        yield CatalogRow(
            line, cells[i_type], accelerator, count or 0.0, vcpus, memory_gib, cells[i_info], price, spot_price,
            region, cells[i_zone], cells[i_gen], cells[i_arch], live_cells,
        )  # fmt: skip


class _Numbers:
    """Checked numbers by their text, one table per kind: a catalog repeats its counts, sizes and prices, and the
    checks depend on the text and the kind only (a valid text stays valid, an invalid one raises at its first row)."""

    def __init__(self, path: str | Path):
        self.path = path
        self.plain: dict[str, float | None] = {}  # counts and sizes
        self.prices: dict[str, float | None] = {}  # an accelerator row's prices
        self.host_prices: dict[str, float | None] = {}  # a host row's prices, and the zero check of a spot price

    def check(self, known: dict[str, float | None], text: str, line: int, column: str) -> float | None:
        """`text` checked as the kind `known` holds, and remembered there."""
        price, zero_ok = known is not self.plain, known is self.host_prices
        value = known[text] = _checked_number(text, self.path, line, column, price=price, zero_ok=zero_ok)
        return value


def _width_error(path: str | Path, header: tuple[str, ...], cells: int, line: int) -> CatalogError:
    column = header[cells] if cells < len(header) else f"{len(header) + 1} (beyond the header)"
    return CatalogError(path, f"expected {len(header)} cells, found {cells} (truncated or malformed row)", line, column)


def _refuse_conflict(path: str | Path, key: tuple, value: tuple, earlier: tuple, earlier_line: int, line: int) -> None:
    """Tolerate an exact duplicate of an earlier row; refuse one that disagrees with it (naming the first column)."""
    if earlier == value:
        return
    column = next(name for name, a, b in zip(_COMPARED, earlier, value, strict=True) if a != b)
    raise CatalogError(
        path,
        f"conflicting duplicate of line {earlier_line} for {key[0] or key[1]} in {key[3]} "
        f"({column} {_shown(earlier[_COMPARED.index(column)])} there, {_shown(value[_COMPARED.index(column)])} here)",
        line,
        column,
    )
