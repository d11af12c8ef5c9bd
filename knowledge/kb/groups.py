"""The offers summarised per instance type at build (issue 29), so that a ranking of a whole family ("cheapest A100
on-demand") reads a few rows per line, not every offer: `offer_groups` (the head offer's rowid and rank, how many
regions and offers, the line its head belongs to), `offer_totals` (their counts per provider) and `offer_left_out`
(the offers that cannot be ordered, counted by reason). All are made in SQL from the offers as stored, so an
import's build equals a full one.

A ranking line (`handlers.ranking.groups`) is one provider, place, pricing, GPU, per-GPU price and instance naming
pattern: `line_key` is that key, stored per head (as a number) so that lines are counted and chosen in SQL.
"""

from __future__ import annotations

import json
import re

from knowledge.catalog.availability import NOT_ORDERABLE

ORDERABLE = "COALESCE(availability, 'orderable') NOT IN ({})".format(
    ", ".join(f"'{mark}'" for mark in sorted(NOT_ORDERABLE))  # constants of the code, never user text
)
GPU_ONLY = "instance_type GLOB '*GPU only*'"  # a GPU-only figure, its host VM's price unknown (case as written)

_DIGITS = re.compile(r"\d+")
COUNT_SUFFIX = re.compile(r"(?<=[A-Za-z0-9])x\d+$")


def line_key(
    provider: str,
    region: str | None,
    zone_label: str | None,
    pricing: str,
    term: str | None,
    variant: str | None,
    gpu: str | None,
    price: float,
    name: str,
    kind: str,
) -> tuple:
    """What the offers of one ranking line share; sizes differ only by digits in the name ("scaleway_L4" is the x1
    of "scaleway_L4x2")."""
    pattern = _DIGITS.sub("#", COUNT_SUFFIX.sub("", name))
    return provider, region, zone_label, pricing, term, variant or gpu, round(price, 4), pattern, kind


def _line_text(*columns) -> str:
    return json.dumps(line_key(*columns))  # one text per key: a column SQL can group by


# The columns both tables are filtered on (`KB.offer_where`), grouped by so that a filter keeps or drops whole rows
_KEYS = "gpu, pricing, kind, provider, instance_type, gpu_memory_gb, gpu_form_factor, gpu_count"
_HEAD = (  # bare columns of the row with MIN(...) (SQLite's min/max rule): the first orderable row in rank order
    f"SELECT {_KEYS}, COUNT(*) AS n, TOTAL({ORDERABLE}) AS ok, {GPU_ONLY} AS gpu_only, "
    f"COUNT(DISTINCT CASE WHEN {ORDERABLE} THEN region END) AS regions, "
    f"TOTAL({ORDERABLE} AND stock IS 'out_of_stock') AS out, "
    f"rowid AS head, MIN(CASE WHEN {ORDERABLE} THEN rank END) AS head_rank FROM offers GROUP BY {_KEYS}"
)
_LINES = (  # each head's line as a number (the same number for the same key) and whether its instance type has other
    # rows at that pricing (another GPU, memory, count or kind but an article's: a ranking then reads the offers)
    f"WITH h AS ({_HEAD}), t AS (SELECT h.*, CASE WHEN h.head_rank IS NULL THEN NULL ELSE line_key(o.provider, "
    "o.region, o.zone_label, o.pricing, o.term, o.gpu_variant, o.gpu, o.price_per_gpu_hour_usd, o.instance_type, "
    "o.kind) END AS key FROM h LEFT JOIN offers AS o ON o.rowid = h.head AND h.head_rank IS NOT NULL) "
    f"SELECT {_KEYS}, n, ok, gpu_only, regions, out, head, head_rank, "
    "CASE WHEN key IS NULL THEN NULL ELSE DENSE_RANK() OVER (ORDER BY key) END AS line, "
    "COUNT(*) OVER (PARTITION BY provider, instance_type, pricing, kind = 'article') > 1 AS shared FROM t"
)
LISTED = "ok > 0 AND NOT gpu_only"  # a summary row with whole orderable offers
TABLES = (  # (table, query, indexes), created in this order once `offers.rank` is final
    (
        "offer_groups",
        f"{_LINES} ORDER BY gpu, pricing, head_rank, provider, instance_type, kind, gpu_memory_gb, gpu_form_factor, "
        "gpu_count",
        (("gpu", "pricing", "kind", "provider", "head_rank"), ("gpu", "pricing", "head_rank"), ("line", "head_rank")),
    ),
    (  # per provider: what a family's ranking counts, without a memory, form factor or count asked for
        "offer_totals",
        "SELECT gpu, pricing, kind, provider, TOTAL(n) AS n, TOTAL(ok) AS ok, TOTAL(gpu_only * ok) AS gpu_only, "
        f"TOTAL(CASE WHEN {LISTED} THEN out END) AS out, COUNT(DISTINCT CASE WHEN {LISTED} THEN line END) AS lines, "
        "MAX(shared) AS shared FROM offer_groups GROUP BY gpu, pricing, kind, provider ORDER BY gpu, pricing, kind, "
        "provider",
        (("gpu", "pricing"),),
    ),
    (
        "offer_left_out",
        f"SELECT {_KEYS}, availability, availability_reason, COUNT(*) AS n FROM offers WHERE NOT {ORDERABLE} "
        f"GROUP BY {_KEYS}, availability, availability_reason ORDER BY {_KEYS}, availability, availability_reason",
        (("gpu", "pricing"),),
    ),
)


# Every offers column the tables and the ranking index read: a catalog may fill none of a column's cells (a KB of
# Lambda and Azure alone has no form factor), and SQLite reads an unknown double-quoted name as a string literal
COLUMNS = (
    "gpu", "pricing", "kind", "provider", "instance_type", "gpu_memory_gb", "gpu_form_factor", "gpu_count",
    "availability", "availability_reason", "region", "stock", "rank", "zone", "zone_label", "term", "gpu_variant",
    "price_per_gpu_hour_usd",
)  # fmt: skip


def add_missing_columns(conn, columns: tuple[str, ...]) -> None:
    """Add each of `columns` the offers table lacks, as an empty column (NULL in every row)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(offers)")}
    for column in dict.fromkeys(c for c in columns if c not in have):
        conn.execute(f'ALTER TABLE offers ADD COLUMN "{column}"')  # names of the code, never user text


def create(conn) -> None:
    """Make the summary tables of the offers as stored (`TABLES`), with their indexes."""
    conn.create_function("line_key", 10, _line_text, deterministic=True)
    for name, select, indexes in TABLES:
        conn.execute(f"CREATE TABLE {name} AS {select}")
        for number, columns in enumerate(indexes):
            conn.execute(f"CREATE INDEX {name}_{number} ON {name} ({', '.join(columns)})")
