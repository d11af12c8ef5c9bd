"""TCO arithmetic, checked against hand computations from the bundled data files (not from gpubot code).

Covers compute + storage + egress for one instance type in one region, reserved terms paid in full, the
seeds' discount where the data has no reserved rate, currency conversion, break-even utilisation and the
spot expected cost; and the two pinned questions (spot interruptions of p5.48xlarge, break-even of p4d).
"""

from __future__ import annotations

import json
import re

import pytest

from bot.pipeline import answer_query
from handlers import tco
from handlers.models import Query
from knowledge.facts import rules as R
from tests.reference_calc import CATALOGS, aws_reserved, region_offers
from tests.yaml_text import yaml_load

DATA = CATALOGS.parent
PRICING = DATA / "pricing"


def providers_yaml() -> dict:
    return yaml_load((DATA / "providers.yaml").read_text(encoding="utf-8"))


def cost(provider: str, item: str) -> float:
    entry = next(p for p in providers_yaml()["providers"] if p["id"] == provider)
    return next(c["value"] for c in entry["costs"] if c["item"] == item)


def aws_linux(instance_type: str, region: str) -> dict:
    items = json.loads((PRICING / "aws_gpu_instances_reserved_spot.json").read_text(encoding="utf-8"))
    item = next(i for i in items if i["instance_type"] == instance_type)
    return item["pricing"][region]["linux"]


def p4d_on_demand() -> float:
    return region_offers(CATALOGS / "aws_vms.csv", {"A100"}, "Price")[("p4d.24xlarge", "us-east-1")][0]


def run(kb, **fields):
    return tco.handle(Query(intent="tco", **fields), kb)


def option(answer, pricing: str):
    return next(o for o in [answer.tco, *answer.tco_options] if o.pricing == pricing)


# --- arithmetic helpers ---------------------------------------------------------------------------------------


def test_tco_helper_adds_compute_storage_and_egress():
    got = R.tco(
        2.0, 100, instances=3, storage_gb=500, storage_per_gb_month=0.1, months=2, egress_gb=40, egress_per_gb=0.05
    )
    assert (got.compute, got.storage, got.egress, got.total) == pytest.approx((600, 100, 2, 702))


@pytest.mark.parametrize(
    ("reserved", "on_demand", "expected"),
    [(13.921094, 21.957642, 0.634), (50, 100, 0.5), (120, 100, 1.2)],  # >= 1: the reservation never pays off
)
def test_break_even_is_reserved_over_on_demand(reserved, on_demand, expected):
    assert R.break_even_utilisation(reserved, on_demand) == pytest.approx(expected, abs=1e-3)


def test_spot_expected_cost_by_hand():
    # 720 h job, on-demand $10/h, spot $4/h (60% off), bucket 5-10% -> 0.075 interruptions per instance-month,
    # checkpoint every hour taking 2 min, restart 10 min
    got = R.spot_expected_cost(10, 4, 720, 0.075)
    checkpoint = 720 * 2 / 60  # 24 h writing checkpoints
    per_interruption = 0.5 + 10 / 60  # half an interval redone + restart
    k = 0.075 / 730 * per_interruption
    wall = (720 + checkpoint) / (1 - k)
    assert got.checkpoint_hours == pytest.approx(checkpoint)
    assert got.wall_hours == pytest.approx(wall)
    assert got.interruptions == pytest.approx(0.075 * wall / 730)
    assert got.spot_cost == pytest.approx(4 * wall)
    assert got.list_saving == pytest.approx(0.60)
    assert got.effective_saving == pytest.approx(1 - 4 * wall / 7200)
    assert got.effective_saving < got.list_saving


def test_spot_risk_grows_with_the_bucket_instances_and_checkpoint_interval():
    calm = R.spot_expected_cost(10, 4, 720, 0.025)
    risky = R.spot_expected_cost(10, 4, 720, 0.25, instances=8, checkpoint_interval_hours=8, checkpoint_minutes=30)
    assert risky.effective_saving < calm.effective_saving < 0.60
    assert risky.interruptions == pytest.approx(0.25 * 8 * risky.wall_hours / 730)


def test_bucket_midpoints_come_from_the_rule():
    params = R.rule("spot.risk").then.params
    assert [R.interruptions_per_month(b, params) for b in ("<5%", "5-10%", "10-15%", "15-20%", ">20%")] == [
        0.025,
        0.075,
        0.125,
        0.175,
        0.25,
    ]


# --- TCO against catalog rows ----------------------------------------------------------------------------------


def test_one_instance_720h_on_demand_with_storage_and_egress(kb):
    answer = run(
        kb,
        instance_types=["p4d.24xlarge"],
        regions=["us-east-1"],
        duration_hours=720,
        storage_gb=1000,
        egress_gb=500,
        pricing="on_demand",
    )
    got = answer.tco
    rate = p4d_on_demand()  # 21.957642 in aws_vms.csv
    storage = 1000 * cost("aws", "storage_per_gb_month") * 720 / 730  # EBS $0.12/GB-month (seed, unverified)
    egress = 500 * cost("aws", "cross_region_per_gb")  # the only AWS transfer rate known ($0.02/GB, seed)
    assert (got.pricing, got.hours, got.currency) == ("on_demand", 720, "USD")
    assert got.compute == pytest.approx(rate * 720)
    assert got.storage == pytest.approx(storage)
    assert got.egress == pytest.approx(egress)
    assert got.total == pytest.approx(rate * 720 + storage + egress)
    text = " ".join(got.assumptions)
    assert "unverified" in text and "inter-region" in text  # unverified figures are labelled
    assert {"cost.storage", "cost.egress", "cost.break-even"} <= {r.id for r in answer.rules}


def test_spot_option_prices_in_the_interruption_risk(kb):
    answer = run(kb, instance_types=["p4d.24xlarge"], regions=["us-east-1"], duration_hours=720)
    spot = option(answer, "spot")
    rate = region_offers(CATALOGS / "aws_vms.csv", {"A100"}, "SpotPrice")[("p4d.24xlarge", "us-east-1")][0]
    bucket = aws_linux("p4d.24xlarge", "us-east-1")["pct_interrupt"]  # 2025-11-30, newer than Spot Advisor
    params = R.rule("spot.risk").then.params
    expected = R.spot_expected_cost(p4d_on_demand(), rate, 720, R.interruptions_per_month(bucket, params))
    assert spot.compute == pytest.approx(expected.spot_cost)
    assert spot.compute > rate * 720  # checkpoints and lost work cost hours
    assert "spot.risk" in [r.id for r in answer.rules]


def test_reserved_term_is_paid_in_full(kb):
    answer = run(kb, instance_types=["p4d.24xlarge"], regions=["us-east-1"], duration_hours=720, pricing="reserved_1y")
    reserved = aws_reserved(aws_linux("p4d.24xlarge", "us-east-1"), 1)[0]  # the cheapest 1-year term
    assert answer.tco.pricing == "reserved_1y"
    assert answer.tco.compute == pytest.approx(reserved * 8760)  # 720 h needed, 8,760 h paid
    assert any("whole term" in a for a in answer.tco.assumptions)


def test_default_duration_is_one_month_of_730_hours(kb):
    answer = run(kb, instance_types=["p4d.24xlarge"], regions=["us-east-1"], pricing="reserved_1y")
    reserved = aws_reserved(aws_linux("p4d.24xlarge", "us-east-1"), 1)[0]  # the cheapest 1-year term
    assert answer.tco.hours == 730 and answer.tco.compute == pytest.approx(reserved * 730)
    assert any("default" in a for a in answer.tco.assumptions)


def test_seed_discount_only_where_the_data_has_no_reserved_rate(kb):
    answer = run(
        kb,
        instance_types=["GT4.41XLARGE948"],
        regions=["ap-nanjing"],
        duration_hours=730,
        pricing="reserved_1y",
        language="zh",
    )
    cny = region_offers(CATALOGS / "tencent_vms.csv", {"A100"}, "Price")[("GT4.41XLARGE948", "ap-nanjing")][0] / 0.138
    reserved = answer.tco
    assert reserved.currency == "CNY"  # the vendor's own currency
    assert reserved.compute == pytest.approx(cny * 0.6 * 8760)  # seeds' 40-60% off, low end, whole 1-year term
    assert "cost.seed-discount" in [r.id for r in answer.rules]
    assert option(answer, "on_demand").compute == pytest.approx(cny * 730)


def test_currency_conversion_uses_the_knowledge_base_rate(kb):
    fx = providers_yaml()["fx"]
    answer = run(
        kb,
        instance_types=["p4d.24xlarge"],
        regions=["us-east-1"],
        duration_hours=100,
        currency="CNY",
        pricing="on_demand",
    )
    assert answer.tco.currency == "CNY"
    assert answer.tco.compute == pytest.approx(p4d_on_demand() * 100 * fx["cny_per_usd"])
    assert "cost.currency" in [r.id for r in answer.rules]
    # the rate with its date is said once per answer (issue 26): by the display note, not again in the assumptions
    shown = answer_query(answer.query, kb)
    said = [x for x in [*shown.notes, *shown.tco.assumptions] if str(fx["cny_per_usd"]) in x and fx["as_of"] in x]
    assert len(said) == 1, said


def test_several_instances_for_a_gpu_count(kb):
    answer = run(
        kb,
        gpus=["H100"],
        gpu_count=16,
        providers=["aws"],
        regions=["us-east-1"],
        duration_hours=10,
        pricing="on_demand",
    )
    rate = region_offers(CATALOGS / "aws_vms.csv", {"H100"}, "Price")[("p5.48xlarge", "us-east-1")][0]
    assert answer.tco.compute == pytest.approx(2 * rate * 10)  # 16 GPUs = two 8-GPU p5.48xlarge


# --- pinned questions, end to end ---------------------------------------------------------------------------------


@pytest.fixture
def ask_json(kb, capsys):
    from bot.cli import main

    def run_cli(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return run_cli


@pytest.mark.parametrize(
    "text",
    [
        "How often is p5.48xlarge spot interrupted in us-east-1?",
        "p5.48xlarge 在 us-east-1 的竞价实例多久中断一次？",
    ],
)
def test_spot_interruptions_give_the_newest_bucket_with_its_date(ask_json, text):
    newer = aws_linux("p5.48xlarge", "us-east-1")  # ec2instances.info, 2025-11-30
    advisor = json.loads((PRICING / "aws_spot_advisor.json").read_text(encoding="utf-8"))  # 2025-06-28
    labels = [r["label"] for r in advisor["ranges"]]
    older = labels[advisor["spot_advisor"]["us-east-1"]["Linux"]["p5.48xlarge"]["r"]]
    data = ask_json(text)
    risk = data["spot_risk"][0]
    assert (risk["region"], risk["bucket"], risk["as_of"]) == ("us-east-1", newer["pct_interrupt"], "2025-11-30")
    assert risk["older"] == [{"bucket": older, "as_of": "2025-06-28", "source": risk["older"][0]["source"]}]
    assert newer["pct_interrupt"] in data["text"] and "2025-11-30" in data["text"]
    assert "spot.sources-disagree" in [r["id"] for r in data["rules"]]


@pytest.mark.parametrize(
    "text",
    [
        "break-even utilisation for a 1-year reservation of p4d.24xlarge in us-east-1",
        "p4d.24xlarge 在 us-east-1 一年预留的盈亏平衡利用率是多少？",
    ],
)
def test_break_even_of_a_1_year_reservation(ask_json, text):
    linux = aws_linux("p4d.24xlarge", "us-east-1")
    rate, key = aws_reserved(linux, 1)  # the cheapest of every 1-year term
    expected = rate / float(linux["ondemand"]) * 100
    data = ask_json(text)
    got = data["break_even"]
    assert got["reserved_rate"] == pytest.approx(rate) and got["term"] == key
    assert got["utilisation_pct"] == pytest.approx(expected)
    assert f"{expected:.1f}%" in data["text"] and f"{rate:.8g}" in data["text"]
    assert "yrTerm" not in data["text"]  # terms in words
    assert "cost.break-even" in [r["id"] for r in data["rules"]]


def test_break_even_uses_a_convertible_term_when_no_standard_one_exists(kb):
    # p5.48xlarge in us-east-1 has no 1-year Standard term (the pricing file's README): the Convertible ones rank
    answer = tco.handle(
        Query(
            intent="tco",
            text="break-even of p5.48xlarge 1-year",
            topic="break_even",  # what the parser reads from "break-even" (handlers never read the text)
            instance_types=["p5.48xlarge"],
            regions=["us-east-1"],
        ),
        kb,
    )
    rate, key = aws_reserved(aws_linux("p5.48xlarge", "us-east-1"), 1)
    assert answer.extra["break_even"]["term"] == key and answer.extra["break_even"]["reserved_rate"] == rate
    text = " ".join([answer.title, *answer.lines])
    assert "1-year Convertible, all upfront" in text and "1-year Convertible, no upfront $43.344/h" in text
    assert "yrTerm" not in text and "Standard" not in text


def test_break_even_says_when_a_term_does_not_exist_in_words(kb):
    answer = tco.handle(
        Query(
            intent="tco", text="break-even of p5en.48xlarge", instance_types=["p5en.48xlarge"], regions=["us-east-1"]
        ),
        kb,
    )
    assert answer.extra["break_even"] is None
    assert "no 1-year reserved term" in answer.lines[0]
    assert not re.search(r"yrTerm|spot_avg|ondemand", " ".join(answer.lines))


def test_cli_tco_question(ask_json):
    data = ask_json("TCO of p4d.24xlarge in us-east-1 for 720 hours with 1000 GB storage and 500 GB egress")
    got = data["tco"]
    assert set(got) >= {"hours", "pricing", "compute", "storage", "egress", "total", "currency", "assumptions"}
    assert got["hours"] == 720 and got["pricing"] == "on_demand"
    assert got["total"] == pytest.approx(p4d_on_demand() * 720 + 1000 * 0.12 * 720 / 730 + 500 * 0.02)
    totals = sorted(o["total"] for o in [got, *data["tco_options"]])
    assert [o["total"] for o in data["tco_options"]] == sorted(o["total"] for o in data["tco_options"])
    # line one names the cheapest option and its total (issue 16)
    assert data["text"].startswith("Cheapest way to run") and f"{totals[0]:,.2f}" in data["text"].splitlines()[0]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("spot or on-demand for A100 training on aws", "date unknown, bundled "),
        ("训练用A100，竞价还是按需？aws", "日期未知，打包于 "),
        ("TCO of 8x H100 on aws for 3 months", "date unknown, bundled "),
    ],
)
def test_a_cost_from_an_undated_catalog_says_its_date_is_unknown(kb, text, said):
    """The TCO lines and the sources name the bundling day as such, never as the price's date."""
    from bot.pipeline import answer
    from bot.render import render_text

    result = answer(text, kb)
    undated = [s for s in result.sources if s.source.startswith("SkyPilot catalog")]
    assert undated and not any(s.as_of_known for s in undated)
    shown = render_text(result)
    for line in shown.splitlines():
        if "SkyPilot catalog" in line and line.strip().startswith("-"):  # a TCO line naming its offer
            assert said in line, line
    assert said.split(",")[0].split("，")[0] in shown
