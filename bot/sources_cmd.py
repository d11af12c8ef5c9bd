"""`gpubot prices sources` (and `/gpu sources`): every price source, its last success, age, rows, last error, next run.

Live sources come from `knowledge.state.live_sources` (written by whichever process refreshed them); catalog
sources (the SkyPilot files refreshed daily) from their newest snapshot. Read-only: nothing here fetches.
"""

from __future__ import annotations

import datetime as dt
import json
import sys

from handlers.freshness import age_text
from handlers.i18n import t
from knowledge.clock import utc_now

__all__ = ["report", "run_sources", "sources_text"]


def _age(when: dt.datetime | None, now: dt.datetime, lang: str) -> str | None:
    return None if when is None else age_text((now - when).total_seconds(), lang)


def report(now: dt.datetime | None = None, lang: str = "en") -> list[dict]:
    """One dict per source: name, kind, url, cadence, verified, last success/check/error, rows, next run."""
    from knowledge.catalog.fetchers.live import SOURCES
    from knowledge.catalog.fetchers.sources import refresh_sources
    from knowledge.history import snapshots as history
    from knowledge.state.live_sources import read_all

    now = utc_now(now)
    states = read_all()
    rows = []
    for name, src in SOURCES.items():
        state = states.get(name)
        rows.append(
            {
                "name": name,
                "kind": "live",
                "feeds": src.provider,
                "url": src.url,
                "cadence_minutes": src.cadence_minutes,
                "verified": src.verified,
                **(state.as_json() if state else {"name": name}),
                "age": _age(state.succeeded_at if state else None, now, lang),
            }
        )
    for name, row in refresh_sources().items():
        if name in SOURCES:
            continue
        snap = history.latest_snapshot(name)
        rows.append(
            {
                "name": name,
                "kind": "catalog",
                "feeds": name,
                "url": row.url,
                "cadence_minutes": 24 * 60,
                "verified": "published catalog (SkyPilot format)",
                "succeeded_at": utc_now(snap.taken_at).isoformat() if snap else None,
                "rows": snap.offers if snap else None,
                "age": _age(utc_now(snap.taken_at), now, lang) if snap else None,
            }
        )
    return rows


def sources_text(rows: list[dict], lang: str = "en") -> str:
    lines = [t("sources.title", lang)]
    for row in rows:
        never = t("sources.never", lang)
        line = t(
            "sources.line",
            lang,
            name=row["name"],
            feeds=row["feeds"],
            age=row.get("age") or never,
            rows=row.get("rows") if row.get("rows") is not None else "-",
            url=row["url"],
        )
        if row.get("checked_at") and row.get("checked_at") != row.get("succeeded_at"):
            line += t("sources.checked", lang, when=row["checked_at"][:16].replace("T", " "))
        if row.get("next_run_at"):
            line += t("sources.next", lang, when=row["next_run_at"][:16].replace("T", " "))
        if row.get("error"):
            line += "\n    " + t("sources.error", lang, error=row["error"][:300], when=(row.get("error_at") or "")[:16])
        lines.append(line)
    return "\n".join(lines)


def run_sources(as_json: bool) -> int:
    rows = report()
    if as_json:
        sys.stdout.write(json.dumps({"sources": rows}, ensure_ascii=False, indent=2) + "\n")
    else:
        print(sources_text(rows))
    return 0
