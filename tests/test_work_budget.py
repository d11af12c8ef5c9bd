"""Work answers ($ per 1M tokens) honour a budget like cheapest does (issue 23): "under $5/hour" keeps only the
measured machines at or under that price per hour; the oracle is the same question without the budget, filtered here.
"""

from __future__ import annotations

import pytest

from bot import pipeline


@pytest.mark.parametrize(
    ("text", "plain", "cap", "per_gpu"),
    [
        ("cheapest way to serve llama 8b under $5/hour", "cheapest way to serve llama 8b", 5.0, False),
        ("cost per million tokens for Llama 8B under $4/GPU-h", "cost per million tokens for Llama 8B", 4.0, True),
        ("Llama 8B 每百万token成本，每小时不超过5美元", "Llama 8B 每百万token成本", 5.0, False),
        ("cheapest way to serve llama 8b under $1/hour", "cheapest way to serve llama 8b", 1.0, False),
    ],
)
def test_a_budget_keeps_only_the_machines_within_it(kb, text, plain, cap, per_gpu):
    got, all_rows = pipeline.answer(text, kb), pipeline.answer(plain, kb).extra["work"]
    assert got.query.intent == "work" and got.query.budget is not None

    def hourly(row):
        return row["price_per_hour_usd"] / (row["gpu_count"] if per_gpu else 1)

    within = [r for r in all_rows if hourly(r) <= cap + 1e-9]
    rows = got.extra["work"]
    assert [(r["instance_type"], r["region"]) for r in rows] == [(r["instance_type"], r["region"]) for r in within]
    assert any("Budget" in n or "预算" in n for n in got.notes)
    if not within:  # nothing within the cap: said, not answered with a machine above it
        assert not rows
