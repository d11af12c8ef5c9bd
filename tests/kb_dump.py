"""A knowledge base's whole content, for comparing two builds: every schema entry, then every table's rows in rowid
order, leaving out what differs between any two builds (`meta.built_at`, the per-import `imports_version` token)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from itertools import zip_longest
from pathlib import Path

VOLATILE_META = ("built_at", "imports_version")

Content = list[tuple[str, list[tuple]]]  # ("sqlite_master", its entries), then (table, its rows) for every table


def dump(path: Path) -> Content:
    """Every schema entry (type, name, tbl_name, sql) in creation order, then every table's rows, read whole (a
    table compared in one list comparison: row by row in Python cost seconds on a 20,000-row import's KB)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        entries = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()
        content: Content = [("sqlite_master", entries)]
        for kind, name, _table, sql in entries:
            if kind != "table" or (sql or "").startswith("CREATE VIRTUAL"):
                continue  # a virtual table's rows are its shadow tables'
            where = f" WHERE key NOT IN {VOLATILE_META}" if name == "meta" else ""
            order = "" if "WITHOUT ROWID" in sql.upper() else " ORDER BY rowid"  # else: primary key order
            content.append((name, conn.execute(f"SELECT * FROM [{name}]{where}{order}").fetchall()))
    return content


def rows(content: Content) -> Iterator[tuple]:
    """(table, row...) for every row, schema entries first (as ("sqlite_master", type, name, tbl_name, sql))."""
    for name, table in content:
        for row in table:
            yield (name, *row)


def first_difference(a: Path | Content, b: Path | Content) -> tuple | None:
    """The first entry where the two knowledge bases (files, or their `dump`s) differ ((a's, b's)), or None when they
    are the same."""
    left, right = (side if isinstance(side, list) else dump(side) for side in (a, b))
    if left == right:
        return None
    for x, y in zip_longest(rows(left), rows(right)):  # a row only one has: (it, None)
        if x != y:
            return x, y
    raise AssertionError("the contents differ, yet no row does")  # cannot happen: the same tables, in order
