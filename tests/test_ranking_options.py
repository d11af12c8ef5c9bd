"""Issue 26: TPUs priced per chip with the slice shown; "whole instance" ranks per instance-hour; sizes of one
family at one per-GPU price are one option; the standard region wins a tie over its Local Zone. Oracles from the
raw catalog files (plain csv) and Google's slice naming (v2/v3/v4/v5p count TensorCores, 2 per chip; v5e and v6e
count chips: cloud.google.com/tpu/docs)."""

from __future__ import annotations

import re

import pytest

from bot.pipeline import answer
from bot.render import render_text
from tests.reference_calc import CATALOGS, rows

PLACEHOLDER = 700.0  # SkyPilot's unknown-price marker (catalogs/README.md)


def _chips(name: str) -> int:
    version, size = re.fullmatch(r"tpu-(v\w+?)-(\d+)", name).groups()
    return int(size) if version in ("v5litepod", "v6e") else int(size) // 2


def _tpu_oracle() -> dict[tuple[str, str, str], float]:
    """(slice, region, pricing) -> USD per chip-hour, the region's lowest over its zones."""
    found: dict[tuple[str, str, str], float] = {}
    for row in rows(CATALOGS / "gcp_vms.csv"):
        name = row["AcceleratorName"]
        if not name.startswith("tpu-"):
            continue
        for pricing, cell in (("on_demand", row["Price"]), ("spot", row["SpotPrice"])):
            if cell and float(cell) != PLACEHOLDER:
                key = (name, row["Region"], pricing)
                found[key] = min(found.get(key, float("inf")), float(cell) / _chips(name))
    return found


TPU = _tpu_oracle()


def test_every_tpu_offer_is_priced_per_chip(kb):
    got = {
        (r["instance_type"], r["region"], r["pricing"]): r
        for r in kb.rows("SELECT * FROM offers WHERE gpu_kind = 'tpu' AND kind = 'catalog'")
    }
    assert set(got) == set(TPU)
    for key, per_chip in TPU.items():
        assert got[key]["price_per_gpu_hour_usd"] == pytest.approx(per_chip), key
        assert got[key]["gpu_count"] == _chips(key[0])  # the slice's chips
        assert got[key]["price_per_hour_usd"] == pytest.approx(per_chip * _chips(key[0]))  # the slice's price


@pytest.mark.parametrize(("family", "prefix"), [("TPU v5e", "tpu-v5litepod-"), ("TPU v5p", "tpu-v5p-")])
def test_cheapest_tpu_is_the_cheapest_chip_hour_with_its_slice(kb, family, prefix):
    result = answer(f"cheapest {family}", kb)
    best = min(p for (name, _, pricing), p in TPU.items() if name.startswith(prefix) and pricing == "on_demand")
    top = result.offers[0]
    assert top.price_per_gpu_hour_usd == pytest.approx(best)
    assert top.instance_type.startswith(prefix) and top.gpu_count == _chips(top.instance_type)


HYPERSTACK = rows(CATALOGS / "hyperstack_vms.csv")


def test_sizes_of_one_family_at_one_price_are_one_option(kb):
    result = answer("cheapest H100", kb)
    lines = [(o.provider, o.region, o.gpu_variant, round(o.price_per_gpu_hour_usd, 4)) for o in result.offers]
    # n3-H100x1/x2/x4/x8 in CANADA-1 at one per-GPU price in the raw file: one line
    same = sorted(
        (int(r["AcceleratorCount"]), r["InstanceType"])
        for r in HYPERSTACK
        if r["AcceleratorName"] == "H100-80G-PCIe" and r["Region"] == "CANADA-1"
    )
    prices = {
        float(r["Price"]) / int(r["AcceleratorCount"]) for r in HYPERSTACK if r["InstanceType"] in dict(same).values()
    }
    assert len(same) == 4 and len(prices) == 1
    line = next(o for o in result.offers if o.provider == "hyperstack")
    assert line.sizes == [name for _, name in same] and line.size_label == "n3-H100 x1/x2/x4/x8"
    assert "hyperstack n3-H100 x1/x2/x4/x8 · " in render_text(result)
    patterns = [(*key, re.sub(r"\d+", "#", o.instance_type)) for key, o in zip(lines, result.offers, strict=True)]
    assert len(patterns) == len(set(patterns))  # no option shown twice


def test_whole_instance_ranks_per_instance_hour(kb):
    for text in ("cheapest H100 per hour for the whole instance", "最便宜的H100 整机每小时"):
        result = answer(text, kb)
        hourly = [o.price_per_hour_usd for o in result.offers]
        assert hourly == sorted(hourly) and len(hourly) >= 3, text
        assert not any(o.sizes for o in result.offers)  # sizes differ per instance-hour: never merged
    per_gpu = answer("cheapest 8x H100", kb).offers
    whole = answer("cheapest 8x H100 per hour for the whole instance", kb).offers
    assert whole[0].price_per_hour_usd == min(o.price_per_hour_usd for o in per_gpu)


def test_the_standard_region_wins_a_tie_over_its_local_zone(kb):
    raw = [
        r for r in rows(CATALOGS / "aws_vms.csv") if r["InstanceType"] == "p5.48xlarge" and r["Region"] == "us-east-1"
    ]
    zones = {r["AvailabilityZone"]: float(r["Price"]) for r in raw}
    assert zones["use1-atl2-az1"] == zones["use1-az1"]  # the Atlanta Local Zone costs the same as us-east-1 proper
    result = answer("price of p5.48xlarge", kb)
    first = next(o for o in result.offers if o.pricing == "on_demand")
    assert first.zone_label is None and first.region == "us-east-1"
    assert "Local Zone" not in result.title.split(";")[0]


@pytest.mark.parametrize(
    ("names", "counts", "label"),
    [
        (["n3-H100x1", "n3-H100x2", "n3-H100x4", "n3-H100x8"], [1, 2, 4, 8], "n3-H100 x1/x2/x4/x8"),
        (["tpu-v5litepod-1", "tpu-v5litepod-4"], [1, 4], "tpu-v5litepod x1/x4"),
        (["1x_L4_SECURE", "2x_L4_SECURE"], [1, 2], "1/2x_L4_SECURE"),
        (["Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4"], [1, 2], "Standard_NC24/48ads_A100_v4"),
        (["scaleway_L4", "scaleway_L4x2"], [1, 2], "scaleway_L4 x1/x2"),
        (["p5.4xlarge", "p5.48xlarge"], [1, 8], "p5.4/48xlarge"),
        (  # GCP's 94 TPU v5p sizes made a line of 500 characters: the first ones and the last
            [f"tpu-v5p-{n}" for n in (8, 16, 32, 64, 128, 256, 384, 512, 640, 768)],
            [4, 8, 16, 32, 64, 128, 192, 256, 320, 384],
            "tpu-v5p-8/16/32/64/128/256/…/768",
        ),
        (
            [f"tpu-v5p-{n}" for n in (8, 16, 32, 64, 128, 256, 384, 512)],
            [4, 8, 16, 32, 64, 128, 192, 256],
            "tpu-v5p-8/16/32/64/128/256/384/512",
        ),
    ],
)
def test_a_merged_line_names_its_sizes(names, counts, label):
    from handlers.models import Offer
    from handlers.ranking import size_label

    base = dict(provider="x", gpu="H100", region="r", pricing="on_demand", currency="USD", source="s", as_of="a")
    prices = dict(price_per_gpu_hour=1.0, price_per_gpu_hour_usd=1.0)
    members = [
        Offer(**base, **prices, instance_type=n, gpu_count=c, price_per_hour=c, price_per_hour_usd=c)
        for n, c in zip(names, counts, strict=True)
    ]
    assert size_label(members) == label
