"""When the GCP catalog and Google's billing catalog disagree, the answer shows both and says which ranks (issue 14).

The oracle reads the two CSV files directly: SkyPilot's accelerator + host rows (tests/reference_calc.py) and
the billing-catalog snapshot (knowledge/data/history/gcp_weekly/gcp_gpu_prices_last_snapshot.csv).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.reference_calc import gcp_ranking

SNAPSHOT = (
    Path(__file__).resolve().parent.parent
    / "knowledge"
    / "data"
    / "history"
    / "gcp_weekly"
    / "gcp_gpu_prices_last_snapshot.csv"
)
SHARED = Path("/work/shared/data/history/gcp_weekly")


def billing(machine: str, region: str) -> dict:
    with SNAPSHOT.open(encoding="utf-8", newline="") as handle:
        return next(r for r in csv.DictReader(handle) if r["name"] == machine and r["region"] == region)


def skypilot(machine: str, region: str, column: str = "Price") -> float:
    per_gpu = next(
        p for p, itype, reg in gcp_ranking({"H100", "H100-MEGA"}, column) if itype == machine and reg == region
    )
    return per_gpu * 8


@pytest.fixture
def ask(kb, capsys):
    def run(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return run


@pytest.mark.skipif(not SHARED.exists(), reason="the shared source folder is not on this machine")
@pytest.mark.parametrize("name", ["gcp_gpu_prices_last_snapshot.csv", "README.md"])
def test_bundled_copy_is_byte_identical(name):
    assert (SNAPSHOT.parent / name).read_bytes() == (SHARED / name).read_bytes()


@pytest.mark.parametrize("question", ["price of a3-highgpu-8g in us-central1", "a3-highgpu-8g 在 us-central1 多少钱"])
def test_price_shows_both_sources(ask, question):
    result = ask(question)
    on_demand = next(o for o in result["offers"] if o["pricing"] == "on_demand")
    cyclenerd, sky = float(billing("a3-highgpu-8g", "us-central1")["hour"]), skypilot("a3-highgpu-8g", "us-central1")
    assert abs(sky - cyclenerd) / cyclenerd > 0.05  # they do disagree (README cross-check table, row 7)
    # ranked with the billing catalog (dated, the vendor's own data); SkyPilot's figure shown beside it
    assert on_demand["price_per_hour_usd"] == pytest.approx(cyclenerd)
    assert on_demand["as_of"] == "2026-07-30" and "Billing Catalog" in on_demand["source"]
    [other] = on_demand["other_prices"]
    assert other["price_per_hour_usd"] == pytest.approx(sky) and "SkyPilot" in other["source"]
    assert other["as_of_known"] is False
    assert on_demand["price_trust_reason"]
    assert f"${cyclenerd:,.2f}/h" in result["text"] and f"${sky:,.2f}/h" in result["text"]


def test_agreeing_sources_change_nothing(ask):
    result = ask("price of a3-highgpu-8g on demand in us-east4")
    [on_demand] = result["offers"]
    assert on_demand["price_per_hour_usd"] == pytest.approx(skypilot("a3-highgpu-8g", "us-east4"))
    assert on_demand["other_prices"] == [] and on_demand["price_trust_reason"] is None


def test_commitment_file_agrees_with_the_snapshot(kb, capsys):
    assert main(["kb", "stats"]) == 0
    check = json.loads(capsys.readouterr().out)["price_crosscheck"]
    assert check["commitment_figures_compared"] > 0 and check["commitment_figures_differing"] == 0
    assert check["offers_compared"] >= check["offers_differing"] > 0


def test_trust_rule():
    from knowledge.catalog.crosscheck import trusted

    unknown = {"as_of": "2026-12-01", "source": "SkyPilot catalog (upstream date not recorded; bundled 2026-12-01)"}
    assert trusted(unknown, "2026-07-30")[0] == "billing"  # a dated vendor figure over an undated extract
    newer = {"as_of": "2026-11-15", "source": "gpubot kb import gcp.csv", "as_of_known": True}
    assert trusted(newer, "2026-07-30")[0] == "catalog"  # newest first
    older = {"as_of": "2026-01-01", "source": "gpubot kb import gcp.csv"}
    assert trusted(older, "2026-07-30")[0] == "billing"
