"""The imported catalogs kept in persistent state (`catalog_imports`), and the version token of that set.

Imports are stored in the persistent state (SQLite in `GPUBOT_HOME`, or PostgreSQL shared by every machine), so a
rebuild or an upgrade never loses them and every worker on every machine picks them up (`imports_version()` tells
a worker whether its knowledge base is behind). Storage only: `knowledge.catalog.importer` validates, stores and
rebuilds; `knowledge.catalog.sources` turns the stored rows into build sources.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from knowledge.catalog.imports_version import _VERSIONED, imports_version_quick, version_token
from knowledge.state.db import engine, metadata

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
    # False: `as_of` is only the day the rows' upstream file was bundled (a live source updated some of its rows)
    sa.Column("as_of_known", sa.Boolean),
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
    as_of_known: bool | None = None


def latest_imports() -> list[ImportRecord]:
    """The newest import of each provider."""
    newest = sa.select(sa.func.max(catalog_imports.c.id)).group_by(catalog_imports.c.provider).scalar_subquery()
    columns = [catalog_imports.c[name] for name in ImportRecord.__slots__]
    with engine().connect() as conn:
        rows = conn.execute(sa.select(*columns).where(catalog_imports.c.id.in_(newest)).order_by("id")).all()
    return [ImportRecord(*row) for row in rows]


def prune_imports(provider: str, keep: int = 3) -> int:
    """Delete a provider's imports older than its newest `keep` (only the newest serves); how many were deleted.

    The live sources import a provider every few minutes (issue 28): without this the state would keep every copy.
    """
    newest = (
        sa.select(catalog_imports.c.id)
        .where(catalog_imports.c.provider == provider)
        .order_by(catalog_imports.c.id.desc())
        .limit(keep)
    )
    with engine().begin() as conn:
        kept = [row[0] for row in conn.execute(newest)]
        if len(kept) < keep:
            return 0
        old = catalog_imports.delete().where(catalog_imports.c.provider == provider, catalog_imports.c.id < min(kept))
        return conn.execute(old).rowcount


def imports_version() -> str:
    """A token of every stored import's identity and content: it changes with every import, cancellation or
    replacement and never comes back for different imports (a reused id with other content is another token).
    A knowledge base built at another token is behind. "0" when there are no imports."""
    return version_token(versioned_rows())


def versioned_rows() -> list[tuple]:
    """What `imports_version()` is the token of: each stored import's identity, in id order (the id first)."""
    columns = [catalog_imports.c[name] for name in _VERSIONED]
    with engine().connect() as conn:
        rows = conn.execute(
            sa.select(*columns, sa.func.length(catalog_imports.c.hosts_content)).order_by(catalog_imports.c.id)
        ).all()
    return [tuple(row) for row in rows]


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
