"""`gpubot kb import`: add (or replace) one provider's catalog, atomically, in persistent state.

The file is validated and converted first; only then is its text stored in the `catalog_imports` table of the
persistent state (SQLite in `GPUBOT_HOME`, or PostgreSQL shared by every machine) and the local knowledge base
rebuilt. A failure anywhere leaves the previous knowledge base and state exactly as they were. Because imports
live in the shared state, a rebuild or an upgrade never loses them, and every worker on every machine picks them
up (`imports_version()` tells a worker whether its knowledge base is behind).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from knowledge.catalog import CatalogError, read_catalog
from knowledge.offers import convert
from knowledge.state import engine, metadata

_PROVIDER = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")

catalog_imports = sa.Table(
    "catalog_imports",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("provider", sa.String(40), nullable=False, index=True),
    sa.Column("filename", sa.String(300), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("hosts_content", sa.Text),
    sa.Column("currency", sa.String(8), nullable=False),
    sa.Column("usd_per_unit", sa.Float, nullable=False),
    sa.Column("as_of", sa.String(40), nullable=False),
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("imported_at", sa.DateTime(timezone=True), nullable=False),
)


@dataclass(frozen=True, slots=True)
class ImportRecord:
    id: int
    provider: str
    filename: str
    content: str
    hosts_content: str | None
    currency: str
    usd_per_unit: float
    as_of: str
    source: str


def latest_imports() -> list[ImportRecord]:
    """The newest import of each provider."""
    newest = (
        sa.select(sa.func.max(catalog_imports.c.id)).group_by(catalog_imports.c.provider).scalar_subquery()
    )
    columns = [catalog_imports.c[name] for name in ImportRecord.__slots__]
    with engine().connect() as conn:
        rows = conn.execute(sa.select(*columns).where(catalog_imports.c.id.in_(newest)).order_by("id")).all()
    return [ImportRecord(*row) for row in rows]


def imports_version() -> int:
    """Grows with every import; a knowledge base built at a lower version is behind."""
    with engine().connect() as conn:
        return conn.execute(sa.select(sa.func.coalesce(sa.func.max(catalog_imports.c.id), 0))).scalar_one()


def catalog_terms(provider: str, currency: str | None, usd_per_unit: float | None):
    """(provider id, its bundled catalog or None, currency, USD per unit) for a catalog being added.

    The currency terms default to the bundled catalog's (Alibaba and Tencent: CNY at 0.138 USD); a non-USD catalog
    must say the rate its USD prices were converted at. Raises ValueError with a message for the user.
    """
    from knowledge.build import bundled_catalogs

    provider = provider.strip().lower()
    if not _PROVIDER.match(provider):
        raise ValueError(f"provider name {provider!r} must be lower-case letters, digits, '-' or '_'")
    bundled = {c.provider: c for c in bundled_catalogs()}.get(provider)
    currency = (currency or (bundled.currency if bundled else "USD")).upper()
    if usd_per_unit is None:
        usd_per_unit = bundled.usd_per_unit if bundled and bundled.currency == currency else 1.0
    if currency != "USD" and usd_per_unit == 1.0:
        raise ValueError(f"give --usd-per-unit for a {currency} catalog (the rate its USD prices were converted at)")
    if usd_per_unit <= 0:
        raise ValueError("--usd-per-unit must be positive")
    return provider, bundled, currency, usd_per_unit


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8-sig")  # read_catalog has validated the encoding


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
    from knowledge.build import CatalogSource, build
    from knowledge.paths import kb_path

    provider, bundled, currency, usd_per_unit = catalog_terms(provider, currency, usd_per_unit)
    if hosts is None and bundled and bundled.hosts_path:
        hosts = bundled.hosts_path  # e.g. GCP: a new accelerator file still needs the host-VM prices
    path = Path(path)
    catalog = read_catalog(path)
    host_catalog = read_catalog(hosts) if hosts else None
    if not catalog.rows:
        raise CatalogError(path, "no accelerator rows (only host-VM rows); pass it with --hosts instead")
    as_of = as_of or dt.date.today().isoformat()
    source = source or f"{path.name} imported with gpubot kb import"
    src = CatalogSource(provider, path, Path(hosts) if hosts else None, currency, usd_per_unit, as_of, source)
    result = convert(provider, catalog, hosts=host_catalog.hosts if host_catalog else (),
                     currency=src.currency_info(), source=source, as_of=as_of)
    if not result.offers:
        raise CatalogError(path, "no priced offers in this file (every price empty or skipped)")

    content = _text(path)
    with engine().begin() as conn:
        new_id = conn.execute(catalog_imports.insert().values(
            provider=provider, filename=path.name, content=content,
            hosts_content=_text(Path(hosts)) if hosts else None, currency=currency, usd_per_unit=usd_per_unit,
            as_of=as_of, source=source, sha256=hashlib.sha256(content.encode()).hexdigest(),
            imported_at=dt.datetime.now(dt.UTC),
        )).inserted_primary_key[0]
    try:
        report = build(kb_path())
    except BaseException:
        with engine().begin() as conn:  # undo: the knowledge base was not replaced, so neither is the import
            conn.execute(catalog_imports.delete().where(catalog_imports.c.id == new_id))
        raise
    from knowledge.build import catalog_notes

    return {
        "provider": provider,
        "notes": catalog_notes(provider, catalog, result),
        "rows": len(catalog.rows),
        "host_rows": len(catalog.hosts) + (len(host_catalog.hosts) if host_catalog else 0),
        "duplicates": catalog.duplicates,
        "offers": len(result.offers),
        "skipped": result.skipped,
        "kb_offers": report["offers"],
    }
