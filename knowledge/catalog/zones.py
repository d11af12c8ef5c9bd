"""What kind of place an offer's zone is: an availability zone of its region, an AWS Local Zone or Wavelength Zone.

AWS zone ids say it: `use1-az2` is an availability zone of us-east-1, `use1-atl2-az1` the Atlanta Local Zone
(its own metro, opt-in), `use1-wl1-bos-wlz1` the Boston Wavelength Zone (inside a carrier network). The location
codes are mapped to cities by `aws_zone_locations.csv` (sourced). Offers get `zone_kind` (`availability_zone`,
`local_zone`, `wavelength_zone`) and, for the last two, `zone_label` ("Atlanta (Local Zone, opt-in)"), so that
a Local Zone price is never shown as its parent region's.
"""

from __future__ import annotations

import csv
import re
from functools import cache

from knowledge.paths import DATA_DIR

LOCATIONS_CSV = DATA_DIR / "aws_zone_locations.csv"
_LOCAL = re.compile(r"^(?P<region>[a-z]+\d)-(?P<code>[a-z]{3}\d)-az\d+$")
_WAVELENGTH = re.compile(r"^(?P<region>[a-z]+\d)-wl\d+-(?P<code>[a-z]{3})-wlz\d+$")
KIND_WORDS = {"local_zone": "Local Zone", "wavelength_zone": "Wavelength Zone"}
KIND_WORDS_ZH = {"local_zone": "本地区域", "wavelength_zone": "5G边缘区域（Wavelength）"}


@cache
def locations() -> dict[tuple[str, str], dict]:
    """(kind, location code) -> {"city", "country", "parent_region", "source"}"""
    with LOCATIONS_CSV.open(encoding="utf-8", newline="") as handle:
        return {(row["kind"], row["code"]): row for row in csv.DictReader(handle)}


def classify(zone: str | None) -> tuple[str | None, str | None]:
    """(zone_kind, zone_label) of a zone id; (None, None) without a zone."""
    if not zone:
        return None, None
    for kind, pattern in (("local_zone", _LOCAL), ("wavelength_zone", _WAVELENGTH)):
        if match := pattern.match(zone):
            place = locations().get((kind, match.group("code")))
            city = place["city"] if place else f"location {match.group('code')} (not in {LOCATIONS_CSV.name})"
            return kind, f"{city} ({KIND_WORDS[kind]}, opt-in)"
    return "availability_zone", None


def label(zone: str | None, lang: str = "en") -> str | None:
    """`classify`'s label in the answer's language ("亚特兰大（本地区域，需申请开通）"); None for other zones."""
    kind, english = classify(zone)
    if lang != "zh" or not english or kind is None:
        return english
    match = (_LOCAL if kind == "local_zone" else _WAVELENGTH).match(zone or "")
    place = locations().get((kind, match.group("code"))) if match else None
    city = (place.get("city_zh") or place["city"]) if place else english.split(" (")[0]
    return f"{city}（{KIND_WORDS_ZH[kind]}，需申请开通）"


def zone_group(zone: str | None) -> str | None:
    """The place a Local or Wavelength Zone is in ("use1-atl2"), priced apart from its region; else None."""
    if not zone:
        return None
    match = _LOCAL.match(zone) or _WAVELENGTH.match(zone)
    return f"{match.group('region')}-{match.group('code')}" if match else None


def apply(offers: list[dict]) -> dict[str, int]:
    """Set `zone_kind` and `zone_label` on every offer (in place); counts per kind."""
    counts: dict[str, int] = {}
    cached: dict[str | None, tuple[str | None, str | None]] = {}
    for offer in offers:
        zone = offer.get("zone")
        if not zone:
            continue
        kind, label = cached.get(zone) or cached.setdefault(zone, classify(zone))
        offer["zone_kind"] = kind
        if label:
            offer["zone_label"] = label
        if kind is not None:  # always, for a zone (classify gives None only without one)
            counts[kind] = counts.get(kind, 0) + 1
    return counts
