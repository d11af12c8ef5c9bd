"""Build the knowledge base: validate every bundled data file and load it into one SQLite file.

The SQLite file is a build artifact (`$GPUBOT_HOME/kb.db`), never committed and never edited: `gpubot kb build`
(or the first question, when it is missing) rebuilds it from `knowledge/data/` plus the catalogs imported with
`gpubot kb import`. A build writes a temporary file and renames it over the old one, so a failed build or import
leaves the previous knowledge base serving, untouched. A build of the bundled data alone is kept as the cached
bundled part (`knowledge.kb.base_cache`); a build with imports copies it and computes only the imported providers'
parts (`knowledge.kb.incremental`), the same tables row for row.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from knowledge.catalog.imports import imports_version
from knowledge.catalog.reader import Catalog
from knowledge.catalog.sources import CatalogSource, all_catalogs
from knowledge.facts.reference import gpu_families
from knowledge.history import bundled as history_bundled
from knowledge.kb import bulk, groups, segments
from knowledge.kb.loading import Parsed, aws_part, gcp_part, load, settle
from knowledge.kb.parts import SEGMENTED, Label, Loaded, Part, Tables
from knowledge.kb.schema import (
    INDEXES,
    NAME_TABLES,
    PARTIAL_INDEXES,
    RANKING_COLUMNS,
    SCHEMA_VERSION,
    fingerprint,
    number_ranks,
    renumber_ranks,
)
from knowledge.kb.segments import Segment
from knowledge.paths import CATALOG_DIR, DATA_DIR, PRICING_DIR, kb_path


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


def _parts(
    loaded: list[Loaded], catalog_segments: list[tuple[Label, list[dict]]], unpriced_rows: list[dict]
) -> dict[str, Part]:
    """Each loaded provider's part of the report: its skipped rows, notes, unpriced rows and whether it has offers."""
    unpriced: dict[str, list[dict]] = {}
    for row in unpriced_rows:
        unpriced.setdefault(row["provider"], []).append(row)
    return {
        p.provider: Part(
            tuple(p.skipped),
            tuple(p.notes),
            tuple(unpriced.get(p.provider, ())),
            any(o["kind"] == "catalog" for o in segment),
        )
        for p, (_label, segment) in zip(loaded, catalog_segments, strict=True)
    }


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
    number_ranks(all_offers + articles)  # `offers.rank`, over every offer (`knowledge.kb.schema.rank_key`)
    extra |= benchmarks.tables()  # measured LLM inference, for $ per 1M tokens (knowledge/facts/benchmarks.py)
    extra |= mlperf.tables() | api_prices.tables()  # MLPerf cloud results, LLM API list prices (issue 27)
    by_label: dict[Label, list[dict]] = {}
    for offer in all_offers:  # the checks keep the order (and drop some spot offers)
        by_label.setdefault(label[id(offer)], []).append(offer)
    catalog_segments = [(("catalog", p.provider), by_label.get(("catalog", p.provider), [])) for p in loaded]
    parts = _parts(loaded, catalog_segments, extra.get("unpriced", []))
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
        if not tables.ranked and db["offers"].exists():  # copied ranks are the bundled part's: over all offers
            renumber_ranks(db.conn)
        if db["offers"].exists():  # before the indexes: an index on a column no row has would index a literal
            groups.add_missing_columns(db.conn, (*RANKING_COLUMNS, *groups.COLUMNS))
        for name, columns in INDEXES:
            if db[name].exists():  # a table without rows is not created (a bundled part of no catalogs)
                db.table(name).create_index(list(columns))
        if db["offers"].exists():
            for statement in PARTIAL_INDEXES:
                db.execute(statement)
            groups.create(db.conn)  # per instance type, from the offers as stored: the same after an import
    if base is not None:
        db.execute("DETACH DATABASE base")
    db.execute("ANALYZE")
    if db["offers"].exists():
        with db.conn:
            for name, select in NAME_TABLES:  # from the offers as stored, in SQL: the same after an import
                db.execute(f"CREATE TABLE {name} AS {select}")
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


@dataclass(frozen=True)
class Plan:
    """What a build reads before it computes: its target, its sources and meta rows, the bundled files' folders."""

    target: Path
    sources: list[CatalogSource]
    parsed: Parsed | None
    meta: list[dict]
    catalog_dir: Path
    pricing_dir: Path
    reuse_bundled: bool


def plan(
    target: Path | None = None,
    parsed: Parsed | None = None,
    *,
    catalog_dir: Path = CATALOG_DIR,
    pricing_dir: Path = PRICING_DIR,
    reuse_bundled: bool = True,
    pending: CatalogSource | None = None,
    version: str | None = None,
) -> Plan:
    """A build's plan: `pending`, an import being stored at the same time (`all_catalogs`); `version`, the stored
    imports' token when the caller read it already (`imports_version()`)."""
    version = version if version is not None else imports_version()  # before the imports themselves: a later
    meta = _meta(fingerprint(), version, catalog_dir)  # import makes us stale, not wrong
    sources = all_catalogs(catalog_dir, pending)
    return Plan(target or kb_path(), sources, parsed, meta, catalog_dir, pricing_dir, reuse_bundled)


def temporary_beside(target: Path) -> Path:
    """A new empty file for a build of `target`, in its folder (`remove_leftovers` knows its name)."""
    remove_leftovers(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=target.parent)
    os.close(fd)
    return Path(tmp)


@bulk.paused()  # the rows of every catalog stay alive until the end: no collector passes over them
def write_temporary(job: Plan, temporary: Path) -> dict:
    """Compute the plan's tables into `temporary` (removed when that fails); return the build's report.

    With imports, the bundled part is copied from its cache in GPUBOT_HOME (`knowledge.kb.base_cache`, built
    first when missing) and only the imported providers' parts are computed (`knowledge.kb.incremental`): the same
    tables, row for row (`incremental` in the report)."""
    from knowledge.kb import base_cache, incremental

    imported = any(src.text is not None for src in job.sources)
    key = base_cache.key(job.catalog_dir, job.pricing_dir)
    base = bundled_part(key, job.catalog_dir, job.pricing_dir, job.meta) if imported and job.reuse_bundled else None
    try:
        tables = incremental.tables(base.ledger, job.sources, job.parsed, job.pricing_dir, job.meta) if base else None
        if tables is None:
            tables = full(job.sources, job.parsed, job.pricing_dir, job.meta)
            write(temporary, tables)
            if not imported:  # this is the bundled part: kept for the builds after an import
                base_cache.store(key, temporary, incremental.ledger(tables))
        else:
            write(temporary, tables, base.path if base is not None else None)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    report = {"path": str(job.target), **tables.counts, "skipped": tables.skipped}
    return report | {"incremental": not tables.history}  # not history: the bundled part copied from its cache


def swap_in(temporary: Path, target: Path, version: str | None = None) -> None:
    """Rename a written build over `target` (`version`: the stored imports' token it holds, when it is newer than
    the one its plan read); the temporary file is removed when that fails."""
    try:
        if version is not None:
            with sqlite3.connect(temporary) as conn:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'imports_version'", [version])
            conn.close()
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


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
    `reuse_bundled=False` computes every part (see `write_temporary`)."""
    started = time.perf_counter()
    job = plan(target, parsed, catalog_dir=catalog_dir, pricing_dir=pricing_dir, reuse_bundled=reuse_bundled)
    temporary = temporary_beside(job.target)
    report = write_temporary(job, temporary)
    swap_in(temporary, job.target)
    return report | {"seconds": round(time.perf_counter() - started, 2)}


def bundled_part(key: str, catalog_dir: Path, pricing_dir: Path, meta: list[dict]):
    """The cached bundled part for `key`, built and stored first when missing (None if it cannot be stored)."""
    from knowledge.catalog.sources import bundled_catalogs
    from knowledge.kb import base_cache, incremental

    found = base_cache.load(key)
    if found is not None:
        return found
    try:
        folder = base_cache.folder()
        remove_leftovers(folder)
        fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=folder)
        os.close(fd)
    except OSError:
        return None  # no cache where the home cannot hold one: a full build
    try:
        tables = full(bundled_catalogs(catalog_dir), None, pricing_dir, meta)
        write(Path(tmp), tables)
        base_cache.store(key, Path(tmp), incremental.ledger(tables))
    finally:
        Path(tmp).unlink(missing_ok=True)
    return base_cache.load(key)
