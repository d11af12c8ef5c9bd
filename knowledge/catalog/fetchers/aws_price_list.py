"""AWS Price List bulk API (`https://pricing.us-east-1.amazonaws.com`, public, no key) -> EC2 on-demand and reserved
prices.

Three steps, as SkyPilot, gpuhunt and Infracost walk it (verified against the recorded service index of 2026-04-27
and EC2 region index of 2025-05-23):

1. the service index `/offers/v1.0/aws/index.json`: `offers.AmazonEC2.currentRegionIndexUrl` and
   `versionIndexUrl` (paths on the same host);
2. the EC2 region index: `regions.<code>.currentVersionUrl` (`/offers/v1.0/aws/AmazonEC2/<version>/<code>/index.json`;
   `index.csv` is the same file as CSV);
3. each region's offer file, as CSV: five metadata lines, then a header (`SKU`, `TermType`, `Unit`,
   `PricePerUnit`, `Currency`, `Instance Type`, `Tenancy`, `Operating System`, `Pre Installed S/W`,
   `CapacityStatus`, `License Model`, ...). The file is hundreds of MB: it is streamed line by line and only rows
   of the accelerator families the AWS catalog holds are kept, within a byte and a time budget per region.

Kept, of both term types: `Currency` USD, shared tenancy, Linux, no pre-installed software, `CapacityStatus` Used.

- `TermType` OnDemand: the `Unit` Hrs row, positive price.
- `TermType` Reserved: one term is the rows of one (`SKU`, `OfferTermCode`), all saying the same
  `LeaseContractLength` (`1yr`/`3yr`), `PurchaseOption` (`No Upfront`/`Partial Upfront`/`All Upfront`) and
  `OfferingClass` (`standard`/`convertible`): one hourly row (`Unit` Hrs, 0 for All Upfront) and, for Partial and
  All Upfront, one `Upfront Fee` row (`Unit` Quantity, USD once). Its effective hourly rate is
  upfront / hours in the term (8,760 for 1 yr, 26,280 for 3 yr) + hourly, under the bundled reserved file's key
  (`yrTerm1Standard.partialUpfront`, `knowledge.facts.pricing.AWS_TERM`). A term with a malformed or missing row
  (unknown length, option or class, a price that is not an ASCII decimal, no hourly row, an upfront fee missing or
  where none belongs) is refused whole and said in `OfferFile.refused`: never priced from half its rows, and the
  region's on-demand prices and other terms are kept.

A region that breaks its budget is left out whole (never half-read) and named in the warnings; its rows keep their
last good figures. `versions` lists every past version for the history back-fill.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_http import Validators, get_bounded
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow
from knowledge.numbers import decimal

__all__ = [
    "URL",
    "Budget",
    "OfferFile",
    "offer_url",
    "parse_offer_csv",
    "parse_offer_file",
    "region_urls",
    "stream_offers",
    "versions",
]

URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/index.json"
METADATA_LINES = 5
INDEX_BYTES, INDEX_SECONDS = 32 * 1024 * 1024, 120.0  # the service and region indexes (88 KB and 18 KB recorded)
SHARED = {  # every kept row, on-demand or reserved
    "Currency": "USD",
    "Tenancy": "Shared",
    "Operating System": "Linux",
    "Pre Installed S/W": "NA",
    "CapacityStatus": "Used",
}
WANTED = {"TermType": "OnDemand", "Unit": "Hrs", **SHARED}  # an on-demand price
TERM_COLUMNS = ("SKU", "OfferTermCode", "LeaseContractLength", "PurchaseOption", "OfferingClass")
LEASES = {"1yr": 1, "3yr": 3}
TERM_HOURS = {1: 8760, 3: 26280}  # 365 x 24 h a year, as AWS's effective hourly rates count them
OPTIONS = {"No Upfront": "no", "Partial Upfront": "partial", "All Upfront": "all"}
CLASSES = {"standard": "Standard", "convertible": "Convertible"}
MAX_REFUSED = 5  # reserved terms named per region in the warnings; the rest counted


class Budget:
    """Bytes and seconds left for every request of one fetch."""

    def __init__(self, max_bytes: int, seconds: float):
        self.bytes_left, self.deadline = max_bytes, time.monotonic() + seconds

    def take(self, size: int, url: str) -> None:
        self.bytes_left -= size
        if self.bytes_left < 0:
            raise FetchError("the fetch passed its byte budget; stopped", url=url)
        if time.monotonic() > self.deadline:
            raise FetchError("the fetch passed its time budget; stopped", url=url)

    @property
    def seconds_left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())


def _json(client: httpx.Client, url: str, budget: Budget, validators: Validators | None = None):
    got = get_bounded(
        client, url, timeout=budget.seconds_left, max_bytes=max(1, budget.bytes_left), validators=validators
    )
    budget.take(len(got.body), url)
    if got.not_modified:
        return got, None
    try:
        return got, json.loads(got.body)
    except ValueError as exc:
        raise FetchError(f"not JSON ({exc})", url=url) from None


def _ec2(index: object, url: str) -> dict:
    ec2 = (index.get("offers") or {}).get("AmazonEC2") if isinstance(index, dict) else None
    if not isinstance(ec2, dict) or not isinstance(ec2.get("currentRegionIndexUrl"), str):
        raise FetchError("no offers.AmazonEC2.currentRegionIndexUrl: not the service index", url=url)
    return ec2


def region_urls(region_index: object, url: str, regions: Iterable[str]) -> dict[str, str]:
    """region -> its offer file as CSV (a path on the API host), for the regions asked for."""
    listed = region_index.get("regions") if isinstance(region_index, dict) else None
    if not isinstance(listed, dict):
        raise FetchError("no 'regions' object: not the EC2 region index", url=url)
    out = {}
    for region in regions:
        entry = listed.get(region)
        if isinstance(entry, dict) and isinstance(entry.get("currentVersionUrl"), str):
            out[region] = entry["currentVersionUrl"].removesuffix(".json") + ".csv"
    if not out:
        raise FetchError("none of the regions asked for is in the region index", url=url)
    return out


def offer_url(version: str, region: str) -> str:
    """The path of one region's offer file (CSV) at one published version."""
    return f"/offers/v1.0/aws/AmazonEC2/{version}/{region}/index.csv"


def versions(version_index: object, url: str) -> list[tuple[str, str]]:
    """[(version id, effective begin date)] of the EC2 version index, oldest first."""
    listed = version_index.get("versions") if isinstance(version_index, dict) else None
    if not isinstance(listed, dict):
        raise FetchError("no 'versions' object: not a version index", url=url)
    out = [(vid, str(v.get("versionEffectiveBeginDate", ""))) for vid, v in listed.items() if isinstance(v, dict)]
    return sorted(out, key=lambda item: item[1] or item[0])


@dataclass(slots=True)
class OfferFile:
    """One region's offer file, read: on-demand USD/h and reserved terms per instance type, and what was refused."""

    on_demand: dict[str, float] = field(default_factory=dict)
    reserved: dict[str, dict[str, float]] = field(default_factory=dict)  # instance -> term key -> effective USD/h
    rows: int = 0
    refused: list[str] = field(default_factory=list)  # "line N: p5.48xlarge 1yr All Upfront standard: why"


@dataclass(slots=True)
class _Term:
    """The rows of one reserved term (SKU, OfferTermCode) read so far."""

    line: int
    instance: str
    says: tuple[str, str, str]  # (LeaseContractLength, PurchaseOption, OfferingClass) as written
    hourly: list[float] = field(default_factory=list)
    upfront: list[float] = field(default_factory=list)
    problem: str | None = None

    @property
    def key(self) -> str | None:
        lease, option, kind = self.says
        if lease not in LEASES or option not in OPTIONS or kind not in CLASSES:
            return None
        return f"yrTerm{LEASES[lease]}{CLASSES[kind]}.{OPTIONS[option]}Upfront"

    def rate(self) -> float:
        """The effective USD per hour; ValueError saying why the term cannot be priced."""
        lease, option, kind = self.says
        if self.problem:
            raise ValueError(self.problem)
        if lease not in LEASES:
            raise ValueError(f"LeaseContractLength {lease!r} is not 1yr or 3yr")
        if option not in OPTIONS:
            raise ValueError(f"PurchaseOption {option!r} is not one of {', '.join(OPTIONS)}")
        if kind not in CLASSES:
            raise ValueError(f"OfferingClass {kind!r} is not standard or convertible")
        if len(self.hourly) != 1:
            raise ValueError(f"{len(self.hourly)} hourly (Hrs) rows, expected one")
        if OPTIONS[option] == "no" and self.upfront:
            raise ValueError("an Upfront Fee row on a No Upfront term")
        if OPTIONS[option] != "no" and len(self.upfront) != 1:
            raise ValueError(f"{len(self.upfront)} Upfront Fee (Quantity) rows, expected one")
        rate = sum(self.upfront) / TERM_HOURS[LEASES[lease]] + self.hourly[0]
        if rate <= 0:
            raise ValueError("the term costs nothing")
        return rate


def _reserved_row(terms: dict[tuple[str, str], _Term], record: list[str], at: dict[str, int], line: int) -> None:
    says = (record[at["LeaseContractLength"]], record[at["PurchaseOption"]], record[at["OfferingClass"]])
    instance = record[at["Instance Type"]]
    term = terms.setdefault((record[at["SKU"]], record[at["OfferTermCode"]]), _Term(line, instance, says))
    if term.problem:
        return
    if (term.instance, term.says) != (instance, says):
        term.problem = f"line {line}: the rows of one term (SKU, OfferTermCode) disagree"
        return
    text, unit = record[at["PricePerUnit"]], record[at["Unit"]]
    try:
        price = decimal(text)
    except ValueError:
        term.problem = f"line {line}: PricePerUnit {text[:40]!r} is not a number"
        return
    if price < 0:
        term.problem = f"line {line}: PricePerUnit {text[:40]!r} is negative"
    elif unit == "Hrs":
        term.hourly.append(price)
    elif unit == "Quantity":
        term.upfront.append(price)
    else:
        term.problem = f"line {line}: Unit {unit[:40]!r} is neither Hrs nor Quantity (an upfront fee)"


def parse_offer_file(lines: Iterable[str], *, families: set[str], url: str) -> OfferFile:
    """On-demand prices and reserved terms of one region's CSV offer file, GPU families only (see the module)."""
    lines = iter(lines)
    for _ in range(METADATA_LINES):
        if next(lines, None) is None:
            raise FetchError("the offer file ends inside its metadata lines", url=url)
    reader = csv.reader(lines)
    header = next(reader, None)
    needed = (*WANTED, *TERM_COLUMNS, "Instance Type", "PricePerUnit")
    if not header or any(name not in header for name in needed):
        raise FetchError("the offer file's header lacks Instance Type / PricePerUnit / the term columns", url=url)
    at = {name: header.index(name) for name in needed}
    out = OfferFile()
    terms: dict[tuple[str, str], _Term] = {}
    for record in reader:
        out.rows += 1
        line = out.rows + METADATA_LINES + 1
        if len(record) != len(header):
            raise FetchError(f"line {line}: {len(record)} cells, header has {len(header)}", url=url)
        instance = record[at["Instance Type"]]
        if instance.split(".")[0] not in families or any(record[at[k]] != v for k, v in SHARED.items()):
            continue
        kind = record[at["TermType"]]
        if kind == "Reserved":
            _reserved_row(terms, record, at, line)
            continue
        if kind != "OnDemand" or record[at["Unit"]] != "Hrs":
            continue
        try:
            price = float(record[at["PricePerUnit"]])
        except ValueError:
            raise FetchError(f"line {line}: price is not a number", url=url) from None
        if price > 0:
            out.on_demand[instance] = min(price, out.on_demand.get(instance, price))
    for term in terms.values():
        try:
            rate = term.rate()
        except ValueError as exc:
            lease, option, kind = term.says
            why = str(exc) if str(exc).startswith("line ") else f"line {term.line}: {exc}"
            out.refused.append(f"{why} ({term.instance} reserved {lease} {option} {kind}: refused)")
            continue
        key = term.key
        assert key is not None  # rate() checked the three columns
        held = out.reserved.setdefault(term.instance, {})
        held[key] = min(rate, held.get(key, rate))
    return out


def parse_offer_csv(lines: Iterable[str], *, families: set[str], url: str) -> tuple[dict[str, float], int]:
    """({instance type: on-demand USD/h}, rows read) of one region's CSV offer file, GPU families only."""
    found = parse_offer_file(lines, families=families, url=url)
    return found.on_demand, found.rows


def fetch(
    client: httpx.Client,
    *,
    url: str,
    regions: Iterable[str],
    families: set[str],
    max_bytes: int,
    seconds: float,
    fetched_at: dt.datetime,
    validators: Validators | None = None,
) -> tuple[LiveData | None, Validators]:
    """(on-demand and reserved rows, or None when the service index is unchanged; its validators).

    `max_bytes` and `seconds` are each region's budget (the indexes have their own, small one). A region that
    breaks its budget or fails is left out and said in `data.warnings`: its rows keep their last good figures.
    A refused reserved term is said there too (the first few per region), and counted in `data.skipped`."""
    budget = Budget(INDEX_BYTES, min(seconds, INDEX_SECONDS))
    got, index = _json(client, url, budget, validators)
    if got.not_modified:
        return None, got.validators
    ec2 = _ec2(index, url)
    base = httpx.URL(url)
    region_index_url = str(base.join(ec2["currentRegionIndexUrl"]))
    _, region_index = _json(client, region_index_url, budget)
    data = LiveData("aws_price_list", "aws", "price", f"AWS Price List bulk API {url} (AmazonEC2)", fetched_at)
    for region, path in sorted(region_urls(region_index, region_index_url, regions).items()):
        try:
            found = stream_offers(client, str(base.join(path)), families, Budget(max_bytes, seconds))
        except FetchError as exc:
            data.warnings.append(f"{region}: {exc}")
            continue
        for instance in sorted(found.on_demand.keys() | found.reserved.keys()):
            terms = tuple(sorted(found.reserved.get(instance, {}).items()))
            data.rows.append(LiveRow(instance, region, price=found.on_demand.get(instance), reserved=terms))
        if found.refused:
            data.skipped["reserved term refused"] = data.skipped.get("reserved term refused", 0) + len(found.refused)
        data.warnings += [f"{region}: {why}" for why in found.refused[:MAX_REFUSED]]
        if len(found.refused) > MAX_REFUSED:
            data.warnings.append(f"{region}: {len(found.refused) - MAX_REFUSED} more reserved terms refused")
    if not any(row.price is not None for row in data.rows):
        raise FetchError(f"no accelerator on-demand price in any region ({'; '.join(data.warnings)[:500]})", url=url)
    version_index = ec2.get("versionIndexUrl")
    data.history_url = str(base.join(version_index)) if isinstance(version_index, str) else None
    return data, got.validators


def stream_offers(client: httpx.Client, url: str, families: set[str], budget: Budget) -> OfferFile:
    """One region's on-demand prices and reserved terms, streamed within what is left of `budget`."""
    try:
        with client.stream("GET", url, timeout=httpx.Timeout(budget.seconds_left, connect=10.0)) as response:
            if response.status_code != 200:
                raise FetchError(f"HTTP {response.status_code}", url=url)
            return parse_offer_file(_lines(response, url, budget), families=families, url=url)
    except httpx.TimeoutException:
        raise FetchError("no answer within the time budget", url=url) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}", url=url) from None


def stream_region(client: httpx.Client, url: str, families: set[str], budget: Budget) -> dict[str, float]:
    """One region's on-demand prices, streamed within what is left of `budget` (the history back-fill)."""
    return stream_offers(client, url, families, budget).on_demand


def _lines(response: httpx.Response, url: str, budget: Budget) -> Iterable[str]:
    for line in response.iter_lines():
        budget.take(len(line) + 1, url)
        yield line
