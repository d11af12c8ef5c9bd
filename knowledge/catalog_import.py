"""`gpubot kb import`: add (or replace) one provider's catalog, atomically, in persistent state.

The file is validated and converted first; only then is its text stored in the `catalog_imports` table of the
persistent state and the local knowledge base rebuilt. A failure anywhere leaves the previous knowledge base and
state exactly as they were. This module sits above the store (`knowledge.imports`), the sources
(`knowledge.catalog_sources`), the builder and the price history: it is the one that writes and rebuilds.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from knowledge import history
from knowledge.catalog import CatalogError, read_bounded, read_catalog
from knowledge.catalog_sources import CatalogSource, catalog_terms
from knowledge.imports import catalog_imports
from knowledge.offers import convert
from knowledge.paths import kb_path
from knowledge.state import engine


def _date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise ValueError(f"--as-of {text[:40]!r} is not a date (YYYY-MM-DD)") from None


def _text(path: Path) -> str:
    return read_bounded(path).decode("utf-8-sig")  # read_catalog has validated the encoding


def import_catalog(
    path: str | Path,
    provider: str,
    *,
    hosts: str | Path | None = None,
    currency: str | None = None,
    usd_per_unit: float | None = None,
    source: str | None = None,
    as_of: str | None = None,
) -> dict:
    """Validate, store and load one catalog for `provider`; return a report. Raises CatalogError/ValueError."""
    from knowledge import build as builder  # through the module, so that a test can replace `build.build`

    provider, bundled, currency, usd_per_unit = catalog_terms(provider, currency, usd_per_unit)
    if hosts is None and bundled and bundled.hosts_path:
        hosts = bundled.hosts_path  # e.g. GCP: a new accelerator file still needs the host-VM prices
    path = Path(path)
    catalog = read_catalog(path)
    host_catalog = read_catalog(hosts) if hosts else None
    if not catalog.rows:
        raise CatalogError(path, "no accelerator rows (only host-VM rows); pass it with --hosts instead")
    as_of = _date(as_of) if as_of else dt.date.today().isoformat()
    source = source or f"{path.name} imported with gpubot kb import"
    src = CatalogSource(provider, path, Path(hosts) if hosts else None, currency, usd_per_unit, as_of, source)
    result = convert(
        provider,
        catalog,
        hosts=host_catalog.hosts if host_catalog else (),
        currency=src.currency_info(),
        source=source,
        as_of=as_of,
    )
    if not result.offers:
        raise CatalogError(path, "no priced offers in this file (every price empty or skipped)")

    content = _text(path)
    with engine().begin() as conn:
        new_id = conn.execute(
            catalog_imports.insert().values(
                provider=provider,
                filename=path.name,
                content=content,
                hosts_content=_text(Path(hosts)) if hosts else None,
                currency=currency,
                usd_per_unit=usd_per_unit,
                as_of=as_of,
                source=source,
                sha256=hashlib.sha256(content.encode()).hexdigest(),
                imported_at=dt.datetime.now(dt.UTC),
            )
        ).inserted_primary_key[0]
    try:
        report = builder.build(kb_path())
        snapshot = _record_snapshot(provider, path, hosts, currency, usd_per_unit, source, as_of)
    except BaseException:
        with engine().begin() as conn:  # undo: the knowledge base was not replaced, so neither is the import
            conn.execute(catalog_imports.delete().where(catalog_imports.c.id == new_id))
        raise
    return {
        "provider": provider,
        "notes": builder.catalog_notes(provider, catalog, result),
        "rows": len(catalog.rows),
        "host_rows": len(catalog.hosts) + (len(host_catalog.hosts) if host_catalog else 0),
        "duplicates": catalog.duplicates,
        "offers": len(result.offers),
        "skipped": result.skipped,
        "kb_offers": report["offers"],
        "snapshot": snapshot,
    }


def _record_snapshot(
    provider: str, path: Path, hosts, currency: str, usd_per_unit: float, source: str, as_of: str
) -> str:
    """Record the imported prices in the price history (README: `kb import` records a snapshot); "unchanged"
    when they equal the provider's latest snapshot."""
    offers = history.offers_from_catalog(
        provider,
        path,
        hosts_path=Path(hosts) if hosts else None,
        currency=currency,
        usd_per_unit=usd_per_unit,
        source=source,
        as_of=as_of,
    )
    result = history.record_snapshot(provider, offers, source, kind="catalog")
    return "recorded" if result.created else "unchanged"
