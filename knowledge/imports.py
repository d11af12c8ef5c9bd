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
import math
import re
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from knowledge.catalog import CatalogError, read_bounded, read_catalog
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


def imports_version() -> str:
    """A token of every stored import's identity and content: it changes with every import, cancellation or
    replacement and never comes back for different imports (a reused id with other content is another token).
    A knowledge base built at another token is behind. "0" when there are no imports."""
    columns = [catalog_imports.c[name] for name in _VERSIONED]
    with engine().connect() as conn:
        rows = conn.execute(sa.select(*columns, sa.func.length(catalog_imports.c.hosts_content))
                            .order_by(catalog_imports.c.id)).all()
    return _token(rows)


_VERSIONED = ("id", "provider", "sha256", "currency", "usd_per_unit", "as_of", "source", "imported_at")


def _token(rows) -> str:
    if not rows:
        return "0"
    digest = hashlib.sha256()
    for row in rows:
        *fields, imported_at, hosts_length = row
        stamp = imported_at if isinstance(imported_at, str) else imported_at.strftime("%Y-%m-%d %H:%M:%S.%f")
        digest.update(repr((*fields, stamp[:26], hosts_length)).encode())
    return f"{len(rows)}-{digest.hexdigest()[:20]}"


def imports_version_quick() -> str | None:
    """`imports_version()` without the migration check and SQLAlchemy start-up (a CLI's start): read a SQLite
    state file directly; None when that is not possible (PostgreSQL, no file yet, unreadable)."""
    import sqlite3

    from knowledge.state import database_url

    url = database_url()
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///")
    if not Path(path).exists():
        return "0"  # no state yet: no imports
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        rows = conn.execute(f"SELECT {', '.join(_VERSIONED)}, length(hosts_content) FROM catalog_imports "
                            "ORDER BY id").fetchall()
    except sqlite3.OperationalError as exc:
        return "0" if "no such table" in str(exc) else None
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return _token(rows)


def current_version() -> str | None:
    """`imports_version()`, the quick way when possible; None when the state cannot be read."""
    try:
        current = imports_version_quick()
        return current if current is not None else imports_version()
    except Exception:  # noqa: BLE001 - the state cannot be read: answer from the knowledge base we have
        return None


def is_current(kb_version: str | None) -> bool:
    """Whether a knowledge base built at `kb_version` holds the stored imports (True when that cannot be told)."""
    current = current_version()
    return current is None or (kb_version or "0") == current


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
    if not (math.isfinite(usd_per_unit) and 0 < usd_per_unit <= 1000):
        raise ValueError("--usd-per-unit must be a positive number of at most 1000 (USD per unit of the currency)")
    return provider, bundled, currency, usd_per_unit


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
    as_of = _date(as_of) if as_of else dt.date.today().isoformat()
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
        snapshot = _record_snapshot(provider, path, hosts, currency, usd_per_unit, source, as_of)
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
        "snapshot": snapshot,
    }


def _record_snapshot(provider: str, path: Path, hosts, currency: str, usd_per_unit: float, source: str,
                     as_of: str) -> str:
    """Record the imported prices in the price history (README: `kb import` records a snapshot); "unchanged"
    when they equal the provider's latest snapshot."""
    from knowledge import history

    offers = history.offers_from_catalog(provider, path, hosts_path=Path(hosts) if hosts else None,
                                         currency=currency, usd_per_unit=usd_per_unit, source=source, as_of=as_of)
    result = history.record_snapshot(provider, offers, source, kind="catalog")
    return "recorded" if result.created else "unchanged"
