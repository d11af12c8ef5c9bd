"""The price of an offer now, by the rules ask ranks with (issue 26): one place decides, for ask, history and the
digest alike, whether an offer counts as a price someone can pay today.

An offer counts when it can be ordered at its pricing model (`knowledge.catalog.availability`: spot-only shapes
have no on-demand price, reservation-only ones no spot) and when its figure is a whole offer (a GPU-only price
without its host VM does not count). Where two sources disagree the knowledge base ranks the figure
`knowledge.catalog.crosscheck` trusts; history reads the same knowledge base's availability, so a series never
ends on a price ask says cannot be ordered.
A Local or Wavelength Zone is its own place (`knowledge.catalog.zones`), never its parent region.
"""

from __future__ import annotations

import json
import sqlite3

from knowledge.catalog.availability import NOT_ORDERABLE, orderable

GPU_ONLY = "(GPU only)"


def counts(row: object, blocked: frozenset[tuple[str, str, str]] = frozenset()) -> bool:
    """True when `row` (an `offers` row dict or a snapshot offer) is a price of now: orderable at its pricing model
    (its own `availability`, or not in `blocked`, the knowledge base's unorderable keys) and a whole offer."""
    get = row.get if isinstance(row, dict) else lambda key, default=None: getattr(row, key, default)
    if GPU_ONLY in str(get("instance_type", "")):
        return False
    if isinstance(row, dict) and not orderable(row):
        return False
    return (get("instance_type"), get("region"), get("pricing")) not in blocked


def _memo(kb, key: tuple, build):
    """Built once per knowledge base (`KB.memo`) where the object has one; a history covers many GPUs."""
    memo = getattr(kb, "memo", None)
    return memo(key, build) if memo else build()


def not_orderable(kb, provider: str) -> frozenset[tuple[str, str, str]]:
    """(instance type, region, pricing) of `provider`'s offers the knowledge base says cannot be ordered."""
    return _memo(kb, ("current.not_orderable", provider), lambda: _not_orderable(kb, provider))


def _not_orderable(kb, provider: str) -> frozenset[tuple[str, str, str]]:
    marks = ", ".join("?" * len(NOT_ORDERABLE))
    try:
        rows = kb.rows(
            "SELECT DISTINCT instance_type, region, pricing FROM offers "
            f"WHERE provider = ? AND availability IN ({marks})",
            [provider, *NOT_ORDERABLE],
        )
    except sqlite3.OperationalError:  # an old knowledge base without the column: nothing known to be unorderable
        return frozenset()
    return frozenset((r["instance_type"], r["region"], r["pricing"]) for r in rows)


def ranked_figures(kb, provider: str) -> dict[tuple[str, str, str], tuple[float, float, float]]:
    """(instance type, region, pricing) -> (the figure the knowledge base did not rank, USD per hour; the ranked
    figure per hour; per GPU-hour) where two sources disagreed (`knowledge.catalog.crosscheck`)."""
    return _memo(kb, ("current.ranked_figures", provider), lambda: _ranked_figures(kb, provider))


def _ranked_figures(kb, provider: str) -> dict[tuple[str, str, str], tuple[float, float, float]]:
    try:
        rows = kb.rows(
            "SELECT instance_type, region, pricing, price_per_hour_usd, price_per_gpu_hour_usd, other_prices "
            "FROM offers WHERE provider = ? AND other_prices IS NOT NULL AND other_prices != ''",
            [provider],
        )
    except sqlite3.OperationalError:  # an old knowledge base without the column
        return {}
    found = {}
    for r in rows:
        for other in json.loads(r["other_prices"]) or []:
            key = (r["instance_type"], r["region"], r["pricing"])
            found[key] = (float(other["price_per_hour_usd"]), r["price_per_hour_usd"], r["price_per_gpu_hour_usd"])
    return found


def ranked(row, figures: dict[tuple[str, str, str], tuple[float, float, float]]):
    """A snapshot offer at the figure ask ranks: where the row carries the figure the two-source check set aside,
    the ranked one instead (a `NamedTuple` row comes back replaced, any other row unchanged)."""
    key = (row.instance_type, row.region, row.pricing)
    hit = figures.get(key)
    if hit is None or abs(hit[0] - row.price_per_hour_usd) > 1e-6 * max(1.0, hit[0]):
        return row
    return row._replace(price_per_hour_usd=hit[1], price_per_gpu_hour_usd=hit[2], price_per_hour=hit[1])


def offer_keys(kb, provider: str) -> frozenset[tuple[str, str, str]]:
    """(instance type, region, pricing) of every offer the knowledge base has for `provider` now: a snapshot's
    latest offer the knowledge base dropped (a spot price equal to on-demand, `catalog_quirks.csv`) is no price of
    now either."""
    return _memo(kb, ("current.offer_keys", provider), lambda: _offer_keys(kb, provider))


def _offer_keys(kb, provider: str) -> frozenset[tuple[str, str, str]]:
    try:
        rows = kb.rows("SELECT DISTINCT instance_type, region, pricing FROM offers WHERE provider = ?", [provider])
    except sqlite3.OperationalError:  # a knowledge base without offers (a stand-in of the history tests)
        return frozenset()
    return frozenset((r["instance_type"], r["region"], r["pricing"]) for r in rows)
