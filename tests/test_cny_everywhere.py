"""Issue 26, item 7: a question in CNY (or a channel/CLI currency of CNY) shows both currencies wherever a price is
shown, not only in cheapest/price/TCO answers: break-even rates, price history, $ per 1M tokens, training runs, API
prices, a machines total, the daily digest and price alerts; the rate is said once per answer.

Oracles are computed here: the rate from knowledge/data/providers.yaml, the reserved and on-demand rates from
knowledge/data/pricing/aws_gpu_instances_reserved_spot.json, a digest's moves from the snapshots this test records.
Every "$X (≈ ¥Y)" a reader sees must have Y = X x rate (both as rounded on screen).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from bot.cli import main
from tests.reference_calc import aws_reserved
from tests.test_display_units import FX, RATE, ask, close_after_rounding, shown

ROOT = Path(__file__).resolve().parents[1]
AWS = json.loads((ROOT / "knowledge" / "data" / "pricing" / "aws_gpu_instances_reserved_spot.json").read_text())
PAIR = re.compile(r"\$([\d,]+\.\d+)(/h|/小时)? \(≈ ¥([\d,]+\.\d+)(/h|/小时)?\)")
USD = re.compile(r"\$[\d,]+\.\d+")
PER_HOUR = {"en": "/h", "zh": "/小时"}


def body(text: str) -> str:
    """The answer without its sources footer (a source's name may hold a '$')."""
    return re.split(r"\n(?:Sources|来源)[:：]", text)[0]


def rate_said(text: str) -> int:
    """How many lines state the exchange rate with its date."""
    return sum(1 for line in text.splitlines() if f"{RATE:g}" in line and FX["as_of"] in line)


def pairs(text: str) -> list[tuple[str, str]]:
    """Every "$X (≈ ¥Y)" of the text, each checked: Y = X x rate."""
    found = [(m.group(1), m.group(3)) for m in PAIR.finditer(text)]
    for usd, cny in found:
        assert close_after_rounding(cny, usd), (usd, cny)
    return found


def in_cny_line(text: str) -> list[str]:
    """The ¥ figures of the line under the title ("In CNY: ¥3.18, ¥50.58/h")."""
    line = next(x for x in text.splitlines()[1:3] if x.startswith(("In CNY: ", "折合人民币：")))
    return re.findall(r"¥([\d,]+\.\d+)", line)


def every_usd_figure_has_its_yuan(text: str, skip_title: bool = True) -> None:
    """Outside the title (whose figures the line under it converts), each $ figure is followed by its ¥ twin."""
    lines = body(text).splitlines()[1 if skip_title else 0 :]
    for line in lines:
        if line.startswith("In CNY") or line.startswith("折合"):
            continue
        assert len(USD.findall(line)) == len(PAIR.findall(line)), line


# --- break-even ---------------------------------------------------------------------------------------------------

P5 = next(i for i in AWS if i["instance_type"] == "p5.48xlarge")["pricing"]["us-east-1"]["linux"]


@pytest.mark.parametrize(
    ("question", "lang"),
    [("break-even for p5.48xlarge reservation in CNY", "en"), ("p5.48xlarge 预留的盈亏平衡利用率，人民币", "zh")],
)
def test_break_even_rates_in_both_currencies(home, capsys, question, lang):
    text, _ = ask(capsys, question)
    reserved, _key = aws_reserved(P5, 1)
    on_demand = float(P5["ondemand"])
    unit = PER_HOUR[lang]
    for rate in (reserved, on_demand):  # every digit the file gives, then its yuan
        assert f"${rate:.8g}{unit} (≈ {shown(rate * RATE, '¥')}{unit})" in text, text
    pairs(text)
    every_usd_figure_has_its_yuan(text, skip_title=False)
    assert rate_said(text) == 1
    plain, _ = ask(capsys, question.replace(" in CNY", "").replace("，人民币", ""))
    assert "¥" not in plain  # asked without CNY: unchanged, dollars only


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("p5.48xlarge 300 hours a month, reserve or on-demand? in CNY", "en"),
        ("p5.48xlarge 每月用300小时，预留还是按需？人民币", "zh"),
    ],
)
def test_reserve_or_on_demand_monthly_figures_in_both_currencies(home, capsys, question, lang):
    text, _ = ask(capsys, question)
    reserved, _key = aws_reserved(P5, 1)
    title = text.splitlines()[0]
    on_demand_month = float(P5["ondemand"]) * 300
    reserved_month = reserved * 730  # the reservation is paid for every hour of the month
    for usd in (on_demand_month, reserved_month):
        assert f"{shown(usd, '$')} (≈ {shown(usd * RATE, '¥')})" in title, title
    assert rate_said(text) == 1


# --- history ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "lang"), [("history H100 in CNY", "en"), ("H100价格历史 人民币", "zh")])
def test_history_lines_in_both_currencies(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert data["history"]
    assert len(pairs(text)) >= 20  # every provider's lowest and median
    every_usd_figure_has_its_yuan(text, skip_title=False)
    assert rate_said(text) == 1
    plain, _ = ask(capsys, question.replace(" in CNY", "").replace(" 人民币", ""))
    assert "¥" not in body(plain)


# --- $ per 1M tokens, training, API -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        ("cost per million tokens for Llama 8B in CNY", "work"),
        ("Llama 8B 每百万token成本 人民币", "work"),
        ("cost to fine-tune Llama 2 70B with LoRA in CNY", "train_cost"),
        ("用LoRA微调Llama 2 70B要花多少钱，人民币", "train_cost"),
        ("rent or API for Llama 3.1 8B in CNY", "rent_or_api"),
    ],
)
def test_work_training_and_api_answers_in_both_currencies(home, capsys, question, rows):
    text, data = ask(capsys, question)
    assert data[rows], question
    title = text.splitlines()[0]
    converted = in_cny_line(text)
    stated = USD.findall(title)
    assert converted and len(converted) <= len(stated)
    for cny in converted:  # each yuan figure under the title is one of the title's dollar figures x rate
        assert any(close_after_rounding(cny, usd[1:]) for usd in stated), (cny, stated)
    assert len(pairs(text)) >= 3
    every_usd_figure_has_its_yuan(text)
    assert rate_said(text) == 1


# --- a machines total, a TCO --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "lang"), [("cheapest 2 nodes of 8 H100 in CNY", "en"), ("2台8卡H100最便宜 人民币", "zh")]
)
def test_a_machines_total_in_both_currencies(home, capsys, question, lang):
    text, data = ask(capsys, question)
    total = data["offers"][0]["price_per_hour_usd"] * 2
    unit = PER_HOUR[lang]
    assert f"{shown(total, '$')}{unit} (≈ {shown(total * RATE, '¥')}{unit})" in text.splitlines()[0]
    assert rate_said(text) == 1


@pytest.mark.parametrize(
    ("question", "lang"), [("TCO of 8x H100 for 3 months in CNY", "en"), ("8卡H100跑3个月的总成本，人民币", "zh")]
)
def test_a_tco_says_its_dollars_and_its_rate_once(home, capsys, question, lang):
    text, data = ask(capsys, question)
    usd = data["tco"]["total_usd"]
    assert sum(line.count(shown(usd, "$")) for line in text.splitlines()) == 1  # "¥… (≈ $…)", not again
    assert not any(line.startswith(("In USD", "折合美元")) for line in text.splitlines())
    assert rate_said(text) == 1


# --- the digest and alerts: a channel's or the CLI's currency -----------------------------------------------------

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)


def _offer(usd: float) -> dict:
    return {"instance_type": "p5.48xlarge", "region": "us-east-1", "pricing": "spot", "gpu": "H100", "gpu_count": 8,
            "price_per_hour_usd": usd}  # fmt: skip


@pytest.fixture
def two_snapshots(home, monkeypatch, tmp_path):
    """Two AWS snapshots: p5.48xlarge (8x H100) spot $20.00/h -> $18.00/h."""
    from knowledge.history import snapshots as history

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])
    history.record_snapshot("aws", [_offer(20.0)], "old catalog", NOW - dt.timedelta(days=2))
    history.record_snapshot("aws", [_offer(18.0)], "new catalog", NOW - dt.timedelta(hours=3))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_digest_in_the_cli_currency(two_snapshots, capsys, lang):
    assert main(["digest", "--currency", "CNY", "--lang", lang]) == 0
    text = capsys.readouterr().out
    unit = PER_HOUR[lang]
    for usd in (20.0, 18.0):  # the move, per instance-hour, in both currencies
        assert f"{shown(usd, '$')}{unit} (≈ {shown(usd * RATE, '¥')}{unit})" in text, text
    assert rate_said(text) == 1
    assert main(["digest", "--lang", lang]) == 0
    assert "¥" not in capsys.readouterr().out


def test_the_digest_and_alerts_in_a_channels_currency(two_snapshots, kb):
    from bot.alert_cmd import alert_reply
    from bot.slack.commands import parse_command
    from bot.slack.digest import digest_answer
    from knowledge.state import settings_store, subscriptions

    subscriptions.subscribe("T1", "C1")
    settings_store.set_setting("T1", "C1", "currency", "CNY", kb=kb)  # `/gpu set currency CNY`
    answer, _ = digest_answer("T1", "C1")
    moves = "\n".join(answer.lines)
    assert f"$20.00/h (≈ {shown(20 * RATE, '¥')}/h) → $18.00/h (≈ {shown(18 * RATE, '¥')}/h)" in moves
    assert sum(1 for n in answer.notes if f"{RATE:g}" in n) == 1
    reply = alert_reply(parse_command("alert H100 spot on aws below 20"), "T1", "C1", None, "en", kb)["text"]
    assert "¥20.00 (≈ $" in reply, reply  # the alert's currency is the channel's
    assert_yuan_twins(reply)


@pytest.mark.parametrize(("text", "symbol"), [("H100 spot on aws below 20", "¥"), ("H100 spot on aws below $20", "$")])
def test_an_alert_in_the_cli_currency_unless_the_text_names_one(home, capsys, monkeypatch, tmp_path, text, symbol):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    assert main(["alert", "add", text, "--channel", "C1", "--currency", "CNY", "--json"]) == 0
    alert = json.loads(capsys.readouterr().out)["alert"]
    assert alert["threshold"] == {"amount": 20.0, "currency": "CNY" if symbol == "¥" else "USD"}
    assert main(["alert", "add", text, "--channel", "C2", "--currency", "CNY"]) == 0
    said = capsys.readouterr().out
    assert f"{symbol}20.00" in said
    if symbol == "¥":
        assert_yuan_twins(said)


def assert_yuan_twins(text: str) -> None:
    """Every ¥ figure of an alert says its dollars ("¥9.28 (≈ $1.28)"), at the rate; no $ figure stands alone."""
    found = re.findall(r"¥([\d,]+\.\d+) \(≈ \$([\d,]+\.\d+)\)", text)
    assert len(found) >= 3 and len(found) == len(USD.findall(text)), text
    for cny, usd in found:
        assert close_after_rounding(cny, usd), (cny, usd)
