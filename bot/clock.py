"""the clock process: refresh prices daily, post digests to channels whose hour has come (APScheduler)

    gpubot clock            run forever (Procfile: `clock: gpubot clock`)
    gpubot clock --once     refresh and post now, then exit (for platform cron jobs and smoke tests)

Jobs (UTC cron, a BlockingScheduler with coalescing and one instance per job):
- refresh: daily at GPUBOT_REFRESH_HOUR (default 5): each source in GPUBOT_REFRESH_SOURCES (default: every
  bundled cloud, `knowledge/data/catalog_urls.csv`) is refreshed and recorded as a dated snapshot; `azure` is
  the live Retail Prices API, any other name a catalog in SkyPilot's format downloaded from
  GPUBOT_CATALOG_URL_<NAME> (default: the provider's published catalog URL in that file). A failing source is
  logged and does not stop the others; then the price alerts are checked and posted, then the digest job runs.
- digest: hourly at minute GPUBOT_DIGEST_MINUTE (default 5): posts to every subscription whose local hour has
  come and whose post for the local day is not done. Two clock processes (two machines) are safe: snapshots and
  posts are made once by the database's unique keys, not by this process.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging

from knowledge.config import catalog_url, config

__all__ = ["add_arguments", "build_scheduler", "check_alerts", "post_due", "refresh_all", "run"]

log = logging.getLogger("gpubot.clock")

SKYPILOT_CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{}/vms.csv"


def refresh_all(client=None) -> dict[str, dict | str]:
    """Refresh every configured source; returns source -> report (or the error text).

    `client`: an `httpx.Client` for every download and API call (tests pass one over recorded files)."""
    from bot.prices_cmd import refresh_azure, refresh_catalog
    from knowledge.catalog.fetchers.sources import default_names, refresh_sources

    known = refresh_sources()
    results: dict[str, dict | str] = {}
    names = config().gpubot_refresh_sources or default_names()
    for name in [s.strip().lower() for s in names.split(",")]:
        if not name:
            continue
        try:
            row = known.get(name)
            if row is not None and row.kind == "azure_api":
                results[name] = refresh_azure(update_kb=True, client=client)
            else:
                url = catalog_url(name) or (row.url if row else None) or SKYPILOT_CATALOG.format(name)
                source = (
                    f"{row.source} ({url}, refreshed {dt.date.today().isoformat()})" if row and url == row.url else None
                )
                results[name] = refresh_catalog(url, name, source=source, client=client)
            log.info("refreshed %s: %s", name, results[name])
        except Exception as exc:  # one source down must not stop the others
            log.exception("refresh of %s failed; its previous snapshot keeps serving", name)
            results[name] = f"{type(exc).__name__}: {exc}"
    return results


def check_alerts() -> None:
    """Check every price alert against the newest prices and post the ones that fired (once each)."""
    from bot.alert_cmd import check_and_post

    try:
        report = check_and_post()
    except Exception:  # alerts must not stop the digest
        log.exception("price alert check failed")
        return
    for line in report.lines():
        log.info("alert %s", line)


def post_due() -> None:
    """Post the digest to every subscription whose hour has come today (idempotent)."""
    from bot.digest_cmd import list_subscriptions
    from bot.slack.digest import clients_by_team, post_digests

    if not list_subscriptions(active_only=True):
        return
    report = post_digests(clients_by_team(), due_only=True)  # each workspace with its own token
    for line in report.lines():
        log.info("digest %s", line)


def _daily() -> None:
    refresh_all()
    check_alerts()
    post_due()


def build_scheduler():
    """The BlockingScheduler with the refresh and digest jobs (not started)."""
    from apscheduler.schedulers.blocking import BlockingScheduler
    from apscheduler.triggers.cron import CronTrigger

    refresh_hour, digest_minute = config().gpubot_refresh_hour, config().gpubot_digest_minute
    scheduler = BlockingScheduler(
        timezone="UTC", job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 3600}
    )
    scheduler.add_job(
        _daily,
        CronTrigger(hour=refresh_hour, minute=0, timezone="UTC"),
        id="refresh",
        name="daily price refresh, then digest",
    )
    scheduler.add_job(
        post_due,
        CronTrigger(minute=digest_minute, timezone="UTC"),
        id="digest",
        name="hourly digest for subscriptions whose hour has come",
    )
    return scheduler


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--once", action="store_true", help="refresh and post now, then exit")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=config().gpubot_log_level or "INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    if args.once:
        results = refresh_all()
        check_alerts()
        post_due()
        return 1 if any(isinstance(r, str) for r in results.values()) else 0
    scheduler = build_scheduler()
    log.info("clock started: %s", ", ".join(f"{job.name} ({job.trigger})" for job in scheduler.get_jobs()))
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        scheduler.start()
    return 0
