"""`gpubot kb import`: add (or replace) one provider's catalog, atomically, in persistent state.

The file is validated and converted first; only then are its text (the `catalog_imports` table) and its price
snapshot (`knowledge.history.snapshots`) stored in the persistent state, in one transaction, and the local
knowledge base
rebuilt. A failure anywhere leaves the previous knowledge base and state exactly as they were; a process killed
at any point leaves the import and its snapshot both stored (every process then rebuilds from them) or neither.
This module sits above the store (`knowledge.catalog.imports`), the sources (`knowledge.catalog.sources`), the builder
and the price history: it is the one that writes and rebuilds.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.exc import IntegrityError

from knowledge.catalog.freshness import IMPORTED
from knowledge.catalog.imports import ImportRecord, catalog_imports, versioned_rows
from knowledge.catalog.imports_version import version_token
from knowledge.catalog.offers import Conversion, convert
from knowledge.catalog.reader import Catalog, CatalogError, read_bounded, read_catalog
from knowledge.catalog.sources import CatalogSource, catalog_terms, imported_source
from knowledge.history import snapshots as history
from knowledge.history.models import SnapshotResult
from knowledge.kb import bulk, forked
from knowledge.kb.live import build_lock
from knowledge.kb.loading import Converted, Parsed, catalog_notes
from knowledge.paths import home, kb_path
from knowledge.state.db import engine

BESIDE_FROM_OFFERS = 10_000  # an import this large builds beside its store; below, a second process costs more


def _date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise ValueError(f"--as-of {text[:40]!r} is not a date (YYYY-MM-DD)") from None


def _text(path: Path) -> str:
    return read_bounded(path).decode("utf-8-sig")  # read_catalog has validated the encoding


@bulk.paused()  # 100,000 rows: 0.6 s of CPU went to the collector's passes over them
def import_catalog(
    path: str | Path,
    provider: str,
    *,
    hosts: str | Path | None = None,
    currency: str | None = None,
    usd_per_unit: float | None = None,
    source: str | None = None,
    as_of: str | None = None,
    taken_at: dt.datetime | None = None,
    snapshot_kind: str = "catalog",
    as_of_known: bool = True,
) -> dict:
    """Validate, store and load one catalog for `provider`; return a report. Raises CatalogError/ValueError.

    The import and its price snapshot (of `snapshot_kind`, taken at `taken_at`, default now) are one unit in the
    state: a process killed at any point leaves both or neither. A failed local rebuild takes both back."""
    from knowledge.kb import build as builder  # through the module, so that a test can replace `build.build`

    provider, bundled, currency, usd_per_unit = catalog_terms(provider, currency, usd_per_unit)
    if hosts is None and bundled and bundled.hosts_path:
        hosts = bundled.hosts_path  # e.g. GCP: a new accelerator file still needs the host-VM prices
    path = Path(path)
    catalog = read_catalog(path)
    host_catalog = read_catalog(hosts) if hosts else None
    if not catalog.rows:
        raise CatalogError(path, "no accelerator rows (only host-VM rows); pass it with --hosts instead")
    as_of_known = as_of_known and bool(as_of)  # without --as-of the import day is not the prices' date (issue 26)
    as_of = _date(as_of) if as_of else dt.date.today().isoformat()
    source = source or f"{path.name} {IMPORTED}"
    src = CatalogSource(provider, path, Path(hosts) if hosts else None, currency, usd_per_unit, as_of, source)
    result = convert(
        provider,
        catalog,
        hosts=host_catalog.hosts if host_catalog else (),
        currency=src.currency_info(),
        source=source,
        as_of=as_of,
        as_of_known=as_of_known,
    )
    if not result.offers:
        raise CatalogError(path, "no priced offers in this file (every price empty or skipped)")

    record = _record(src, as_of_known)
    converted = Converted(record["hosts_content"], src.currency_info(), source, as_of, as_of_known, result)
    parsed: Parsed = {provider: (record["content"], catalog, converted)}  # the build reuses this parse, conversion
    store = functools.partial(_store, record, result.offers, taken_at, snapshot_kind)
    if len(result.offers) >= BESIDE_FROM_OFFERS and forked.possible():
        snapshot, built = _store_while_building(store, parsed, record)
    else:
        new_id, snapshot = store()
        try:
            with build_lock(home() / "kb.lock"):  # a server of this home waits, then swaps this build in
                built = builder.build(kb_path(), parsed)
        except BaseException:
            _undo(new_id, snapshot)  # the knowledge base was not replaced, so neither are the import and snapshot
            raise
    return _report(provider, catalog, host_catalog, result, built["offers"], snapshot)


def _store_while_building(
    store: Callable[[], tuple[int, SnapshotResult]], parsed: Parsed, record: dict
) -> tuple[SnapshotResult, dict]:
    """Store the import while a forked child builds the knowledge base with it (the other core: a 100,000-row
    import's store is ~1 s of its ~5); the build is swapped in only once the store has committed, and holds the
    imports' token only if nothing else was imported meanwhile (else it is behind, and rebuilt where opened).
    A failure of either leaves the knowledge base and the state as they were."""
    from knowledge.kb import build as builder

    with build_lock(home() / "kb.lock"):  # a server of this home waits, then swaps this build in
        before = versioned_rows()
        pending = imported_source(ImportRecord(0, **{k: record[k] for k in ImportRecord.__slots__ if k != "id"}))
        job = builder.plan(kb_path(), parsed, pending=pending, version=version_token(before))
        temporary = builder.temporary_beside(job.target)
        child = forked.Forked(builder.write_temporary, job, temporary)
        try:
            new_id, snapshot = store()
        except BaseException:
            child.cancel()
            temporary.unlink(missing_ok=True)
            raise
        try:
            built = child.result()
            after = versioned_rows()
            alone = [row for row in after if row[0] != new_id] == before and len(after) == len(before) + 1
            builder.swap_in(temporary, job.target, version_token(after) if alone else None)
        except BaseException:
            temporary.unlink(missing_ok=True)
            _undo(new_id, snapshot)  # the knowledge base was not replaced, so neither are the import and snapshot
            raise
    return snapshot, built


def _report(
    provider: str,
    catalog: Catalog,
    host_catalog: Catalog | None,
    result: Conversion,
    kb_offers: int,
    snapshot: SnapshotResult,
) -> dict:
    """What `gpubot kb import` reports: the file's rows, the offers they gave, and the snapshot recorded."""
    return {
        "provider": provider,
        "notes": catalog_notes(provider, catalog, result),
        "rows": len(catalog.rows),
        "host_rows": len(catalog.hosts) + (len(host_catalog.hosts) if host_catalog else 0),
        "duplicates": catalog.duplicates,
        "offers": len(result.offers),
        "skipped": result.skipped,
        "kb_offers": kb_offers,
        "snapshot": "recorded" if snapshot.created else "unchanged",
        "snapshot_id": snapshot.snapshot.id,
    }


def _record(src: CatalogSource, as_of_known: bool) -> dict:
    """The stored import: the file's text (and its hosts file's), the terms it was read with, its digest."""
    content = _text(src.path)
    return {
        "provider": src.provider,
        "filename": src.path.name,
        "content": content,
        "hosts_content": _text(src.hosts_path) if src.hosts_path else None,
        "currency": src.currency,
        "usd_per_unit": src.usd_per_unit,
        "as_of": src.as_of,
        "source": src.source,
        "sha256": hashlib.sha256(content.encode()).hexdigest(),
        "imported_at": dt.datetime.now(dt.UTC),
        "as_of_known": as_of_known,
    }


def _store(record: dict, offers: list[dict], taken_at: dt.datetime | None, kind: str) -> tuple[int, SnapshotResult]:
    """Store the import and its price snapshot in one transaction (both or neither, whatever kills the process);
    the snapshot is the imported offers, "unchanged" when they equal the provider's latest snapshot."""
    provider = record["provider"]
    for _attempt in range(20):
        latest = history.latest_snapshot(provider)
        try:
            with engine().begin() as conn:
                key = conn.execute(catalog_imports.insert().values(**record)).inserted_primary_key
                assert key is not None  # an INSERT always has one
                new_id = key[0]
                snapshot = history.record_snapshot(provider, offers, record["source"], taken_at, kind=kind, conn=conn)
            return new_id, snapshot
        except IntegrityError:
            newer = history.latest_snapshot(provider)
            if newer is None or (latest is not None and newer.seq == latest.seq):
                raise  # not a race with another writer: a real integrity problem
            # another process recorded this provider's next snapshot first: again, after it
    raise history.HistoryError(f"could not record a snapshot for {provider}: too many concurrent writers")


def _undo(new_id: int, snapshot: SnapshotResult) -> None:
    """Take back an import and the snapshot it recorded, in one transaction."""
    with engine().begin() as conn:
        conn.execute(catalog_imports.delete().where(catalog_imports.c.id == new_id))
        if snapshot.created:
            snapshot_id = snapshot.snapshot.id
            conn.execute(history.snapshot_offers.delete().where(history.snapshot_offers.c.snapshot_id == snapshot_id))
            conn.execute(history.snapshots.delete().where(history.snapshots.c.id == snapshot_id))
