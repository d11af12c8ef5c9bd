"""Each provider's public pricing page (knowledge/data/pricing_pages.csv: provider, url, source), so an answer
can link every offer to the page where a user verifies and buys it."""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

PRICING_PAGES_CSV = Path(__file__).resolve().parents[1] / "data" / "pricing_pages.csv"


@cache
def pricing_pages() -> dict[str, dict[str, str]]:
    """provider id -> {"provider", "url", "source"}."""
    with PRICING_PAGES_CSV.open(encoding="utf-8", newline="") as handle:
        return {row["provider"]: dict(row) for row in csv.DictReader(handle)}


def pricing_page(provider: str) -> dict[str, str] | None:
    return pricing_pages().get(provider)
