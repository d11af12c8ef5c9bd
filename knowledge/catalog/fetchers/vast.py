"""Vast.ai bundles (`https://console.vast.ai/api/v0/bundles/`, public search, no key) -> live marketplace offers.

The search returns `{"offers": [...]}`, one item per machine listing, read as gpuhunt and SkyPilot read it:
`gpu_name` ("RTX 4090"), `num_gpus`, `dph_total` (on-demand $/h for the whole listing), `min_bid` (lowest bid for
an interruptible instance: the spot price), `rentable` (free now), `reliability2` (0..1), `geolocation`
("Sweden, SE": the country code is after the last comma), `cpu_cores_effective`, `cpu_ram` (MB), `gpu_ram` (MB).

Listings are grouped by (GPU, GPU count, country): the offer is the cheapest rentable listing of at least
`min_reliability`, and its stock says how many such listings are free now: 3 or more `in_stock`, 1-2 `low`, none
(every listing rented) `out_of_stock` at the cheapest listing's price. A body without an `offers` list, or with
a listing whose price is not a number, is refused.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow

__all__ = ["LOW_STOCK", "MIN_RELIABILITY", "URL", "parse", "params"]

URL = "https://console.vast.ai/api/v0/bundles/"
MIN_RELIABILITY = 0.9
LOW_STOCK = 2  # at most this many free listings: low


def params() -> dict:
    """The search: verified machines, on-demand listings, every rentable state (stock needs the rented ones too)."""
    query = {"verified": {"eq": True}, "external": {"eq": False}, "type": "on-demand", "limit": 3000}
    return {"q": json.dumps(query, separators=(",", ":"))}


def _number(item: dict, key: str, url: str) -> float | None:
    value = item.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FetchError(f"listing {item.get('id')}: {key} {value!r} is not a number", url=url)
    return float(value)


def _listings(body: bytes, url: str) -> list[dict]:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise FetchError(f"not JSON ({exc})", url=url) from None
    offers = data.get("offers") if isinstance(data, dict) else None
    if not isinstance(offers, list):
        raise FetchError("no 'offers' list: not a bundles answer", url=url)
    return offers


def _row(group: list[dict], country: str, url: str) -> LiveRow | None:
    free = [i for i in group if i.get("rentable") is True]
    pool = free or group
    best = min(pool, key=lambda i: _number(i, "dph_total", url) or float("inf"))
    price = _number(best, "dph_total", url)
    if not price or price <= 0:
        return None
    bid = _number(best, "min_bid", url)
    stock = "out_of_stock" if not free else "low" if len(free) <= LOW_STOCK else "in_stock"
    ram = _number(best, "cpu_ram", url)
    gpu_ram = _number(best, "gpu_ram", url)
    count = _number(best, "num_gpus", url) or 1.0
    name = str(best["gpu_name"]).strip()
    info = f"{name} {round(gpu_ram / 1024)}GB" if gpu_ram else name
    return LiveRow(
        f"{count:g}x_{name.replace(' ', '_')}",
        country or "unknown",
        price,
        bid if bid and bid > 0 else None,
        accelerator=name,
        accelerator_count=count,
        vcpus=_number(best, "cpu_cores_effective", url),
        memory_gib=round(ram / 1024, 1) if ram else None,
        gpu_info=info,
        stock=stock,
    )


def parse(
    body: bytes, *, fetched_at: dt.datetime, url: str = URL, min_reliability: float = MIN_RELIABILITY
) -> LiveData:
    """One offer per (GPU, count, country) with its stock; FetchError for a malformed body."""
    data = LiveData("vast", "vast", "replace", f"Vast.ai marketplace search {url}", fetched_at)
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for item in _listings(body, url):
        if not isinstance(item, dict) or not isinstance(item.get("gpu_name"), str):
            raise FetchError("a listing without a gpu_name", url=url)
        _number(item, "dph_total", url)  # refuse a malformed price wherever it is
        reliability = _number(item, "reliability2", url)
        if reliability is not None and reliability < min_reliability:
            data.skip(f"reliability below {min_reliability:g}")
            continue
        country = str(item.get("geolocation") or "").rsplit(",", 1)[-1].strip().upper()
        groups[(item["gpu_name"].strip(), _number(item, "num_gpus", url), country)].append(item)
    for (_name, _count, country), group in groups.items():
        if (row := _row(group, country, url)) is not None:
            data.rows.append(row)
        else:
            data.skip("no positive price")
    if not data.rows:
        raise FetchError("no priced listing; nothing to record", url=url)
    return data
