"""What a knowledge-base build writes, table by table, and what its bundled part keeps for later builds.

Every row of the catalog tables belongs to one provider's part: its catalog's rows, offers, skipped figures and
findings, and (AWS, GCP) the reserved and committed terms derived from its offers. Every check over offers is keyed
by provider (`knowledge.catalog.offer_checks`), so a part computed alone is what a full build computes for it. The
`Ledger` records, for the bundled part cached in GPUBOT_HOME (`knowledge.kb.base_cache`), where each part's rows are
and what a build needs to add them up with an import's (`knowledge.kb.incremental`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.catalog.offer_checks import Counts
from knowledge.kb.segments import Segment, Shape

SEGMENTED = ("catalog_rows", "offers", "price_terms", "spot_risk")  # written by `segments.insert`, in this order
DERIVED = ("aws", "gcp")  # providers whose offers yield terms of their own (reserved, committed, spot risk)
Label = tuple[str, str]  # (what, provider): ("raw" | "catalog" | "pricing" | "terms" | "risks" | "article", id)


@dataclass(slots=True)
class Loaded:
    """One catalog source, loaded and converted (`loading.load_catalogs`)."""

    provider: str
    offers: list[dict]
    raw: list[dict]
    skipped: list[str]
    notes: list[dict]


@dataclass(frozen=True, slots=True)
class Part:
    """What a provider's part adds to the tables that are not segmented."""

    skipped: tuple[str, ...]
    notes: tuple[dict, ...]
    unpriced: tuple[dict, ...]
    with_catalog: bool


@dataclass(slots=True)
class Tables:
    """A build's tables in the order it writes them: rows, segments, or None for a table copied whole from the
    cached bundled part (data that no catalog changes: GPU facts, seed facts, benchmarks, bundled history)."""

    meta: list[dict]
    gpus: list[dict] | None
    gpu_specs: list[dict] | None
    segmented: dict[str, list[tuple[Label, Segment]]]
    shapes: dict[str, list[Shape]]  # each segment's (`segments.shape_of`)
    extra: dict[str, list[dict] | None]
    skipped: list[str]
    notes: list[dict]
    history: bool  # True: written from the bundled files; False: copied
    ranked: bool = True  # every offer's `rank` numbered over all offers; False: renumbered in SQL once written
    parts: dict[str, Part] = field(default_factory=dict)  # per provider (a full build's, for the ledger)
    counts: dict[str, int] = field(default_factory=dict)  # the build report's


@dataclass(slots=True)
class Ledger:
    """The cached bundled part's record of itself (see the module)."""

    segments: dict[str, list[tuple[Label, int, int, Shape]]]  # table -> (label, first rowid, last rowid, shape)
    types: dict[str, dict[str, type]]  # table -> its columns' types
    parts: dict[str, Part]
    counts: dict[Label, Counts]  # per offers segment
    quirks_applied: list[dict]
    crosscheck: list[dict]
    crosscheck_summary: dict
    provider_base: list[dict]
    extra: dict[str, bool]  # every extra table's name, in build order: True for one copied whole
    first_offers: Label  # the label of the first offers segment (it carries the checks' columns)
