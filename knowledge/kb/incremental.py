"""The knowledge base after an import: the cached bundled part (`knowledge.kb.base_cache`) with the imported
providers' parts computed here, in the order and shape a full build writes them (`knowledge.kb.parts` says why a
part computed alone is the full build's).

Copied in SQL: the bundled providers' catalog rows, offers, terms and spot risk (by rowid range), and the tables no
catalog changes. Computed: the imported catalogs (and, for an import of AWS or GCP, the terms their offers yield),
put through the same checks; the small tables over every provider (`providers`, `unpriced`, `quirks_applied`,
`crosscheck`, `build_checks`) added up from the parts. `offers.rank` is a place among every offer, so the copied
and the computed ranks are renumbered in SQL once all offers are written (`schema.renumber_ranks`), and the tables
of distinct names are made from the offers as stored (`schema.NAME_TABLES`). Where a copied segment would not be
stored as a full build stores it (a column typed differently, or the checks' columns starting elsewhere) `tables`
returns None and the build is a full one.
"""

from __future__ import annotations

import json
from pathlib import Path

from knowledge.catalog import offer_checks
from knowledge.catalog.offer_checks import Counts
from knowledge.catalog.reader import Catalog
from knowledge.catalog.sources import CatalogSource
from knowledge.facts import loader as facts_loader
from knowledge.kb import loading, segments
from knowledge.kb.parts import DERIVED, SEGMENTED, Label, Ledger, Loaded, Part, Tables
from knowledge.kb.segments import Copied, Segment, Shape

DYNAMIC = ("providers", "unpriced", "quirks_applied", "crosscheck", "build_checks")  # over every provider's part


def ledger(tables: Tables) -> Ledger:
    """The record a full build of the bundled data keeps with its file."""
    shapes = tables.shapes
    placed: dict[str, list[tuple[Label, int, int, Shape]]] = {}
    for name in SEGMENTED:
        rowid, placed[name] = 1, []
        for (label, segment), shape in zip(tables.segmented[name], shapes[name], strict=True):
            assert isinstance(segment, list)  # a full build computes every segment
            if segment:
                placed[name].append((label, rowid, rowid + len(segment) - 1, shape))
                rowid += len(segment)
    checks = {row["key"]: json.loads(row["value"]) for row in tables.extra.get("build_checks") or []}
    return Ledger(
        segments=placed,
        types={name: segments.merged(shapes[name]) for name in SEGMENTED},
        parts=tables.parts,
        counts={
            label: Counts.of(segment)
            for label, segment in tables.segmented["offers"]
            if label[0] != "article" and isinstance(segment, list)
        },
        quirks_applied=list(tables.extra.get("quirks_applied") or []),
        crosscheck=list(tables.extra.get("crosscheck") or []),
        crosscheck_summary=checks.get("crosscheck", {}),
        provider_base=facts_loader.provider_base(),
        extra={name: name not in DYNAMIC for name in tables.extra},
        first_offers=placed["offers"][0][0] if placed["offers"] else ("", ""),
    )


def tables(
    cached: Ledger, sources: list[CatalogSource], parsed: loading.Parsed | None, pricing_dir: Path, meta: list[dict]
) -> Tables | None:
    """The tables of a build of `sources`, the imported ones computed and the bundled ones copied; None when the
    cached part cannot give what a full build would (see the module)."""
    fresh_sources = [src for src in sources if src.text is not None]
    fresh = {src.provider for src in fresh_sources}
    if any(src.provider not in cached.parts for src in sources if src.provider not in fresh):
        return None  # a bundled catalog the cached part does not hold
    loaded, rows, checked, checks, terms = _computed(fresh_sources, parsed, pricing_dir)

    def own(what: str, provider: str) -> bool:
        return provider in fresh and (what in ("raw", "catalog") or provider in DERIVED)

    segmented: dict[str, list[tuple[Label, Segment]]] = {}
    for name in SEGMENTED:
        found = {seg[0]: Copied(seg[1], seg[2], seg[3]) for seg in cached.segments[name]}
        order = _order(name, sources)
        segmented[name] = [(lbl, rows.get(lbl, []) if own(*lbl) else found.get(lbl, [])) for lbl in order]
    shapes = {name: segments.shapes_of([s for _l, s in found]) for name, found in segmented.items()}
    if not _alike(cached, segmented, shapes):
        return None
    parts = {
        src.provider: _fresh_part(loaded[src.provider], checks, rows)
        if src.provider in fresh
        else cached.parts[src.provider]
        for src in sources
    }
    counts = [
        Counts.of(segment) if isinstance(segment, list) else cached.counts[lbl]
        for lbl, segment in segmented["offers"]
        if lbl[0] != "article"
    ]
    cross = offer_checks.crosscheck_summary(checked, terms, checks["crosscheck"]) if "gcp" in fresh else None
    extra = _extra(cached, parts, checks, counts, fresh, cross)
    n = {name: sum(_length(s) for _l, s in segmented[name]) for name in SEGMENTED}
    return Tables(
        meta=meta,
        gpus=None,
        gpu_specs=None,
        segmented=segmented,
        shapes=shapes,
        extra=extra,
        skipped=[s for p in parts.values() for s in p.skipped],
        notes=[note for p in parts.values() for note in p.notes],
        history=False,
        ranked=False,  # the copied ranks number the bundled offers only, the computed ones the imported only
        counts={
            "offers": n["offers"] - _length(segmented["offers"][-1][1]),  # the articles are not counted
            "catalog_rows": n["catalog_rows"],
            "price_terms": n["price_terms"],
            "spot_risk": n["spot_risk"],
        },
    )


def _computed(
    sources: list[CatalogSource], parsed: loading.Parsed | None, pricing_dir: Path
) -> tuple[dict[str, Loaded], dict[Label, list[dict]], list[dict], dict, list[dict]]:
    """The imported sources' parts: (loaded sources, rows per label, their checked offers, the checks' tables, the
    terms their offers yield), put through the same checks as a full build, over their offers only."""
    fresh = {src.provider for src in sources}
    catalogs: dict[str, Catalog] = {}
    loaded = {part.provider: part for part in loading.load(sources, parsed, catalogs)}
    offers = [o for part in loaded.values() for o in part.offers]
    rows: dict[Label, list[dict]] = {("raw", p): part.raw for p, part in loaded.items()}
    aws_offers: list[dict] = []
    gcp_offers: list[dict] = []
    if "aws" in fresh:
        aws_offers, rows[("terms", "aws")], rows[("risks", "aws")] = loading.aws_part(
            offers, catalogs.get("aws"), pricing_dir
        )
    if "gcp" in fresh:
        gcp_offers, rows[("terms", "gcp")] = loading.gcp_part(offers, pricing_dir)
    label = {id(o): ("catalog", part.provider) for part in loaded.values() for o in part.offers}
    label |= {id(o): ("pricing", "aws") for o in aws_offers} | {id(o): ("pricing", "gcp") for o in gcp_offers}
    terms = rows.get(("terms", "aws"), []) + rows.get(("terms", "gcp"), [])
    raw = [r for part in loaded.values() for r in part.raw]
    checked, checks = offer_checks.apply(offers + aws_offers + gcp_offers, terms, raw)  # keyed by provider
    loading.settle(checked)
    for place, offer in enumerate(checked):  # placeholders (an integer column, as a full build's); every offer's
        offer["rank"] = place  # rank is numbered in SQL once all are written (`schema.renumber_ranks`)
    for offer in checked:
        rows.setdefault(label[id(offer)], []).append(offer)
    return loaded, rows, checked, checks, terms


def _order(name: str, sources: list[CatalogSource]) -> list[Label]:
    """Every segment of table `name`, in the order a full build writes them (`build.full`)."""
    if name == "catalog_rows":
        return [("raw", src.provider) for src in sources]
    if name == "offers":
        return [("catalog", src.provider) for src in sources] + [("pricing", p) for p in DERIVED] + [("article", "")]
    if name == "price_terms":
        return [("terms", p) for p in DERIVED]
    return [("risks", "aws")]


def _alike(cached: Ledger, segmented: dict[str, list[tuple[Label, Segment]]], shapes: dict[str, list[Shape]]) -> bool:
    """Whether every copied segment lands as a full build would write it (see the module)."""
    first = next((lbl for lbl, s in segmented["offers"] if _length(s)), None)
    if first is not None and first != cached.first_offers and isinstance(dict(segmented["offers"])[first], Copied):
        return False  # the checks' columns ride on the first offer (`offer_checks.apply`): the cached first one
    for name in SEGMENTED:
        final = segments.merged(shapes[name])
        for _label, segment in segmented[name]:
            if isinstance(segment, Copied) and not segments.stored_alike(segment.shape, cached.types[name], final):
                return False
    return True


def _length(segment: Segment) -> int:
    return segment.last - segment.first + 1 if isinstance(segment, Copied) else len(segment)


def _fresh_part(part: Loaded, checks: dict, rows: dict[Label, list[dict]]) -> Part:
    offers = rows.get(("catalog", part.provider), [])
    return Part(
        tuple(part.skipped),
        tuple(part.notes),
        tuple(r for r in checks.get("unpriced", []) if r["provider"] == part.provider),
        any(o["kind"] == "catalog" for o in offers),
    )


def _extra(
    cached: Ledger,
    parts: dict[str, Part],
    checks: dict,
    counts: list[Counts],
    fresh: set[str],
    fresh_cross: dict | None,
) -> dict[str, list[dict] | None]:
    """The extra tables, in the full build's order: copied (None) or added up from the parts."""
    unpriced = [row for p in parts.values() for row in p.unpriced]
    applied = [
        new if new["provider"] in fresh else old
        for new, old in zip(checks["quirks_applied"], cached.quirks_applied, strict=True)
    ]  # a quirk corrects its own provider's offers only
    if fresh_cross is not None:  # the two-source cross-check compares GCP's figures only
        cross, cross_summary = checks["crosscheck"], fresh_cross
    else:
        cross, cross_summary = cached.crosscheck, cached.crosscheck_summary
    availability, zone_kinds, suspects = offer_checks.added(counts)
    dynamic = {
        "providers": facts_loader.provider_rows(
            cached.provider_base, {p for p, part in parts.items() if part.with_catalog}
        ),
        "unpriced": unpriced,
        "quirks_applied": applied,
        "crosscheck": cross,
        "build_checks": offer_checks.summary_rows(availability, zone_kinds, len(unpriced), suspects, cross_summary),
    }
    return {name: None if copied else dynamic[name] for name, copied in cached.extra.items()}
