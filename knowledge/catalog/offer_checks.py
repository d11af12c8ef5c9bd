"""The build-time checks every offer goes through after conversion, in order, each owned by its own module:

1. `knowledge.catalog.quirks`: known catalog errors corrected (GPU counts, spot copied from on-demand);
2. `knowledge.catalog.crosscheck`: GCP figures compared with Google's billing catalog; the trusted one ranks;
3. `knowledge.catalog.availability`: whether each offer can be ordered at its pricing model;
4. `knowledge.catalog.zones`: Local Zone / Wavelength Zone labels.

`apply` returns the offers and the extra tables the knowledge base keeps for `gpubot kb stats` and for answers
(`unpriced`, `quirks_applied`, `crosscheck`, `build_checks`).
"""

from __future__ import annotations

import json

from knowledge.catalog import anomalies, availability, crosscheck, quirks, zones

COLUMNS = (
    "availability",
    "availability_reason",
    "availability_source",
    "zone_kind",
    "zone_label",
    "other_prices",
    "price_trust_reason",
    "suspect",
)


def apply(offers: list[dict], terms: list[dict], raw: list[dict]) -> tuple[list[dict], dict[str, list[dict]]]:
    offers, applied = quirks.correct(offers)
    disagreements = crosscheck.apply(offers, terms)
    by_availability = availability.apply(offers)
    by_zone = zones.apply(offers)
    suspects = anomalies.mark(offers)  # kept, marked "suspect: ..." (issue 26)
    family = {(o["provider"], o["accelerator"]): o["gpu"] for o in offers if o.get("accelerator")}
    unpriced = [
        {**row, "gpu": family.get((row["provider"], row["accelerator"]), row["accelerator"])}
        for row in availability.unpriced(raw)
    ]
    if offers:  # the table gets every column even when no offer needs one (NULL: orderable, one source)
        for column in COLUMNS:
            offers[0].setdefault(column, None)
    for offer in offers:
        if isinstance(offer.get("other_prices"), list):
            offer["other_prices"] = json.dumps(offer["other_prices"])
    summary = {
        "availability": dict(by_availability),
        "zone_kinds": by_zone,
        "unpriced_rows": len(unpriced),
        "suspect_offers": suspects,
        "crosscheck": {
            **crosscheck.compared_counts(offers, terms),
            "offers_differing": sum(1 for d in disagreements if d["kind"] == "offer"),
            "commitment_figures_differing": sum(1 for d in disagreements if d["kind"] == "commitment_file"),
            "threshold_pct": crosscheck.THRESHOLD * 100,
        },
    }
    tables = {
        "unpriced": unpriced,
        "quirks_applied": [*applied, *quirks.skip_rules()],
        "crosscheck": disagreements,
        "build_checks": [{"key": key, "value": json.dumps(value)} for key, value in summary.items()],
    }
    return offers, tables


def stats(kb) -> dict:
    """What `gpubot kb stats` lists of these checks: quirks applied, availability, zones, the cross-check."""

    def table(name: str, sql: str) -> list[dict]:
        return kb.rows(sql) if name in kb.table_names else []

    summary = {row["key"]: json.loads(row["value"]) for row in table("build_checks", "SELECT * FROM build_checks")}
    return {
        "catalog_quirks": table("quirks_applied", "SELECT * FROM quirks_applied"),
        "availability": {**summary.get("availability", {}), "unpriced_rows": summary.get("unpriced_rows", 0)},
        "zone_kinds": summary.get("zone_kinds", {}),
        "price_crosscheck": {
            **summary.get("crosscheck", {}),
            "largest": table(
                "crosscheck",
                "SELECT * FROM crosscheck WHERE kind = 'offer' AND pricing = 'on_demand' "
                "ORDER BY ABS(diff_pct) DESC, instance_type, region LIMIT 5",
            ),
        },
    }
