"""refresh prices (a catalog file or URL, or the live Azure API) and record each refresh as a snapshot

    gpubot prices refresh --catalog PATH_OR_URL --provider NAME [--hosts PATH_OR_URL] [--currency CNY
                          --usd-per-unit 0.138] [--source TEXT] [--as-of DATE] [--taken-at ISO] [--no-kb]
    gpubot prices refresh --azure [--region eastus ...] [--kb]
    gpubot prices refresh --source NAME [--json]   (a live source, or one bundled cloud's catalog)
    gpubot prices sources [--json]
    gpubot prices snapshots [--provider NAME] [--json]

Every refresh validates and converts the whole source first and then records one snapshot in one transaction
(`knowledge.history.snapshots.record_snapshot`); unchanged content records nothing. A failure anywhere (download,
malformed
file or page, database) records nothing, so the previous snapshot keeps serving. A catalog refresh also imports
the file into the knowledge base (as `gpubot kb import` does: the import and its snapshot in one transaction,
then the snapshot alone if that import fails) unless `--no-kb`; an Azure refresh does so only with
`--kb` and no `--region`. A `--region` refresh keeps the latest snapshot's prices for the other regions, so a
partial fetch never looks like offers withdrawn.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["SKYPILOT_CATALOG", "add_arguments", "refresh_azure", "refresh_catalog", "refresh_one", "run"]

SKYPILOT_CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{}/vms.csv"


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def _local(location: str | Path, folder: Path, name: str, client) -> Path:
    """A local path for `location`, downloading a URL into `folder` first."""
    from knowledge.catalog.fetchers import download

    location = str(location)
    if not _is_url(location):
        return Path(location)
    return download(location, folder / name, client)


def _summary(result, previous) -> dict:
    from knowledge.history import snapshots as history

    report = {
        "provider": result.snapshot.provider,
        "created": result.created,
        **result.snapshot.as_json(),
        "previous": previous.as_json() if previous else None,
    }
    if result.created and previous is not None:
        diff = history.changes(previous, result.snapshot, threshold_pct=0.0)
        report["vs_previous"] = {"added": len(diff.added), "removed": len(diff.removed), "changed": len(diff.changed)}
    return report


def refresh_catalog(
    location: str | Path,
    provider: str,
    *,
    hosts: str | Path | None = None,
    currency: str | None = None,
    usd_per_unit: float | None = None,
    source: str | None = None,
    as_of: str | None = None,
    taken_at: dt.datetime | None = None,
    update_kb: bool = True,
    client=None,
) -> dict:
    """Record a snapshot from a catalog in SkyPilot's format (a path or an http(s) URL); return a report.

    Raises CatalogError, FetchError, HistoryError or ValueError; nothing is recorded then.
    """
    from knowledge.catalog.sources import catalog_terms
    from knowledge.history import snapshots as history

    provider, bundled, currency, usd_per_unit = catalog_terms(provider, currency, usd_per_unit)
    as_of = as_of or dt.date.today().isoformat()
    with tempfile.TemporaryDirectory(prefix="gpubot-refresh-") as folder:
        path = _local(location, Path(folder), f"{provider}.csv", client)
        path = _carry_live(path, provider, Path(folder))
        hosts_path = (
            _local(hosts, Path(folder), f"{provider}-hosts.csv", client)
            if hosts
            else (bundled.hosts_path if bundled else None)
        )
        source = source or f"{location} (refreshed with gpubot prices refresh)"
        offers = history.offers_from_catalog(
            provider,
            path,
            hosts_path=hosts_path,
            currency=currency,
            usd_per_unit=usd_per_unit,
            source=source,
            as_of=as_of,
        )
        previous = history.latest_snapshot(provider)
        kb = None
        if update_kb and _imported_already(provider, path, hosts_path, currency, usd_per_unit, as_of):
            kb = "unchanged (this catalog is the one imported already)"  # a repeated refresh stores nothing new
        elif update_kb:  # the import and its snapshot are one unit (`import_catalog`): a kill leaves both or neither
            kb = _import_into_kb(path, provider, hosts_path, currency, usd_per_unit, source, as_of, taken_at)
        # after an import: that snapshot ("unchanged" here); else (no import, or it failed) recorded now
        result = history.record_snapshot(provider, offers, source, taken_at, kind="catalog")
        if not result.created and (previous is None or result.snapshot.id != previous.id):
            result = history.SnapshotResult(result.snapshot, created=True)  # the import recorded it just now
        report = _summary(result, previous)
        if kb is not None:
            report["kb"] = kb
    return report


def _imported_already(
    provider: str, path: Path, hosts: Path | None, currency: str, usd_per_unit: float, as_of: str
) -> bool:
    """Whether the provider's newest stored import is this very catalog (content, hosts, currency, rate, date)."""
    from knowledge.catalog.importer import _text
    from knowledge.catalog.imports import latest_imports

    try:
        newest = next((i for i in latest_imports() if i.provider == provider), None)
        if newest is None:
            return False
        return (newest.content, newest.hosts_content, newest.currency, newest.usd_per_unit, newest.as_of) == (
            _text(path),
            _text(Path(hosts)) if hosts else None,
            currency,
            usd_per_unit,
            as_of,
        )
    except Exception:  # noqa: BLE001 - cannot tell: import as before
        return False


def _carry_live(path: Path, provider: str, folder: Path) -> Path:
    """The file to import: `path`, or a copy in `folder` keeping the figures live sources priced in the provider's
    current catalog on the same rows (a daily file must not undo a newer live price; the given file is not
    touched)."""
    from bot.live_refresh import current_catalog
    from knowledge.catalog.fetchers.live_rows import carry

    current, *_ = current_catalog(provider)
    if not current or "FetchedAt" not in current.split("\n", 1)[0]:
        return path
    text, carried = carry(path.read_text(encoding="utf-8-sig"), current)
    if not carried:
        return path
    kept = folder / f"{provider}-with-live.csv"
    kept.write_text(text, encoding="utf-8")
    return kept


def _import_into_kb(
    path: Path,
    provider: str,
    hosts: Path | None,
    currency: str,
    usd_per_unit: float,
    source: str,
    as_of: str,
    taken_at: dt.datetime | None = None,
    kind: str = "catalog",
) -> str:
    """Import into the knowledge base, with the snapshot (of `kind`); a failure there is reported, not raised (the
    caller then records the snapshot alone)."""
    try:
        from knowledge.catalog.importer import import_catalog

        report = import_catalog(
            path,
            provider,
            hosts=hosts,
            currency=currency,
            usd_per_unit=usd_per_unit,
            source=source,
            as_of=as_of,
            taken_at=taken_at,
            snapshot_kind=kind,
        )
    except Exception as exc:  # noqa: BLE001 - the KB is rebuildable; history is what this command records
        return f"not updated ({type(exc).__name__}: {exc}); run `gpubot kb import` to retry"
    return f"updated ({report['offers']} offers for {provider})"


def refresh_azure(
    regions: Iterable[str] = (),
    *,
    client=None,
    update_kb: bool = False,
    now: dt.datetime | None = None,
    sleep: Callable[[float], None] | None = None,
    url: str | None = None,
    retries: int = 4,
) -> dict:
    """Fetch GPU VM prices from the Azure Retail Prices API (or `url`, e.g. GPUBOT_SOURCE_AZURE_URL) and record them
    as an `azure` snapshot."""
    from knowledge.catalog.fetchers import azure, new_client
    from knowledge.config import source_url
    from knowledge.history import snapshots as history

    regions = [r.strip().lower() for r in regions if r.strip()]
    if update_kb and regions:
        raise ValueError("--kb needs a full refresh (without --region): the knowledge base holds all regions")
    own = client is None
    client = client or new_client()
    try:
        prices = azure.fetch(
            client,
            regions=regions,
            now=now,
            sleep=sleep,
            url=url or source_url("azure") or azure.API_URL,
            retries=retries,
        )
    finally:
        if own:
            client.close()
    offers = prices.offers()
    previous = history.latest_snapshot("azure")
    if regions and previous is not None:  # keep the other regions' latest prices: a partial fetch removes nothing
        offers += [o for o in history.offers_of(previous).values() if o["region"] not in set(regions)]
    kb = None
    if update_kb:  # first: the import and its snapshot are one unit
        with tempfile.TemporaryDirectory(prefix="gpubot-azure-") as folder:
            path = Path(folder) / "azure_retail_prices.csv"
            path.write_text(prices.catalog_csv(), encoding="utf-8")
            kb = _import_into_kb(path, "azure", None, "USD", 1.0, prices.source, prices.as_of, now, "api")
    result = history.record_snapshot("azure", offers, prices.source, now, kind="api")
    if not result.created and (previous is None or result.snapshot.id != previous.id):
        result = history.SnapshotResult(result.snapshot, created=True)  # the import recorded it just now
    report = _summary(result, previous)
    report["fetch"] = {
        "pages": prices.pages,
        "items": prices.items,
        "prices": len(prices.prices),
        "skipped": dict(prices.skipped),
        "unknown_sizes": sorted(prices.unknown_sizes),
    }
    if kb is not None:
        report["kb"] = kb
    return report


# --- command line ----------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="prices_command", required=True)
    refresh = sub.add_parser("refresh", help="fetch prices and record a snapshot")
    what = refresh.add_mutually_exclusive_group()
    what.add_argument("--catalog", help="catalog in SkyPilot's format: a path or an http(s) URL")
    what.add_argument("--azure", action="store_true", help="the live Azure Retail Prices API (GPU VM sizes)")
    refresh.add_argument("--provider", help="provider id for --catalog, e.g. aws or gcp")
    refresh.add_argument("--hosts", help="host-VM rows priced separately (GCP; default: the bundled file)")
    refresh.add_argument("--currency", help="vendor currency the USD prices were converted from (e.g. CNY)")
    refresh.add_argument("--usd-per-unit", type=float, help="USD per unit of --currency used in the conversion")
    refresh.add_argument(
        "--source",
        help="alone: refresh one source by name (a live source: aws_spot, aws_price_list, azure, oci, runpod, vast; "
        "or a bundled cloud's catalog, e.g. gcp); with --catalog: where the prices came from (shown with every figure)",
    )
    refresh.add_argument("--as-of", help="date of the prices (default: today)")
    refresh.add_argument("--taken-at", type=dt.datetime.fromisoformat, help="snapshot time (default: now)")
    refresh.add_argument("--region", action="append", default=[], help="--azure: only this region (repeatable)")
    refresh.add_argument(
        "--kb",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also import into the knowledge base (default: yes for --catalog, no for --azure)",
    )
    refresh.add_argument("--json", action="store_true", help="print the report as JSON")
    sources = sub.add_parser("sources", help="every price source: last success, age, rows, last error, next run")
    sources.add_argument("--json", action="store_true")
    snaps = sub.add_parser("snapshots", help="list recorded snapshots")
    snaps.add_argument("--provider", help="only this provider")
    snaps.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from knowledge.catalog.fetchers import FetchError
    from knowledge.catalog.reader import CatalogError
    from knowledge.history.snapshots import HistoryError

    if args.prices_command == "snapshots":
        return _snapshots(args)
    if args.prices_command == "sources":
        from bot.sources_cmd import run_sources

        return run_sources(args.json)
    if not args.catalog and not args.azure:
        return _refresh_named(args)
    try:
        if args.azure:
            report = refresh_azure(args.region, update_kb=bool(args.kb))
        else:
            if not args.provider:
                print("gpubot: --catalog needs --provider", file=sys.stderr)
                return 2
            report = refresh_catalog(
                args.catalog,
                args.provider,
                hosts=args.hosts,
                currency=args.currency,
                usd_per_unit=args.usd_per_unit,
                source=args.source,
                as_of=args.as_of,
                taken_at=args.taken_at,
                update_kb=args.kb is not False,
            )
    except (CatalogError, FetchError, HistoryError, ValueError, OSError) as exc:
        print(
            f"gpubot: refresh failed: {exc}\nNothing was recorded; the previous snapshot keeps serving.",
            file=sys.stderr,
        )
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        return 0
    if report["created"]:
        line = f"recorded snapshot {report['provider']} #{report['seq']} ({report['offers']} offers)"
        if "vs_previous" in report:
            v = report["vs_previous"]
            line += (
                f": {v['added']} added, {v['removed']} removed, {v['changed']} re-priced "
                f"vs #{report['previous']['seq']}"
            )
    else:
        line = f"unchanged: {report['provider']} prices equal snapshot #{report['seq']}; nothing recorded"
    print(line)
    if "kb" in report:
        print(f"knowledge base: {report['kb']}")
    return 0


def refresh_one(name: str, client=None, *, prefer_live: bool = True) -> dict | str:
    """Refresh one source by name; its report, or the error text. A name that is both a live source and a bundled
    cloud (oci, runpod) is the live source unless `prefer_live` is False (the daily job's default list). Used by
    `--source NAME` and by the clock."""
    import logging

    from bot.live_refresh import recorded, refresh_source
    from knowledge.catalog.fetchers.live import live_source
    from knowledge.catalog.fetchers.sources import refresh_sources
    from knowledge.config import catalog_url

    try:
        row = refresh_sources().get(name)
        if name == "azure" or (row is not None and row.kind == "azure_api"):
            return recorded("azure", lambda: refresh_azure(update_kb=True, client=client, retries=2))
        live = live_source(name)
        if live is not None and (row is None or prefer_live):
            return refresh_source(name, client=client)
        if live is not None and live.provider == name and _live_serves(name):
            return {"provider": name, "created": False, "skipped": f"the live source {name} answered within a day"}
        url = catalog_url(name) or (row.url if row else None) or SKYPILOT_CATALOG.format(name)
        source = f"{row.source} ({url}, refreshed {dt.date.today().isoformat()})" if row and url == row.url else None
        return refresh_catalog(url, name, source=source, client=client)
    except Exception as exc:  # one source down must not stop the others
        logging.getLogger("gpubot.clock").exception("refresh of %s failed; its previous snapshot keeps serving", name)
        return f"{type(exc).__name__}: {exc}"


def _live_serves(name: str) -> bool:
    """Whether a live source that replaces a whole catalog (runpod) succeeded within a day: the daily file of the
    same provider then stands aside, rather than replacing live offers with older ones until the next live run."""
    from knowledge.catalog.fetchers.live import live_source
    from knowledge.clock import utc_now
    from knowledge.state.live_sources import read_one

    src = live_source(name)
    if src is None or not src.replaces:
        return False
    done = read_one(src.name).succeeded_at
    return done is not None and (utc_now() - done).total_seconds() < 24 * 3600


def _refresh_named(args: argparse.Namespace) -> int:
    """`gpubot prices refresh --source NAME`: one live source, or one bundled cloud's catalog, now."""
    if not args.source:
        print("gpubot: give --catalog PATH_OR_URL, --azure or --source NAME", file=sys.stderr)
        return 2
    report = refresh_one(args.source.strip().lower())
    if isinstance(report, str):
        print(f"gpubot: refresh of {args.source} failed: {report}\nIts last good data keeps serving.", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n")
    elif report.get("not_modified"):
        print(f"{args.source}: not modified since the last fetch (checked {report['checked_at'][:19]} UTC)")
    else:
        print(
            f"{args.source}: {report.get('rows', report.get('offers', '?'))} rows; knowledge base: {report.get('kb')}"
        )
    return 0


def _snapshots(args: argparse.Namespace) -> int:
    from knowledge.history import snapshots as history

    names = [args.provider.lower()] if args.provider else history.providers()
    rows = [s.as_json() for name in names for s in history.snapshots_of(name)]
    if args.json:
        sys.stdout.write(json.dumps({"snapshots": rows}, ensure_ascii=False, indent=2) + "\n")
    else:
        for s in rows:
            print(f"{s['provider']} #{s['seq']} {s['taken_at'][:19]} {s['kind']} {s['offers']} offers  {s['source']}")
        if not rows:
            print("no snapshots yet")
    return 0
