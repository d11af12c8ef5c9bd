"""OCI price list (`https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/`, public, no key) -> GPU prices.

The Oracle Cloud cost-estimator API answers `{"items": [...]}`, one item per part, as SkyPilot's OCI fetcher and
gpuhunt read it: `partNumber`, `displayName` ("Compute - GPU - H100"), `metricName` ("GPU Per Hour"),
`serviceCategory` ("Compute - GPU") and `currencyCodeLocalizations: [{"currencyCode": "USD", "prices":
[{"model": "PAY_AS_YOU_GO", "value": 10}]}]`. OCI prices a GPU shape per GPU-hour and the same in every
commercial region, so one part prices every region's rows of its shapes: the shape price is the per-GPU price
times the shape's GPU count (`BM.GPU.H100.8`: 8 x the H100 part).

`PARTS` maps a part's display name to the accelerator as the OCI catalog spells it; a GPU part it does not know
is counted, never guessed. Shapes come from the OCI catalog the importer already holds. A body without an
`items` list, or a GPU part whose USD pay-as-you-go price is not a number, is refused.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow

__all__ = ["PARTS", "URL", "parse"]

URL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/"
# display name (after "Compute - GPU"), as Oracle's price list names the part -> OCI catalog accelerator
PARTS: tuple[tuple[str, str], ...] = (
    (r"\bA100\b.*\bv2\b|\bA100\b.*80\s*GB", "A100-80GB"),
    (r"\bA100\b", "A100"),
    (r"\bA10\b", "A10"),
    (r"\bH100\b", "H100"),
    (r"\bH200\b", "H200"),
    (r"\bB200\b", "B200"),
    (r"\bGB200\b", "GB200"),
    (r"\bL40S\b", "L40S"),
    (r"\bMI300X\b", "MI300X"),
    (r"\bV100\b", "V100"),
    (r"\bP100\b", "P100"),
)


def _usd_payg(item: dict, url: str) -> float | None:
    for local in item.get("currencyCodeLocalizations") or []:
        if not isinstance(local, dict) or local.get("currencyCode") != "USD":
            continue
        for price in local.get("prices") or []:
            if isinstance(price, dict) and price.get("model") == "PAY_AS_YOU_GO":
                value = price.get("value")
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise FetchError(f"part {item.get('partNumber')}: USD price {value!r} is not a number", url=url)
                return float(value) if value > 0 else None
    return None


def _accelerator(display: str) -> str | None:
    tail = display.split("GPU", 1)[-1]
    for pattern, accelerator in PARTS:
        if re.search(pattern, tail):
            return accelerator
    return None


def shapes(catalog_text: str) -> dict[str, tuple[str, float]]:
    """instance type -> (accelerator, count) of the OCI catalog's accelerator rows."""
    out: dict[str, tuple[str, float]] = {}
    for row in csv.DictReader(io.StringIO(catalog_text)):
        if row.get("AcceleratorName") and row.get("InstanceType"):
            out[row["InstanceType"]] = (row["AcceleratorName"], float(row["AcceleratorCount"]))
    return out


def parse(body: bytes, *, catalog_text: str, fetched_at: dt.datetime, url: str = URL) -> LiveData:
    """On-demand prices of every OCI GPU shape the catalog holds (all regions); FetchError if malformed."""
    try:
        items = json.loads(body).get("items")
    except (ValueError, AttributeError) as exc:
        raise FetchError(f"not a JSON object ({exc})", url=url) from None
    if not isinstance(items, list):
        raise FetchError("no 'items' list: not the price list", url=url)
    per_gpu: dict[str, float] = {}
    data = LiveData("oci", "oci", "price", f"Oracle Cloud price list API {url}", fetched_at)
    for item in items:
        if not isinstance(item, dict):
            raise FetchError("an item that is not an object", url=url)
        display, metric = str(item.get("displayName", "")), str(item.get("metricName", ""))
        if "GPU" not in display or "gpu per hour" not in metric.lower():
            data.skip("not a GPU-hour part")
            continue
        accelerator = _accelerator(display)
        price = _usd_payg(item, url)
        if accelerator is None or price is None:
            data.skip("GPU part not mapped to a shape" if accelerator is None else "no USD pay-as-you-go price")
            continue
        per_gpu.setdefault(accelerator, price)
    for instance_type, (accelerator, count) in sorted(shapes(catalog_text).items()):
        if accelerator in per_gpu:
            data.rows.append(LiveRow(instance_type, "*", price=round(per_gpu[accelerator] * count, 6)))
    if not data.rows:
        raise FetchError("no GPU part priced a shape of the OCI catalog; nothing to record", url=url)
    return data
