"""Questions without a GPU, and machine counts (issue 23): "cheapest GPU in asia under $0.5/GPU-h" ranks every GPU
under the other constraints; "2 nodes of 8 H100", "3 x p4d.24xlarge", "2台8卡H100" price that many machines.

Oracles: the offers table read with plain SQL and filtered here (region groups by the patterns of region_groups.csv,
orderable rows only, GPU-only figures left out), and `reference_calc` over the raw AWS catalog CSV.
"""

from __future__ import annotations

import csv
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from bot import pipeline
from tests.reference_calc import CATALOGS, region_offers

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "data"


def _patterns(group: str) -> list[str]:
    with (DATA / "region_groups.csv").open(encoding="utf-8") as handle:
        return next(r for r in csv.DictReader(handle) if r["group"] == group)["patterns"].split("|")


def _candidates(kb, pricing: str = "on_demand") -> list[dict]:
    gpus = {r["name"] for r in kb.rows("SELECT name FROM gpus WHERE kind = 'gpu'")}
    return [
        r
        for r in kb.rows("SELECT * FROM offers WHERE kind IN ('catalog','pricing') AND pricing = ?", [pricing])
        if r["gpu"] in gpus
        and (r["availability"] or "orderable") == "orderable"
        and "GPU only" not in r["instance_type"]
    ]


@pytest.mark.parametrize(
    ("text", "group", "cap"),
    [
        ("cheapest GPU in asia under $0.5/GPU-h", "asia", 0.5),
        ("亚洲最便宜的显卡，每卡每小时不超过0.5美元", "asia", 0.5),
        ("cheapest GPU in europe under $1/GPU-h", "europe", 1.0),
        ("cheapest GPU in north america", "north-america", None),
    ],
)
def test_a_question_without_a_gpu_ranks_every_gpu_under_its_constraints(kb, text, group, cap):
    got = pipeline.answer(text, kb)
    inside = [
        r
        for r in _candidates(kb)
        if any(fnmatchcase(r["region"], p) for p in _patterns(group))
        and (cap is None or r["price_per_gpu_hour_usd"] <= cap + 1e-9)
    ]
    best = min(r["price_per_gpu_hour_usd"] for r in inside)
    assert got.offers and got.offers[0].price_per_gpu_hour_usd == pytest.approx(best, rel=1e-9), got.title
    assert all(any(fnmatchcase(o.region, p) for p in _patterns(group)) for o in got.offers)
    assert cap is None or all(o.price_per_gpu_hour_usd <= cap + 1e-9 for o in got.offers)


@pytest.mark.parametrize(("text", "memory"), [("cheapest GPU with at least 80GB", 80), ("显存至少80GB最便宜的GPU", 80)])
def test_a_memory_minimum_without_a_gpu(kb, text, memory):
    got = pipeline.answer(text, kb)
    best = min(r["price_per_gpu_hour_usd"] for r in _candidates(kb) if (r["gpu_memory_gb"] or 0) >= memory)
    assert got.offers and got.offers[0].price_per_gpu_hour_usd == pytest.approx(best, rel=1e-9)
    assert all(o.gpu_memory_gb >= memory for o in got.offers)


@pytest.mark.parametrize(
    ("text", "machines", "gpus"),
    [("2 nodes of 8 H100 cheapest", 2, 8), ("2台8卡H100最便宜", 2, 8), ("cheapest 3 nodes of 8x A100", 3, 8)],
)
def test_a_machine_count_prices_that_many_machines(kb, text, machines, gpus):
    got = pipeline.answer(text, kb)
    family = "H100" if "H100" in text else "A100"
    rows = [r for r in _candidates(kb) if r["gpu"] == family and r["gpu_count"] == gpus]
    top = min(rows, key=lambda r: r["price_per_gpu_hour_usd"])
    assert got.offers and got.offers[0].gpu_count == gpus
    assert got.offers[0].price_per_gpu_hour_usd == pytest.approx(top["price_per_gpu_hour_usd"], rel=1e-9)
    hourly = got.offers[0].price_per_hour
    assert f"${hourly * machines:,.2f}" in got.title, got.title


@pytest.mark.parametrize(("text", "machines"), [("price of 3 x p4d.24xlarge", 3), ("3台p4d.24xlarge多少钱", 3)])
def test_a_count_of_instances_prices_them_all(kb, text, machines):
    got = pipeline.answer(text, kb)
    od = min(p for (itype, _), (p, _) in region_offers(CATALOGS / "aws_vms.csv", {"A100"}, "Price").items()
             if itype == "p4d.24xlarge")  # fmt: skip
    assert f"${od * machines:,.2f}" in got.title, got.title
