"""Build the knowledge base: validate every bundled data file and load it into one SQLite file.

The SQLite file is a build artifact (`$GPUBOT_HOME/kb.db`), never committed and never edited: `gpubot kb build`
(or the first question, when it is missing) rebuilds it from `knowledge/data/` plus the catalogs imported with
`gpubot kb import`. A build writes a temporary file and renames it over the old one, so a failed build or import
leaves the previous knowledge base serving, untouched.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from knowledge.catalog.imports import imports_version
from knowledge.catalog.offers import Conversion, Currency, convert
from knowledge.catalog.reader import Catalog
from knowledge.catalog.sources import CatalogSource, all_catalogs
from knowledge.facts import pricing
from knowledge.facts.reference import gpu_families
from knowledge.history import bundled as history_bundled
from knowledge.kb import segments
from knowledge.kb.parts import SEGMENTED, Label, Loaded, Part, Tables
from knowledge.kb.schema import SCHEMA_VERSION, fingerprint
from knowledge.kb.segments import Segment
from knowledge.paths import CATALOG_DIR, DATA_DIR, PRICING_DIR, kb_path


@dataclass(frozen=True, slots=True)
class Converted:
    """A catalog an import has just converted (`convert`'s result) and the terms it was converted under: the build
    reuses the result only for a source with the same terms (100k rows: about a second)."""

    hosts_text: str | None
    currency: Currency
    source: str
    as_of: str
    as_of_known: bool
    result: Conversion

    def fits(self, src: CatalogSource) -> bool:
        return (
            self.hosts_text == src.hosts_text
            and self.currency == src.currency_info()
            and self.source == src.source
            and self.as_of == src.as_of
            and self.as_of_known == src.as_of_known
        )


Parsed = dict[str, tuple[str, Catalog] | tuple[str, Catalog, Converted]]  # see `load_catalogs`


def _specs() -> list[dict]:
    family_of = {model: family.name for family in gpu_families() for model in family.spec_models}
    rows = []
    with (DATA_DIR / "gpu_specs.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            record: dict = {"family": family_of.get(row["model"])}
            for key, value in row.items():
                if key in ("model", "vendor", "architecture", "form_factor", "memory_type", "source"):
                    record[key] = value
                else:
                    record[key] = float(value) if value.strip() else None
            rows.append(record)
    return rows


def catalog_notes(provider: str, catalog: Catalog, result: Conversion) -> list[dict]:
    """What an import summary and `gpubot kb stats` report about one catalog, one row per finding."""
    notes = [
        {"provider": provider, "kind": "unrecognised", "text": name, "rows": n}
        for name, n in sorted(result.unrecognised.items())
    ]
    notes += [{"provider": provider, "kind": "identity", "text": text, "rows": None} for text in result.notes]
    if catalog.zero_spot:
        notes.append(
            {
                "provider": provider,
                "kind": "zero_spot",
                "rows": catalog.zero_spot,
                "text": f"{catalog.zero_spot} rows with SpotPrice 0: no spot offer",
            }
        )
    if catalog.no_region:
        notes.append(
            {
                "provider": provider,
                "kind": "no_region",
                "rows": catalog.no_region,
                "text": f"{catalog.no_region} rows without a region: kept under region 'unknown'",
            }
        )
    return notes


def load_catalogs(
    sources: list[CatalogSource],
    notes: list[dict] | None = None,
    parsed: Parsed | None = None,
    catalogs: dict[str, Catalog] | None = None,
) -> tuple[list[dict], list[dict], list[str]]:
    """(offers, raw rows, skipped notes) for all catalogs; raises CatalogError on the first bad file.

    `notes`, when given, collects each catalog's findings (`catalog_notes`). `parsed`: catalogs this process has
    just validated, {provider: (text, catalog[, converted])}, used where a source has that text (and, for the
    conversion, the same terms: `Converted.fits`). `catalogs`, when given, collects each provider's catalog (the
    live AWS reserved terms are read from it: `live_aws_terms`)."""
    offers: list[dict] = []
    raw: list[dict] = []
    skipped: list[str] = []
    for src in sources:
        known = (parsed or {}).get(src.provider)
        converted: Converted | None = None
        if known is not None and src.text is not None and known[0] == src.text:
            catalog, hosts = known[1], src.read_hosts()  # an import's file, parsed once (100k rows: seconds)
            converted = known[2] if len(known) > 2 else None
        else:
            catalog, hosts = src.read()
        if catalogs is not None:
            catalogs[src.provider] = catalog
        if converted is not None and converted.fits(src):
            result = converted.result  # and converted once: the import's own conversion, same file, same terms
        else:
            result = convert(
                src.provider,
                catalog,
                hosts=hosts.hosts if hosts else (),
                currency=src.currency_info(),
                source=src.source,
                as_of=src.as_of,
                as_of_known=src.as_of_known,
            )
        offers += result.offers
        if notes is not None:
            notes += catalog_notes(src.provider, catalog, result)
        skipped += [f"{src.provider} {src.path.name} {s}" for s in result.skipped]
        for cat in (catalog, hosts) if hosts else (catalog,):
            file = Path(cat.path).name
            for row in (*cat.rows, *cat.hosts):
                raw.append(
                    {
                        "provider": src.provider,
                        "file": file,
                        "line": row.line,
                        "instance_type": row.instance_type,
                        "accelerator": row.accelerator,
                        "accelerator_count": row.accelerator_count,
                        "vcpus": row.vcpus,
                        "memory_gib": row.memory_gib,
                        "gpu_info": row.gpu_info,
                        "price": row.price,
                        "spot_price": row.spot_price,
                        "region": row.region,
                        "zone": row.zone,
                        "generation": row.generation,
                        "arch": row.arch,
                    }
                )
    return offers, raw, skipped


def live_aws_terms(catalog: Catalog | None) -> dict[tuple[str, str], pricing.LiveTerms]:
    """(instance type, region) -> the reserved terms (and the on-demand price) a live source wrote into the AWS
    catalog (`Reserved`, `ReservedSource`, `ReservedFetchedAt`; `knowledge.catalog.fetchers.live_rows`)."""
    from knowledge.catalog.reader import parse_reserved_cell

    out: dict[tuple[str, str], pricing.LiveTerms] = {}
    for row in catalog.rows if catalog is not None else ():
        fetched_at = row.live_value("ReservedFetchedAt")
        key = (row.instance_type, row.region)
        if not fetched_at or key in out:
            continue  # every zone row of a region carries the same terms
        price_at = row.live_value("PriceFetchedAt")
        on_demand = (row.price, row.live_value("PriceSource"), price_at) if price_at and row.price else None
        out[key] = pricing.LiveTerms(
            parse_reserved_cell(row.live_value("Reserved")), row.live_value("ReservedSource"), fetched_at, on_demand
        )
    return out


def _gpu_info(offers: list[dict], provider: str) -> dict[str, dict]:
    keys = (
        "accelerator",
        "gpu",
        "gpu_model",
        "gpu_kind",
        "gpu_memory_gb",
        "gpu_count",
        "accelerator_count",
        "vgpu",
        "vcpus",
        "memory_gib",
        "gpu_variant",
        "gpu_form_factor",
        "gpu_vendor",
    )
    return {o["instance_type"]: {k: o[k] for k in keys} for o in offers if o["provider"] == provider}


def remove_leftovers(folder: Path) -> list[Path]:
    """Remove the half-built knowledge bases (`.kb-<pid>-*.db`) of builds that were killed: their process is gone
    (or they are over an hour old). Returns what was removed."""
    removed = []
    for leftover in folder.glob(".kb-*.db*"):
        pid = leftover.name.removeprefix(".kb-").split("-", 1)[0]
        try:
            alive = pid.isdigit() and _alive(int(pid)) and time.time() - leftover.stat().st_mtime < 3600
            if not alive:
                leftover.unlink()
                removed.append(leftover)
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def aws_part(offers: list[dict], catalog: Catalog | None, pricing_dir: Path) -> tuple[list, list, list]:
    """(reserved offers, price terms, spot-risk rows) AWS's offers yield."""
    live_terms = live_aws_terms(catalog)  # a live source's reserved terms replace the file's
    aws_offers, terms, risks = pricing.aws_terms(_gpu_info(offers, "aws"), pricing_dir, live_terms)
    risks += pricing.spot_advisor(
        {o["instance_type"] for o in offers if o["provider"] == "aws"} | {r["instance_type"] for r in risks},
        pricing_dir,
    )
    return aws_offers, terms, risks


def gcp_part(offers: list[dict], pricing_dir: Path) -> tuple[list, list]:
    """(committed-use offers, price terms) GCP's offers yield."""
    return pricing.gcp_terms(_gpu_info(offers, "gcp"), pricing_dir)


def load(sources: list[CatalogSource], parsed: Parsed | None, catalogs: dict[str, Catalog]) -> list[Loaded]:
    """Each source loaded on its own (`load_catalogs`), in order."""
    loaded = []
    for src in sources:
        notes: list[dict] = []
        offers, raw, skipped = load_catalogs([src], notes, parsed, catalogs)
        loaded.append(Loaded(src.provider, offers, raw, skipped, notes))
    return loaded


def settle(offers: list[dict]) -> None:
    """Figures from dated price files and seeds: dated and recognised unless they say otherwise."""
    for offer in offers:
        offer.setdefault("as_of_known", True)
        offer.setdefault("gpu_recognised", True)


def full(sources: list[CatalogSource], parsed: Parsed | None, pricing_dir: Path, meta: list[dict]) -> Tables:
    """Every table computed from the sources and the bundled files (`Tables.counts` holds the report's counts)."""
    from knowledge.catalog import offer_checks
    from knowledge.facts import api_prices, benchmarks, mlperf
    from knowledge.facts import loader as facts_loader

    catalogs: dict[str, Catalog] = {}
    loaded = load(sources, parsed, catalogs)
    offers = [o for part in loaded for o in part.offers]
    raw = [r for part in loaded for r in part.raw]
    aws_offers, terms, risks = aws_part(offers, catalogs.get("aws"), pricing_dir)
    gcp_offers, gcp_terms = gcp_part(offers, pricing_dir)
    label: dict[int, Label] = {id(o): ("catalog", part.provider) for part in loaded for o in part.offers}
    label |= {id(o): ("pricing", "aws") for o in aws_offers} | {id(o): ("pricing", "gcp") for o in gcp_offers}
    all_offers, checks = offer_checks.apply(offers + aws_offers + gcp_offers, terms + gcp_terms, raw)
    extra = {**facts_loader.tables(all_offers), **checks}
    articles = extra.pop("article_offers", [])
    settle(all_offers + articles)
    extra |= benchmarks.tables()  # measured LLM inference, for $ per 1M tokens (knowledge/facts/benchmarks.py)
    extra |= mlperf.tables() | api_prices.tables()  # MLPerf cloud results, LLM API list prices (issue 27)
    by_label: dict[Label, list[dict]] = {}
    for offer in all_offers:  # the checks keep the order (and drop some spot offers)
        by_label.setdefault(label[id(offer)], []).append(offer)
    catalog_segments = [(("catalog", p.provider), by_label.get(("catalog", p.provider), [])) for p in loaded]
    unpriced: dict[str, list[dict]] = {}
    for row in extra.get("unpriced", []):
        unpriced.setdefault(row["provider"], []).append(row)
    parts = {
        p.provider: Part(
            tuple(p.skipped),
            tuple(p.notes),
            tuple(unpriced.get(p.provider, ())),
            any(o["kind"] == "catalog" for o in segment),
        )
        for p, (_label, segment) in zip(loaded, catalog_segments, strict=True)
    }
    segmented: dict[str, list[tuple[Label, Segment]]] = {
        "catalog_rows": [(("raw", p.provider), p.raw) for p in loaded],
        "offers": [
            *catalog_segments,
            (("pricing", "aws"), by_label.get(("pricing", "aws"), [])),
            (("pricing", "gcp"), by_label.get(("pricing", "gcp"), [])),
            (("article", ""), articles),
        ],
        "price_terms": [(("terms", "aws"), terms), (("terms", "gcp"), gcp_terms)],
        "spot_risk": [(("risks", "aws"), risks)],
    }
    return Tables(
        meta=meta,
        gpus=[
            {**f.model_dump(), "aliases": json.dumps(f.aliases), "spec_models": json.dumps(f.spec_models)}
            for f in gpu_families()
        ],
        gpu_specs=_specs(),
        segmented=segmented,
        shapes={name: [segments.shape_of(s) for _label, s in found] for name, found in segmented.items()},
        extra=dict(extra),
        skipped=[s for p in loaded for s in p.skipped],
        notes=[n for p in loaded for n in p.notes],
        history=True,
        parts=parts,
        counts={"offers": len(all_offers), "catalog_rows": len(raw), "price_terms": len(terms) + len(gcp_terms)}
        | {"spot_risk": len(risks)},
    )


def write(path: Path, tables: Tables, base: Path | None = None) -> None:
    """Write `tables` into a new SQLite file `path` (copied tables and segments from the cached part `base`)."""
    import sqlite_utils

    db = sqlite_utils.Database(path)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    if base is not None:
        db.execute("ATTACH DATABASE ? AS base", [str(base)])
    with db.conn:
        db.table("meta").insert_all(tables.meta, pk="key")
        _rows_or_copy(db, "gpus", tables.gpus, pk="name")
        _rows_or_copy(db, "gpu_specs", tables.gpu_specs, pk="model")
        for name in SEGMENTED:
            segments.insert(db, name, [s for _label, s in tables.segmented[name]], tables.shapes[name])
        for name, rows in tables.extra.items():
            if rows is None:
                _copy(db, name)
            elif rows:
                db.table(name).insert_all(rows, batch_size=2000, alter=True)
        if db["pitfalls"].exists():  # full-text search; trigrams so that Chinese text matches too
            db.execute("CREATE VIRTUAL TABLE pitfalls_fts USING fts5(id UNINDEXED, content, tokenize='trigram')")
            db.execute(
                "INSERT INTO pitfalls_fts (id, content) SELECT id, title_en || ' ' || title_zh || ' ' || "
                "body_en || ' ' || body_zh || ' ' || keywords FROM pitfalls"
            )
        db.table("skipped").insert_all([{"note": s} for s in tables.skipped] or [{"note": ""}])
        db.table("catalog_notes").insert_all(tables.notes or [{"provider": "", "kind": "", "text": "", "rows": None}])
        if tables.history:
            history_bundled.write(db.conn)  # bundled weekly price history (GCP), replayed into intervals
        else:
            for name in history_bundled.TABLES:
                _copy(db, name)
        db.table("offers").create_index(["gpu", "pricing", "price_per_gpu_hour_usd"])
        db.table("offers").create_index(["instance_type"])
        db.table("offers").create_index(["provider", "pricing"])
        db.table("price_terms").create_index(["instance_type", "region"])
        db.table("spot_risk").create_index(["instance_type", "region"])
        db.table("catalog_rows").create_index(["provider", "instance_type"])
    if base is not None:
        db.execute("DETACH DATABASE base")
    db.execute("ANALYZE")
    db.close()


def _rows_or_copy(db, name: str, rows: list[dict] | None, pk: str) -> None:
    if rows is None:
        _copy(db, name)
    else:
        db.table(name).insert_all(rows, pk=pk)


def _copy(db, name: str) -> None:
    """Table `name` as the attached cached part holds it: its schema, rows (in rowid order) and indexes."""
    found = db.execute("SELECT sql FROM base.sqlite_master WHERE type = 'table' AND name = ?", [name]).fetchone()
    if found is None:
        return  # the full build did not create it either (no rows)
    db.execute(found[0])
    db.execute(f"INSERT INTO main.[{name}] SELECT * FROM base.[{name}] ORDER BY rowid")
    for (sql,) in db.execute(
        "SELECT sql FROM base.sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
        [name],
    ).fetchall():
        db.execute(sql)


def _meta(built_from: str, version: str, catalog_dir: Path) -> list[dict]:
    return [
        {"key": "schema_version", "value": str(SCHEMA_VERSION)},
        {"key": "fingerprint", "value": built_from},
        {"key": "imports_version", "value": str(version)},
        {"key": "built_at", "value": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        *([] if catalog_dir == CATALOG_DIR else [{"key": "catalog_dir", "value": str(catalog_dir)}]),
    ]


def build(
    target: Path | None = None,
    parsed: Parsed | None = None,
    *,
    catalog_dir: Path = CATALOG_DIR,
    pricing_dir: Path = PRICING_DIR,
    reuse_bundled: bool = True,
) -> dict:
    """Build the knowledge base atomically; return a small report (counts, seconds, skipped rows).

    `parsed`: see `load_catalogs`. `catalog_dir`, `pricing_dir`: the bundled catalogs (their manifest.csv) and
    reserved/spot price files; tests build a small knowledge base from a subset of both (tests/data/small_kb/).
    With imports, the bundled part is copied from its cache in GPUBOT_HOME (`knowledge.kb.base_cache`, built
    first when missing) and only the imported providers' parts are computed (`knowledge.kb.incremental`): the same
    tables, row for row (`incremental` in the report); `reuse_bundled=False` computes every part."""
    from knowledge.kb import base_cache, incremental

    started = time.perf_counter()
    target = target or kb_path()
    version = imports_version()  # read before the imports themselves: a later import makes us stale, not wrong
    meta = _meta(fingerprint(), version, catalog_dir)
    sources = all_catalogs(catalog_dir)
    imported = any(src.text is not None for src in sources)
    remove_leftovers(target.parent)
    key = base_cache.key(catalog_dir, pricing_dir)
    base = bundled_part(key, catalog_dir, pricing_dir, meta) if imported and reuse_bundled else None
    tables = incremental.tables(base.ledger, sources, parsed, pricing_dir, meta) if base is not None else None
    fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=target.parent)
    os.close(fd)
    try:
        if tables is None:
            tables = full(sources, parsed, pricing_dir, meta)
            write(Path(tmp), tables)
            if not imported:  # this is the bundled part: kept for the builds after an import
                base_cache.store(key, Path(tmp), incremental.ledger(tables))
        else:
            write(Path(tmp), tables, base.path if base is not None else None)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    report = {"path": str(target), **tables.counts, "skipped": tables.skipped}
    incremental_build = not tables.history  # the bundled part copied from its cache
    return report | {"seconds": round(time.perf_counter() - started, 2), "incremental": incremental_build}


def bundled_part(key: str, catalog_dir: Path, pricing_dir: Path, meta: list[dict]):
    """The cached bundled part for `key`, built and stored first when missing (None if it cannot be stored)."""
    from knowledge.catalog.sources import bundled_catalogs
    from knowledge.kb import base_cache, incremental

    found = base_cache.load(key)
    if found is not None:
        return found
    remove_leftovers(base_cache.folder())
    tables = full(bundled_catalogs(catalog_dir), None, pricing_dir, meta)
    folder = base_cache.folder()
    fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=folder)
    os.close(fd)
    try:
        write(Path(tmp), tables)
        base_cache.store(key, Path(tmp), incremental.ledger(tables))
    finally:
        Path(tmp).unlink(missing_ok=True)
    return base_cache.load(key)
