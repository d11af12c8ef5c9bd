"""Issue 26, item 7: an answer states spot interruption figures only where interruption data exists for that cloud
(knowledge/data/pricing/: AWS's Spot Advisor feed and the AWS GPU file's buckets); elsewhere it says the
interruption rate is unknown for that cloud, and never "with the interruption risk priced in".

The oracle reads the two raw files here: an instance type and region have a bucket when either file lists one (the
newer file's bucket wins, as the pricing README says).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_display_units import ask

PRICING = Path(__file__).resolve().parents[1] / "knowledge" / "data" / "pricing"
ADVISOR = json.loads((PRICING / "aws_spot_advisor.json").read_text())
AWS_GPU = json.loads((PRICING / "aws_gpu_instances_reserved_spot.json").read_text())
PRICED_IN = {"en": "with the interruption risk priced in", "zh": "计入中断风险"}
UNKNOWN = {"en": "the interruption rate is unknown for {cloud}", "zh": "{cloud}的中断率未知"}


def bucket(instance_type: str, region: str) -> str | None:
    """The monthly interruption bucket of the raw files ("5-10%"), the newer file (AWS GPU, 2025-11-30) first."""
    item = next((i for i in AWS_GPU if i["instance_type"] == instance_type), None)
    linux = (item or {}).get("pricing", {}).get(region, {}).get("linux", {})
    if linux.get("pct_interrupt"):
        return linux["pct_interrupt"]
    advisor = ADVISOR["spot_advisor"].get(region, {}).get("Linux", {}).get(instance_type)
    return ADVISOR["ranges"][advisor["r"]]["label"] if advisor else None


@pytest.mark.parametrize(
    ("question", "lang", "cloud"),
    [
        ("spot or on-demand for 8x H100 for a week", "en", "Prime Intellect"),
        ("8卡H100跑一周，竞价还是按需？", "zh", "Prime Intellect（聚合平台）"),
    ],
)
def test_spot_without_interruption_data_says_the_rate_is_unknown(home, capsys, question, lang, cloud):
    instance, region = "datacrunch__8xH100_80GB__176__1480__SPOT", "IS"  # the cheapest spot for the job
    assert bucket(instance, region) is None  # no file has interruption data for this cloud's spot offer
    text, data = ask(capsys, question)
    assert data["tco_best"] == "spot" and instance in data["tco_labels"]["spot"]
    title = text.splitlines()[0]
    assert PRICED_IN[lang] not in text
    assert UNKNOWN[lang].format(cloud=cloud) in title
    assert any(UNKNOWN[lang].format(cloud=cloud) in line for line in text.splitlines()[1:])  # the risk line too


@pytest.mark.parametrize(
    ("question", "lang"),
    [("spot or on-demand for p5.48xlarge for a week", "en"), ("p5.48xlarge跑一周，竞价还是按需？", "zh")],
)
def test_spot_with_interruption_data_states_its_bucket(home, capsys, question, lang):
    expected = bucket("p5.48xlarge", "us-east-1")
    assert expected
    text, data = ask(capsys, question)
    assert PRICED_IN[lang] in text.splitlines()[0]
    assert expected in text and "2025-11-30" in text  # the bucket with its source's date
    assert "interruption rate is unknown" not in text and "中断率未知" not in text


@pytest.mark.parametrize(
    ("question", "known"),
    [
        ("checklist for renting H100 spot", False),  # Prime Intellect's spot: no interruption data
        ("H100竞价实例采购清单", False),
        ("checklist for renting H100 spot on aws", True),  # AWS: the Spot Advisor's bucket
    ],
)
def test_a_checklist_states_interruption_figures_only_with_data(home, capsys, question, known):
    text, data = ask(capsys, question)
    offer = data["offers"][0]
    expected = bucket(offer["instance_type"], offer["region"])
    assert (expected is not None) == known
    line = next(x for x in text.splitlines() if "interruption for" in x or "竞价中断率" in x)
    if known:
        assert f"{expected} of instances interrupted per month" in line
    else:
        assert ("unknown for" in line or "中断率未知" in line) and "%" not in line
