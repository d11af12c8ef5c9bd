"""The stored imports' version token, read the quick way: straight from a SQLite state file, with neither
SQLAlchemy nor Alembic (about 0.3 s of a CLI start). `knowledge.catalog.imports.imports_version` computes the same token
through SQLAlchemy (PostgreSQL, or when this cannot tell); `knowledge.kb.opener.stored_imports_version` tries this
first.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from knowledge.state.url import database_url

_VERSIONED = ("id", "provider", "sha256", "currency", "usd_per_unit", "as_of", "source", "imported_at")


def version_token(rows) -> str:
    """The token of stored imports' `_VERSIONED` rows (with the hosts text's length), in id order."""
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
        rows = conn.execute(
            f"SELECT {', '.join(_VERSIONED)}, length(hosts_content) FROM catalog_imports ORDER BY id"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        return "0" if "no such table" in str(exc) else None
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return version_token(rows)
