"""The counts a cheapest answer states, now computed in SQL (issue 29: `knowledge/kb/ranks.py`): how many more lines
("… 31 more"), how many more regions offer a line ("+16 regions") and how many offers a budget hides ("12 of 85
offers above it hidden"), each equal to a count made here from the raw catalog CSV (`tests/reference_calc`).

One provider per question keeps the oracle plain: one line per instance type at its cheapest region, sizes of one
family at one per-GPU price in one region as one line (`one_option_per_size_family`), offers = (instance type,
region) pairs with a price (an AWS Local Zone's row is one more row of its region, not one more region).
"""

from __future__ import annotations

import pytest

from bot import pipeline
from tests.reference_calc import CATALOGS, distinct_ranking, one_option_per_size_family, per_gpu_ranking, region_offers

CASES = [  # (question, catalog, its accelerator names of the family, price column): each with lines left over
    ("top 1 cheapest A100 on lambda", "lambda_vms.csv", {"A100", "A100-80GB"}, "Price"),
    ("lambda上最便宜的H100，前2个", "lambda_vms.csv", {"H100"}, "Price"),
    ("cheapest V100 on lambda top 1", "lambda_vms.csv", {"V100"}, "Price"),
    ("cheapest B200 on lambda top 1", "lambda_vms.csv", {"B200"}, "Price"),
    ("nebius 上最便宜的L40S按需实例", "nebius_vms.csv", {"L40S"}, "Price"),
    ("cheapest V100 on oci top 1", "oci_vms.csv", {"V100"}, "Price"),
    ("cheapest T4 on aws top 2", "aws_vms.csv", {"T4"}, "Price"),  # Local Zone rows: a region counted once
    ("aws上最便宜的A10G，前2个", "aws_vms.csv", {"A10G"}, "Price"),
]


def _lines(catalog: str, accelerators: set[str], column: str) -> list[tuple[float, str, str]]:
    ranking = per_gpu_ranking(CATALOGS / catalog, accelerators, column)
    return one_option_per_size_family(distinct_ranking(ranking))


@pytest.mark.parametrize(("text", "catalog", "accelerators", "column"), CASES)
def test_more_and_other_regions_equal_the_catalogs_counts(kb, text, catalog, accelerators, column):
    got = pipeline.answer(text, kb)
    lines = _lines(catalog, accelerators, column)
    top = got.query.top_n or 5
    assert len(lines) > top, "a case with lines left over"
    assert got.more == max(0, len(lines) - top), got.title
    assert [o.instance_type for o in got.offers] == [itype for _, itype, _ in lines[:top]]
    regions = {key[0]: set() for key in region_offers(CATALOGS / catalog, accelerators, column)}
    for itype, region in region_offers(CATALOGS / catalog, accelerators, column):
        regions[itype].add(region)
    for item in got.offers:
        sizes = item.sizes or [item.instance_type]  # a line of several sizes: the most regions of any of them
        assert item.other_regions == max(len(regions[size]) - 1 for size in sizes), item.instance_type


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        ("cheapest A100 on lambda under $1.5/GPU-hour", 1.5),
        ("lambda上最便宜的A100，每卡每小时不超过1.5美元", 1.5),
        ("cheapest A100 on lambda under $2/GPU-h", 2.0),
    ],
)
def test_a_budget_says_how_many_of_the_offers_it_hides(kb, text, cap):
    offers = region_offers(CATALOGS / "lambda_vms.csv", {"A100", "A100-80GB"}, "Price")
    above = sum(1 for price, count in offers.values() if price / count > cap + 1e-9)
    got = pipeline.answer(text, kb)
    lang = got.query.language
    said = f"{above} of {len(offers)} offers above it hidden" if lang == "en" else f"已隐藏{above}/{len(offers)}条"
    assert any(said in note for note in got.notes), got.notes
    assert all(o.price_per_gpu_hour_usd <= cap + 1e-9 for o in got.offers)
