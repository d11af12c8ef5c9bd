"""A knowledge base's whole content, for comparing two builds: every schema entry, then every table's rows in rowid
order, leaving out what differs between any two builds (`meta.built_at`, the per-import `imports_version` token)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

VOLATILE_META = ("built_at", "imports_version")


def dump(path: Path) -> Iterator[tuple]:
    """(kind, name, sql) for every schema entry in creation order, then (table, row...) for every row."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        entries = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()
        yield from entries
        for kind, name, _table, sql in entries:
            if kind != "table" or (sql or "").startswith("CREATE VIRTUAL"):
                continue  # a virtual table's rows are its shadow tables'
            where = f" WHERE key NOT IN {VOLATILE_META}" if name == "meta" else ""
            order = "" if "WITHOUT ROWID" in sql.upper() else " ORDER BY rowid"  # else: primary key order
            for row in conn.execute(f"SELECT * FROM [{name}]{where}{order}"):
                yield (name, *row)


def first_difference(a: Path, b: Path) -> tuple | None:
    """The first entry where the two knowledge bases differ ((a's, b's)), or None when they are the same."""
    left, right = dump(a), dump(b)
    for x, y in zip(left, right, strict=False):
        if x != y:
            return x, y
    rest_a, rest_b = next(left, None), next(right, None)
    return None if rest_a is None and rest_b is None else (rest_a, rest_b)
