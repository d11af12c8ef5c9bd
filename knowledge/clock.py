"""The one UTC clock: every timestamp gpubot stores or compares is an aware UTC datetime from `utc_now`."""

from __future__ import annotations

import datetime as dt

__all__ = ["utc_now"]


def utc_now(value: dt.datetime | None = None) -> dt.datetime:
    """`value` as an aware UTC datetime (naive means UTC: what SQLite gives back), or the time now when None."""
    if value is None:
        return dt.datetime.now(dt.UTC)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
