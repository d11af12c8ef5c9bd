"""The bundled catalogs as each provider's first snapshot (seq 0), recorded by the edges before they read history.

`knowledge.history.snapshots.ensure_baselines` does the work (and decides, per provider, whether a baseline still
belongs
before its snapshots); `ensure(providers)` first asks the state database with one cheap read whether any provider
could still need one, so a CLI start or a Slack question with every baseline in place writes nothing and imports
neither SQLAlchemy nor the catalog reader. Handlers never record (they only read, `knowledge.history.reader`).
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable

from knowledge.history.models import BASELINE_SEQ
from knowledge.history.reader import StateHistoryReader, state_reader
from knowledge.paths import CATALOG_DIR

__all__ = ["bundled_providers", "ensure", "missing"]

log = logging.getLogger("gpubot")


def bundled_providers() -> list[str]:
    """The providers of the bundled catalogs (`knowledge/data/catalogs/manifest.csv`)."""
    with (CATALOG_DIR / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        return list(dict.fromkeys(row["provider"] for row in csv.DictReader(handle)))


def missing(providers: Iterable[str] | None = None, reader: StateHistoryReader | None = None) -> list[str]:
    """Bundled providers (of `providers`, or all) that may still need their baseline: no snapshot at seq 0 and
    fewer than two snapshots (`ensure_baselines` leaves the others alone)."""
    wanted = {p.lower() for p in providers} if providers else None
    summary = (reader or state_reader()).seq_summary()
    out = []
    for provider in bundled_providers():
        if wanted is not None and provider not in wanted:
            continue
        count, lowest = summary.get(provider, (0, 1))
        if count < 2 and lowest != BASELINE_SEQ:
            out.append(provider)
    return out


def ensure(providers: Iterable[str] | None = None) -> None:
    """Record the baselines still missing for `providers` (all by default); never raises (a bundled catalog that
    cannot be read must not hide the recorded history: logged)."""
    names = list(providers) if providers else None
    try:
        if missing(names):
            from knowledge.history import snapshots as history

            history.ensure_baselines(names)
    except Exception:  # the history answers from what is recorded; a baseline that cannot be written is logged
        log.exception("could not record the bundled baselines")
