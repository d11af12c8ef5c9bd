"""Can an offer actually be ordered at its pricing model? Availability rules, applied at build time.

`availability_rules.csv` (reviewed, sourced, first matching row wins) says which offers cannot be bought the way
their price suggests: GCP A3 High with 1/2/4 GPUs only as Spot or Flex-start, AWS H200/B200 sizes without an
on-demand price only as Capacity Blocks, Azure sizes listed without a price (preview). Every offer gets
`availability` (`orderable`, `spot_only`, `reservation_only`, `preview`, `unknown`) with `availability_reason`
and `availability_source`; catalog rows without any price become `unpriced` rows (no offer, but counted).

Rankings leave out offers whose availability is not `orderable` (an `unknown` offer is kept and labelled), and
`excluded_counts` says how many were left out and why.
"""

from __future__ import annotations

import csv
import fnmatch
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from knowledge.paths import DATA_DIR

RULES_CSV = DATA_DIR / "availability_rules.csv"
AVAILABILITIES = ("orderable", "spot_only", "reservation_only", "preview", "unknown")
NOT_ORDERABLE = frozenset({"spot_only", "reservation_only", "preview"})  # left out of rankings
CONDITIONS = ("", "no_on_demand_price", "no_price")


@dataclass(frozen=True, slots=True)
class AvailabilityRule:
    provider: str
    instance_types: tuple[str, ...]  # glob patterns
    pricings: tuple[str, ...]  # glob patterns over on_demand / spot / reserved_1y / reserved_3y
    condition: str
    availability: str
    reason: str
    source: str
    line: int

    def matches(self, provider: str, instance_type: str, pricing: str) -> bool:
        return (
            fnmatch.fnmatchcase(provider, self.provider)
            and any(fnmatch.fnmatchcase(instance_type, p) for p in self.instance_types)
            and any(fnmatch.fnmatchcase(pricing, p) for p in self.pricings)
        )


@cache
def rules() -> tuple[AvailabilityRule, ...]:
    """The rules, validated: a bad row names its line."""
    found = []
    with RULES_CSV.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            if row["availability"] not in AVAILABILITIES or row["condition"] not in CONDITIONS:
                raise ValueError(
                    f"{RULES_CSV.name} line {line}: availability must be one of {AVAILABILITIES} "
                    f"and condition one of {CONDITIONS}"
                )
            if not row["reason"].strip() or not row["source"].strip():
                raise ValueError(f"{RULES_CSV.name} line {line}: every rule needs a reason and a source")
            found.append(
                AvailabilityRule(
                    provider=row["provider"] or "*",
                    instance_types=tuple(p.strip() for p in (row["instance_type"] or "*").split("|")),
                    pricings=tuple(p.strip() for p in (row["pricing"] or "*").split("|")),
                    condition=row["condition"],
                    availability=row["availability"],
                    reason=row["reason"],
                    source=row["source"],
                    line=line,
                )
            )
    return tuple(found)


def apply(offers: list[dict]) -> Counter:
    """Set `availability`, `availability_reason`, `availability_source` on the offers a rule matches (in place; the
    others are orderable); counts per value."""
    with_on_demand = {(o["provider"], o["instance_type"], o["region"]) for o in offers if o["pricing"] == "on_demand"}
    counts: Counter = Counter()
    priced_rules = [r for r in rules() if r.condition != "no_price"]  # no_price: rows without an offer (`unpriced`)
    candidates: dict[tuple[str, str, str], list[AvailabilityRule]] = {}
    for offer in offers:  # an offer no rule matches keeps no availability keys: NULL in the table is "orderable"
        if offer.get("kind") == "article":
            continue
        key = (offer["provider"], offer["instance_type"], offer["pricing"])
        if key not in candidates:
            candidates[key] = [r for r in priced_rules if r.matches(*key)]
        for rule in candidates[key]:
            if (
                rule.condition == "no_on_demand_price"
                and (offer["provider"], offer["instance_type"], offer["region"]) in with_on_demand
            ):
                continue
            offer.update(
                availability=rule.availability, availability_reason=rule.reason, availability_source=rule.source
            )
            counts[rule.availability] += 1
            break
    counts["orderable"] = len(offers) - sum(counts.values())
    return counts


def unpriced(raw_rows: Iterable[dict]) -> list[dict]:
    """Catalog rows listed without any price (no offer comes of them), each with the `no_price` rule it meets."""
    seen: dict[tuple, dict] = {}
    for row in raw_rows:
        if row.get("price") is not None or row.get("spot_price") is not None or not row.get("accelerator"):
            continue
        instance_type = row["instance_type"] or row["accelerator"]
        key = (row["provider"], instance_type, row["region"])
        if key in seen:
            continue
        rule = next(
            (
                r
                for r in rules()
                if r.condition == "no_price" and r.matches(row["provider"], instance_type, "on_demand")
            ),
            None,
        )
        if rule is None:
            continue
        seen[key] = {
            "provider": row["provider"],
            "instance_type": instance_type,
            "accelerator": row["accelerator"],
            "region": row["region"],
            "availability": rule.availability,
            "availability_reason": rule.reason,
            "availability_source": rule.source,
        }
    return list(seen.values())


def orderable(offer: dict) -> bool:
    """True unless a rule says the offer cannot be ordered at its pricing model."""
    return (offer.get("availability") or "orderable") not in NOT_ORDERABLE


def excluded_counts(rows: Iterable[dict]) -> list[dict]:
    """[{"reason", "availability", "count"}] for the rows that are not orderable, most first (a row with "n" stands
    for n rows: a count from SQL)."""
    counts: Counter[tuple] = Counter()
    for r in rows:
        if not orderable(r):
            counts[r.get("availability_reason") or r.get("availability"), r.get("availability")] += r.get("n", 1)
    return [
        {"reason": reason, "availability": availability, "count": n}
        for (reason, availability), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
