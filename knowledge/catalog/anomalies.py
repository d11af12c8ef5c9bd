"""Prices that look wrong, kept and marked "suspect: ..." (issue 26), never silently dropped and never a headline
minimum without the mark. Three checks, each with the figures that raised it:

- a list price (on-demand or committed) more than `BELOW_MEDIAN`x below the median of the same instance type across
  regions (GCP's a2-megagpu-16g in northamerica-northeast2 at $0.61/GPU-h, 2022-2024, where every other region
  asks >= $2.9). Spot prices are markets that really differ by region and zone: they are not held to the median;
- a spot price equal to (or above) the on-demand price of the same offer (no discount: likely a copied figure);
- a committed / reserved price not below the on-demand price of the same offer (a2-ultragpu-1g's 1-year
  commitment equals on-demand in GCP's 2024 billing data).

Pure functions over rows with `instance_type`, `region`, `pricing` and a USD price, returning a reason as data
(`code` and figures; `handlers.suspect` words it in the answer's language); `mark` sets `suspect` (JSON) on offer
dicts in place (the knowledge-base build), `point_suspect` judges one history point.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping

BELOW_MEDIAN = 3.0  # "more than 3x below the median of the same instance type across regions"
MIN_REGIONS = 3  # a median needs at least this many regions to say anything
_EPS = 1e-9


def below_median(price: float, others: Iterable[float]) -> dict | None:
    """A reason when `price` is more than 3x below the median of `others` (every region's price, its own included):
    {"code": "below_median", "ratio", "regions", "median"} (USD per hour)."""
    values = [v for v in others if v > 0]
    return _below(price, len(values), statistics.median(values) if len(values) >= MIN_REGIONS else 0.0)


def _below(price: float, regions: int, median: float) -> dict | None:
    """`below_median` from the count and median of the positive prices."""
    if regions < MIN_REGIONS or price <= 0:
        return None
    if price * BELOW_MEDIAN < median:
        return {"code": "below_median", "ratio": round(median / price, 2), "regions": regions, "median": median}
    return None


def not_below_on_demand(pricing: str, price: float, on_demand: float | None) -> dict | None:
    """A reason when a spot or committed price is not below the on-demand price of the same offer:
    {"code": "spot_not_below" | "commitment_not_below", "equal": bool, "on_demand"} (USD per hour)."""
    if on_demand is None or on_demand <= 0 or pricing == "on_demand" or price + _EPS < on_demand:
        return None
    code = "spot_not_below" if pricing == "spot" else "commitment_not_below"
    return {"code": code, "equal": abs(price - on_demand) <= 1e-6 * on_demand, "on_demand": on_demand}


def mark(offers: list[dict], price_key: str = "price_per_hour_usd") -> int:
    """Set `suspect` on the catalog and pricing offers that fail a check (in place); how many were marked."""
    by_type: dict[tuple, list[float]] = defaultdict(list)
    on_demand: dict[tuple, float] = {}
    for o in offers:
        if o.get("kind") == "article":
            continue
        by_type[(o["provider"], o["instance_type"], o["pricing"])].append(o[price_key])
        if o["pricing"] == "on_demand":
            key = (o["provider"], o["instance_type"], o["region"])
            on_demand[key] = min(o[price_key], on_demand.get(key, o[price_key]))
    medians: dict[tuple, tuple[int, float]] = {}  # per (provider, instance type, pricing): computed once
    for key, prices in by_type.items():
        if key[2] != "spot":  # spot prices are not held to the median
            values = [v for v in prices if v > 0]
            medians[key] = (len(values), statistics.median(values) if len(values) >= MIN_REGIONS else 0.0)
    marked = 0
    for o in offers:
        if o.get("kind") == "article":
            continue
        reason = not_below_on_demand(
            o["pricing"], o[price_key], on_demand.get((o["provider"], o["instance_type"], o["region"]))
        )
        if not reason and o["pricing"] != "spot":
            reason = _below(o[price_key], *medians[(o["provider"], o["instance_type"], o["pricing"])])
        if reason:
            o["suspect"] = json.dumps(reason)
            marked += 1
    return marked


def point_suspect(pricing: str, cheapest, rows: Iterable, on_demand: Mapping[tuple[str, str], float]) -> dict | None:
    """Why the cheapest row of one history point is suspect (None: it is not): `rows` are that point's offers
    (one snapshot, one pricing), `on_demand` the same snapshot's on-demand prices per (instance type, region)."""
    same_type = [r.price_per_hour_usd for r in rows if r.instance_type == cheapest.instance_type]
    here = on_demand.get((cheapest.instance_type, cheapest.region))
    return not_below_on_demand(pricing, cheapest.price_per_hour_usd, here) or _list_below_median(
        pricing, cheapest.price_per_hour_usd, same_type
    )


def _list_below_median(pricing: str, price: float, others: Iterable[float]) -> dict | None:
    return None if pricing == "spot" else below_median(price, others)
