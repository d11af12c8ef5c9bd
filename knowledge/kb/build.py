"""Build the knowledge base: validate every bundled data file and load it into one SQLite file.

The SQLite file is a build artifact (`$GPUBOT_HOME/kb.db`), never committed and never edited: `gpubot kb build`
(or the first question, when it is missing) rebuilds it from `knowledge/data/` plus the catalogs imported with
`gpubot kb import`. A build writes a temporary file and renames it over the old one, so a failed build or import
leaves the previous knowledge base serving, untouched.
"""

from __future__ import annotations

import csv
import functools
import json
import operator
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
from knowledge.kb.schema import (
    INDEXES,
    NAME_TABLES,
    PARTIAL_INDEXES,
    SCHEMA_VERSION,
    fingerprint,
    number_ranks,
)
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


def _insert(db, name: str, rows: list[dict]) -> None:
    """What sqlite-utils `insert_all(..., alter=True)` stores, without its per-value checks (half the build time with
    twelve clouds): the columns are the union of the rows' keys, each typed from its first non-null value."""
    if not rows:
        return
    keys: dict[str, None] = {}  # every key, in order of first appearance
    last = None
    for row in rows:
        shape = row.keys()
        if last is None or shape != last:  # (compared as sets, in C) a row with keys not seen yet adds them
            keys.update(dict.fromkeys(shape))
            last = shape
    types = {key: type(_first_value(rows, key)) for key in keys}
    columns = {
        key: (int if kind is bool else str if kind in (type(None), dict, list, tuple) else kind)
        for key, kind in types.items()
    }
    db[name].create(columns)
    structured = [i for i, kind in enumerate(types.values()) if kind in (dict, list, tuple)]
    names = list(columns)
    sql = f"INSERT INTO [{name}] ({', '.join(f'[{k}]' for k in names)}) VALUES ({', '.join('?' * len(names))})"
    every = operator.itemgetter(*names) if len(names) > 1 else lambda row: (row[names[0]],)
    width, blank = len(names), dict.fromkeys(names)

    def values(row: dict) -> tuple:
        # a row with as many keys as there are columns has them all (the columns are the union of the rows' keys);
        # another gets None for the keys it lacks, as `row.get` would
        return every(row) if len(row) == width else every({**blank, **row})

    if structured:

        def encoded(row: dict) -> list:
            out = list(values(row))
            for i in structured:
                if out[i] is not None:
                    out[i] = json.dumps(out[i])
            return out

        db.conn.executemany(sql, map(encoded, rows))
    else:
        db.conn.executemany(sql, map(values, rows))


_not_none = functools.partial(operator.is_not, None)


def _first_value(rows: list[dict], key: str) -> object:
    """The first non-null value of `key` in `rows` (None if every row lacks it or holds None), found in C."""
    return next(filter(_not_none, map(operator.methodcaller("get", key), rows)), None)


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


def build(
    target: Path | None = None,
    parsed: Parsed | None = None,
    *,
    catalog_dir: Path = CATALOG_DIR,
    pricing_dir: Path = PRICING_DIR,
) -> dict:
    """Build the knowledge base atomically; return a small report (counts, seconds, skipped rows).

    `parsed`: see `load_catalogs`. `catalog_dir`, `pricing_dir`: the bundled catalogs (their manifest.csv) and
    reserved/spot price files; tests build a small knowledge base from a subset of both (tests/data/small_kb/)."""
    import sqlite_utils

    started = time.perf_counter()
    target = target or kb_path()
    built_from = fingerprint()
    version = imports_version()  # read before the imports themselves: a later import makes us stale, not wrong
    notes: list[dict] = []
    catalogs: dict[str, Catalog] = {}
    offers, raw, skipped = load_catalogs(all_catalogs(catalog_dir), notes, parsed, catalogs)
    live_terms = live_aws_terms(catalogs.get("aws"))  # a live source's reserved terms replace the file's
    aws_offers, terms, risks = pricing.aws_terms(_gpu_info(offers, "aws"), pricing_dir, live_terms)
    gcp_offers, gcp_terms = pricing.gcp_terms(_gpu_info(offers, "gcp"), pricing_dir)
    risks += pricing.spot_advisor(
        {o["instance_type"] for o in offers if o["provider"] == "aws"} | {r["instance_type"] for r in risks},
        pricing_dir,
    )
    all_offers = offers + aws_offers + gcp_offers

    from knowledge.catalog import offer_checks
    from knowledge.facts import loader as facts_loader

    all_offers, checks = offer_checks.apply(all_offers, terms + gcp_terms, raw)  # quirks, sources, availability
    extra = {**facts_loader.tables(all_offers), **checks}
    for offer in all_offers + extra.get("article_offers", []):  # figures from dated price files and seeds
        offer.setdefault("as_of_known", True)
        offer.setdefault("gpu_recognised", True)
    from knowledge.facts import api_prices, benchmarks, mlperf

    extra |= benchmarks.tables()  # measured LLM inference, for $ per 1M tokens (knowledge/facts/benchmarks.py)
    extra |= mlperf.tables() | api_prices.tables()  # MLPerf cloud results, LLM API list prices (issue 27)

    remove_leftovers(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=target.parent)
    os.close(fd)
    try:
        db = sqlite_utils.Database(tmp)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        with db.conn:
            db.table("meta").insert_all(
                [
                    {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                    {"key": "fingerprint", "value": built_from},
                    {"key": "imports_version", "value": str(version)},
                    {"key": "built_at", "value": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                    *([] if catalog_dir == CATALOG_DIR else [{"key": "catalog_dir", "value": str(catalog_dir)}]),
                ],
                pk="key",
            )
            db.table("gpus").insert_all(
                [
                    {**f.model_dump(), "aliases": json.dumps(f.aliases), "spec_models": json.dumps(f.spec_models)}
                    for f in gpu_families()
                ],
                pk="name",
            )
            db.table("gpu_specs").insert_all(_specs(), pk="model")
            _insert(db, "catalog_rows", raw)
            offer_rows = all_offers + extra.pop("article_offers", [])
            number_ranks(offer_rows)
            _insert(db, "offers", offer_rows)
            _insert(db, "price_terms", terms + gcp_terms)
            _insert(db, "spot_risk", risks)
            for name, rows in extra.items():
                if rows:
                    db.table(name).insert_all(rows, batch_size=2000, alter=True)
            if db["pitfalls"].exists():  # full-text search; trigrams so that Chinese text matches too
                db.execute("CREATE VIRTUAL TABLE pitfalls_fts USING fts5(id UNINDEXED, content, tokenize='trigram')")
                db.execute(
                    "INSERT INTO pitfalls_fts (id, content) SELECT id, title_en || ' ' || title_zh || ' ' || "
                    "body_en || ' ' || body_zh || ' ' || keywords FROM pitfalls"
                )
            db.table("skipped").insert_all([{"note": s} for s in skipped] or [{"note": ""}])
            db.table("catalog_notes").insert_all(notes or [{"provider": "", "kind": "", "text": "", "rows": None}])
            history_bundled.write(db.conn)  # bundled weekly price history (GCP), replayed into intervals
            for table, columns in INDEXES:
                db.table(table).create_index(list(columns))
            for statement in PARTIAL_INDEXES:
                db.execute(statement)
        db.execute("ANALYZE")
        with db.conn:
            for table, select in NAME_TABLES:
                db.execute(f"CREATE TABLE {table} AS {select}")
        db.close()
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return {
        "path": str(target),
        "offers": len(all_offers),
        "catalog_rows": len(raw),
        "price_terms": len(terms) + len(gcp_terms),
        "spot_risk": len(risks),
        "skipped": skipped,
        "seconds": round(time.perf_counter() - started, 2),
    }
