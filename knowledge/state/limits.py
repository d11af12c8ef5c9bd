"""The same length limits on every database: a value longer than its column is refused before it is sent.

SQLite stores a 500-character string in a `String(80)` column; PostgreSQL refuses it with a raw `DataError`.
`guard(engine)` checks every INSERT and UPDATE on gpubot's tables against the declared lengths first, so both
refuse it alike, with `ValueTooLongError` naming the field and its limit (a `ValueError`: the CLI and the Slack
edge show it as a message, never a traceback).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.sql.dml import Insert, Update

from knowledge.errors import UserError


class ValueTooLongError(UserError, ValueError):
    """A value is longer than the state database keeps for its field."""


_is_str = functools.partial(type.__instancecheck__, str)  # isinstance(value, str), callable from C


def guard(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "before_execute")
    def _check(conn, clauseelement, multiparams, params, execution_options) -> None:
        if isinstance(clauseelement, Insert | Update):
            check(clauseelement, multiparams, params)


def _limits(table: sa.Table) -> dict[str, int]:
    return {
        c.key: c.type.length
        for c in table.columns
        if isinstance(c.type, sa.String) and not isinstance(c.type, sa.Text) and c.type.length
    }


def check(statement: Insert | Update, multiparams=(), params=None) -> None:
    table = statement.table
    if not isinstance(table, sa.Table):
        return
    limits = _limits(table)
    if not limits:
        return
    rows: list[dict] = [statement.compile().params]
    for extra in (params, *multiparams):
        if isinstance(extra, dict):
            rows.append(extra)
        elif isinstance(extra, list | tuple):
            rows.extend(e for e in extra if isinstance(e, dict))
    for key, limit in limits.items():  # per limited column: a 100k-row insert has few of them
        if max(map(len, filter(_is_str, map(operator.methodcaller("get", key), rows))), default=0) <= limit:
            continue  # the longest string fits (found without a Python-level step per row: 100k rows, 0.1 s)
        _refuse(key, limit, map(operator.methodcaller("get", key), rows))


def check_columns(table: sa.Table, names: Sequence[str], rows: Sequence[tuple]) -> None:
    """`check` for a bulk insert's parameters given as tuples of the columns `names` (the same refusal): each
    limited column is taken out of the rows whole, in C, and its longest string compared with the limit."""
    limits = _limits(table)
    columns = zip(*rows, strict=True) if rows else ()
    for key, column in zip(names, columns, strict=False):
        limit = limits.get(key)
        if limit is not None and max(map(len, filter(_is_str, column)), default=0) > limit:
            _refuse(key, limit, column)


def _refuse(key: str, limit: int, values: Iterable[object]) -> None:
    """Raise `ValueTooLongError` for the first of `values` longer than `limit`."""
    for value in values:
        if isinstance(value, str) and len(value) > limit:
            raise ValueTooLongError(
                f"{key.replace('_', ' ')} is longer than {limit} characters ({len(value)}): {value[:40]!r}…"
            )
