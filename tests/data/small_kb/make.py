"""Rebuild the small test knowledge base's catalogs (tests/data/small_kb/catalogs/) from the bundled ones.

    .venv/bin/python tests/data/small_kb/make.py

Rows are copied unchanged, in source order, from `knowledge/data/catalogs/` (header and column order kept); the
manifest keeps each catalog's currency terms and says where its rows came from. Chosen rows, per cloud:
- every row of one whole region: of the cloud's regions with at most 150 rows, the one with the most GPU models;
- for every (accelerator, count), its cheapest on-demand row and its cheapest spot row anywhere (outside GCP,
  where the host VM is priced apart, that is each GPU and size's cheapest offer on the full catalogs too);
- GCP host VMs (`gcp_host_vms.csv`): the rows in the zones of the accelerator rows kept;
- the reserved/spot price files (`pricing/`): the entries of the AWS and GCP instance types kept, in the regions
  kept (values unchanged; the GCP file is re-written as YAML).
`tests/test_small_kb.py` checks that every row is a row of the bundled catalog.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "knowledge" / "data" / "catalogs"
PRICING = ROOT / "knowledge" / "data" / "pricing"
OUT = Path(__file__).resolve().parent / "catalogs"
OUT_PRICING = Path(__file__).resolve().parent / "pricing"
MAX_REGION_ROWS = 150


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _price(row: dict[str, str], column: str) -> float | None:
    try:
        value = float(row.get(column) or "")
    except ValueError:
        return None
    return value if value > 0 else None


def chosen(rows: list[dict[str, str]]) -> list[int]:
    """Indexes of the rows kept (see the module docstring), in source order."""
    sizes = Counter(r["Region"] for r in rows)
    models: dict[str, set[str]] = {}
    for row in rows:
        models.setdefault(row["Region"], set()).add(row["AcceleratorName"])
    small = [region for region in sizes if sizes[region] <= MAX_REGION_ROWS] or list(sizes)
    region = max(small, key=lambda r: (len(models[r]), -sizes[r], r))
    keep = {i for i, r in enumerate(rows) if r["Region"] == region}
    for column in ("Price", "SpotPrice"):
        best: dict[tuple[str, str], tuple[float, int]] = {}
        for i, row in enumerate(rows):
            price = _price(row, column)
            key = (row["AcceleratorName"], row["AcceleratorCount"])
            if price is not None and (key not in best or price < best[key][0]):
                best[key] = (price, i)
        keep |= {i for _, i in best.values()}
    return sorted(keep)


def pricing(kept: dict[str, list[dict[str, str]]]) -> None:
    """The price files, cut to the instance types and regions of the kept AWS and GCP rows."""
    OUT_PRICING.mkdir(exist_ok=True)
    aws = {(r["InstanceType"], r["Region"]) for r in kept["aws"]}
    aws_types, aws_regions = {t for t, _ in aws}, {r for _, r in aws}
    reserved = []
    for item in json.loads((PRICING / "aws_gpu_instances_reserved_spot.json").read_text(encoding="utf-8")):
        if item["instance_type"] in aws_types:
            regions = {r: v for r, v in item.get("pricing", {}).items() if (item["instance_type"], r) in aws}
            reserved.append({**item, "pricing": regions})
    (OUT_PRICING / "aws_gpu_instances_reserved_spot.json").write_text(json.dumps(reserved), encoding="utf-8")
    advisor = json.loads((PRICING / "aws_spot_advisor.json").read_text(encoding="utf-8"))
    advisor["instance_types"] = {k: v for k, v in advisor["instance_types"].items() if k in aws_types}
    advisor["spot_advisor"] = {
        region: {os: {k: v for k, v in types.items() if k in aws_types} for os, types in by_os.items()}
        for region, by_os in advisor["spot_advisor"].items()
        if region in aws_regions
    }
    (OUT_PRICING / "aws_spot_advisor.json").write_text(json.dumps(advisor), encoding="utf-8")
    gcp_types = {r["InstanceType"] for r in kept["gcp"] if r.get("InstanceType")}
    gcp_regions = {r["Region"] for r in kept["gcp"]}
    data = yaml.safe_load((PRICING / "gcp_gpu_commitments.yml").read_text(encoding="utf-8"))
    instances = data["compute"]["instance"]
    data["compute"] = {
        "instance": {
            name: {**entry, "cost": {r: c for r, c in entry.get("cost", {}).items() if r in gcp_regions}}
            for name, entry in instances.items()
            if name in gcp_types
        }
    }
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    (OUT_PRICING / "gcp_gpu_commitments.yml").write_text(text, encoding="utf-8")


def main() -> None:
    OUT.mkdir(exist_ok=True)
    header, manifest = _read(BUNDLED / "manifest.csv")
    kept_by_provider: dict[str, list[dict[str, str]]] = {}
    for entry in manifest:
        fields, rows = _read(BUNDLED / entry["file"])
        kept = [rows[i] for i in chosen(rows)]
        _write(OUT / entry["file"], fields, kept)
        kept_by_provider[entry["provider"]] = list(kept)
        if entry["hosts_file"]:
            host_fields, hosts = _read(BUNDLED / entry["hosts_file"])
            zones = {r["AvailabilityZone"] or r["Region"] for r in kept}
            kept_hosts = [h for h in hosts if (h["AvailabilityZone"] or h["Region"]) in zones]
            _write(OUT / entry["hosts_file"], host_fields, kept_hosts)
            kept_by_provider[entry["provider"]] += kept_hosts
        entry["source"] = (
            f"{len(kept)} of {len(rows)} rows of knowledge/data/catalogs/{entry['file']}: " + entry["source"]
        )
    _write(OUT / "manifest.csv", header, manifest)
    pricing(kept_by_provider)


if __name__ == "__main__":
    main()
