"""Issue 25, bad input, the last gaps: each gets a one-line refusal (or is read right), never a traceback,
"unexpected error" or the apology; exponent notation is read right or refused, never read as another number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.conftest import copy_kb

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"


@pytest.fixture
def home(kb, tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", "0")
    return home


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_refusal(code: int, err: str, *needles: str) -> None:
    assert code != 0 and len(err.strip().splitlines()) <= 2, err  # the refusal (+ "nothing was changed")
    assert "unexpected error" not in err and "Traceback" not in err
    assert all(n in err for n in needles), err


@pytest.mark.parametrize("threshold", ["1e309", "0", "1e-320", "99999999999"])
def test_an_alert_threshold_out_of_range_is_refused(home, capsys, threshold):
    code, _, err = run(capsys, "alert", "add", "--channel", "C1", f"H100 spot below {threshold}")
    one_line_refusal(code, err, "must be a number from 0.0001 to 100,000")


def test_an_alert_threshold_in_exponent_notation_is_read_right(home, capsys):
    code, out, _ = run(capsys, "alert", "add", "--channel", "C1", "--json", "H100 spot below 2e1")
    assert code == 0
    assert json.loads(out)["alert"]["threshold"]["amount"] == 20.0  # not $2.00


def test_a_time_zone_not_in_the_zone_list_is_refused(home, capsys):
    code, _, err = run(capsys, "digest", "subscribe", "--channel", "C1", "--tz", "America")
    one_line_refusal(code, err, "unknown timezone 'America'")


def test_a_rate_that_would_make_prices_infinite_is_refused(home, capsys, tmp_path):
    catalog = tmp_path / "eu.csv"
    catalog.write_text(HEADER + "x1.big,A100,8,96,1152,32.77,eu-west-1,,\n", encoding="utf-8")
    code, _, err = run(capsys, "kb", "import", str(catalog), "--provider", "eurocloud", "--currency", "EUR",
                       "--usd-per-unit", "1e-320")  # fmt: skip
    one_line_refusal(code, err, "--usd-per-unit must be a number from 0.000001 to 1000")


@pytest.mark.parametrize("name", ["p4d\u202e.24xl\x85\x9b31m", "g5\u2066.xlarge", "a\x9b[31mred"])
def test_catalog_names_with_bidi_or_c1_control_characters_are_refused(home, capsys, tmp_path, name):
    catalog = tmp_path / "bidi.csv"
    catalog.write_text(HEADER + f"{name},A100,8,96,1152,32.77,us-east-1,,\n", encoding="utf-8")
    code, _, err = run(capsys, "kb", "import", str(catalog), "--provider", "aws")
    one_line_refusal(code, err, "control character U+", "line 2")


def test_a_330_digit_duration_is_no_internal_error_and_no_infinity(home, capsys):
    text = f"TCO of H100 for {'9' * 330} hours"
    code, out, err = run(capsys, "ask", "--json", text)
    assert code == 0 and "internal error" not in err
    json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in ask --json"))
    code, out, _ = run(capsys, "parse", "--json", text)
    assert code == 0 and json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in parse --json"))


# --- no growth from repetition ---------------------------------------------------------------------------------------


def test_identical_refreshes_record_one_import(home, capsys, tmp_path):
    import sqlalchemy as sa

    from knowledge.catalog.imports import catalog_imports
    from knowledge.state import db as state

    catalog = tmp_path / "lambda.csv"
    catalog.write_text(HEADER + "gpu_1x_h100_sxm5,H100,1,26,225,2.49,us-east-1,,\n", encoding="utf-8")

    def imports() -> int:
        with state.engine().connect() as conn:
            return conn.execute(
                sa.select(sa.func.count()).select_from(catalog_imports).where(catalog_imports.c.provider == "lambda")
            ).scalar_one()

    for _ in range(3):  # the clock's refresh, run again and again on the same catalog
        assert main(["prices", "refresh", "--catalog", str(catalog), "--provider", "lambda"]) == 0
    capsys.readouterr()
    assert imports() == 1
    catalog.write_text(HEADER + "gpu_1x_h100_sxm5,H100,1,26,225,2.29,us-east-1,,\n", encoding="utf-8")
    assert main(["prices", "refresh", "--catalog", str(catalog), "--provider", "lambda"]) == 0
    assert imports() == 2, "a changed catalog is imported"
