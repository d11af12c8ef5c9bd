"""Which catalogs the knowledge base is built from: the bundled manifest plus the imports kept in the state.

Data only, no building: `knowledge.kb.build` loads these sources, `knowledge.catalog.importer` adds one.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from knowledge.catalog.imports import ImportRecord, latest_imports
from knowledge.catalog.offers import Currency
from knowledge.catalog.reader import Catalog, parse_catalog, read_catalog
from knowledge.paths import CATALOG_DIR

_PROVIDER = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


@dataclass(frozen=True, slots=True)
class CatalogSource:
    """One catalog to load: bundled (from the manifest) or imported by a user."""

    provider: str
    path: Path
    hosts_path: Path | None
    currency: str
    usd_per_unit: float
    as_of: str
    source: str
    text: str | None = None  # an import's content, kept in persistent state rather than in a file
    hosts_text: str | None = None
    as_of_known: bool = True  # False: `as_of` is only the day the file was bundled (upstream date unknown)

    def read(self) -> tuple[Catalog, Catalog | None]:
        catalog = parse_catalog(self.text, self.path) if self.text is not None else read_catalog(self.path)
        return catalog, self.read_hosts()

    def read_hosts(self) -> Catalog | None:
        if self.hosts_text is not None:
            return parse_catalog(self.hosts_text, self.hosts_path or "hosts")
        return read_catalog(self.hosts_path) if self.hosts_path else None

    def currency_info(self) -> Currency:
        if self.currency == "USD":
            return Currency()
        note = (
            f"{self.currency} as returned by the vendor; the catalog stored USD at {self.usd_per_unit} USD per "
            f"{self.currency}"
        )
        return Currency(self.currency, self.usd_per_unit, note)


def bundled_catalogs(catalog_dir: Path = CATALOG_DIR) -> list[CatalogSource]:
    """The catalogs of `catalog_dir`'s manifest.csv (the bundled ones; tests pass a small subset of them)."""
    with (catalog_dir / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        return [
            CatalogSource(
                provider=row["provider"],
                path=catalog_dir / row["file"],
                hosts_path=catalog_dir / row["hosts_file"] if row["hosts_file"] else None,
                currency=row["currency"],
                usd_per_unit=float(row["usd_per_unit"]),
                as_of=row["as_of"],
                source=row["source"],
                as_of_known=row.get("as_of_known", "true").strip().lower() != "false",
            )
            for row in csv.DictReader(handle)
        ]


def imported_catalogs() -> list[CatalogSource]:
    """Catalogs added with `gpubot kb import` (or a price refresh): the newest per provider, from the state."""
    return [imported_source(r) for r in latest_imports()]


def imported_source(r: ImportRecord) -> CatalogSource:
    """A stored import as a build source (its file's name only: the text is the stored one)."""
    return CatalogSource(
        provider=r.provider,
        path=Path(r.filename),
        hosts_path=Path(f"{r.provider}-hosts.csv") if r.hosts_content else None,
        currency=r.currency,
        usd_per_unit=r.usd_per_unit,
        as_of=r.as_of,
        source=r.source,
        text=r.content,
        hosts_text=r.hosts_content,
        as_of_known=r.as_of_known is not False,
    )


def all_catalogs(catalog_dir: Path = CATALOG_DIR, pending: CatalogSource | None = None) -> list[CatalogSource]:
    """Bundled catalogs (of `catalog_dir`), each replaced by a user import for the same provider. `pending`: an
    import being stored right now, taken as the newest (what the state will return once it has committed)."""
    stored = imported_catalogs()
    if pending is not None:
        stored = [c for c in stored if c.provider != pending.provider] + [pending]
    imported = {c.provider: c for c in stored}
    bundled = [c for c in bundled_catalogs(catalog_dir) if c.provider not in imported]
    return bundled + list(imported.values())


def catalog_terms(provider: str, currency: str | None, usd_per_unit: float | None):
    """(provider id, its bundled catalog or None, currency, USD per unit) for a catalog being added.

    The currency terms default to the bundled catalog's (Alibaba and Tencent: CNY at 0.138 USD); a non-USD catalog
    must say the rate its USD prices were converted at. Raises ValueError with a message for the user.
    """
    provider = provider.strip().lower()
    if not _PROVIDER.match(provider):
        raise ValueError(f"provider name {provider!r} must be lower-case letters, digits, '-' or '_'")
    bundled = {c.provider: c for c in bundled_catalogs()}.get(provider)
    currency = (currency or (bundled.currency if bundled else "USD")).upper()
    if usd_per_unit is None:
        usd_per_unit = bundled.usd_per_unit if bundled and bundled.currency == currency else 1.0
    if currency != "USD" and usd_per_unit == 1.0:
        raise ValueError(f"give --usd-per-unit for a {currency} catalog (the rate its USD prices were converted at)")
    if not (math.isfinite(usd_per_unit) and 1e-6 <= usd_per_unit <= 1000):  # 1e-320 would make prices infinite
        raise ValueError("--usd-per-unit must be a number from 0.000001 to 1000 (USD per unit of the currency)")
    return provider, bundled, currency, usd_per_unit
