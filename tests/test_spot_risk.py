"""Is spot safe on a cloud (issue 23, one intent decided by the parser): the spot-risk answer, not a recommendation.

What is known of each cloud's interruptions is recomputed from `knowledge/data/pricing/` (AWS's buckets, the only
interruption source there); the cheapest spot offer from the raw catalog CSV.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bot import pipeline
from bot.render import render_text
from tests.reference_calc import CATALOGS, rows

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "data"
PRICING = DATA / "pricing"
# whole GPUs only: Inferentia, Trainium, TPUs and the like are not (gpus.csv's kind)
NOT_GPUS = {r["name"].upper() for r in rows(DATA / "gpus.csv") if r["kind"] != "gpu"}


def aws_buckets() -> Counter:
    """(instance type, region) pairs per interruption bucket, newest source (ec2instances.info, linux)."""
    found: Counter = Counter()
    for item in json.loads((PRICING / "aws_gpu_instances_reserved_spot.json").read_text(encoding="utf-8")):
        for by_os in item["pricing"].values():
            if bucket := (by_os.get("linux") or {}).get("pct_interrupt"):
                found[bucket] += 1
    return found


def cheapest_spot_per_gpu(provider: str) -> float:
    return min(
        float(r["SpotPrice"]) / float(r["AcceleratorCount"])
        for r in rows(CATALOGS / f"{provider}_vms.csv")
        if r["SpotPrice"].strip()
        and float(r["AcceleratorCount"]) >= 1
        and r["AcceleratorName"].split("-")[0].upper() not in NOT_GPUS
    )


@pytest.mark.parametrize(
    ("text", "provider"),
    [
        ("is spot safe for training on runpod", "runpod"),  # the phrasing
        ("spot安全吗 runpod训练", "runpod"),
        ("is spot reliable on aws for a 3 day job", "aws"),
        ("aws的竞价实例靠谱吗", "aws"),
        ("在runpod上用竞价实例稳定吗", "runpod"),
    ],
)
def test_a_spot_safety_question_gets_the_spot_risk_answer(kb, text, provider):
    got = pipeline.answer(text, kb)
    assert (got.query.intent, got.query.topic, got.query.providers) == ("tco", "spot_risk", [provider])
    assert not got.recommendations  # not "Pick L40S 48GB x1 ..."
    shown = render_text(got)
    zh = got.query.language == "zh"
    if provider == "aws":
        buckets = aws_buckets()
        total = sum(buckets.values())
        for bucket, n in buckets.items():
            assert f"{bucket}: {100 * n / total:.0f}%" in shown  # the spread, as the data file has it
        assert str(total) in shown and "2025-11-30" in shown
        assert ("中断" if zh else "interrupted") in shown
    else:  # said plainly: nothing is known of this cloud's interruptions
        assert ("没有竞价实例中断数据" if zh else "no spot interruption data") in shown
    # the cheapest spot offers of that cloud, as context, cheapest first
    assert got.offers and {o.provider for o in got.offers} == {provider}
    assert {o.pricing for o in got.offers} == {"spot"}
    assert got.offers[0].price_per_gpu_hour_usd == pytest.approx(cheapest_spot_per_gpu(provider), abs=1e-6)
    # what bites on spot: the checkpointing / interruption pitfalls
    assert any({"spot", "interruption"} & set(p.tags.get("topics", ())) for p in got.pitfalls), got.pitfalls
    assert got.sources


@pytest.mark.parametrize("text", ["how risky is spot on lambda", "lambda的竞价实例可靠吗"])
def test_a_cloud_without_spot_says_so(kb, text):
    assert not any(r["SpotPrice"].strip() for r in rows(CATALOGS / "lambda_vms.csv"))  # the premise
    got = pipeline.answer(text, kb)
    assert (got.query.topic, got.offers) == ("spot_risk", [])
    shown = render_text(got)
    assert ("没有竞价实例中断数据" if got.query.language == "zh" else "no spot interruption data") in shown
    assert ("没有竞价" if got.query.language == "zh" else "no spot offer") in shown


def test_a_job_length_gives_the_interruptions_expected_for_each_known_offer(kb):
    got = pipeline.answer("is spot reliable on aws for a 3 day job", kb)
    assert got.query.duration_hours == 72
    assert any("over 72 h about" in line for line in got.lines)


@pytest.mark.parametrize(
    "text",
    [
        "cheapest H100 spot",  # a price question about spot stays one
        "spot or on-demand for a 3 day training job",  # weighs the two: spot_vs_on_demand
        "how often is p4d.24xlarge spot interrupted",  # one instance type: its own buckets
        "最便宜的A100竞价实例",
    ],
)
def test_other_spot_questions_are_not_spot_risk(kb, text):
    assert pipeline.understand(text, kb).topic != "spot_risk"
