"""Offers you can actually order, known catalog errors corrected, Local Zones labelled (issue 14).

Oracles are computed straight from the catalog CSV files (tests/reference_calc.py), never from gpubot code.
"""

from __future__ import annotations

import json
import re

import pytest

from bot.cli import main
from tests.reference_calc import CATALOGS, gcp_ranking, rows

A3_SMALL = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}


@pytest.fixture
def ask(kb, capsys):
    def run(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return run


@pytest.mark.parametrize(
    "question",
    [
        "cheapest H100 on gcp on demand",
        "gcp 按需 H100 最便宜",
        "cheapest H100 on demand top 50",
    ],
)
def test_gcp_on_demand_h100_rankings_hold_no_small_a3_high(ask, question):
    result = ask(question)
    assert result["offers"]
    assert not {o["instance_type"] for o in result["offers"]} & A3_SMALL
    # how many were left out, from the CSV: every whole (accelerator + host) on-demand A3 High 1/2/4g offer
    small = [e for e in gcp_ranking({"H100"}, "Price") if e[1] in A3_SMALL]
    excluded = {e["availability"]: e["count"] for e in result["excluded"]}
    assert excluded.get("spot_only") == len(small) > 0
    assert re.search(rf"\b{len(small)}\b", result["text"]), result["text"]  # the answer says how many, and why
    assert "Spot" in result["text"] or "竞价" in result["text"]


def test_small_a3_high_still_ranks_as_spot(ask):
    result = ask("cheapest H100 spot on gcp top 50")
    shown = {name for o in result["offers"] for name in (o["instance_type"], *o["sizes"])}  # merged sizes (issue 26)
    assert shown & A3_SMALL
    assert all(o["availability"] == "orderable" for o in result["offers"])


def test_aws_h200_without_on_demand_price_is_capacity_blocks_only(ask):
    """p5e.48xlarge has no on-demand Price anywhere: its spot figures are not ranked, and are counted."""
    no_price = {
        r["Region"]
        for r in rows(CATALOGS / "aws_vms.csv")
        if r["InstanceType"] == "p5e.48xlarge" and not r["Price"].strip() and r["SpotPrice"].strip()
    }
    result = ask("cheapest H200 spot on aws top 50")
    assert "p5e.48xlarge" not in {o["instance_type"] for o in result["offers"]}
    excluded = {e["availability"]: e["count"] for e in result["excluded"]}
    assert excluded.get("reservation_only") == len(no_price) > 0
    price = ask("price of p5e.48xlarge")
    assert price["offers"] and all(o["availability"] == "reservation_only" for o in price["offers"])
    assert "capacity reservation only" in price["text"]


def test_azure_sizes_without_any_price_are_counted_as_preview(ask):
    unpriced = {
        (r["InstanceType"], r["Region"])
        for r in rows(CATALOGS / "azure_vms.csv")
        if r["AcceleratorName"] == "Radeon MI25" and not r["Price"].strip() and not r["SpotPrice"].strip()
    }
    result = ask("cheapest MI25 on azure")
    excluded = {e["availability"]: e["count"] for e in result["excluded"]}
    assert excluded.get("preview") == len(unpriced) > 0


# --- catalog quirks ----------------------------------------------------------------------------------------------


def test_nd96isr_h100_v5_has_8_gpus(ask):
    csv_rows = [r for r in rows(CATALOGS / "azure_vms.csv") if r["InstanceType"] == "Standard_ND96isr_H100_v5"]
    assert {r["AcceleratorCount"] for r in csv_rows} == {"12"}  # the catalog's error, corrected at build time
    result = ask("price of Standard_ND96isr_H100_v5 in eastus")
    on_demand = [o for o in result["offers"] if o["pricing"] == "on_demand"]
    eastus = next(r for r in csv_rows if r["Region"] == "eastus")
    assert [o["gpu_count"] for o in on_demand] == [8]
    assert on_demand[0]["price_per_gpu_hour"] == pytest.approx(float(eastus["Price"]) / 8)  # 12.29, not 8.19
    assert "$12.29/GPU-h" in result["text"]
    assert not [o for o in result["offers"] if o["pricing"] == "spot"]  # SpotPrice = Price: no spot offer


def test_kb_stats_lists_the_quirks_corrected(kb, capsys):
    assert main(["kb", "stats"]) == 0
    stats = json.loads(capsys.readouterr().out)
    fixes = {(q["instance_type"], q["fix"]): q for q in stats["catalog_quirks"]}
    nd = fixes[("Standard_ND96isr_H100_v5", "gpu_count=8")]
    assert nd["source"] and nd["offers"] == 2 * len(
        {r["Region"] for r in rows(CATALOGS / "azure_vms.csv") if r["InstanceType"] == "Standard_ND96isr_H100_v5"}
    )  # OD + spot
    assert fixes[("Standard_*H100_v5", "no_spot_if_equal")]["offers"] == sum(
        1
        for r in rows(CATALOGS / "azure_vms.csv")
        if r["InstanceType"].endswith("H100_v5") and r["SpotPrice"] and r["SpotPrice"] == r["Price"]
    )
    assert stats["availability"]["spot_only"] > 0 and stats["price_crosscheck"]["offers_differing"] > 0


# --- Local Zones -------------------------------------------------------------------------------------------------


def test_local_zone_offers_are_labelled_not_shown_as_the_region(ask):
    atlanta = [
        r
        for r in rows(CATALOGS / "aws_vms.csv")
        if r["InstanceType"] == "p6-b200.48xlarge" and r["AvailabilityZone"] == "use1-atl2-az1"
    ]
    assert atlanta and atlanta[0]["SpotPrice"]
    result = ask("price of p6-b200.48xlarge spot in us-east-1")
    local = [o for o in result["offers"] if o["zone"] == "use1-atl2-az1"]
    assert [o["price_per_hour_usd"] for o in local] == [pytest.approx(float(atlanta[0]["SpotPrice"]))]
    assert local[0]["zone_kind"] == "local_zone" and local[0]["zone_label"] == "Atlanta (Local Zone, opt-in)"
    line = next(line for line in result["text"].splitlines() if "13.03/h" in line)
    assert "Atlanta (Local Zone, opt-in)" in line and "· us-east-1 ·" not in line
    regular = [o for o in result["offers"] if o["zone"] != "use1-atl2-az1"]
    assert regular and all(o["zone_kind"] == "availability_zone" for o in regular)  # priced apart from Atlanta


@pytest.mark.parametrize(
    ("zone", "kind", "label"),
    [
        ("use1-atl2-az1", "local_zone", "Atlanta (Local Zone, opt-in)"),
        ("usw2-lax1-az2", "local_zone", "Los Angeles (Local Zone, opt-in)"),
        ("use1-bos1-az1", "local_zone", "Boston (Local Zone, opt-in)"),
        ("usw2-wl1-sfo-wlz1", "wavelength_zone", "San Francisco (Wavelength Zone, opt-in)"),
        ("use1-az6", "availability_zone", None),
        ("us-central1-a", "availability_zone", None),
    ],
)
def test_zone_kinds(zone, kind, label):
    from knowledge.catalog.zones import classify

    assert classify(zone) == (kind, label)


@pytest.mark.parametrize("question", ["recommend H100 for training on gcp", "在gcp上训练推荐用H100"])
def test_recommend_leaves_out_what_cannot_be_ordered_and_says_so(ask, question):
    result = ask(question)
    picked = {r["offer"]["instance_type"] for r in result["recommendations"] if r["offer"]}
    assert picked and not picked & A3_SMALL
    small = [e for e in gcp_ranking({"H100"}, "Price") if e[1] in A3_SMALL]
    assert any(str(len(small)) in note for note in result["notes"]), result["notes"]
