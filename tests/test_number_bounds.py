"""Numbers too large to use are refused and said back, never dropped for a default (issue 25 item 6, issue 23's
"read every word"): "for 3000 years" was priced as 730 h, "5000x H100" as one GPU, "at least 5000GB" as any GPU.
Exponent notation is read as written ("1e4 hours" is 10,000 hours)."""

from __future__ import annotations

import json
import math

import pytest

from bot.cli import main

HUGE = "9" * 330  # float() of it is infinity


def ask(capsys, question: str) -> dict:
    assert main(["ask", question, "--json"]) == 0
    out = capsys.readouterr().out
    assert "Infinity" not in out and "NaN" not in out
    return json.loads(out)


@pytest.mark.parametrize(
    ("question", "kind", "said", "why"),
    [
        ("tco 8x A100 for 3000 years", "duration", "3000 years", "at most 100 years"),
        (f"tco 8x A100 for {HUGE} hours", "duration", HUGE[:37] + "…", "at most 100 years"),
        ("tco 8x A100 for 5e400 hours", "duration", "5e400 hours", "at most 100 years"),
        ("cost of 8x H100 for 2000000 hours", "duration", "2000000 hours", "at most 100 years"),
        ("训练3000年的成本 8张A100", "duration", "3000年", "最多为100年"),
        ("cheapest 5000x H100", "count", "5000x", "at most 4,096 GPUs"),
        ("cheapest 50000 GPUs of H100", "count", "50000 GPUs", "at most 4,096 GPUs"),
        ("cheapest GPU with at least 5000GB", "memory", "at least 5000GB", "2,048 GB"),
        ("显存至少5000GB的最便宜GPU", "memory", "显存至少5000GB", "2,048 GB"),
    ],
)
def test_a_number_out_of_range_is_refused_and_said_back(home, capsys, question, kind, said, why):
    answer = ask(capsys, question)
    assert answer["offers"] == [] and answer["recommendations"] == []
    assert f"“{said}”" in answer["title"] and why in answer["title"]
    (issue,) = answer["query"]["out_of_range"]  # JSON: what was refused, in full, with its kind
    assert issue["kind"] == kind and issue["text"].startswith(said.rstrip("…"))
    assert main(["ask", question]) == 0  # the text answer: one line, no traceback
    text = capsys.readouterr().out.strip()
    assert len(text.splitlines()) == 1 and why in text


@pytest.mark.parametrize(
    ("question", "hours"),
    [
        ("tco 8x A100 for 1e4 hours", 10_000),
        ("tco 8x A100 for 2.5e3 hours", 2_500),
        ("tco 8x A100 for 20 years", 20 * 8760),
        ("tco 8x A100 for 100 years", 100 * 8760),
        ("8卡A100训练三个月总成本", 3 * 730),
    ],
)
def test_durations_in_range_are_priced_as_said(home, capsys, question, hours):
    answer = ask(capsys, question)
    assert answer["query"]["duration_hours"] == hours and answer["query"]["out_of_range"] == []
    assert answer["tco"]["hours"] == hours and math.isfinite(answer["tco"]["total"])
    assert f"{hours:,}" in answer["title"]


@pytest.mark.parametrize(
    "question", ["2024年的H100价格", "H100 price in 2024", "cheapest 4096x H100", "cheapest 8x A100"]
)
def test_dates_and_counts_in_range_are_not_refused(home, capsys, question):
    answer = ask(capsys, question)
    assert answer["query"]["out_of_range"] == [] and "can't use" not in answer["title"]
