"""One budget grammar, one meaning (issue 23): a budget said in a question ("under $1/hour"), set for a channel
(`/gpu set budget ...`) or given to the CLI (`--budget`) is read by `handlers.parse.budget`, so the same words cap
the same price everywhere: "/GPU-hour" per GPU-hour, "/hour" per machine-hour, no unit per GPU-hour.

Expected offers are recomputed here from the bundled AWS catalog CSV and the exchange rate in providers.yaml, not
from the code under test. A budget stored before `per` existed ({"amount", "currency"}) still works, per GPU-hour.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.cli import main
from bot.pipeline import answer_with, typed_setting, understand
from knowledge.clock import utc_now
from knowledge.state import settings_store as store
from knowledge.state.settings_store import SettingError
from tests.yaml_text import yaml_load

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "data"
USD_PER_CNY = float(yaml_load((DATA / "providers.yaml").read_text(encoding="utf-8"))["fx"]["usd_per_cny"])


def _aws_a100_spot() -> list[tuple[float, float]]:
    """(price per machine-hour, per GPU-hour) of every AWS A100 spot row in the bundled CSV."""
    with (DATA / "catalogs" / "aws_vms.csv").open(encoding="utf-8", newline="") as handle:
        return [
            (float(r["SpotPrice"]), float(r["SpotPrice"]) / float(r["AcceleratorCount"]))
            for r in csv.DictReader(handle)
            if r["AcceleratorName"] == "A100" and r["SpotPrice"]
        ]


def _cap_usd(amount: float, currency: str) -> float:
    return amount * (USD_PER_CNY if currency == "CNY" else 1.0)


def _expected_best(amount: float, currency: str, per: str) -> float | None:
    """The cheapest AWS A100 spot price per GPU-hour within the cap, or None when nothing is within it."""
    cap = _cap_usd(amount, currency) + 1e-9
    within = [gpu_h for hour, gpu_h in _aws_a100_spot() if (gpu_h if per == "gpu_hour" else hour) <= cap]
    return min(within) if within else None


# (said alone as a setting or --budget, amount, currency, what it caps)
SETTINGS = [
    ("3 USD/GPU-hour", 3.0, "USD", "gpu_hour"),
    ("$3/GPU-h", 3.0, "USD", "gpu_hour"),
    ("2", 2.0, "USD", "gpu_hour"),  # no currency: USD; no unit: per GPU-hour (as stored before)
    ("15 CNY", 15.0, "CNY", "gpu_hour"),
    ("under $1/hour", 1.0, "USD", "instance_hour"),  # a question's words work as a setting
    ("$20/hour", 20.0, "USD", "instance_hour"),  # "/hour" is per machine-hour, as in a question
    ("2 USD/hour", 2.0, "USD", "instance_hour"),
    ("$2e1/h", 20.0, "USD", "instance_hour"),  # an exponent read as written
    ("预算每小时20元", 20.0, "CNY", "instance_hour"),
    ("¥20/h", 20.0, "CNY", "instance_hour"),
    ("每卡时不超过3美元", 3.0, "USD", "gpu_hour"),
    ("3美元每卡每小时", 3.0, "USD", "gpu_hour"),
]


@pytest.mark.parametrize(("said", "amount", "currency", "per"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_a_setting_reads_the_words_as_a_question_does(kb, said, amount, currency, per):
    stored = store.normalize("budget", typed_setting("budget", said), kb)
    assert stored == {"amount": amount, "currency": currency, "per": per}


# (a question, amount, currency, what it caps)
QUESTIONS = [
    ("cheapest A100 spot on aws under $3/GPU-h", 3.0, "USD", "gpu_hour"),
    ("cheapest A100 spot on aws under $1/hour", 1.0, "USD", "instance_hour"),  # nothing is that cheap
    ("cheapest A100 spot on aws under $2e1/h", 20.0, "USD", "instance_hour"),  # $20 an hour, never $2
    ("cheapest A100 spot on aws under ¥20/h", 20.0, "CNY", "instance_hour"),
    ("aws上最便宜的A100竞价实例，预算每小时20元", 20.0, "CNY", "instance_hour"),
    ("aws上最便宜的A100竞价实例，每卡时不超过3美元", 3.0, "USD", "gpu_hour"),
    ("aws上最便宜的A100竞价实例，每小时不超过150元", 150.0, "CNY", "instance_hour"),
]


@pytest.mark.parametrize(("question", "amount", "currency", "per"), QUESTIONS, ids=[q[0] for q in QUESTIONS])
def test_a_question_budget_filters_the_offers(kb, question, amount, currency, per):
    query = understand(question, kb)
    assert query.budget is not None and query.out_of_range == []
    assert (query.budget.amount, query.budget.currency, query.budget.per) == (amount, currency, per)
    answer = answer_with(query, kb, {})
    best = _expected_best(amount, currency, per)
    if best is None:
        assert answer.offers == []
    else:
        assert answer.offers and answer.offers[0].price_per_gpu_hour_usd == pytest.approx(best, rel=1e-6)
        key = "price_per_gpu_hour_usd" if per == "gpu_hour" else "price_per_hour_usd"
        assert all(getattr(o, key) <= _cap_usd(amount, currency) + 1e-9 for o in answer.offers)


@pytest.mark.parametrize(
    ("flag", "amount", "currency", "per"),
    [
        ("1.5 USD/GPU-hour", 1.5, "USD", "gpu_hour"),
        ("¥20/h", 20.0, "CNY", "instance_hour"),
        ("$2e1/h", 20, "USD", "instance_hour"),
    ],
)
def test_the_cli_budget_flag_caps_what_its_words_say(home, capsys, flag, amount, currency, per):
    assert main(["ask", "cheapest A100 spot", "--providers", "aws", "--budget", flag, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    best = _expected_best(amount, currency, per)
    assert best is not None and data["offers"][0]["price_per_gpu_hour_usd"] == pytest.approx(best, rel=1e-6)
    assert data["query"]["budget"]["per"] == per


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("cheap", "cannot read the budget"),
        ("2 EUR/GPU-hour", "unknown currency 'EUR'"),
        ("0 USD", "not a positive price"),
        ("1e999 USD/h", "out of range"),
        ("$5000 for the month", "is a total"),
        ("一个月预算5000元", "is a total"),
    ],
)
def test_a_bad_budget_flag_is_refused_in_one_line(home, capsys, flag, words):
    assert main(["ask", "cheapest A100", "--budget", flag]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("gpubot: --budget:") and words in err


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("cheapest A100 under $1e999/h", "I can't use “under $1e999/h”: a budget can be at most 100,000 an hour"),
        ("最便宜的A100，预算每小时1e999元", "无法使用“预算每小时1e999元”：预算最多为每小时100,000"),
        ("cheapest H100 under $5e5/GPU-h", "I can't use “under $5e5/GPU-h”"),  # 500,000 an hour: a typo
    ],
)
def test_a_budget_too_large_is_refused_never_read_as_another_number(kb, question, said):
    query = understand(question, kb)
    assert query.budget is None and [i.kind for i in query.out_of_range] == ["budget"]
    answer = answer_with(query, kb, {})
    assert answer.title.startswith(said) and answer.offers == []


def test_a_budget_stored_before_per_existed_still_caps_per_gpu_hour(state_url, kb):
    with store.state.engine().begin() as conn:  # the row as an earlier gpubot wrote it
        conn.execute(
            sa.insert(store.settings_table).values(
                team_id="T1", channel_id="C1", key="budget", value=json.dumps({"amount": 1.5, "currency": "USD"}),
                updated_by="U1", updated_at=utc_now(),
            )
        )  # fmt: skip
    prefs = store.get_settings("T1", "C1")
    assert prefs["budget"] == {"amount": 1.5, "currency": "USD", "per": "gpu_hour"}
    assert store.format_value("budget", prefs["budget"]) == "1.5 USD/GPU-hour"
    answer = answer_with(understand("cheapest A100 spot on aws", kb), kb, prefs)
    assert answer.offers[0].price_per_gpu_hour_usd == pytest.approx(_expected_best(1.5, "USD", "gpu_hour"), rel=1e-6)
    assert all(o.price_per_gpu_hour_usd <= 1.5 + 1e-9 for o in answer.offers)


def test_the_store_takes_a_typed_budget_only():
    with pytest.raises(SettingError):
        store.normalize("budget", "2 USD/GPU-hour")  # words are read at the edge, by the one grammar


@pytest.mark.parametrize(("said", "amount", "currency", "per"), SETTINGS, ids=[s[0] for s in SETTINGS])
def test_a_budget_shown_reads_back_as_itself(kb, said, amount, currency, per):
    """The settings modal shows the stored budget as text; sent back unchanged it stores the same value."""
    stored = store.normalize("budget", typed_setting("budget", said), kb)
    assert store.normalize("budget", typed_setting("budget", store.format_value("budget", stored)), kb) == stored


@pytest.mark.parametrize(("words", "threshold"), [("2e1", 20.0), ("1e309", None)])
def test_the_alert_and_budget_grammars_read_exponents_alike(kb, words, threshold):
    from handlers.parse import Vocabulary
    from handlers.parse.alert import AlertParseError, parse_alert

    query = understand(f"cheapest A100 under ${words}/h", kb)
    try:
        alert = parse_alert(f"A100 below {words}", Vocabulary.from_kb(kb)).amount
    except AlertParseError:
        alert = None
    assert alert == threshold
    assert (query.budget.amount if query.budget else None) == threshold
    assert bool(query.out_of_range) == (threshold is None)
