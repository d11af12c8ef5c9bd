"""When two sources price the same GCP offer, compare them at build time and say which one ranks, and why.

The second source is Google's Cloud Billing Catalog as extracted weekly by Cyclenerd's price calculator
(`data/history/gcp_weekly/gcp_gpu_prices_last_snapshot.csv`, 2026-07-30, Apache-2.0; see its README). It is
compared with:

- every GCP catalog offer (accelerator + host VM, on-demand `hour` and spot `hour_spot`, whole VM), and
- the committed-use file's own on-demand figure (`price_terms`, term `ondemand`).

Where two figures differ by more than `THRESHOLD` (5 %), the offer carries the other one in `other_prices`
(`price_per_hour_usd`, `price_per_gpu_hour_usd`, `source`, `as_of`) and says in `price_trust_reason` which one
it ranks with. The rule (`trusted`): newest first, when both dates are known; a figure whose date is unknown
(SkyPilot's catalogs record none) never beats a dated one; at equal dates the vendor's own billing data wins over
a third-party extract. Agreeing figures (within 5 %) change nothing.
"""

from __future__ import annotations

import csv
from functools import cache

from knowledge.paths import DATA_DIR

SNAPSHOT_CSV = DATA_DIR / "history" / "gcp_weekly" / "gcp_gpu_prices_last_snapshot.csv"
THRESHOLD = 0.05
BILLING_SOURCE = (
    "Google Cloud Billing Catalog via Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml "
    "@fd66b26 (knowledge/data/history/gcp_weekly, Apache-2.0)"
)
_UNKNOWN_DATE_WORDS = ("date not recorded", "date unknown", "not recorded")
_COLUMNS = {"on_demand": "hour", "spot": "hour_spot"}


@cache
def billing_snapshot() -> dict[tuple[str, str], dict]:
    """(machine type, region) -> {"on_demand", "spot", "as_of", "line"} for the GPU machine types."""
    found: dict[tuple[str, str], dict] = {}
    with SNAPSHOT_CSV.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            if not row["gpu_name"]:
                continue  # N1 host types: VM only, no GPU price to compare
            found[row["name"], row["region"]] = {
                "on_demand": float(row["hour"]) if row["hour"] else None,
                "spot": float(row["hour_spot"]) if row["hour_spot"] else None,
                "as_of": row["snapshot_date"][:10],
                "line": line,
                "local_ssd_gb": float(row["local_ssd_gb"]) if row["local_ssd_gb"] else 0.0,
            }
    return found


def date_known(offer: dict) -> bool:
    if offer.get("as_of_known") is False:
        return False
    source = (offer.get("source") or "").lower()
    return not any(word in source for word in _UNKNOWN_DATE_WORDS)


def trusted(catalog: dict, billing_as_of: str) -> tuple[str, str]:
    """("catalog" | "billing", why) for one disagreement."""
    if date_known(catalog) and catalog["as_of"] > billing_as_of:
        return "catalog", f"the catalog figure is newer ({catalog['as_of']} vs {billing_as_of})"
    if not date_known(catalog):
        return "billing", (
            f"Google's billing catalog is dated ({billing_as_of}) and is the vendor's own billing data; "
            "the catalog's upstream date is not recorded and it is a third-party extract"
        )
    if catalog["as_of"] < billing_as_of:
        return "billing", f"the billing-catalog figure is newer ({billing_as_of} vs {catalog['as_of']})"
    return "billing", f"same date ({billing_as_of}): the vendor's own billing data over a third-party extract"


def _differs(a: float, b: float) -> float | None:
    """The relative difference of `a` from `b` when it is above the threshold, else None."""
    if b <= 0:
        return None
    diff = (a - b) / b
    return diff if abs(diff) > THRESHOLD else None


def apply(offers: list[dict], terms: list[dict]) -> list[dict]:
    """Annotate (and, where the billing figure is trusted, re-price) GCP offers in place; one report row per
    disagreement (kind `offer` or `commitment_file`)."""
    snapshot = billing_snapshot()
    report: list[dict] = []
    for offer in offers:
        if offer["provider"] != "gcp" or offer.get("kind") != "catalog" or offer["pricing"] not in _COLUMNS:
            continue
        billed = snapshot.get((offer["instance_type"], offer["region"]))
        value = billed[offer["pricing"]] if billed else None
        if billed is None or not value:
            continue
        diff = _differs(offer["price_per_hour_usd"], value)
        if diff is not None:
            report.append(_settle(offer, billed, value, diff))
    return report + _commitment_disagreements(terms, snapshot)


def _settle(offer: dict, billed: dict, value: float, diff: float) -> dict:
    """Rank `offer` with the trusted one of its two figures (the other kept beside it, and why); its report row."""
    winner, why = trusted(offer, billed["as_of"])
    gpus = offer["gpu_count"] or 1
    catalog_figure = {
        "price_per_hour_usd": offer["price_per_hour_usd"],
        "price_per_gpu_hour_usd": offer["price_per_hour_usd"] / gpus,
        "source": offer["source"],
        "as_of": offer["as_of"],
        "as_of_known": date_known(offer),
    }
    billing_figure = {
        "price_per_hour_usd": value,
        "price_per_gpu_hour_usd": value / gpus,
        "source": BILLING_SOURCE,
        "as_of": billed["as_of"],
        "as_of_known": True,
        "line": billed["line"],
    }
    ssd = f", incl. the {billed['local_ssd_gb']:g} GB local SSD GCP attaches" if billed["local_ssd_gb"] else ""
    reason = f"sources differ by {abs(diff) * 100:.0f} %; ranked with the "
    if winner == "billing":
        offer.update(
            price_per_hour=value,
            price_per_hour_usd=value,
            price_per_gpu_hour=value / gpus,
            price_per_gpu_hour_usd=value / gpus,
            source=billing_figure["source"],
            as_of=billed["as_of"],
            other_prices=[catalog_figure],
        )
        reason += f"billing-catalog figure (whole VM{ssd}), because {why}"
    else:
        offer["other_prices"] = [billing_figure]
        reason += f"catalog figure, because {why}"
    offer["price_trust_reason"] = reason
    return {
        "kind": "offer",
        "instance_type": offer["instance_type"],
        "region": offer["region"],
        "pricing": offer["pricing"],
        "catalog_usd": catalog_figure["price_per_hour_usd"],
        "billing_usd": value,
        "diff_pct": round(diff * 100, 1),
        "trusted": winner,
    }


def _commitment_disagreements(terms: list[dict], snapshot: dict) -> list[dict]:
    """Report rows for the commitment file's on-demand figures that the billing catalog contradicts (not changed)."""
    report = []
    for term in terms:
        if term.get("provider") != "gcp" or term.get("term") != "ondemand":
            continue
        billed = snapshot.get((term["instance_type"], term["region"]))
        if billed and billed["on_demand"] and (diff := _differs(term["price_per_hour"], billed["on_demand"])):
            report.append(
                {
                    "kind": "commitment_file",
                    "instance_type": term["instance_type"],
                    "region": term["region"],
                    "pricing": "on_demand",
                    "catalog_usd": term["price_per_hour"],
                    "billing_usd": billed["on_demand"],
                    "diff_pct": round(diff * 100, 1),
                    "trusted": "billing",
                }
            )
    return report


def compared_counts(offers: list[dict], terms: list[dict]) -> dict[str, int]:
    """How many figures had a billing-catalog counterpart (for `kb stats`)."""
    snapshot = billing_snapshot()
    return {
        "offers_compared": sum(
            1
            for o in offers
            if o["provider"] == "gcp"
            and o.get("kind") == "catalog"
            and o["pricing"] in _COLUMNS
            and (o["instance_type"], o["region"]) in snapshot
        ),
        "commitment_figures_compared": sum(
            1
            for t in terms
            if t.get("provider") == "gcp"
            and t.get("term") == "ondemand"
            and (t["instance_type"], t["region"]) in snapshot
        ),
    }
