"""AWS Price List bulk API (`https://pricing.us-east-1.amazonaws.com`, public, no key) -> EC2 on-demand prices.

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

Kept: `TermType` OnDemand, `Unit` Hrs, `Currency` USD, shared tenancy, Linux, no pre-installed software,
`CapacityStatus` Used, positive price. A region that breaks its budget is left out whole (never half-read) and
named in the warnings; its rows keep their last good figures. `versions` lists every past version for the
history back-fill.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import time
from collections.abc import Iterable

import httpx

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_http import Validators, get_bounded
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow

__all__ = ["URL", "Budget", "offer_url", "parse_offer_csv", "region_urls", "versions"]

URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/index.json"
METADATA_LINES = 5
INDEX_BYTES, INDEX_SECONDS = 32 * 1024 * 1024, 120.0  # the service and region indexes (88 KB and 18 KB recorded)
WANTED = {
    "TermType": "OnDemand",
    "Unit": "Hrs",
    "Currency": "USD",
    "Tenancy": "Shared",
    "Operating System": "Linux",
    "Pre Installed S/W": "NA",
    "CapacityStatus": "Used",
}


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


def parse_offer_csv(lines: Iterable[str], *, families: set[str], url: str) -> tuple[dict[str, float], int]:
    """({instance type: on-demand USD/h}, rows read) of one region's CSV offer file, GPU families only."""
    lines = iter(lines)
    for _ in range(METADATA_LINES):
        if next(lines, None) is None:
            raise FetchError("the offer file ends inside its metadata lines", url=url)
    reader = csv.reader(lines)
    header = next(reader, None)
    if not header or any(name not in header for name in (*WANTED, "Instance Type", "PricePerUnit")):
        raise FetchError("the offer file's header lacks Instance Type / PricePerUnit / the term columns", url=url)
    at = {name: header.index(name) for name in (*WANTED, "Instance Type", "PricePerUnit")}
    prices: dict[str, float] = {}
    count = 0
    for record in reader:
        count += 1
        if len(record) != len(header):
            raise FetchError(
                f"line {count + METADATA_LINES + 1}: {len(record)} cells, header has {len(header)}", url=url
            )
        instance = record[at["Instance Type"]]
        if instance.split(".")[0] not in families or any(record[at[k]] != v for k, v in WANTED.items()):
            continue
        try:
            price = float(record[at["PricePerUnit"]])
        except ValueError:
            raise FetchError(f"line {count + METADATA_LINES + 1}: price is not a number", url=url) from None
        if price > 0:
            prices[instance] = min(price, prices.get(instance, price))
    return prices, count


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
    """(on-demand rows or None when the service index is unchanged, its validators).

    `max_bytes` and `seconds` are each region's budget (the indexes have their own, small one). A region that
    breaks its budget or fails is left out and said in `data.warnings`: its rows keep their last good figures."""
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
            prices = stream_region(client, str(base.join(path)), families, Budget(max_bytes, seconds))
        except FetchError as exc:
            data.warnings.append(f"{region}: {exc}")
            continue
        data.rows += [LiveRow(instance, region, price=price) for instance, price in sorted(prices.items())]
    if not data.rows:
        raise FetchError(f"no accelerator on-demand price in any region ({'; '.join(data.warnings)[:500]})", url=url)
    version_index = ec2.get("versionIndexUrl")
    data.history_url = str(base.join(version_index)) if isinstance(version_index, str) else None
    return data, got.validators


def stream_region(client: httpx.Client, url: str, families: set[str], budget: Budget) -> dict[str, float]:
    """One region's on-demand prices, streamed within what is left of `budget`."""
    try:
        with client.stream("GET", url, timeout=httpx.Timeout(budget.seconds_left, connect=10.0)) as response:
            if response.status_code != 200:
                raise FetchError(f"HTTP {response.status_code}", url=url)
            prices, _ = parse_offer_csv(_lines(response, url, budget), families=families, url=url)
    except httpx.TimeoutException:
        raise FetchError("no answer within the time budget", url=url) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}", url=url) from None
    return prices


def _lines(response: httpx.Response, url: str, budget: Budget) -> Iterable[str]:
    for line in response.iter_lines():
        budget.take(len(line) + 1, url)
        yield line
