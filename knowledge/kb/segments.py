"""A knowledge-base table written as a sequence of segments: rows computed in this process, or a range of rows
copied in SQL from the cached bundled part (`knowledge.kb.base_cache`), in the order a full build inserts them.

The table is what sqlite-utils `insert_all(..., alter=True)` stores, without its per-value checks: the columns are
the union of the rows' keys in order of first appearance, each typed from its first non-null value. A segment keeps
its own keys and first types (`Shape`), so the columns of a table assembled from cached and new segments are
exactly those of a full build inserting every row.
"""

from __future__ import annotations

import functools
import json
import operator
from dataclasses import dataclass

_not_none = functools.partial(operator.is_not, None)
_STRUCTURED = (dict, list, tuple)


@dataclass(frozen=True, slots=True)
class Shape:
    """A segment's keys (in order of first appearance) and each key's first non-null type (NoneType: none)."""

    keys: tuple[str, ...]
    types: tuple[type, ...]

    @classmethod
    def of(cls, rows: list[dict], typed: frozenset[str] = frozenset()) -> Shape:
        """`rows`' shape; the keys in `typed` (a column an earlier segment already types) are not looked at."""
        keys: dict[str, None] = {}
        last = None
        for row in rows:
            shape = row.keys()
            if last is None or shape != last:  # (compared as sets, in C) a row with keys not seen yet adds them
                keys.update(dict.fromkeys(shape))
                last = shape
        return cls(tuple(keys), tuple(type(None if key in typed else _first_value(rows, key)) for key in keys))


@dataclass(frozen=True, slots=True)
class Copied:
    """Rows `first`..`last` (rowids) of the same table in the attached cached part, of shape `shape`."""

    first: int
    last: int
    shape: Shape


Segment = list[dict] | Copied


def _first_value(rows: list[dict], key: str) -> object:
    """The first non-null value of `key` in `rows` (None if every row lacks it or holds None), found in C."""
    return next(filter(_not_none, map(operator.methodcaller("get", key), rows)), None)


def merged(shapes: list[Shape]) -> dict[str, type]:
    """Each column's first non-null type over the shapes, in order of first appearance (a full build's columns)."""
    types: dict[str, type] = {}
    for shape in shapes:
        for key, kind in zip(shape.keys, shape.types, strict=True):
            if types.get(key, type(None)) is type(None):
                types[key] = kind
    return types


def shape_of(segment: Segment) -> Shape:
    return segment.shape if isinstance(segment, Copied) else Shape.of(segment)


def shapes_of(segments: list[Segment]) -> list[Shape]:
    """Each segment's shape, a computed one's types looked up only for the columns no earlier segment types (the
    first non-null type wins: `merged` is the same, and an import's 100,000 rows are not scanned for them)."""
    shapes: list[Shape] = []
    typed: set[str] = set()
    for segment in segments:
        shape = segment.shape if isinstance(segment, Copied) else Shape.of(segment, frozenset(typed))
        typed.update(k for k, kind in zip(shape.keys, shape.types, strict=True) if kind is not type(None))
        shapes.append(shape)
    return shapes


def insert(db, name: str, segments: list[Segment], shapes: list[Shape], source: str = "base") -> None:
    """Create table `name` and fill it with `segments` in order (`Copied` ones from `source`.`name`), of `shapes`
    (`shape_of` each). Nothing is created when every segment is empty."""
    types = merged(shapes)
    if not types:
        return
    columns = {
        key: (int if kind is bool else str if kind in (type(None), *_STRUCTURED) else kind)
        for key, kind in types.items()
    }
    db[name].create(columns)
    names = list(columns)
    structured = [i for i, kind in enumerate(types.values()) if kind in _STRUCTURED]
    sql = f"INSERT INTO [{name}] ({', '.join(f'[{k}]' for k in names)}) VALUES ({', '.join('?' * len(names))})"
    every = operator.itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
    width = len(names)

    def values(row: dict) -> tuple:
        # a row with as many keys as there are columns has them all (the columns are the union of the rows' keys);
        # another gets None for the keys it lacks
        return every(row) if len(row) == width else tuple(map(row.get, names))

    def encoded(row: dict) -> list:
        out = list(values(row))
        for i in structured:
            if out[i] is not None:
                out[i] = json.dumps(out[i])
        return out

    for segment, shape in zip(segments, shapes, strict=True):
        if isinstance(segment, Copied):
            cols = ", ".join(f"[{k}]" for k in shape.keys)
            db.conn.execute(
                f"INSERT INTO main.[{name}] ({cols}) SELECT {cols} FROM {source}.[{name}] "
                "WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
                (segment.first, segment.last),
            )
        elif segment and not structured and _one_key_set(segment) and 1 < len(segment[0]) < width:
            own = list(segment[0])  # every row has these keys and no other: the rest of the columns stay NULL
            marks = ", ".join("?" * len(own))
            db.conn.executemany(
                f"INSERT INTO [{name}] ({', '.join(f'[{k}]' for k in own)}) VALUES ({marks})",
                map(operator.itemgetter(*own), segment),
            )
        elif segment:
            db.conn.executemany(sql, map(encoded if structured else values, segment))


def _one_key_set(rows: list[dict]) -> bool:
    """Whether every row has the first row's keys (compared in C: an import's 100,000 offers have 36 of the 47)."""
    keys = rows[0].keys()
    return all(map(keys.__eq__, map(dict.keys, rows)))


def stored_alike(copied: Shape, cached_types: dict[str, type], final_types: dict[str, type]) -> bool:
    """Whether a copied segment's stored values are what a full build would store: each column it holds a value in
    has the same type (so the same affinity and JSON encoding) in the cached table and in the table being built."""
    return all(
        final_types.get(key) is cached_types.get(key)
        for key, kind in zip(copied.keys, copied.types, strict=True)
        if kind is not type(None)
    )
