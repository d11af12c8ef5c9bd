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
from collections import Counter
from dataclasses import dataclass

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
    summary = (
        dict(by_availability),
        by_zone,
        len(unpriced),
        suspects,
        crosscheck_summary(offers, terms, disagreements),
    )
    tables = {
        "unpriced": unpriced,
        "quirks_applied": [*applied, *quirks.skip_rules()],
        "crosscheck": disagreements,
        "build_checks": summary_rows(*summary),
    }
    return offers, tables


def crosscheck_summary(offers: list[dict], terms: list[dict], disagreements: list[dict]) -> dict:
    """The two-source cross-check's counts (GCP offers and committed-use figures only)."""
    return {
        **crosscheck.compared_counts(offers, terms),
        "offers_differing": sum(1 for d in disagreements if d["kind"] == "offer"),
        "commitment_figures_differing": sum(1 for d in disagreements if d["kind"] == "commitment_file"),
        "threshold_pct": crosscheck.THRESHOLD * 100,
    }


def summary_rows(
    availability: dict[str, int], zone_kinds: dict[str, int], unpriced: int, suspects: int, cross: dict
) -> list[dict]:
    """The `build_checks` table."""
    summary = {
        "availability": availability,
        "zone_kinds": zone_kinds,
        "unpriced_rows": unpriced,
        "suspect_offers": suspects,
        "crosscheck": cross,
    }
    return [{"key": key, "value": json.dumps(value)} for key, value in summary.items()]


@dataclass(frozen=True, slots=True)
class Counts:
    """What `apply` counts over a run of offers, read back from the marks it left on them: a knowledge base built
    from parts (`knowledge.kb.incremental`) adds up the counts of its parts, in offer order."""

    offers: int
    availability: tuple[tuple[str, int], ...]  # rule-given availabilities, in order of first appearance
    zone_kinds: tuple[tuple[str, int], ...]
    suspects: int

    @classmethod
    def of(cls, offers: list[dict]) -> Counts:
        availability: Counter = Counter(o["availability"] for o in offers if o.get("availability"))
        zones: Counter = Counter(o["zone_kind"] for o in offers if o.get("zone") and o.get("zone_kind"))
        suspects = sum(1 for o in offers if o.get("suspect") is not None)
        return cls(len(offers), tuple(availability.items()), tuple(zones.items()), suspects)


def added(parts: list[Counts]) -> tuple[dict[str, int], dict[str, int], int]:
    """(availability, zone kinds, suspects) over `parts` in order, as `apply` counts them over all their offers."""
    availability: Counter = Counter()
    zones: dict[str, int] = {}
    for part in parts:
        availability.update(dict(part.availability))
        for kind, n in part.zone_kinds:
            zones[kind] = zones.get(kind, 0) + n
    availability["orderable"] = sum(p.offers for p in parts) - sum(availability.values())  # as `availability.apply`
    return dict(availability), zones, sum(p.suspects for p in parts)


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
