"""What identifies a knowledge-base build: the schema version of its tables and the bundled data it came from.

Both the builder (`knowledge.kb.build`, which stamps them into the `meta` table) and the reader (`knowledge.kb.reader`,
which compares them) import this module; it imports neither.
"""

from __future__ import annotations

import hashlib

from knowledge.paths import DATA_DIR

SCHEMA_VERSION = 7  # bump when the tables change shape (5: price_terms.fetched_at; 6: offers.rank, offers_ranking;
# 7: offer_groups, offer_left_out)

# The columns a ranking reads (`knowledge.kb.ranks`): equality filters first, then the group, the order and the rest,
# so that a ranking of a GPU family is read from this index alone, never from the (wide) offers rows
RANKING_COLUMNS = (
    "gpu", "pricing", "provider", "instance_type", "rank", "region", "kind", "availability", "stock",
    "price_per_gpu_hour_usd", "price_per_hour_usd", "gpu_count", "gpu_memory_gb", "gpu_form_factor", "zone",
    "zone_label", "term", "gpu_variant", "vgpu", "gpu_model",
)  # fmt: skip
INDEXES = (  # (table, columns), created once the tables are filled
    ("offers", ("gpu", "pricing", "price_per_gpu_hour_usd")),
    ("offers", ("instance_type",)),
    ("offers", ("provider", "pricing")),
    ("offers", RANKING_COLUMNS),
    ("price_terms", ("instance_type", "region")),
    ("spot_risk", ("instance_type", "region")),
    ("catalog_rows", ("provider", "instance_type")),
)
NAME_TABLES = (  # (table, query): the distinct names of the offers, stored after ANALYZE in the query's own order, so
    # that a first question reads a few hundred rows, not every offer (`KB.gpu_names`, `gpu_kinds`, `instance_types`)
    ("offer_gpu_names", "SELECT DISTINCT accelerator, gpu FROM offers WHERE kind = 'catalog'"),
    ("offer_gpu_kinds", "SELECT DISTINCT gpu, gpu_kind FROM offers"),
    ("offer_instance_types", "SELECT DISTINCT instance_type FROM offers WHERE kind != 'article'"),
)
PARTIAL_INDEXES = (  # the few seed-article figures among a family's offers (a query says `kind = 'article'`)
    "CREATE INDEX offers_articles ON offers (gpu, pricing) WHERE kind = 'article'",
)


def _ascending(value: object) -> tuple[bool, object]:
    """`value` as SQLite's ORDER BY sorts it: NULL first (TEXT compares by code point, as UTF-8 bytes do)."""
    return (value is not None, "" if value is None else value)


def price_key(offer: dict) -> tuple:
    """The offers' price order (`KB.offers`): cheapest per GPU-hour (USD), provider, instance type, region, a zone's
    own line after its region's, zone."""
    return (
        _ascending(offer.get("price_per_gpu_hour_usd")),
        *map(_ascending, (offer.get("provider"), offer.get("instance_type"), offer.get("region"))),
        offer.get("zone_label") is not None,
        _ascending(offer.get("zone")),
    )


def rank_key(offer: dict) -> tuple:
    """The order a ranking lists offers in: known out of stock last (issue 28), then the price order."""
    return (offer.get("stock") == "out_of_stock", *price_key(offer))


def number_ranks(offers: list[dict]) -> None:
    """Give each offer its place in `rank_key` order (`offers.rank`; ties keep the list's order, as rowids do): a
    ranking of any subset is then ORDER BY rank, and the best row of a group is the one with MIN(rank)."""
    for place, offer in enumerate(sorted(offers, key=rank_key)):
        offer["rank"] = place


# `rank_key` in SQL (ties in rowid order, as the stable sort keeps the rows' order): NULL first, TEXT by code point
RANK_ORDER = (
    "stock IS 'out_of_stock', price_per_gpu_hour_usd, provider, instance_type, region, zone_label IS NOT NULL, zone, "
    "rowid"
)


def renumber_ranks(conn) -> None:
    """Number `offers.rank` over every stored offer in `rank_key` order, as `number_ranks` does over the rows of a
    full build: after an import appends its offers to the copied ones, each rank is the place among them all."""
    conn.execute(
        "UPDATE offers SET rank = r.place FROM "
        f"(SELECT rowid AS id, ROW_NUMBER() OVER (ORDER BY {RANK_ORDER}) - 1 AS place FROM offers) AS r "
        "WHERE offers.rowid = r.id AND offers.rank IS NOT r.place"
    )


def fingerprint() -> str:
    """Identifies the bundled data a knowledge base was built from (imports are tracked by `imports_version`).

    A knowledge base whose fingerprint differs (after an upgrade or a data change) is rebuilt on first use.
    """
    digest = hashlib.sha1(str(SCHEMA_VERSION).encode())
    for path in sorted(DATA_DIR.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]
