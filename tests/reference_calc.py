"""Independent computations straight from catalog CSV files, to check the bot's rankings against.

Deliberately written without any gpubot code: plain csv parsing and the rules of the catalogs' README
(per instance-hour prices, empty = no offer, region price = lowest over zones, GCP accelerator + host VM).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

CATALOGS = Path(__file__).resolve().parent.parent / "knowledge" / "data" / "catalogs"


def rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def region_offers(path: Path, accelerators: set[str], column: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(instance type, region) -> (lowest price over zones, accelerator count) for instance catalogs."""
    best: dict[tuple[str, str], tuple[float, float]] = {}
    for row in rows(path):
        if row["AcceleratorName"] not in accelerators or not row[column].strip():
            continue
        key = (row["InstanceType"], row["Region"])
        price = float(row[column])
        if key not in best or price < best[key][0]:
            best[key] = (price, float(row["AcceleratorCount"]))
    return best


def per_gpu_ranking(path: Path, accelerators: set[str], column: str) -> list[tuple[float, str, str]]:
    """[(price per GPU-hour, instance type, region)] cheapest first."""
    offers = region_offers(path, accelerators, column)
    return sorted((price / count, itype, region) for (itype, region), (price, count) in offers.items())


GCP_FIXED_HOSTS = {
    ("A100", 1): "a2-highgpu-1g",
    ("A100", 2): "a2-highgpu-2g",
    ("A100", 4): "a2-highgpu-4g",
    ("A100", 8): "a2-highgpu-8g",
    ("A100", 16): "a2-megagpu-16g",
    ("A100-80GB", 1): "a2-ultragpu-1g",
    ("A100-80GB", 2): "a2-ultragpu-2g",
    ("A100-80GB", 4): "a2-ultragpu-4g",
    ("A100-80GB", 8): "a2-ultragpu-8g",
    ("H100", 1): "a3-highgpu-1g",
    ("H100", 2): "a3-highgpu-2g",
    ("H100", 4): "a3-highgpu-4g",
    ("H100", 8): "a3-highgpu-8g",
    ("H100-MEGA", 8): "a3-megagpu-8g",
    ("H200", 8): "a3-ultragpu-8g",
    ("B200", 8): "a4-highgpu-8g",
    ("L4", 1): "g2-standard-4",
    ("L4", 2): "g2-standard-24",
    ("L4", 4): "g2-standard-48",
    ("L4", 8): "g2-standard-96",
}


def gcp_ranking(accelerators: set[str], column: str) -> list[tuple[float, str, str]]:
    """GCP whole offers: accelerator row + host VM row of the same zone (n1-standard-8 for n1-attached GPUs)."""
    hosts = {(r["InstanceType"], r["AvailabilityZone"]): r for r in rows(CATALOGS / "gcp_host_vms.csv")}
    best: dict[tuple[str, str], float] = {}
    for row in rows(CATALOGS / "gcp_vms.csv"):
        name, count = row["AcceleratorName"], float(row["AcceleratorCount"])
        if name not in accelerators or not row[column].strip():
            continue
        host_type = GCP_FIXED_HOSTS.get((name, int(count)), "n1-standard-8")
        host = hosts.get((host_type, row["AvailabilityZone"]))
        if host is None or not host[column].strip():
            continue
        label = host_type if (name, int(count)) in GCP_FIXED_HOSTS else f"{host_type} + {count:g}x {name}"
        key = (label, row["Region"])
        per_gpu = (float(row[column]) + float(host[column])) / count
        best[key] = min(per_gpu, best.get(key, per_gpu))
    return sorted((price, itype, region) for (itype, region), price in best.items())


# --- issue 14: what can be ordered, Local Zones apart, the billing catalog where the two GCP sources disagree -----


GCP_SNAPSHOT = CATALOGS.parent / "history" / "gcp_weekly" / "gcp_gpu_prices_last_snapshot.csv"
GCP_SPOT_OR_FLEX_ONLY = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}  # Google: A3 High 1/2/4g not on demand
DATASHEET_GPU_COUNTS = {"Standard_ND96isr_H100_v5": 8}  # Microsoft: ND H100 v5 has 8 GPUs (the catalog says 12)
_LOCAL_ZONE = re.compile(r"^([a-z]+\d)-([a-z]{3}\d)-az\d+$")


def per_gpu_ranking_by_place(path: Path, accelerators: set[str], column: str) -> list[tuple[float, str, str]]:
    """Like `per_gpu_ranking`, with an AWS Local Zone priced apart from its region and datasheet GPU counts."""
    best: dict[tuple[str, str, str], float] = {}
    for row in rows(path):
        if row["AcceleratorName"] not in accelerators or not row[column].strip():
            continue
        zone = _LOCAL_ZONE.match(row.get("AvailabilityZone") or "")
        key = (row["InstanceType"], row["Region"], zone.group(2) if zone else "")
        count = DATASHEET_GPU_COUNTS.get(row["InstanceType"], float(row["AcceleratorCount"]))
        price = float(row[column]) / count
        best[key] = min(price, best.get(key, price))
    return sorted((price, itype, region) for (itype, region, _), price in best.items())


def gcp_billed_ranking(accelerators: set[str], column: str) -> list[tuple[float, str, str]]:
    """`gcp_ranking` with Google's billing-catalog figure wherever the two sources differ by more than 5 %, and
    without the sizes Google does not sell on demand (for on-demand)."""
    snapshot_column = "hour" if column == "Price" else "hour_spot"
    billed = {
        (r["name"], r["region"]): (float(r[snapshot_column]) / float(r["gpu_count"]))
        for r in rows(GCP_SNAPSHOT)
        if r["gpu_name"] and r[snapshot_column]
    }
    ranked = []
    for price, itype, region in gcp_ranking(accelerators, column):
        if column == "Price" and itype in GCP_SPOT_OR_FLEX_ONLY:
            continue
        other = billed.get((itype, region))
        if other and abs(price - other) / other > 0.05:
            price = other
        ranked.append((price, itype, region))
    return sorted(ranked)


def distinct_ranking(ranking: list[tuple[float, str, str]]) -> list[tuple[float, str, str]]:
    """One entry per instance type, at its cheapest region (what a short answer lists; issue 16)."""
    seen: set[str] = set()
    out = []
    for price, itype, region in sorted(ranking):
        if itype not in seen:
            seen.add(itype)
            out.append((price, itype, region))
    return out


def one_option_per_size_family(ranking: list[tuple]) -> list[tuple]:
    """Sizes of one instance family (names equal once digits and a trailing "x<count>" are masked: p5.4xlarge /
    p5.48xlarge, n3-H100x1 / n3-H100x8, scaleway_L4 / scaleway_L4x2) at one per-GPU price in one region (of one
    provider) are one option, the first ranked (issue 26). Entries: (price, [provider,] instance type, region)."""
    seen: set[tuple] = set()
    out = []
    for entry in ranking:
        price, itype, region = entry[0], entry[-2], entry[-1]
        family = re.sub(r"\d+", "#", re.sub(r"(?<=[A-Za-z0-9])x\d+$", "", itype))
        key = (round(price, 4), *entry[1:-2], region, family)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def aws_reserved(linux: dict, years: int) -> tuple[float, str] | None:
    """(cheapest effective hourly rate, term key) over every `years`-year reserved term of one AWS region's Linux
    prices: Standard and Convertible, no, partial and all upfront (the pricing file's README)."""
    found = [
        (float(value), key)
        for key, value in linux.get("reserved", {}).items()
        if key.startswith(f"yrTerm{years}") and value and float(value) > 0
    ]
    return min(found) if found else None


TERM_HOURS = {"1yr": 8760, "3yr": 26280}  # 365 x 24, 3 x 365 x 24


def aws_offer_file_reserved(text: str, families: set[str] | None = None) -> dict[str, dict[str, float]]:
    """Instance -> AWS term key -> upfront / hours in the term + hourly, the lowest over an EC2 offer file's (CSV,
    five preamble lines) Linux shared USD reserved terms; `families` keeps only those instance families."""
    terms: dict[tuple[str, str], dict] = {}
    for r in csv.DictReader(text.splitlines()[5:]):
        kept = (r["Operating System"], r["Tenancy"], r["Pre Installed S/W"], r["CapacityStatus"], r["Currency"])
        if r["TermType"] != "Reserved" or kept != ("Linux", "Shared", "NA", "Used", "USD"):
            continue
        if families is not None and r["Instance Type"].split(".")[0] not in families:
            continue
        key = (
            f"yrTerm{r['LeaseContractLength'][0]}{r['OfferingClass'].capitalize()}."
            f"{r['PurchaseOption'].split()[0].lower()}Upfront"
        )
        term = terms.setdefault((r["SKU"], r["OfferTermCode"]), {"instance": r["Instance Type"], "key": key})
        term["hours"] = TERM_HOURS[r["LeaseContractLength"]]
        term["upfront" if r["Unit"] == "Quantity" else "hourly"] = float(r["PricePerUnit"])
    out: dict[str, dict[str, float]] = {}
    for term in terms.values():
        rate = term.get("upfront", 0.0) / term["hours"] + term["hourly"]
        held = out.setdefault(term["instance"], {})
        held[term["key"]] = min(rate, held.get(term["key"], rate))
    return out
