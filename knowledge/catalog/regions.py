"""Region words -> the regions they mean on every cloud, from `data/region_groups.csv` (reviewed data).

Each group has aliases (English and Chinese; an alias written with capitals, such as the country codes "US",
"CA", "IS", only matches as written) and patterns over region ids, matched case-insensitively ("us-*" also
matches Hyperstack's "US-1"); a pattern starting with "!" excludes. Cities are their own groups (Osaka is
ap-northeast-3 / asia-northeast2 / japanwest, not Tokyo), and so are directions of a country (us-west is only
western US regions). Region ids are matched without their provider, so an id two clouds share (AWS and Lambda
`us-east-1`) belongs to the same groups on both.
"""

from __future__ import annotations

import csv
import fnmatch
from collections.abc import Iterable
from pathlib import Path

from knowledge.paths import DATA_DIR

REGION_GROUPS_CSV = DATA_DIR / "region_groups.csv"


def _patterns(text: str) -> tuple[list[str], list[str]]:
    patterns = [p.strip().lower() for p in text.split("|") if p.strip()]
    return [p for p in patterns if not p.startswith("!")], [p[1:] for p in patterns if p.startswith("!")]


def matching(regions: Iterable[str], patterns: str) -> tuple[str, ...]:
    """The region ids (sorted) that `patterns` ("a-*|b|!c") matches."""
    include, exclude = _patterns(patterns)
    return tuple(
        r for r in sorted(regions)
        if any(fnmatch.fnmatchcase(r.lower(), p) for p in include)
        and not any(fnmatch.fnmatchcase(r.lower(), p) for p in exclude)
    )  # fmt: skip


def load_groups(
    regions: Iterable[str], path: Path = REGION_GROUPS_CSV
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(group -> the given region ids it matches, alias -> group)."""
    regions = list(regions)
    groups: dict[str, tuple[str, ...]] = {}
    aliases: dict[str, str] = {}
    with Path(path).open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            groups[row["group"]] = matching(regions, row["patterns"])
            own = [row["group"]] if len(row["group"]) > 2 else []  # the id "us" is not a word to match ("help us")
            for alias in [*own, *row["aliases"].split("|")]:
                if alias.strip():
                    aliases.setdefault(alias.strip(), row["group"])
    return groups, aliases
