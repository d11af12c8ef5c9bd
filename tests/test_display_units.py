"""Issue 26, item 7: a question in CNY shows both currencies on every surface, TPU prices say per chip.

What a user would notice is asserted, computed here: the exchange rate is read from knowledge/data/providers.yaml by
this test (never from the code under test), each CNY figure is the USD figure times that rate, an offer the vendor
quoted in CNY (Alibaba) keeps its own CNY figure, the rate note names its source and date; TPU rows say per
chip-hour in English and Chinese, GPU rows per GPU-hour. The CLI is run through `bot.cli.main`; Slack through the
real Bolt app against the loopback stand-in (tests/slack_standin.py), as tests/test_slack_app.py does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import assert_valid, column, make_app, rendered_strings, slash, table_rows
from tests.yaml_text import yaml_load

ROOT = Path(__file__).resolve().parents[1]
FX = yaml_load((ROOT / "knowledge" / "data" / "providers.yaml").read_text(encoding="utf-8"))["fx"]
RATE = float(FX["cny_per_usd"])  # CNY per USD
CNY_QUESTIONS = [
    ("cheapest A100 in CNY", "en"),
    ("最便宜的A100 人民币", "zh"),
    ("cheapest H100 spot, prices in yuan", "en"),
    ("最便宜的H100竞价，价格用人民币", "zh"),
]
ALIBABA_CNY = [("cheapest A100 on alibaba in CNY", "en"), ("阿里云最便宜的A100 人民币", "zh")]
PER_GPU = {"en": "/GPU-h", "zh": "/GPU·小时"}
PER_CHIP = {"en": "/chip-h", "zh": "/芯片·小时"}
PER_HOUR = {"en": "/h", "zh": "/小时"}
TITLE_LINE = {"en": "In CNY: ", "zh": "折合人民币："}
LIST_SEP = {"en": ", ", "zh": "，"}
FIGURE = r"[$¥]([\d,]+\.\d+)"


def shown(value: float, symbol: str) -> str:
    """How a reader sees a figure: 4 decimals under 1, else 2 with thousands separators."""
    return f"{symbol}{value:,.{4 if abs(value) < 1 else 2}f}"


def number(text: str) -> float:
    return float(text.replace(",", ""))


def close_after_rounding(cny_text: str, usd_text: str) -> bool:
    """¥ figure == $ figure x rate, both as shown (each rounded to its last printed digit)."""
    cny, usd = number(cny_text), number(usd_text)
    usd_step = 10 ** -(len(usd_text.split(".")[1]))
    cny_step = 10 ** -(len(cny_text.split(".")[1]))
    return abs(cny - usd * RATE) <= (usd_step / 2) * RATE + cny_step / 2 + 1e-9


def ask(capsys, question: str, *flags: str) -> tuple[str, dict]:
    """(the text a person reads, the --json object) of `gpubot ask`."""
    assert main(["ask", question, *flags]) == 0
    text = capsys.readouterr().out
    assert main(["ask", question, *flags, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


def offer_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\d+\. ", line)]


def rate_note_said(note: str) -> bool:
    return f"{RATE:g}" in note and FX["source"] in note and FX["as_of"] in note


# --- CNY asked: both currencies --------------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "lang"), CNY_QUESTIONS)
def test_a_question_in_cny_shows_dollars_and_yuan_in_the_cli(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert data["query"]["currency"] == "CNY"
    usd_offers = [o for o in data["offers"] if o["currency"] == "USD"]
    assert usd_offers
    for o in usd_offers:  # JSON: the existing keys unchanged, the converted figures beside them
        assert o["price_per_gpu_hour_display"] == pytest.approx(o["price_per_gpu_hour_usd"] * RATE, rel=1e-6)
        assert o["price_per_hour_display"] == pytest.approx(o["price_per_hour_usd"] * RATE, rel=1e-6)
        assert o["display_currency"] == "CNY" and o["unit"] == "gpu_hour"
    assert data["display_currency"]["currency"] == "CNY"
    assert data["display_currency"]["per_usd"] == pytest.approx(RATE)
    lines = offer_lines(text)
    assert lines
    unit = re.escape(PER_GPU[lang])
    for line in lines:  # "$0.7212/GPU-h ($5.77/h) ≈ ¥5.23/GPU-h"
        found = re.search(
            rf"\$([\d,]+\.\d+){unit} \(\$[\d,.]+{re.escape(PER_HOUR[lang])}\) ≈ ¥([\d,]+\.\d+){unit}", line
        )
        assert found, line
        assert close_after_rounding(found.group(2), found.group(1)), line
    # the title's figures, right under it: the first offer's per GPU-hour and per hour in CNY
    first = data["offers"][0]
    title, second = text.splitlines()[:2]
    assert shown(first["price_per_gpu_hour_usd"], "$") in title
    assert second == TITLE_LINE[lang] + LIST_SEP[lang].join(
        (
            shown(first["price_per_gpu_hour_usd"] * RATE, "¥") + PER_GPU[lang],
            shown(first["price_per_hour_usd"] * RATE, "¥") + PER_HOUR[lang],
        )
    )
    assert data["title_display"] == second
    # one note says the rate with its source and date, in the text and the JSON
    said = [n for n in data["notes"] if rate_note_said(n)]
    assert len(said) == 1 and said[0] in text


@pytest.mark.parametrize(("question", "lang"), [("cheapest A100", "en"), ("最便宜的A100", "zh")])
def test_a_question_in_dollars_shows_dollars_only(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert "¥" not in "".join(offer_lines(text)) and "display_currency" not in data
    assert not any(rate_note_said(n) for n in data["notes"])
    assert all("price_per_gpu_hour_display" not in o and o["unit"] == "gpu_hour" for o in data["offers"])


def test_the_cli_currency_preference_converts_like_a_question_in_cny(home, capsys):
    text, data = ask(capsys, "cheapest A100", "--currency", "CNY")
    first = data["offers"][0]
    assert first["price_per_gpu_hour_display"] == pytest.approx(first["price_per_gpu_hour_usd"] * RATE, rel=1e-6)
    assert "≈ ¥" in offer_lines(text)[0] and any(rate_note_said(n) for n in data["notes"])


@pytest.mark.parametrize(("question", "lang"), ALIBABA_CNY)
def test_an_offer_quoted_in_cny_keeps_its_own_figure(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert data["offers"] and {o["currency"] for o in data["offers"]} == {"CNY"}
    for o in data["offers"]:  # the vendor's CNY, never its USD twin converted back
        assert o["price_per_gpu_hour_display"] == o["price_per_gpu_hour"]
        assert o["price_per_hour_display"] == o["price_per_hour"]
        # a double conversion (its USD twin x the rate) would say another figure
        assert o["price_per_gpu_hour_display"] != pytest.approx(o["price_per_gpu_hour_usd"] * RATE, rel=1e-6)
    for line in offer_lines(text):
        assert line.count("¥") == 2 and "≈ $" in line, line  # its own ¥ figures, and the USD twin beside them
    first = data["offers"][0]
    title = text.splitlines()[0]
    assert shown(first["price_per_gpu_hour"], "¥") + PER_GPU[lang] in title
    assert shown(first["price_per_gpu_hour_usd"], "$") in title  # both currencies in the title itself
    assert "title_display" not in data  # nothing left to convert: no line under it


@pytest.mark.parametrize(
    ("question", "lang"),
    [("tco p4d.24xlarge 720 hours in CNY", "en"), ("p4d.24xlarge 运行720小时的总成本，人民币", "zh")],
)
def test_a_tco_total_in_cny_also_says_dollars(home, capsys, question, lang):
    text, data = ask(capsys, question)
    tco = data["tco"]
    assert tco["currency"] == "CNY"
    assert tco["total_usd"] == pytest.approx(tco["total"] / RATE, abs=0.01)
    block = next(line for line in text.splitlines() if shown(tco["total"], "¥") in line and "≈ $" in line)
    dollars = re.search(rf"\(≈ {FIGURE}\)", block)
    assert dollars and number(dollars.group(1)) == pytest.approx(tco["total"] / RATE, abs=0.006)
    assert any(rate_note_said(n) for n in data["notes"])


# --- TPU: per chip ------------------------------------------------------------------------------------------------

TPU_QUESTIONS = [("cheapest TPU v5e", "en"), ("最便宜的TPU v5e", "zh"), ("cheapest TPU v6e spot", "en")]


@pytest.mark.parametrize(("question", "lang"), TPU_QUESTIONS)
def test_tpu_prices_are_labelled_per_chip(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert data["offers"] and all(o["gpu_kind"] == "tpu" and o["unit"] == "chip_hour" for o in data["offers"])
    assert PER_CHIP[lang] in text.splitlines()[0] and PER_GPU[lang] not in text.splitlines()[0]
    for line in offer_lines(text):
        assert PER_CHIP[lang] in line and PER_GPU[lang] not in line, line


def test_a_tpu_slice_is_priced_per_chip(home, capsys):
    """tpu-v5litepod-8 is a slice of 8 chips: the per-chip figure is the slice's hourly price over 8."""
    _, data = ask(capsys, "price of tpu-v5litepod-8")
    for o in data["offers"]:
        assert o["gpu_count"] == 8 and o["unit"] == "chip_hour"
        assert o["price_per_gpu_hour"] == pytest.approx(o["price_per_hour"] / 8, rel=1e-6)


@pytest.mark.parametrize(("question", "lang"), [("TPU v5e vs H100", "en"), ("TPU v5e 对比 H100", "zh")])
def test_a_mixed_answer_labels_each_row_by_its_own_unit(home, capsys, question, lang):
    text, data = ask(capsys, question)
    units = {o["gpu"]: o["unit"] for o in data["offers"]}
    assert units == {"TPU v5e": "chip_hour", "H100": "gpu_hour"}
    lines = offer_lines(text)
    assert any("TPU v5e" in line for line in lines) and any("H100" in line for line in lines)
    for line in lines:
        mine, other = (PER_CHIP, PER_GPU) if "TPU" in line else (PER_GPU, PER_CHIP)
        assert mine[lang] in line and other[lang] not in line, line
    title = text.splitlines()[0]
    tpu = next(o for o in data["offers"] if o["gpu"] == "TPU v5e")
    h100 = next(o for o in data["offers"] if o["gpu"] == "H100")
    assert shown(tpu["price_per_gpu_hour_usd"], "$") + PER_CHIP[lang] in title
    assert shown(h100["price_per_gpu_hour_usd"], "$") + PER_GPU[lang] in title


@pytest.mark.parametrize(("question", "lang"), [("cheapest A100 spot", "en"), ("最便宜的A100竞价实例", "zh")])
def test_gpu_rows_stay_per_gpu_hour(home, capsys, question, lang):
    text, data = ask(capsys, question)
    assert all(o["unit"] == "gpu_hour" for o in data["offers"])
    assert all(PER_GPU[lang] in line and PER_CHIP[lang] not in line for line in offer_lines(text))


# --- Slack: the real Bolt app ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture(scope="module")
def app(slack, kb):
    return make_app(slack, kb)


@pytest.fixture(autouse=True)
def _fresh(request) -> None:
    if "slack" in request.fixturenames:
        request.getfixturevalue("slack").clear()


def _strings(message: dict) -> list[str]:
    return list(rendered_strings(message.get("blocks") or [])) + list(
        rendered_strings(message.get("attachments") or [])
    )


@pytest.mark.parametrize(("question", "lang"), CNY_QUESTIONS[:2])
def test_slack_shows_dollars_and_yuan(app, slack, question, lang):
    message = slash(app, slack, question)
    assert_valid(message)
    cells = column(message, "per_gpu_hour")
    assert cells
    for text in cells:  # "$0.7212 (≈ ¥5.23)"
        found = re.fullmatch(r"\$([\d,]+\.\d+) \(≈ ¥([\d,]+\.\d+)\)", text)
        assert found, text
        assert close_after_rounding(found.group(2), found.group(1)), text
    strings = _strings(message)
    assert any(s.startswith(TITLE_LINE[lang]) and "¥" in s for s in strings)  # the title's figure in CNY
    assert any(rate_note_said(s) for s in strings)  # the rate, its source and date
    assert "≈ ¥" in message["text"]  # the text fallback too


def test_slack_keeps_a_cny_quote_and_adds_its_dollars(app, slack):
    message = slash(app, slack, "cheapest A100 on alibaba in CNY")
    for text in column(message, "per_gpu_hour"):
        assert re.fullmatch(r"¥[\d,]+\.\d+ \(≈ \$[\d,]+\.\d+\)", text), text


@pytest.mark.parametrize(
    ("question", "header"), [("cheapest TPU v5e", "Per chip-hour"), ("最便宜的TPU v5e", "每芯片小时")]
)
def test_slack_labels_a_tpu_table_per_chip(app, slack, question, header):
    message = slash(app, slack, question)
    assert_valid(message)
    head = table_rows(message)[0]
    assert head[column_index("per_gpu_hour")] == header
    assert "chip" in message["text"] or "芯片" in message["text"]
    assert head[column_index("gpus")] == {"Per chip-hour": "Chips", "每芯片小时": "芯片"}[header]  # not "GPUs"
    assert not any("GPU" in h for h in head), head  # a TPU table never counts its chips as GPUs


def test_slack_labels_each_row_of_a_mixed_table(app, slack):
    message = slash(app, slack, "TPU v5e vs H100")
    rows = table_rows(message)
    per_unit = column_index("per_gpu_hour")
    assert rows[0][per_unit] == "Per GPU- or chip-hour"
    assert rows[0][column_index("gpus")] == "GPUs or chips"
    for row in rows[1:]:
        gpus = row[column_index("gpus")]
        assert row[per_unit].endswith("/chip-h" if "TPU" in gpus else "/GPU-h"), row


def column_index(name: str) -> int:
    from bot.slack import blocks

    return blocks.TABLE_COLUMNS.index(name)
