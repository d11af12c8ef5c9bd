"""The command line applies preferences exactly as Slack applies a channel's settings (one pipeline).

`gpubot ask --providers/--regions/--pricing/--currency/--language/--budget` are the CLI twins of `/gpu set KEY`;
the figures are checked against the bundled catalog CSVs read here, not against the code under test.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bot.cli import main

CATALOGS = Path(__file__).resolve().parent.parent / "knowledge" / "data" / "catalogs"


def ask_json(capsys, *args: str) -> dict:
    assert main(["ask", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _aws_a100_spot_per_gpu() -> list[float]:
    """Every AWS A100 (40 GB, p4d) spot price per GPU-hour in the bundled CSV."""
    with (CATALOGS / "aws_vms.csv").open(encoding="utf-8", newline="") as handle:
        return [
            float(r["SpotPrice"]) / float(r["AcceleratorCount"])
            for r in csv.DictReader(handle)
            if r["AcceleratorName"] == "A100" and r["SpotPrice"]
        ]


@pytest.mark.parametrize("question", ["cheapest A100 spot", "最便宜的A100竞价实例"])
def test_providers_flag_keeps_only_that_cloud_and_says_so(home, capsys, question):
    data = ask_json(capsys, question, "--providers", "aws")
    assert data["offers"] and {o["provider"] for o in data["offers"]} == {"aws"}
    assert data["offers"][0]["price_per_gpu_hour"] == pytest.approx(min(_aws_a100_spot_per_gpu()), rel=1e-6)
    assert "aws" in data["text"].splitlines()[1]  # the second line says what the flag filtered


def test_budget_flag_hides_offers_above_it_and_counts_them(home, capsys):
    cap = sorted(_aws_a100_spot_per_gpu())[len(_aws_a100_spot_per_gpu()) // 2]
    data = ask_json(capsys, "cheapest A100 spot", "--providers", "aws", "--budget", f"{cap} USD/GPU-hour")
    assert data["offers"] and all(o["price_per_gpu_hour_usd"] <= cap + 1e-9 for o in data["offers"])
    assert "hidden" in data["text"]


def test_a_preference_that_is_not_understood_is_refused_with_suggestions(home, capsys):
    assert main(["ask", "cheapest A100", "--providers", "awz"]) == 2
    err = capsys.readouterr().err
    assert "--providers" in err and "awz" in err and "aws" in err and "Traceback" not in err


def test_without_flags_the_answer_is_the_plain_one(home, capsys):
    plain = ask_json(capsys, "cheapest A100 spot")
    assert len({o["provider"] for o in plain["offers"]}) > 1 or plain["more"]  # every cloud competes
    assert plain["text"].splitlines()[1].startswith("1. ")  # no "(filtered to ...)" line
