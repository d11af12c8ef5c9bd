"""Reserved and committed prices and spot interruption risk, from the dated files in `knowledge/data/pricing/`.

- AWS (`aws_gpu_instances_reserved_spot.json`, ec2instances.info schema, 2025-11-30): every reserved-instance
  term per region (Linux) goes to `price_terms`; the `reserved_1y`/`reserved_3y` offer of a type and region is the
  cheapest of every term of that length (Standard or Convertible, no, partial or all upfront: effective hourly
  rates), its key in `term` (`cheapest_term`). Spot interruption buckets go to `spot_risk`. Where a live source
  read a type and region's reserved terms (the AWS Price List, `live` of `aws_terms`), those terms replace the
  file's for that type and region (same keys, same effective hourly rates; their source, `as_of` and `fetched_at`
  are the live source's), and the live on-demand price of that reading replaces the file's `ondemand` term, so
  that a break-even compares figures of one reading.
- AWS Spot Advisor (`aws_spot_advisor.json`, 2025-06-28): buckets for many more types and regions.
- GCP (`gcp_gpu_commitments.yml`, 2026-07-30): whole-VM hourly, spot, 1- and 3-year committed prices
  (`month_1y / 730`).

A provider offering no such term for a type or region simply has no row: answers say so rather than invent one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from knowledge.paths import PRICING_DIR

AWS_FILE = "aws_gpu_instances_reserved_spot.json"
AWS_AS_OF = "2025-11-30"
AWS_SOURCE = "ec2instances.info via tsaol/aws-gpu gpu_instances_raw.json @2d0108c"
ADVISOR_FILE = "aws_spot_advisor.json"
ADVISOR_AS_OF = "2025-06-28"
ADVISOR_SOURCE = "AWS Spot Instance Advisor feed via alexei-led/spotinfo @5bdc33c"
GCP_FILE = "gcp_gpu_commitments.yml"
GCP_AS_OF = "2026-07-30"
GCP_SOURCE = "Google Cloud Billing Catalog via Cyclenerd/google-cloud-pricing-cost-calculator @fd66b26"
HOURS_PER_MONTH = 730  # the GCP file's own convention (month = hour x 730)

AWS_TERM = re.compile(r"^yrTerm(?P<years>[13])(?P<kind>Standard|Convertible)\.(?P<upfront>no|partial|all)Upfront$")
GCP_TERMS = {"reserved_1y": "month_1y", "reserved_3y": "month_3y"}
GCP_GPU_KEYS = {
    "a100": ("A100", "A100 40GB SXM4", 40.0),
    "a100-80gb": ("A100", "A100 80GB SXM4", 80.0),
    "h100-80gb": ("H100", "H100 SXM5 80GB", 80.0),
    "h100-80gb-mega": ("H100", "H100 SXM5 80GB", 80.0),
    "l4": ("L4", "L4", 24.0),
    "rtx6000": ("RTX PRO 6000", None, 96.0),
}
BUCKETS = ("<5%", "5-10%", "10-15%", "15-20%", ">20%")


def term_years(term: str) -> int | None:
    """How many years a reserved or committed term runs: `yrTerm3Convertible.noUpfront` -> 3, `reserved_1y` -> 1."""
    if match := AWS_TERM.match(term):
        return int(match["years"])
    if term in ("reserved_1y", "reserved_3y"):
        return int(term[-2])
    return None


def cheapest_term(rates: dict[str, float], years: int) -> str | None:
    """The key of the cheapest term of `years` years among `rates` (term key -> USD per hour), or None.
    Ties go to the term asking less upfront, then Standard before Convertible (the keys' own order)."""
    upfront = {"no": 0, "partial": 1, "all": 2}

    def order(key: str) -> tuple:
        match = AWS_TERM.match(key)
        return (rates[key], upfront[match["upfront"]] if match else 0, key)

    keys = [k for k, v in rates.items() if v and v > 0 and term_years(k) == years]
    return min(keys, key=order) if keys else None


def _offer(
    base: dict,
    provider: str,
    instance_type: str,
    region: str,
    pricing: str,
    usd: float,
    source: str,
    as_of: str,
    note: str,
    term: str | None = None,
    fetched_at: str | None = None,
) -> dict:
    gpus = base["gpu_count"]
    return {
        **base,
        "provider": provider,
        "instance_type": instance_type,
        "region": region,
        "zone": None,
        "pricing": pricing,
        "price_per_hour": usd,
        "price_per_gpu_hour": usd / gpus,
        "currency": "USD",
        "price_per_hour_usd": usd,
        "price_per_gpu_hour_usd": usd / gpus,
        "kind": "pricing",
        "status": "ok",
        "note": note,
        "term": term,
        "source": source,
        "as_of": as_of,
        "fetched_at": fetched_at,
        "line": None,
    }


@dataclass(frozen=True, slots=True)
class LiveTerms:
    """What a live source read of one AWS instance type and region: reserved terms and the on-demand price."""

    reserved: dict[str, float]  # term key (`AWS_TERM`) -> effective USD per hour; {} when none was read
    source: str
    fetched_at: str  # ISO UTC
    on_demand: tuple[float, str, str] | None = None  # (USD per hour, source, fetched_at) when read live


@dataclass(frozen=True, slots=True)
class _Rate:
    value: float
    source: str
    as_of: str
    fetched_at: str | None = None


def _bundled_rates(linux: dict) -> dict[str, _Rate]:
    rates = {}
    for term, value in (
        ("ondemand", linux.get("ondemand")),
        *linux.get("reserved", {}).items(),
        ("spot_min", linux.get("spot_min")),
        ("spot_avg", linux.get("spot_avg")),
        ("spot_max", linux.get("spot_max")),
    ):
        if value not in (None, "", "0", "0.0"):
            rates[term] = _Rate(float(value), AWS_SOURCE, AWS_AS_OF)
    return rates


def _with_live(rates: dict[str, _Rate], live: LiveTerms | None) -> dict[str, _Rate]:
    """The bundled rates of one type and region with what the live source read in their place."""
    if live is None or not live.reserved:
        return rates
    # the source listed this type and region's terms: they replace the file's, all of them, and its on-demand
    # price the file's (a break-even then divides two figures of one reading)
    out = {term: rate for term, rate in rates.items() if not AWS_TERM.match(term)}
    day = live.fetched_at[:10]
    out |= {term: _Rate(value, live.source, day, live.fetched_at) for term, value in live.reserved.items()}
    if live.on_demand is not None:
        value, source, fetched_at = live.on_demand
        out["ondemand"] = _Rate(value, source, fetched_at[:10], fetched_at)
    return out


def aws_terms(
    gpu_info: dict[str, dict], directory: Path = PRICING_DIR, live: dict[tuple[str, str], LiveTerms] | None = None
) -> tuple[list[dict], list[dict], list[dict]]:
    """(reserved offers, price_terms rows, spot_risk rows) from the AWS reserved/spot file, and from `live`:
    (instance type, region) -> what a live source read there (see the module)."""
    offers: list[dict] = []
    terms: list[dict] = []
    live = live or {}
    pairs, risks = _aws_file(directory)
    for pair, read in live.items():
        if read.reserved:  # a type or region the file does not have: the live terms alone
            pairs.setdefault(pair, {})
    for (instance_type, region), bundled in pairs.items():
        rates = _with_live(bundled, live.get((instance_type, region)))
        for term, rate in rates.items():
            terms.append(
                {
                    "provider": "aws",
                    "instance_type": instance_type,
                    "region": region,
                    "term": term,
                    "price_per_hour": rate.value,
                    "currency": "USD",
                    "source": rate.source,
                    "as_of": rate.as_of,
                    "fetched_at": rate.fetched_at,
                }
            )
        if base := gpu_info.get(instance_type):
            offers += _aws_reserved(base, instance_type, region, rates)
    return offers, terms, risks


def _aws_file(directory: Path) -> tuple[dict[tuple[str, str], dict[str, _Rate]], list[dict]]:
    """The bundled AWS file's rates per (instance type, region) (Linux), and its spot interruption buckets."""
    pairs: dict[tuple[str, str], dict[str, _Rate]] = {}
    risks: list[dict] = []
    for item in json.loads((directory / AWS_FILE).read_text(encoding="utf-8")):
        instance_type = item["instance_type"]
        for region, by_os in item.get("pricing", {}).items():
            linux = by_os.get("linux")
            if not linux:
                continue
            pairs[(instance_type, region)] = _bundled_rates(linux)
            if linux.get("pct_interrupt") in BUCKETS:
                risks.append(
                    {
                        "provider": "aws",
                        "instance_type": instance_type,
                        "region": region,
                        "bucket": linux["pct_interrupt"],
                        "bucket_index": BUCKETS.index(linux["pct_interrupt"]),
                        "savings_pct": linux.get("pct_savings_od"),
                        "source": AWS_SOURCE,
                        "as_of": AWS_AS_OF,
                    }
                )
    return pairs, risks


def _aws_reserved(base: dict, instance_type: str, region: str, rates: dict[str, _Rate]) -> list[dict]:
    """The reserved offers of one instance type and region: the cheapest 1- and 3-year term each."""
    reserved = {k: r.value for k, r in rates.items() if AWS_TERM.match(k)}
    offers = []
    for years in (1, 3):
        if best := cheapest_term(reserved, years):
            rate = rates[best]
            offers.append(
                _offer(
                    base,
                    "aws",
                    instance_type,
                    region,
                    f"reserved_{years}y",
                    rate.value,
                    rate.source,
                    rate.as_of,
                    f"AWS {best} (effective hourly rate; the cheapest of {len(_of(reserved, years))} "
                    f"{years}-year terms)",
                    best,
                    rate.fetched_at,
                )
            )
    return offers


def _of(rates: dict[str, float], years: int) -> list[str]:
    return [k for k, v in rates.items() if v > 0 and term_years(k) == years]


def spot_advisor(instance_types: Iterable[str], directory: Path = PRICING_DIR) -> list[dict]:
    """Spot Advisor buckets (Linux) for the given instance types, every region."""
    wanted = set(instance_types)
    data = json.loads((directory / ADVISOR_FILE).read_text(encoding="utf-8"))
    labels = [entry["label"] for entry in data["ranges"]]
    rows = []
    for region, by_os in data["spot_advisor"].items():
        for instance_type, entry in by_os.get("Linux", {}).items():
            if instance_type in wanted:
                rows.append(
                    {
                        "provider": "aws",
                        "instance_type": instance_type,
                        "region": region,
                        "bucket": labels[entry["r"]],
                        "bucket_index": entry["r"],
                        "savings_pct": entry.get("s"),
                        "source": ADVISOR_SOURCE,
                        "as_of": ADVISOR_AS_OF,
                    }
                )
    return rows


def gcp_terms(gpu_info: dict[str, dict], directory: Path = PRICING_DIR) -> tuple[list[dict], list[dict]]:
    """(committed-use offers, price_terms rows) from the GCP pricing file."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load((directory / GCP_FILE).read_text(encoding="utf-8"), Loader=loader)
    offers: list[dict] = []
    terms: list[dict] = []
    for machine, entry in data["compute"]["instance"].items():
        base = gpu_info.get(machine)
        if base is None:  # a machine type the catalog does not list
            base = _gcp_machine(entry)
        for region, cost in entry.get("cost", {}).items():
            hourly = {"ondemand": cost.get("hour"), "spot": cost.get("hour_spot")}
            for pricing, month_key in GCP_TERMS.items():
                if cost.get(month_key):
                    hourly[pricing] = cost[month_key] / HOURS_PER_MONTH
            for term, value in hourly.items():
                if value:
                    terms.append(
                        {
                            "provider": "gcp",
                            "instance_type": machine,
                            "region": region,
                            "term": term,
                            "price_per_hour": float(value),
                            "currency": "USD",
                            "source": GCP_SOURCE,
                            "as_of": GCP_AS_OF,
                        }
                    )
            for pricing in GCP_TERMS:
                if base and hourly.get(pricing):
                    offers.append(
                        _offer(
                            base,
                            "gcp",
                            machine,
                            region,
                            pricing,
                            float(hourly[pricing]),
                            GCP_SOURCE,
                            GCP_AS_OF,
                            f"GCP {pricing[-2:]} committed use, whole VM (month / 730)",
                            pricing,
                        )
                    )
    return offers, terms


def _gcp_machine(entry: dict) -> dict | None:
    """The GPU fields of a machine type the catalog does not list, from its accelerator in the pricing file."""
    key = next((k for k in GCP_GPU_KEYS if entry.get(k)), None)
    if not key:
        return None
    gpu, model, memory = GCP_GPU_KEYS[key]
    return {
        "accelerator": key,
        "gpu": gpu,
        "gpu_model": model,
        "gpu_kind": "gpu",
        "gpu_memory_gb": memory,
        "gpu_count": float(entry[key]),
        "accelerator_count": float(entry[key]),
        "vgpu": False,
        "vcpus": entry.get("cpu"),
        "memory_gib": entry.get("ram"),
    }
