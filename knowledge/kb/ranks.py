"""The rows a ranking answer lists, selected in SQL (issue 29): the first row of each provider + instance type and how
many regions offer it, and the counts an answer states, read from the `offers_ranking` index alone.

A ranking's order is stored at build time (`offers.rank`, `knowledge.kb.schema.rank_key`), so the best row of a group
is its MIN(rank) and the cost of an answer follows the rows it shows, not the rows of the family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.catalog.availability import excluded_counts
from knowledge.kb.groups import GPU_ONLY, LISTED
from knowledge.kb.groups import ORDERABLE as _ORDERABLE
from knowledge.kb.reader import KB, OfferFilters, left_out
from knowledge.kb.schema import price_key

HEAD_COLUMNS = (
    "provider", "instance_type", "region", "zone", "zone_label", "pricing", "term", "gpu_variant", "gpu",
    "price_per_gpu_hour_usd", "price_per_hour_usd", "kind", "gpu_count", "stock",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Tally:
    """What an answer counts of the offers matching its filters: the ones it leaves out because they cannot be
    ordered ([{"reason", "availability", "count"}], with the catalog rows listed without a price), and of the
    orderable ones the GPU-only figures, the whole offers, those within the cap and of those the ones known to be
    out of stock."""

    excluded: list[dict]
    gpu_only: int
    whole: int
    within: int
    out_of_stock: int


def _where(kb: KB, filters: OfferFilters) -> tuple[str, list]:
    where, params = kb.offer_where(**filters)
    return " AND ".join(where), params


def _tally(kb: KB, filters: OfferFilters, where: str, params: list, listed: Sequence[dict]) -> Tally:
    """The Tally of the offers matching `filters` (`where`, `params`), the listed ones counted by `listed` (rows
    with `n` offers, `out` of them out of stock); the reasons are read only when some offer is not orderable."""
    row = kb.rows(
        f"SELECT COUNT(*) AS n, TOTAL({_ORDERABLE}) AS ok, TOTAL({_ORDERABLE} AND {GPU_ONLY}) AS gpu_only "
        f"FROM offers WHERE {where}",
        params,
    )[0]
    within, out = sum(r["n"] for r in listed), int(sum(r["out"] for r in listed))
    return Tally(_excluded(kb, filters, row), int(row["gpu_only"]), int(row["ok"] - row["gpu_only"]), within, out)


def _excluded(kb: KB, filters: OfferFilters, counts: dict) -> list[dict]:
    """The offers left out, by reason: read only when some of the `n` offers are not orderable (`ok` are), else
    only the unpriced rows."""
    return left_out(kb, filters) if counts["n"] > counts["ok"] else excluded_counts(kb.unpriced_rows(filters))


def ranking(
    kb: KB,
    filters: OfferFilters,
    cap: tuple[str, float] | None = None,
    *,
    per_instance_hour: bool = False,
    every_region: bool = False,
) -> tuple[Tally, list[dict]]:
    """The counts of the offers matching `filters` and the ones a ranking lists: the whole (not GPU-only) orderable
    offers within `cap`, one per provider + instance type (its first row in rank order, or per instance-hour first,
    with `other_regions`: how many more regions offer it), or with `every_region` every one of them; each with
    HEAD_COLUMNS and `rid` (its rowid), in ranking order. Read from the `offers_ranking` index alone."""
    where, params = _where(kb, filters)
    within, cap_params = (f" AND {cap[0]} <= ?", [cap[1]]) if cap else ("", [])
    listed = f"FROM offers WHERE {where} AND {_ORDERABLE} AND NOT {GPU_ONLY}{within}"
    listed_params = [*params, *cap_params]
    columns = f"rowid AS rid, {', '.join(HEAD_COLUMNS)}"
    counts = "COUNT(*) AS n, TOTAL(stock IS 'out_of_stock') AS out"
    if every_region:
        order = "price_per_hour_usd, rank" if per_instance_hour else "rank"
        rows = kb.rows(f"SELECT {columns}, rank, 0 AS other_regions, 1 AS n, stock IS 'out_of_stock' AS out "
                       f"{listed} ORDER BY {order}", listed_params)  # fmt: skip
        return _tally(kb, filters, where, params, rows), rows
    if not per_instance_hour:  # the row with MIN(rank) gives the bare columns (SQLite's min/max rule)
        rows = kb.rows(
            f"SELECT {columns}, MIN(rank) AS rank, COUNT(DISTINCT region) - 1 AS other_regions, {counts} "
            f"{listed} GROUP BY provider, instance_type ORDER BY rank",
            listed_params,
        )
        return _tally(kb, filters, where, params, rows), rows
    first = kb.rows(
        f"SELECT * FROM (SELECT {columns}, rank, ROW_NUMBER() OVER (PARTITION BY provider, instance_type "
        f"ORDER BY price_per_hour_usd, rank) AS nth {listed}) WHERE nth = 1 ORDER BY price_per_hour_usd, rank",
        listed_params,
    )
    groups = {
        (r["provider"], r["instance_type"]): r
        for r in kb.rows(
            f"SELECT provider, instance_type, COUNT(DISTINCT region) - 1 AS other_regions, {counts} {listed} "
            "GROUP BY provider, instance_type",
            listed_params,
        )
    }
    rows = [{**r, **groups[r["provider"], r["instance_type"]]} for r in first]
    return _tally(kb, filters, where, params, rows), rows


def lines(kb: KB, filters: OfferFilters, limit: int) -> tuple[Tally, list[dict], int] | None:
    """`ranking(kb, filters)` (no cap, per GPU-hour, one row per provider + instance type) read from the summary
    per instance type stored at build (`knowledge.kb.groups`): its Tally, the rows of the first `limit` lines only
    (every member of each, lines as `handlers.ranking.groups` makes them) and how many lines there are. None when the
    summary cannot say: no pricing, a region or instance type asked for, a knowledge base whose `offer_where` narrows
    the offers (`handlers.constraints.Narrowed`), or an instance type with other rows at that pricing."""
    narrowed = getattr(type(kb), "offer_where", None) is not KB.offer_where
    if (
        narrowed
        or not filters.get("pricing")
        or any(filters.get(k) for k in ("regions", "instance_types", "orderable"))
    ):
        return None
    if "offer_groups" not in kb.table_names:
        return None
    where, params = _where(kb, filters)
    refs = list(filters.get("gpus") or ())
    per_provider = (  # a family as a whole: its counts per provider (lines never span providers or kinds)
        len(refs) == 1 and not (refs[0].memory_gb or refs[0].form_factor)
        and not any(filters.get(k) for k in ("gpu_count", "min_memory_gb", "gpu_kind"))
    )  # fmt: skip
    counted = (
        "TOTAL(n) AS n, TOTAL(ok) AS ok, TOTAL(gpu_only) AS gpu_only, TOTAL(out) AS out, TOTAL(lines) AS lines"
        if per_provider
        else f"TOTAL(n) AS n, TOTAL(ok) AS ok, TOTAL(gpu_only * ok) AS gpu_only, "
        f"TOTAL(CASE WHEN {LISTED} THEN out END) AS out, COUNT(DISTINCT CASE WHEN {LISTED} THEN line END) AS lines"
    )
    totals = kb.rows(
        f"SELECT {counted}, MAX(shared) AS shared FROM {'offer_totals' if per_provider else 'offer_groups'} "
        f"WHERE {where}",
        params,
    )[0]
    if totals["shared"]:  # one instance type in several summary rows: its region count is not theirs summed
        return None
    whole = int(totals["ok"] - totals["gpu_only"])
    tally = Tally(_excluded(kb, filters, totals), int(totals["gpu_only"]), whole, whole, int(totals["out"]))
    first = _first_lines(kb, where, params, limit)
    rows = kb.rows(
        f"SELECT g.head AS rid, {', '.join(f'o.{c}' for c in HEAD_COLUMNS)}, g.head_rank AS rank, "
        "g.regions - 1 AS other_regions, g.ok AS n, g.out "
        f"FROM offer_groups AS g JOIN offers AS o ON o.rowid = g.head "
        f"WHERE g.line IN ({','.join('?' * len(first))}) AND g.rowid IN (SELECT rowid FROM offer_groups "
        f"WHERE {where} AND {LISTED}) ORDER BY g.head_rank",
        [*first, *params],
    )
    return tally, rows, int(totals["lines"])


def _first_lines(kb: KB, where: str, params: list, limit: int) -> list[int]:
    """The first `limit` lines of the summary rows matching `where`, read in rank order a page at a time (a line's
    place is its first member's)."""
    found: dict[int, None] = {}
    after, page = -1, 8 * limit
    while len(found) < limit:
        rows = kb.rows(
            f"SELECT line, head_rank FROM offer_groups WHERE {where} AND {LISTED} AND head_rank > ? "
            f"ORDER BY head_rank LIMIT {page}",
            [*params, after],
        )
        found.update(dict.fromkeys(r["line"] for r in rows))
        if len(rows) < page:
            break
        after, page = rows[-1]["head_rank"], page * 4
    return list(found)[:limit]


_PRICE_ORDER = "price_per_gpu_hour_usd, provider, instance_type, region, zone_label IS NOT NULL, zone, rank"
_WHOLE_GPUS = "NOT COALESCE(vgpu, 0) AND gpu_count >= 1"  # not a vGPU slice or a fraction of a GPU


def first(
    kb: KB,
    filters: OfferFilters,
    cap: tuple[str, float] | None = None,
    *,
    stock_last: bool = True,
    whole_gpus: bool = False,
) -> dict | None:
    """The whole offer (every column) that ranks first among those matching `filters` within `cap`, or None;
    `stock_last=False`: the cheapest, out of stock or not; `whole_gpus`: not a vGPU slice or a fraction of a GPU."""
    rows = cheapest(kb, filters, cap, limit=1, stock_last=stock_last, whole_gpus=whole_gpus)
    return rows[0] if rows else None


def cheapest(
    kb: KB,
    filters: OfferFilters,
    cap: tuple[str, float] | None = None,
    *,
    limit: int,
    stock_last: bool = False,
    whole_gpus: bool = True,
) -> list[dict]:
    """The first `limit` whole (not GPU-only) offers (every column) matching `filters` within `cap`, in the offers'
    price order (`stock_last`: in rank order); `whole_gpus`: whole GPUs only."""
    where, params = _where(kb, filters)
    within, cap_params = (f" AND {cap[0]} <= ?", [cap[1]]) if cap else ("", [])
    whole = f" AND {_WHOLE_GPUS}" if whole_gpus else ""
    return kb.rows(
        f"SELECT * FROM offers WHERE {where} AND NOT {GPU_ONLY}{within}{whole} "
        f"ORDER BY {'rank' if stock_last else _PRICE_ORDER} LIMIT {int(limit)}",
        [*params, *cap_params],
    )


def whole_at(kb: KB, filters: OfferFilters, places: Sequence[tuple[str, str]]) -> list[dict]:
    """The whole-GPU offers (not GPU-only, every column) matching `filters` of these (instance type, region) pairs,
    in the offers' price order."""
    if not places:
        return []
    where, params = _where(kb, filters)
    pairs = ", ".join("(?, ?)" for _ in places)
    return kb.rows(
        f"SELECT * FROM offers WHERE {where} AND NOT {GPU_ONLY} AND {_WHOLE_GPUS} "
        f"AND (instance_type, region) IN (VALUES {pairs}) ORDER BY {_PRICE_ORDER}",
        [*params, *(value for place in places for value in place)],
    )


def first_per_provider(kb: KB, filters: OfferFilters) -> list[dict]:
    """Each provider's first whole-GPU orderable offer (every column) among those matching `filters`, in the offers'
    price order (`schema.price_key`): a provider's first row is the MIN(rank) of its in-stock or of its
    out-of-stock rows, whichever comes first in that order."""
    where, params = _where(kb, filters)
    firsts = kb.rows(
        f"SELECT rowid AS rid, MIN(rank) AS rank FROM offers WHERE {where} AND {_ORDERABLE} AND NOT {GPU_ONLY} "
        f"AND {_WHOLE_GPUS} GROUP BY provider, stock IS 'out_of_stock'",
        params,
    )
    first: dict[str, dict] = {}
    for row in sorted(full_rows(kb, [r["rid"] for r in firsts]).values(), key=lambda r: (*price_key(r), r["rank"])):
        first.setdefault(row["provider"], row)
    return list(first.values())


def cluster_candidates(
    kb: KB,
    filters: OfferFilters,
    needed: int,
    *,
    gpu_cap: float | None = None,
    hour_cap: float | None = None,
    min_gpus: float | None = None,
    models: Sequence[str] | None = None,
) -> list[dict]:
    """The whole-GPU orderable offers matching `filters` that could rent `needed` GPUs cheapest: ceil(needed /
    gpu_count) instances of one, at most `hour_cap` USD an hour for them all and `gpu_cap` per GPU-hour, with at least
    `min_gpus` GPUs each and one of `models` when given. Those within a micro-dollar an hour of the cheapest (a
    dearer one is never the pick), every column, in the offers' price order."""
    where, params = _where(kb, filters)
    how_many = "(CAST(? / gpu_count AS INTEGER) + (? / gpu_count > CAST(? / gpu_count AS INTEGER)))"  # ceil
    conditions = [where, _ORDERABLE, f"NOT {GPU_ONLY}", _WHOLE_GPUS]
    for condition, value in (("price_per_gpu_hour_usd <= ?", gpu_cap), ("gpu_count >= ?", min_gpus)):
        if value is not None:
            conditions.append(condition)
            params.append(value)
    if models is not None:
        conditions.append(f"gpu_model IN ({','.join('?' * len(models))})")
        params += models
    within = "" if hour_cap is None else f" WHERE cost <= {float(hour_cap)!r}"
    return kb.rows(
        f"WITH c AS (SELECT rowid AS rid, {how_many} * price_per_hour_usd AS cost FROM offers "
        f"WHERE {' AND '.join(conditions)}) "
        f"SELECT o.* FROM offers o JOIN c ON o.rowid = c.rid "
        f"WHERE c.cost <= (SELECT MIN(cost) FROM c{within}) + 1e-6 "
        "ORDER BY " + ", ".join(f"o.{term}" for term in _PRICE_ORDER.split(", ")),
        [float(needed)] * 3 + params,
    )


def full_rows(kb: KB, rids: Sequence[int]) -> dict[int, dict]:
    """rowid -> the offer's every column, for the rows an answer shows."""
    if not rids:
        return {}
    rows = kb.rows(f"SELECT rowid AS rid, * FROM offers WHERE rowid IN ({','.join('?' * len(rids))})", list(rids))
    return {r.pop("rid"): r for r in rows}
