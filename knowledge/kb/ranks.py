"""The rows a ranking answer lists, selected in SQL (issue 29): the first row of each provider + instance type and how
many regions offer it, and the counts an answer states, read from the `offers_ranking` index alone.

A ranking's order is stored at build time (`offers.rank`, `knowledge.kb.schema.rank_key`), so the best row of a group
is its MIN(rank) and the cost of an answer follows the rows it shows, not the rows of the family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.kb.reader import KB, OfferFilters

HEAD_COLUMNS = (
    "provider", "instance_type", "region", "zone", "zone_label", "pricing", "term", "gpu_variant", "gpu",
    "price_per_gpu_hour_usd", "price_per_hour_usd", "kind", "gpu_count", "stock",
)  # fmt: skip
GPU_ONLY = "instance_type GLOB '*GPU only*'"  # a GPU-only figure, its host VM's price unknown (case as written)


@dataclass(frozen=True, slots=True)
class Tally:
    """How many orderable offers match: GPU-only figures, whole offers, whole offers within the cap, and of those the
    ones known to be out of stock."""

    gpu_only: int
    whole: int
    within: int
    out_of_stock: int


def _where(kb: KB, filters: OfferFilters) -> tuple[str, list]:
    where, params = kb.offer_where(**filters)
    return " AND ".join(where), params


def _cap(cap: tuple[str, float] | None) -> tuple[str, list]:
    """(SQL condition, params) for a price cap (column, USD), "1" without one."""
    return (f"{cap[0]} <= ?", [cap[1]]) if cap else ("1", [])


def tally(kb: KB, filters: OfferFilters, cap: tuple[str, float] | None = None) -> Tally:
    """The counts of the offers matching `filters` (orderable ones: pass `orderable=True`)."""
    where, params = _where(kb, filters)
    within, cap_params = _cap(cap)
    row = kb.rows(
        f"SELECT COUNT(*) AS n, TOTAL({GPU_ONLY}) AS gpu_only, TOTAL(NOT {GPU_ONLY} AND {within}) AS within, "
        f"TOTAL(NOT {GPU_ONLY} AND {within} AND stock IS 'out_of_stock') AS out FROM offers WHERE {where}",
        [*cap_params, *cap_params, *params],
    )[0]
    gpu_only = int(row["gpu_only"])
    return Tally(gpu_only, row["n"] - gpu_only, int(row["within"]), int(row["out"]))


def heads(
    kb: KB, filters: OfferFilters, cap: tuple[str, float] | None = None, *, per_instance_hour: bool = False
) -> list[dict]:
    """The whole (not GPU-only) offers matching `filters` within `cap`, one per provider + instance type: its first
    row (rank order, or per instance-hour first) with `rid` (its rowid) and `other_regions` (how many more regions
    offer it), in that order."""
    where, params = _where(kb, filters)
    within, cap_params = _cap(cap)
    columns = ", ".join(HEAD_COLUMNS)
    matching = f"FROM offers WHERE {where} AND NOT {GPU_ONLY} AND {within}"
    if not per_instance_hour:  # the row with MIN(rank) gives the bare columns (SQLite's min/max rule)
        return kb.rows(
            f"SELECT rowid AS rid, {columns}, MIN(rank) AS rank, COUNT(DISTINCT region) - 1 AS other_regions "
            f"{matching} GROUP BY provider, instance_type ORDER BY rank",
            [*params, *cap_params],
        )
    first = kb.rows(
        f"SELECT * FROM (SELECT rowid AS rid, {columns}, rank, ROW_NUMBER() OVER (PARTITION BY provider, "
        f"instance_type ORDER BY price_per_hour_usd, rank) AS nth {matching}) WHERE nth = 1 "
        "ORDER BY price_per_hour_usd, rank",
        [*params, *cap_params],
    )
    regions = {
        (r["provider"], r["instance_type"]): r["n"]
        for r in kb.rows(
            f"SELECT provider, instance_type, COUNT(DISTINCT region) AS n {matching} GROUP BY provider, instance_type",
            [*params, *cap_params],
        )
    }
    return [{**r, "other_regions": regions[r["provider"], r["instance_type"]] - 1} for r in first]


def every_region(
    kb: KB, filters: OfferFilters, cap: tuple[str, float] | None = None, *, per_instance_hour: bool = False
) -> list[dict]:
    """Every whole offer matching `filters` within `cap` (HEAD_COLUMNS, `rid`), in rank order (or per instance-hour
    first)."""
    where, params = _where(kb, filters)
    within, cap_params = _cap(cap)
    order = "price_per_hour_usd, rank" if per_instance_hour else "rank"
    return kb.rows(
        f"SELECT rowid AS rid, {', '.join(HEAD_COLUMNS)}, rank, 0 AS other_regions FROM offers "
        f"WHERE {where} AND NOT {GPU_ONLY} AND {within} ORDER BY {order}",
        [*params, *cap_params],
    )


def first(
    kb: KB, filters: OfferFilters, cap: tuple[str, float] | None = None, *, stock_last: bool = True
) -> dict | None:
    """The whole offer (every column) that ranks first among those matching `filters` within `cap`, or None;
    `stock_last=False`: the cheapest, out of stock or not."""
    where, params = _where(kb, filters)
    within, cap_params = _cap(cap)
    order = (
        "rank"
        if stock_last
        else "price_per_gpu_hour_usd, provider, instance_type, region, zone_label IS NOT NULL, zone, rank"
    )
    rows = kb.rows(
        f"SELECT * FROM offers WHERE {where} AND NOT {GPU_ONLY} AND {within} ORDER BY {order} LIMIT 1",
        [*params, *cap_params],
    )
    return rows[0] if rows else None


def full_rows(kb: KB, rids: Sequence[int]) -> dict[int, dict]:
    """rowid -> the offer's every column, for the rows an answer shows."""
    if not rids:
        return {}
    rows = kb.rows(f"SELECT rowid AS rid, * FROM offers WHERE rowid IN ({','.join('?' * len(rids))})", list(rids))
    return {r.pop("rid"): r for r in rows}
