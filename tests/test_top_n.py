"""Issue 26, item 7: "top N" lists the N asked for, at most 50 (one Slack table, one screen), and says plainly when
the cap or the data cut the list ("Showing 50 of the 200 asked for (at most 50 per answer); 288 exist").

Counts are checked against each other the way a user would: the listed lines, the JSON `top` facts and `more`, a
smaller "top N" of the same question (its lines are a prefix of the capped list), and prices cheapest first.
"""

from __future__ import annotations

import re

import pytest

from handlers.parse import Vocabulary, parse
from tests.slack_standin import SlackStandIn
from tests.test_display_units import ask, offer_lines
from tests.test_slack_app import assert_valid, make_app, rendered_strings, slash, table_rows

CAP = 50
CAPPED = {
    "en": r"Showing (\d+) of the (\d+) asked for \(at most (\d+) per answer\); (\d+) exist\.",
    "zh": r"列出(\d+)条（问的是前(\d+)条，每次最多(\d+)条）；共有(\d+)条。",
}
ALL = {"en": r"All (\d+) shown \((\d+) asked for\)\.", "zh": r"共(\d+)条，全部列出（问的是前(\d+)条）。"}


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("top 200 cheapest H100", 200),  # above the cap: kept as asked, capped by the handler
        ("200 cheapest A100 offers", 200),
        ("最便宜的前200个H100", 200),
        ("前120名最便宜的A100", 120),
        ("top 7 cheapest L4", 7),
    ],
)
def test_top_n_is_read_as_asked(kb, text, n):
    assert parse(text, Vocabulary.from_kb(kb)).top_n == n


@pytest.mark.parametrize(
    ("question", "small", "lang"),
    [
        ("top 200 cheapest GPU spot", "top 40 cheapest GPU spot", "en"),
        ("最便宜的前200个GPU竞价实例", "最便宜的前40个GPU竞价实例", "zh"),
    ],
)
def test_a_top_n_above_the_cap_lists_fifty_and_says_so(home, capsys, question, small, lang):
    text, data = ask(capsys, question)
    lines = offer_lines(text)
    assert len(lines) == len(data["offers"]) == CAP
    found = re.search(CAPPED[lang], text)
    assert found, text
    shown, asked, cap, exist = map(int, found.groups())
    assert (shown, asked, cap) == (CAP, 200, CAP)
    assert exist == CAP + data["more"] and exist > CAP  # "288 exist": what is listed and what is not
    assert data["top"] == {"asked": 200, "shown": CAP, "available": exist, "cap": CAP}
    prices = [o["price_per_gpu_hour_usd"] for o in data["offers"]]
    assert prices == sorted(prices)  # the cheapest 50
    _, fewer = ask(capsys, small)
    assert [o["instance_type"] for o in fewer["offers"]] == [o["instance_type"] for o in data["offers"]][:40]
    assert "'top 20'" not in text and "“前20”" not in text  # at the cap, "top 20" is no way to see more


@pytest.mark.parametrize(("question", "lang"), [("top 200 cheapest H100", "en"), ("最便宜的前200个H100", "zh")])
def test_a_top_n_above_what_exists_lists_all_and_says_so(home, capsys, question, lang):
    text, data = ask(capsys, question)
    lines = offer_lines(text)
    found = re.search(ALL[lang], text)
    assert found, text
    available, asked = map(int, found.groups())
    assert asked == 200 and available == len(lines) == len(data["offers"]) < CAP
    assert data["more"] == 0 and data["top"]["available"] == available
    _, same = ask(capsys, question.replace("200", str(available)))
    assert [o["instance_type"] for o in same["offers"]] == [o["instance_type"] for o in data["offers"]]


@pytest.mark.parametrize(("n", "lang"), [(12, "en"), (12, "zh"), (30, "en")])
def test_a_top_n_under_the_cap_is_honoured(home, capsys, n, lang):
    question = f"top {n} cheapest A100" if lang == "en" else f"最便宜的前{n}个A100"
    text, data = ask(capsys, question)
    assert len(offer_lines(text)) == len(data["offers"]) == n
    assert "top" not in data and not re.search(CAPPED[lang], text)


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.mark.parametrize(
    ("question", "said"),
    [("top 200 cheapest GPU spot", "Showing 50 of the 200 asked for"), ("最便宜的前200个GPU竞价实例", "列出50条")],
)
def test_slack_lists_fifty_rows_within_its_limits(slack, kb, question, said):
    message = slash(make_app(slack, kb), slack, question)
    assert_valid(message)  # <= 50 blocks, one table of <= 100 rows
    assert len(table_rows(message)) == 1 + CAP
    assert any(said in s for s in rendered_strings([message.get("blocks"), message.get("attachments")]))
    assert not any(b.get("action_id") == "gpu_more_results" for b in _elements(message))  # no "more" past the cap


def _elements(message: dict) -> list[dict]:
    blocks = [*(message.get("blocks") or []), *(b for a in message.get("attachments") or [] for b in a["blocks"])]
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
