"""How old a figure is: its freshness tier, from when a live source read it or the date its catalog carries.

| tier | meaning |
|---|---|
| `live` | read by a live source less than an hour ago |
| `fresh` | read (or dated) less than 24 hours ago |
| `stale` | older than that |
| `bundled` | a bundled catalog whose upstream date is unknown ("bundled, date unknown") |

Pure functions of the offer's `fetched_at` / `as_of` / `as_of_known` and `now`: the answer path computes them
without touching the network or the state.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from knowledge.clock import utc_now

__all__ = [
    "FRESH_SECONDS",
    "IMPORTED",
    "LIVE_SECONDS",
    "TIERS",
    "Tier",
    "age_seconds",
    "imported",
    "parse_time",
    "tier",
]

IMPORTED = "imported with gpubot kb import"  # the source of a file imported without `--source`


def imported(source: str | None) -> bool:
    """True for an offer of a file imported with `gpubot kb import` (its date, when unknown, is the import day)."""
    return (source or "").endswith(IMPORTED)


Tier = Literal["live", "fresh", "stale", "bundled"]
TIERS: tuple[Tier, ...] = ("live", "fresh", "stale", "bundled")
LIVE_SECONDS = 3600
FRESH_SECONDS = 24 * 3600


def parse_time(text: str | None) -> dt.datetime | None:
    """An ISO time or date as an aware UTC datetime (a date is its midnight), None when absent or unreadable."""
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            value = dt.datetime.fromisoformat(f"{dt.date.fromisoformat(text[:10]).isoformat()}T00:00:00+00:00")
        except ValueError:
            return None
    return utc_now(value)


def age_seconds(fetched_at: str | None, now: dt.datetime | None = None) -> float | None:
    read = parse_time(fetched_at)
    return None if read is None else max(0.0, (utc_now(now) - read).total_seconds())


def tier(fetched_at: str | None, as_of: str | None, as_of_known: bool, now: dt.datetime | None = None) -> Tier:
    """The freshness tier of one figure (see the module's table)."""
    age = age_seconds(fetched_at, now)
    if age is None:
        if not as_of_known:
            return "bundled"
        dated = age_seconds(as_of, now)
        return "fresh" if dated is not None and dated < FRESH_SECONDS else "stale"
    if age < LIVE_SECONDS:
        return "live"
    return "fresh" if age < FRESH_SECONDS else "stale"
