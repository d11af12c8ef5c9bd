"""Which migration the state database should be at, and whether a SQLite state file is there, without SQLAlchemy
or Alembic: a CLI start reads a current SQLite state with the plain driver (`knowledge.history.reader`).
"""

from __future__ import annotations

import re
import sqlite3
from functools import cache
from pathlib import Path

__all__ = ["head_revision", "sqlite_at_head"]

_REVISION = re.compile(r'^(down_revision|revision)\s*=\s*"([^"]*)"', re.MULTILINE)
MIGRATIONS = Path(__file__).resolve().parent / "migrations" / "versions"


@cache
def head_revision() -> str:
    """The newest migration's revision id, read from `knowledge/state/migrations/versions` (the one nothing revises)."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for path in MIGRATIONS.glob("*.py"):
        for kind, value in _REVISION.findall(path.read_text(encoding="utf-8")):
            (revisions if kind == "revision" else revised).add(value)
    heads = revisions - revised
    if len(heads) != 1:
        raise RuntimeError(f"knowledge/state/migrations must have one head, found {sorted(heads)}")
    return heads.pop()


def sqlite_at_head(conn: sqlite3.Connection) -> bool:
    """The SQLite state behind `conn` is at the newest migration (False when it cannot say: no table, locked)."""
    try:
        versions = [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.Error:
        return False
    return versions == [head_revision()]
