"""Azure Retail Prices API -> GPU VM prices in SkyPilot's catalog format (on-demand, spot, 1- and 3-year reserved).

The API (`https://prices.azure.com/api/retail/prices`, public, no authentication) returns paged JSON: each page
is `{"Items": [...], "NextPageLink": url | null, "Count": n}` where `Count` is the number of items *in that
page*. Page sizes differ over time (100 in 2022, 1000 in 2026), so the fetcher never assumes one: it follows
`NextPageLink` until it is null or empty, refuses a link to another host, and stops with `FetchError` on a loop
(a link to a page already fetched) or after `max_pages`.

What is kept (see tests/data/recorded/README.md for the field meanings and traps):
- `serviceName == "Virtual Machines"`, `unitOfMeasure == "1 Hour"`, a GPU size (`Standard_NC*`, `NCC*`, `ND*`,
  `NG*`, `NV*`; `NP*` is an FPGA size, not a GPU, and is dropped), a real region (not empty, not a canary
  `*euap` region), the base price tier (`tierMinimumUnits == 0`), a positive price;
- Linux only: a product name ending in "Windows" is dropped, and so is every `DevTestConsumption` row;
- `Consumption` rows become on-demand, or spot when `skuName`/`meterName` contains "Spot"; "Low Priority" rows
  (the older offer Spot replaced) are dropped;
- `Reservation` rows give the total price for the whole term: the hourly equivalent is total / 8760 (1 year) or
  total / 26280 (3 years).

Naming trap: `armSkuName` is not always the deployable size name (`Standard_ND96asr_A100_v4` is deployed as
`Standard_ND96asr_v4`). A size is looked up by its exact name, then without the GPU token, first in the bundled
Azure catalog (`knowledge/data/catalogs/azure_vms.csv`, which gives GPU name, count, vCPUs and memory) and then in
`SIZE_TABLE` below; a GPU size found in neither is skipped and reported, never guessed.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

import httpx

from knowledge.catalog.fetchers import FetchError, get_with_retries
from knowledge.paths import CATALOG_DIR

__all__ = ["API_URL", "API_VERSION", "SIZE_TABLE", "AzurePrices", "AzureSize", "classify", "fetch", "size_info"]

API_URL = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"  # filter values are case-sensitive from this version on
TERM_HOURS = {"1 Year": ("reserved_1y", 8760), "3 Years": ("reserved_3y", 26280)}
CATALOG_HEADER = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
)
_GPU_SIZE = re.compile(r"^Standard_N(?:CC|C|D|G|V)\d+")
_FPGA_SIZE = re.compile(r"^Standard_NP\d+")
_GPU_TOKEN = re.compile(r"_(?:A100|A10|H100|H200|T4|MI300X|V620|V710|GB200|GB300)(?=_v\d+$)")
_VCPUS = re.compile(r"^Standard_N[A-Z]*?(\d+)")

# Sizes the bundled catalog does not name (it dropped rows whose accelerator was empty in its source, e.g. the
# A10 v4 slices, NCC H100 v5 and NG). Each rule: size-name pattern, accelerator name as SkyPilot spells it,
# accelerators per VM by vCPU count (fractions are GPU slices), and where the counts come from.
SIZE_TABLE: tuple[tuple[str, str, dict[int, float], str], ...] = (
    (r"^Standard_NC\d+ads_A100_v4$", "A100-80GB", {24: 1, 48: 2, 96: 4}, "Microsoft Learn: NC A100 v4 sizes"),
    (r"^Standard_NC\d+ad[a-z]*_H100_v5$", "H100", {40: 1, 80: 2}, "Microsoft Learn: NC H100 v5 sizes"),
    (r"^Standard_NCC\d+ads_H100_v5$", "H100", {40: 1}, "Microsoft Learn: NCCads H100 v5 sizes"),
    (r"^Standard_NC\d+as_T4_v3$", "T4", {4: 1, 8: 1, 16: 1, 64: 4}, "Microsoft Learn: NCasT4_v3 sizes"),
    (r"^Standard_NC\d+ads_A10_v4$", "A10", {8: 1 / 3, 16: 2 / 3, 32: 1}, "Microsoft Learn: NC A10 v4 (GPU slices)"),
    (r"^Standard_NC\d+r?s_v3$", "V100", {6: 1, 12: 2, 24: 4}, "Microsoft Learn: NCv3 sizes"),
    (r"^Standard_NC\d+r?s_v2$", "P100", {6: 1, 12: 2, 24: 4}, "Microsoft Learn: NCv2 sizes"),
    (r"^Standard_NC\d+r?(?:_Promo)?$", "K80", {6: 1, 12: 2, 24: 4}, "Microsoft Learn: NC (v1) sizes"),
    (r"^Standard_ND\d+r?s$", "P40", {6: 1, 12: 2, 24: 4}, "Microsoft Learn: ND (v1) sizes"),
    (r"^Standard_ND40rs_v2$", "V100-32GB", {40: 8}, "Microsoft Learn: NDv2 sizes"),
    (r"^Standard_ND96asr_v4$", "A100", {96: 8}, "Microsoft Learn: ND A100 v4 sizes"),
    (r"^Standard_ND96amsr_A100_v4$", "A100-80GB", {96: 8}, "Microsoft Learn: NDm A100 v4 sizes"),
    (r"^Standard_ND96isr_H100_v5$", "H100", {96: 8}, "Microsoft Learn: ND H100 v5 sizes"),
    (r"^Standard_ND96isr_H200_v5$", "H200", {96: 8}, "Microsoft Learn: ND H200 v5 sizes"),
    (r"^Standard_ND96isr_MI300X_v5$", "MI300X", {96: 8}, "Microsoft Learn: ND MI300X v5 sizes"),
    (r"^Standard_NV\d+s_v3$", "M60", {12: 1, 24: 2, 48: 4}, "Microsoft Learn: NVv3 sizes"),
    (r"^Standard_NV\d+(?:_Promo)?$", "M60", {6: 1, 12: 2, 24: 4}, "Microsoft Learn: NV (v1) sizes"),
    (r"^Standard_NV\d+as_v4$", "Radeon MI25", {4: 1 / 8, 8: 1 / 4, 16: 1 / 2, 32: 1}, "Microsoft Learn: NVv4 (slices)"),
    (
        r"^Standard_NV\d+adm?s_A10_v5$",
        "A10",
        {6: 1 / 6, 12: 1 / 3, 18: 1 / 2, 36: 1, 72: 2},
        "Microsoft Learn: NVadsA10 v5 (GPU slices)",
    ),
)


@dataclass(frozen=True, slots=True)
class AzureSize:
    """What a VM size carries: the deployable name, accelerator (SkyPilot's spelling) and count, host size."""

    instance_type: str
    accelerator: str
    count: float
    vcpus: float | None
    memory_gib: float | None
    gpu_info: str
    origin: str  # "catalog" or the SIZE_TABLE source


@cache
def _catalog_sizes() -> dict[str, AzureSize]:
    sizes: dict[str, AzureSize] = {}
    with (CATALOG_DIR / "azure_vms.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            name = row["InstanceType"]
            if name and row["AcceleratorName"] and name not in sizes:
                sizes[name] = AzureSize(
                    name,
                    row["AcceleratorName"],
                    float(row["AcceleratorCount"]),
                    float(row["vCPUs"]) if row["vCPUs"] else None,
                    float(row["MemoryGiB"]) if row["MemoryGiB"] else None,
                    row["GpuInfo"] or row["AcceleratorName"],
                    "catalog",
                )
    return sizes


def _from_table(name: str) -> AzureSize | None:
    vcpus = _VCPUS.match(name)
    for pattern, accelerator, counts, source in SIZE_TABLE:
        if re.match(pattern, name) and vcpus and int(vcpus.group(1)) in counts:
            return AzureSize(
                name, accelerator, counts[int(vcpus.group(1))], float(vcpus.group(1)), None, accelerator, source
            )
    return None


def size_info(arm_sku_name: str) -> AzureSize | None:
    """The size behind an `armSkuName`, or None when neither the bundled catalog nor `SIZE_TABLE` knows it."""
    names = [arm_sku_name]
    stripped = _GPU_TOKEN.sub("", arm_sku_name)
    if stripped != arm_sku_name:
        names.append(stripped)  # Standard_ND96asr_A100_v4 -> Standard_ND96asr_v4
    catalog = _catalog_sizes()
    for name in names:
        if name in catalog:
            return catalog[name]
    for name in names:
        if found := _from_table(name):
            return found
    return None


def classify(item: dict, currency: str = "USD") -> tuple[str | None, str]:
    """(pricing model or None, reason): how one price item is used. Raises ValueError for a malformed GPU item."""
    if item.get("serviceName") != "Virtual Machines":
        return None, "not a virtual machine"
    sku = item.get("armSkuName") or ""
    if _FPGA_SIZE.match(sku):
        return None, "FPGA size (NP), not a GPU"
    if not _GPU_SIZE.match(sku):
        return None, "not a GPU size"
    for key in ("type", "productName", "skuName", "meterName", "armRegionName", "unitOfMeasure", "currencyCode"):
        if not isinstance(item.get(key), str):
            raise ValueError(f"{sku} item has no string {key!r}")
    price = item.get("retailPrice")
    if isinstance(price, bool) or not isinstance(price, int | float):
        raise ValueError(f"{sku} item has a non-numeric retailPrice {price!r}")
    if item["currencyCode"] != currency:
        raise ValueError(f"{sku} item is priced in {item['currencyCode']}, expected {currency}")
    region = item["armRegionName"]
    if not region or region.lower().endswith("euap") or region == "Global":
        return None, "no real region (canary or global)"
    if item["unitOfMeasure"] != "1 Hour":
        return None, f"unit {item['unitOfMeasure']!r}"
    if item.get("tierMinimumUnits", 0) not in (0, 0.0):
        return None, "a volume tier, not the base price"
    if price <= 0:
        return None, "zero price"
    names = f"{item['skuName']} {item['meterName']}"
    windows = item["productName"].rstrip().lower().endswith("windows")
    kind = item["type"]
    if kind == "DevTestConsumption":
        return None, "Dev/Test price"
    if windows:
        return None, "Windows"
    if kind == "Reservation":
        term = item.get("reservationTerm")
        if term not in TERM_HOURS:
            raise ValueError(f"{sku} reservation with unknown term {term!r}")
        return TERM_HOURS[term][0], "reservation"
    if kind != "Consumption":
        return None, f"price type {kind!r}"
    if "low priority" in names.lower():
        return None, "Low Priority"
    if "spot" in names.lower():
        return "spot", "spot"
    return "on_demand", "on-demand"


def _parse_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _number(value: float) -> str:
    return repr(float(value))


@dataclass(slots=True)
class AzurePrices:
    """A complete fetch: catalog rows (on-demand and spot), reserved rows, and what was left out and why."""

    source: str
    as_of: str
    pages: int = 0
    items: int = 0
    prices: dict[tuple[str, str, str], tuple[float, dict]] = field(default_factory=dict)
    sizes: dict[str, AzureSize] = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)
    unknown_sizes: set[str] = field(default_factory=set)

    def _rows(self, pricings: Iterable[str]) -> list[dict]:
        wanted = set(pricings)
        by_key: dict[tuple[str, str], dict] = {}
        for (instance_type, region, pricing), (price, _item) in sorted(self.prices.items()):
            if pricing not in wanted:
                continue
            size = self.sizes[instance_type]
            row = by_key.setdefault(
                (instance_type, region),
                {
                    "InstanceType": instance_type,
                    "AcceleratorName": size.accelerator,
                    "AcceleratorCount": _number(size.count),
                    "vCPUs": _number(size.vcpus) if size.vcpus else "",
                    "MemoryGiB": _number(size.memory_gib) if size.memory_gib else "",
                    "GpuInfo": size.gpu_info,
                    "Price": "",
                    "SpotPrice": "",
                    "Region": region,
                },
            )
            row["SpotPrice" if pricing == "spot" else "Price"] = _number(price)
        return list(by_key.values())

    @property
    def rows(self) -> list[dict]:
        """On-demand and spot prices as rows of SkyPilot's Azure catalog (one per size and region)."""
        return self._rows(("on_demand", "spot"))

    def reserved_rows(self, pricing: str) -> list[dict]:
        """Reserved prices (hourly equivalent in `Price`) as catalog rows, for `reserved_1y` or `reserved_3y`."""
        rows = self._rows((pricing,))
        return [row for row in rows if row["Price"]]

    @staticmethod
    def to_csv(rows: list[dict]) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=CATALOG_HEADER, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def catalog_csv(self, fetched_at: dt.datetime | None = None) -> str:
        """The catalog; with `fetched_at`, each price also says where and when it was read (issue 28)."""
        if fetched_at is None:
            return self.to_csv(self.rows)
        stamp = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        rows = [
            {
                **row,
                "PriceSource": self.source if row["Price"] else "",
                "PriceFetchedAt": stamp if row["Price"] else "",
                "SpotSource": self.source if row["SpotPrice"] else "",
                "SpotFetchedAt": stamp if row["SpotPrice"] else "",
            }
            for row in self.rows
        ]
        out = io.StringIO()
        live = ("PriceSource", "PriceFetchedAt", "SpotSource", "SpotFetchedAt")
        writer = csv.DictWriter(out, fieldnames=(*CATALOG_HEADER, *live), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def offers(self) -> list[dict]:
        """Region-level offers through the same importer and `convert` as every catalog, plus reserved offers."""
        from knowledge.catalog.offers import convert
        from knowledge.catalog.reader import parse_catalog

        offers: list[dict] = []
        batches: list[tuple[str, list[dict], int | None]] = [("on_demand/spot", self.rows, None)]
        batches += [(pricing, self.reserved_rows(pricing), hours) for pricing, hours in TERM_HOURS.values()]
        for label, rows, hours in batches:
            if not rows:
                continue
            catalog = parse_catalog(self.to_csv(rows), f"Azure Retail Prices API ({label})")
            converted = convert("azure", catalog, source=self.source, as_of=self.as_of).offers
            if hours is not None:  # convert read the hourly equivalent as `Price`: relabel it
                note = f"Azure {label[-2]}-year reservation: total price for the term / {hours} hours"
                converted = [
                    {
                        **o,
                        "pricing": label,
                        "term": label,  # worded "1-year reservation" (handlers.terms)
                        "kind": "pricing",
                        "note": "; ".join(n for n in (o.get("note"), note) if n),
                    }
                    for o in converted
                ]
            offers += converted
        return offers


def _check_page(data: object, page: int, url: str) -> tuple[list, str | None]:
    if not isinstance(data, dict):
        raise FetchError("the page is not a JSON object", url=url, page=page)
    items = data.get("Items")
    if not isinstance(items, list):
        raise FetchError("the page has no 'Items' list", url=url, page=page)
    link = data.get("NextPageLink")
    if link is not None and not isinstance(link, str):
        raise FetchError(f"'NextPageLink' is neither a URL nor null: {link!r}", url=url, page=page)
    count = data.get("Count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count != len(items)):
        raise FetchError(f"'Count' is {count!r} but the page holds {len(items)} items (truncated?)", url=url, page=page)
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise FetchError(f"item {number} is not an object", url=url, page=page)
    return items, link or None


def _filter(regions: Iterable[str]) -> str:
    parts = ["serviceName eq 'Virtual Machines'", "contains(armSkuName, 'Standard_N')"]
    regions = list(regions)
    if regions:
        parts.append("(" + " or ".join(f"armRegionName eq '{r}'" for r in regions) + ")")
    return " and ".join(parts)


def fetch(
    client: httpx.Client,
    *,
    regions: Iterable[str] = (),
    currency: str = "USD",
    url: str = API_URL,
    max_pages: int = 5000,
    retries: int = 4,
    backoff: float = 1.0,
    sleep: Callable[[float], None] | None = None,
    now: dt.datetime | None = None,
) -> AzurePrices:
    """Fetch every page of GPU VM prices (optionally only `regions`); raise `FetchError` on any failure.

    `now` decides which prices are in effect (default: the current time); tests pass the recording date.
    """
    regions = _checked_regions(regions)
    now = now or dt.datetime.now(dt.UTC)
    origin = httpx.URL(url)
    result = AzurePrices(
        source=f"Azure Retail Prices API ({origin.host}, api-version {API_VERSION}, {currency}), "
        f"fetched {now:%Y-%m-%d %H:%M} UTC",
        as_of=now.date().isoformat(),
    )
    wanted_regions = set(regions)
    next_url: str | None = url
    params: dict | None = {"api-version": API_VERSION, "currencyCode": currency, "$filter": _filter(regions)}
    seen: set[str] = set()
    while next_url:
        page = result.pages + 1
        if page > max_pages:
            raise FetchError(f"more than {max_pages} pages; stopped (a paging loop?)", url=next_url, page=page)
        request_url = str(httpx.URL(next_url, params=params) if params else httpx.URL(next_url))
        if request_url in seen:
            raise FetchError("NextPageLink points to a page already fetched (paging loop)", url=request_url, page=page)
        seen.add(request_url)
        response = get_with_retries(client, request_url, retries=retries, backoff=backoff, sleep=sleep, page=page)
        items, link = _check_page(_json(response, page, request_url), page, request_url)
        result.pages = page
        result.items += len(items)
        for number, item in enumerate(items, start=1):
            try:
                pricing, reason = classify(item, currency)
            except ValueError as exc:
                raise FetchError(f"item {number}: {exc}", url=request_url, page=page) from None
            if pricing is None:
                result.skipped[reason] += 1
                continue
            _keep(result, item, pricing, wanted_regions, now)
        if link:
            _check_same_origin(link, origin, page, request_url)
        next_url, params = link, None
    if not result.prices:
        raise FetchError(
            f"no GPU VM prices in {result.pages} page(s) ({result.items} items); nothing to record", url=url
        )
    return result


def _checked_regions(regions: Iterable[str]) -> list[str]:
    """Region names, lower-cased; a name that is not one (it goes into the API's filter) raises `FetchError`."""
    regions = [r.strip().lower() for r in regions if r.strip()]
    for region in regions:
        if not re.fullmatch(r"[a-z0-9]+", region):
            raise FetchError(f"{region!r} is not an Azure region name (e.g. eastus)")
    return regions


def _json(response: httpx.Response, page: int, url: str) -> object:
    try:
        return response.json()
    except ValueError as exc:
        raise FetchError(f"the body is not valid JSON ({exc})", url=url, page=page) from None


def _check_same_origin(link: str, origin: httpx.URL, page: int, url: str) -> None:
    """A NextPageLink must stay on the API's host and scheme."""
    target = httpx.URL(link)
    if target.host != origin.host or target.scheme != origin.scheme:
        raise FetchError(f"NextPageLink leaves {origin.host}: {link}", url=url, page=page)


def _keep(result: AzurePrices, item: dict, pricing: str, wanted_regions: set[str], now: dt.datetime) -> None:
    region = item["armRegionName"].lower()
    if wanted_regions and region not in wanted_regions:
        result.skipped["region not asked for"] += 1
        return
    start, end = _parse_time(item.get("effectiveStartDate")), _parse_time(item.get("effectiveEndDate"))
    if start and start > now:
        result.skipped["not yet in effect"] += 1
        return
    if end and end <= now:
        result.skipped["no longer in effect"] += 1
        return
    size = size_info(item["armSkuName"])
    if size is None:
        result.unknown_sizes.add(item["armSkuName"])
        result.skipped["unknown GPU size"] += 1
        return
    price = float(item["retailPrice"])
    if pricing in ("reserved_1y", "reserved_3y"):
        price /= TERM_HOURS[item["reservationTerm"]][1]
    key = (size.instance_type, region, pricing)
    rank = (not item.get("isPrimaryMeterRegion", True), -(start.timestamp() if start else 0.0), price)
    current = result.prices.get(key)
    if current is not None:
        old_item = current[1]
        old_start = _parse_time(old_item.get("effectiveStartDate"))
        old_rank = (
            not old_item.get("isPrimaryMeterRegion", True),
            -(old_start.timestamp() if old_start else 0.0),
            current[0],
        )
        if old_rank <= rank:
            result.skipped["duplicate price (kept the primary, newest, cheapest)"] += 1
            return
    result.sizes[size.instance_type] = size
    result.prices[key] = (price, item)
