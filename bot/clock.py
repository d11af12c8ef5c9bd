"""the clock process: refresh prices daily, post digests to channels whose hour has come (APScheduler)

    gpubot clock            run forever (Procfile: `clock: gpubot clock`)
    gpubot clock --once     refresh (daily and live sources) and post now, then exit (platform cron jobs, smoke tests)

Jobs (UTC cron, a BlockingScheduler with coalescing and one instance per job):
- refresh: daily at GPUBOT_REFRESH_HOUR (default 5): each source in GPUBOT_REFRESH_SOURCES (default: every
  bundled cloud, `knowledge/data/catalog_urls.csv`) is refreshed and recorded as a dated snapshot; `azure` is
  the live Retail Prices API, any other name a catalog in SkyPilot's format downloaded from
  GPUBOT_CATALOG_URL_<NAME> (default: the provider's published catalog URL in that file). A failing source is
  logged and does not stop the others; then the price alerts are checked and posted, then the digest job runs.
- live-<name>: each live source (`knowledge.catalog.fetchers.live`: aws_spot and vast every 10 min, runpod every
  15, aws_price_list and oci daily) on its own interval, those GPUBOT_REFRESH_SOURCES names or, unset, all of them;
  each job is bounded by its source's timeout and byte cap and runs in the scheduler's thread pool, so a hanging
  source holds only its own job; after new data the alerts (price and stock) are checked.
- digest: hourly at minute GPUBOT_DIGEST_MINUTE (default 5): posts to every subscription whose local hour has
  come and whose post for the local day is not done. Two clock processes (two machines) are safe: snapshots and
  posts are made once by the database's unique keys, not by this process.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging

from knowledge.config import config

__all__ = [
    "add_arguments",
    "build_scheduler",
    "check_alerts",
    "live_names",
    "post_due",
    "refresh_all",
    "refresh_live",
    "run",
]

log = logging.getLogger("gpubot.clock")


def refresh_all(client=None) -> dict[str, dict | str]:
    """Refresh every configured daily source; returns source -> report (or the error text).

    `client`: an `httpx.Client` for every download and API call (tests pass one over recorded files)."""
    from bot.prices_cmd import refresh_one
    from knowledge.catalog.fetchers.live import live_source
    from knowledge.catalog.fetchers.sources import default_names

    results: dict[str, dict | str] = {}
    named = config().gpubot_refresh_sources
    for name in [s.strip().lower() for s in (named or default_names()).split(",")]:
        if not name or (named and name != "azure" and live_source(name) is not None):
            continue  # a live source named: its own job on its own cadence (live_names)
        results[name] = refresh_one(name, client, prefer_live=False)  # bot.prices_cmd
        log.info("refreshed %s: %s", name, results[name])
    return results


def live_names() -> list[str]:
    """The live sources the clock runs on their own cadence: those GPUBOT_REFRESH_SOURCES names, else every one
    (azure is refreshed by the daily job)."""
    from knowledge.catalog.fetchers.live import SOURCES

    named = config().gpubot_refresh_sources
    wanted = [n.strip().lower() for n in named.split(",")] if named else list(SOURCES)
    return [n for n in wanted if n in SOURCES and n != "azure"]


def refresh_live(name: str) -> None:
    """One live source's job: refresh it, then check the alerts (stock and price) against what it brought."""
    from bot.live_refresh import refresh_many

    result = refresh_many([name])[name]
    log.info("live %s: %s", name, result)
    if isinstance(result, dict) and not result.get("not_modified"):
        check_alerts()


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
    from apscheduler.triggers.interval import IntervalTrigger

    from knowledge.catalog.fetchers.live import SOURCES

    for name in live_names():  # each on its own cadence, in the pool: a hanging source holds only its own job
        scheduler.add_job(
            refresh_live,
            IntervalTrigger(minutes=SOURCES[name].cadence_minutes, timezone="UTC"),
            args=[name],
            id=f"live-{name}",
            name=f"live source {name} every {SOURCES[name].cadence_minutes} min",
            next_run_time=dt.datetime.now(dt.UTC),
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
        from bot.live_refresh import refresh_many

        results = {**refresh_all(), **refresh_many(live_names())}  # the live sources too, each in its own thread
        check_alerts()
        post_due()
        return 1 if any(isinstance(r, str) for r in results.values()) else 0
    scheduler = build_scheduler()
    log.info("clock started: %s", ", ".join(f"{job.name} ({job.trigger})" for job in scheduler.get_jobs()))
    with contextlib.suppress(KeyboardInterrupt, SystemExit):
        scheduler.start()
    return 0
