"""AWS list-price history from the Price List's version index: each published EC2 version is one dated snapshot.

The service index's `versionIndexUrl` (`/offers/v1.0/aws/AmazonEC2/index.json`) lists every version the bulk API
has published, `{"versions": {"<id>": {"versionEffectiveBeginDate": ..., "offerVersionUrl": ...}}}`; a region's
offer file at one version is `/offers/v1.0/aws/AmazonEC2/<id>/<region>/index.csv`. `backfill` streams the newest
`keep` versions not yet recorded (for a few regions: each file is hundreds of MB), prices the AWS catalog's
accelerator rows with them exactly as the live refresh does, and records each as a snapshot of the history
provider `aws_price_list`, dated by `versionEffectiveBeginDate` (as GCP's weekly file dates the `gcp` series).
It is a separate history provider so that an old version never becomes the `aws` snapshot the digest compares
against.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import httpx

from knowledge.catalog.fetchers import FetchError
from knowledge.catalog.fetchers.aws_price_list import Budget, _json, offer_url, stream_region, versions
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow, to_catalog
from knowledge.clock import utc_now

__all__ = ["HISTORY_PROVIDER", "HISTORY_REGIONS", "backfill"]

HISTORY_PROVIDER = "aws_price_list"
HISTORY_REGIONS = ("us-east-1", "us-west-2")


def _when(text: str) -> dt.datetime | None:
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def backfill(
    client: httpx.Client,
    version_index_url: str,
    *,
    base_text: str,
    families: set[str],
    regions: Iterable[str] = HISTORY_REGIONS,
    keep: int = 2,
    max_bytes: int,
    seconds: float,
) -> list[dict]:
    """Record the newest `keep` versions newer than the last one recorded; one report per version recorded."""
    from knowledge.catalog.offers import convert
    from knowledge.catalog.reader import parse_catalog
    from knowledge.history import snapshots as history

    budget = Budget(max_bytes, seconds)
    _, index = _json(client, version_index_url, budget)
    latest = history.latest_snapshot(HISTORY_PROVIDER)
    dated = [(v, _when(begin)) for v, begin in versions(index, version_index_url)]
    since = utc_now(latest.taken_at) if latest else None
    wanted = [(v, when) for v, when in dated if when and (since is None or when > since)][-keep:]
    host = httpx.URL(version_index_url)
    reports = []
    for version, when in wanted:
        data = LiveData(HISTORY_PROVIDER, "aws", "price", f"AWS Price List bulk API AmazonEC2 version {version}", when)
        for region in regions:
            prices = stream_region(client, str(host.join(offer_url(version, region))), families, budget)
            data.rows += [LiveRow(instance, region, price=price) for instance, price in sorted(prices.items())]
        if not data.rows:
            raise FetchError(f"version {version} priced no accelerator offer", url=version_index_url)
        text, _ = to_catalog(data, base_text)
        catalog = parse_catalog(text, f"AmazonEC2 {version}")
        priced = convert("aws", catalog, source="(catalog row)", as_of=when.date().isoformat()).offers
        offers = [o for o in priced if o["source"] == data.cite and o["pricing"] == "on_demand"]  # this version's
        result = history.record_snapshot(HISTORY_PROVIDER, offers, data.cite, when, kind="version")
        reports.append({"version": version, "taken_at": when.isoformat(), "offers": len(offers), **_created(result)})
    return reports


def _created(result) -> dict:
    return {"created": result.created, "seq": result.snapshot.seq}
