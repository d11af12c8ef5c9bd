"""Where each bundled cloud's prices are refreshed from: `knowledge/data/catalog_urls.csv`, one row per provider.

    provider, kind, url, source
    aws, catalog, https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/aws/vms.csv, ...
    azure, azure_api, https://prices.azure.com/api/retail/prices, Azure Retail Prices API (live; GPU VM sizes)

`kind` is `catalog` (a file in SkyPilot's format, downloaded and recorded as a snapshot) or `azure_api` (the live
Retail Prices API, `knowledge.catalog.fetchers.azure`). SkyPilot's published catalogs cover aws, gcp, oci, lambda,
runpod, nebius, hyperstack, primeintellect and shadeform; Alibaba and Tencent come from the `sugarlxn` fork,
whose jobs call the vendors' own pricing APIs. The clock refreshes every row unless `GPUBOT_REFRESH_SOURCES`
names fewer; `GPUBOT_CATALOG_URL_<NAME>` overrides one row's URL (or adds a provider the file does not list).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

from knowledge.paths import DATA_DIR

__all__ = ["KINDS", "RefreshSource", "default_names", "refresh_sources"]

CATALOG_URLS = DATA_DIR / "catalog_urls.csv"
KINDS = ("catalog", "azure_api")


@dataclass(frozen=True, slots=True)
class RefreshSource:
    """One provider's published prices: what kind of source, where, and how to cite it."""

    provider: str
    kind: str
    url: str
    source: str


@lru_cache(maxsize=1)
def refresh_sources() -> dict[str, RefreshSource]:
    """provider -> its refresh source, in the file's order. Raises ValueError for a malformed row."""
    out: dict[str, RefreshSource] = {}
    with CATALOG_URLS.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            provider, kind, url = (row.get(k, "").strip() for k in ("provider", "kind", "url"))
            if not provider or kind not in KINDS or not url.startswith("https://"):
                raise ValueError(
                    f"{CATALOG_URLS.name} line {line}: need provider, kind ({'/'.join(KINDS)}) and an https URL"
                )
            out[provider] = RefreshSource(provider, kind, url, row.get("source", "").strip() or url)
    return out


def default_names() -> str:
    """The default of GPUBOT_REFRESH_SOURCES: every provider in the file, comma-separated."""
    return ",".join(refresh_sources())
