"""Refresh the live price sources off the answer path: fetch, parse, import; record what happened in the state.

`refresh_source(name)` makes one bounded request (or, for the AWS Price List, one bounded walk), sends the
validators of the last answer (a 304 keeps the data and records the check), parses the body (a malformed one
raises and nothing is imported: the last good import keeps serving) and imports the result as the provider's
catalog through `knowledge.catalog.importer.import_catalog`, so every server swaps it in as it does any import.
`refresh_many(names)` runs each source in its own thread: a hanging or failing source delays no other, and none
of this runs on a request thread. Whatever happens is recorded in `knowledge.state.live_sources`.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from knowledge.catalog.fetchers import new_client
from knowledge.catalog.fetchers.live import LiveSource, live_source
from knowledge.catalog.fetchers.live_http import Validators, get_bounded
from knowledge.catalog.fetchers.live_rows import LiveData, newest_stamp, restamp, to_catalog
from knowledge.catalog.freshness import LIVE_SECONDS, parse_time
from knowledge.clock import utc_now
from knowledge.state import live_sources as states

__all__ = ["current_catalog", "recorded", "refresh_many", "refresh_source"]

log = logging.getLogger("gpubot.live")
_provider_locks: dict[str, threading.Lock] = {p: threading.Lock() for p in ("aws", "oci", "runpod", "vast")}


def current_catalog(provider: str) -> tuple[str | None, str, str, bool]:
    """(text, source, as_of, as_of_known) of the catalog a provider is served from: its latest import, else bundled."""
    from knowledge.catalog.imports import latest_imports
    from knowledge.catalog.sources import bundled_catalogs

    for record in latest_imports():
        if record.provider == provider:
            return record.content, record.source, record.as_of, record.as_of_known is not False
    for bundled in bundled_catalogs():
        if bundled.provider == provider:
            return bundled.path.read_text(encoding="utf-8"), bundled.source, bundled.as_of, bundled.as_of_known
    return None, "", utc_now().date().isoformat(), True


def _accelerator_types(text: str | None) -> tuple[set[str], set[str], set[str]]:
    """(instance types, families, regions) of a catalog's accelerator rows."""
    import csv
    import io

    types, regions = set(), set()
    for row in csv.DictReader(io.StringIO(text or "")):
        if row.get("AcceleratorName") and row.get("InstanceType"):
            types.add(row["InstanceType"])
            regions.add(row.get("Region", ""))
    return types, {t.split(".")[0] for t in types}, regions - {""}


def _fetch(src: LiveSource, client: httpx.Client, state, now: dt.datetime) -> tuple[LiveData | None, Validators]:
    """The parsed data (None when the server said 304 Not Modified) and the validators to keep."""
    from knowledge.catalog.fetchers import aws_price_list, aws_spot, oci, runpod, vast

    validators = Validators(state.etag, state.last_modified)
    base, *_ = current_catalog(src.provider)
    if src.name == "aws_price_list":
        _types, families, regions = _accelerator_types(base)
        data, found = aws_price_list.fetch(
            client,
            url=src.url,
            regions=sorted(regions),
            families=families,
            max_bytes=src.max_bytes,
            seconds=src.timeout,
            fetched_at=now,
            validators=validators,
        )
        return data, found
    post = src.name == "runpod"  # GraphQL: a POST, which no server answers with 304
    got = get_bounded(
        client,
        src.url,
        timeout=src.timeout,
        max_bytes=src.max_bytes,
        method="POST" if post else "GET",
        json=runpod.query() if post else None,
        params=vast.params() if src.name == "vast" else None,
        validators=None if post else validators,
    )
    if got.not_modified:
        return None, got.validators
    if src.name == "aws_spot":
        return aws_spot.parse(got.body, known=_accelerator_types(base)[0], fetched_at=now, url=src.url), got.validators
    if src.name == "oci":
        return oci.parse(got.body, catalog_text=base or "", fetched_at=now, url=src.url), got.validators
    if src.name == "runpod":
        return runpod.parse(got.body, fetched_at=now, url=src.url), got.validators
    return vast.parse(got.body, fetched_at=now, url=src.url), got.validators


def _import_text(provider: str, text: str, source: str, as_of: str, as_of_known: bool, taken_at: dt.datetime) -> str:
    from knowledge.catalog.importer import import_catalog
    from knowledge.catalog.imports import prune_imports

    with tempfile.TemporaryDirectory(prefix="gpubot-live-") as folder:
        path = Path(folder) / f"{provider}_vms.csv"
        path.write_text(text, encoding="utf-8")
        report = import_catalog(
            path,
            provider,
            source=source,
            as_of=as_of,
            as_of_known=as_of_known,
            snapshot_kind="live",
            taken_at=taken_at,
        )
    prune_imports(provider)  # only the newest serves; keep two before it, not one per fetch
    return f"updated ({report['offers']} offers for {provider})"


def _import(data: LiveData) -> tuple[int, str]:
    """Import the data as its provider's catalog (merged into the current one for a price/spot update)."""
    with _provider_locks.setdefault(data.provider, threading.Lock()):
        base, base_source, base_as_of, base_known = current_catalog(data.provider)
        text, updated = to_catalog(data, base)
        if data.mode == "replace":
            return updated, _import_text(
                data.provider, text, data.cite, data.fetched_at.date().isoformat(), True, data.fetched_at
            )
        return updated, _import_text(data.provider, text, base_source, base_as_of, base_known, data.fetched_at)


def _confirmed(src: LiveSource, now: dt.datetime) -> str | None:
    """After a 304: mark the figures we hold as read now, when their stamp is over an hour old (else leave them)."""
    with _provider_locks.setdefault(src.provider, threading.Lock()):
        text, source, as_of, known = current_catalog(src.provider)
        newest = newest_stamp(text or "", src.url)
        if text is None or newest is None or (now - utc_now(parse_time(newest))).total_seconds() < LIVE_SECONDS:
            return None
        stamped = restamp(text, src.url, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        return _import_text(src.provider, stamped, source, as_of, known, now)


def refresh_source(
    name: str, *, client: httpx.Client | None = None, now: dt.datetime | None = None, source: LiveSource | None = None
) -> dict:
    """Refresh one live source now; return a report. Raises FetchError/CatalogError/ValueError (recorded first)."""
    src = source or live_source(name)
    if src is None:
        raise ValueError(f"{name!r} is not a live source")
    now = utc_now(now)
    started = time.monotonic()
    state = states.read_one(src.name)
    next_run = now + dt.timedelta(minutes=src.cadence_minutes)
    states.record(src.name, attempted_at=now, next_run_at=next_run)
    own = client is None
    client = client or new_client()
    if src.name == "azure":
        raise ValueError("azure is refreshed by `gpubot prices refresh --azure` (bot.prices_cmd.refresh_one)")
    try:
        data, validators = _fetch(src, client, state, now)
        if data is None:  # 304: the data we hold is current
            kb = _confirmed(src, now)
            states.record(src.name, checked_at=now, seconds=time.monotonic() - started)
            return {"source": src.name, "not_modified": True, "checked_at": now.isoformat(), "kb": kb}
        rows, kb = _import(data)
    except Exception as exc:  # whatever failed is recorded for `prices sources`, then raised to the caller
        states.record(src.name, error=f"{type(exc).__name__}: {exc}"[:2000], error_at=now)
        raise
    finally:
        if own:
            client.close()
    history = _backfill(src, data, client if not own else None)
    seconds = time.monotonic() - started
    states.record(
        src.name,
        etag=validators.etag,
        last_modified=validators.last_modified,
        checked_at=now,
        succeeded_at=now,
        rows=rows,
        seconds=seconds,
        **({"error": ("partial: " + "; ".join(data.warnings))[:2000], "error_at": now} if data.warnings else {}),
    )  # the last error stays, with its time, until another one replaces it
    report = {"source": src.name, "rows": rows, "skipped": data.skipped, "kb": kb, "seconds": round(seconds, 3)}
    if data.warnings:
        report["warnings"] = data.warnings
    return {**report, **history}


def _backfill(src: LiveSource, data: LiveData, client: httpx.Client | None) -> dict:
    """AWS: the newest list-price versions not yet in the history, as dated snapshots (a failure is reported)."""
    from knowledge.catalog.fetchers.aws_history import backfill

    if not data.history_url:
        return {}
    base, *_ = current_catalog("aws")
    own = client is None
    client = client or new_client()
    try:
        _types, families, _regions = _accelerator_types(base)
        done = backfill(
            client,
            data.history_url,
            base_text=base or "",
            families=families,
            max_bytes=src.max_bytes,
            seconds=src.timeout,
        )
        return {"history": done}
    except Exception as exc:  # noqa: BLE001 - history is extra: the prices are already in
        log.warning("AWS history back-fill failed: %s", exc)
        return {"history_error": f"{type(exc).__name__}: {exc}"}
    finally:
        if own:
            client.close()


def recorded(name: str, refresh) -> dict:
    """Run `refresh()` (a source refreshed by other code: the Azure API) and record its outcome like a live source."""
    now = utc_now()
    started = time.monotonic()
    states.record(name, attempted_at=now)
    try:
        report = refresh()
    except Exception as exc:  # whatever failed is recorded for `prices sources`, then raised to the caller
        states.record(name, error=f"{type(exc).__name__}: {exc}"[:2000], error_at=now)
        raise
    rows = int((report.get("fetch") or {}).get("prices", report.get("offers", 0)) or 0)
    states.record(name, checked_at=now, succeeded_at=now, rows=rows, seconds=time.monotonic() - started)
    return report


def refresh_many(
    names: Iterable[str], *, client: httpx.Client | None = None, sources: dict[str, LiveSource] | None = None
) -> dict[str, dict | str]:
    """Refresh each source in its own thread; source -> report, or the error text. One failure stops no other.

    `sources`: a source's limits to use instead of its defaults (tests pass a one-second timeout)."""
    wanted = [n for n in dict.fromkeys(n.strip().lower() for n in names) if n]

    def one(name: str) -> dict | str:
        try:
            return refresh_source(name, client=client, source=(sources or {}).get(name))
        except Exception as exc:  # recorded in the state by refresh_source
            log.warning("live source %s failed: %s; its last good data keeps serving", name, exc)
            return f"{type(exc).__name__}: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, len(wanted)), thread_name_prefix="gpubot-live") as pool:
        futures = {name: pool.submit(one, name) for name in wanted}
        return {name: future.result() for name, future in futures.items()}
