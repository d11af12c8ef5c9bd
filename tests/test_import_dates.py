"""An imported price list without `--as-of` has no known date (issue 26): its figures say "date unknown, imported
<day>", never the import day as the price's date and never "bundled"; the source is said as an imported list, never
as gpubot's own notes or by the file's name. With `--as-of` the figures carry that date."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest

from bot.cli import main
from bot.slack.blocks import answer_message
from handlers.common import as_of_text
from tests.conftest import seed_bundled_part
from tests.reference_calc import CATALOGS
from tests.slack_standin import message_blocks


def lambda_a100_rows(name: str) -> str:
    """Two real bundled Lambda A100 rows under a new instance name, as a catalog file of another cloud."""
    with (CATALOGS / "lambda_vms.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = [r for r in reader if r["AcceleratorName"] == "A100" and r["Price"]][:2]
        fields = reader.fieldnames or []
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({**row, "InstanceType": name})
    return out.getvalue()


QUESTIONS = {"en": "cheapest A100 on zcloud", "zh": "zcloud上最便宜的A100"}


@pytest.fixture
def imported(home, bundled_part, tmp_path, capsys):
    seed_bundled_part(home, bundled_part)  # the import's build starts from the cached bundled part

    def run(*extra: str, lang: str = "en") -> tuple[dict, str]:
        path = tmp_path / "zcloud.csv"
        path.write_text(lambda_a100_rows("zz_1x_a100"), encoding="utf-8")
        assert main(["kb", "import", str(path), "--provider", "zcloud", *extra]) == 0
        capsys.readouterr()
        assert main(["ask", QUESTIONS[lang], "--json"]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert main(["ask", QUESTIONS[lang]]) == 0
        return answer, capsys.readouterr().out

    return run


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_import_without_a_date_says_date_unknown_imported(imported, lang):
    answer, text = imported(lang=lang)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    offer = answer["offers"][0]
    assert offer["instance_type"] == "zz_1x_a100" and offer["as_of_known"] is False and offer["as_of"] == today
    said = {"en": f"date unknown, imported {today}", "zh": f"数据日期未知，导入于 {today}"}[lang]
    source = {"en": "price list imported by your admin", "zh": "管理员导入的价格表"}[lang]
    assert said in text and source in text
    assert "bundled" not in text and "打包" not in text
    assert "zcloud.csv" not in text and "reviewed notes" not in text
    assert as_of_text(offer, lang) == {"en": f"date unknown, imported {today}", "zh": f"日期未知，导入于 {today}"}[lang]


def test_slack_says_the_same(imported, home):
    from bot.pipeline import answer
    from knowledge.kb.opener import open_kb

    imported()
    shown = json.dumps(message_blocks(answer_message(answer(QUESTIONS["en"], open_kb(home / "kb.db")))))
    assert "date unknown, imported" in shown and "price list imported by your admin" in shown
    assert "zcloud.csv" not in shown


def test_an_import_with_a_date_carries_it(imported):
    answer, text = imported("--as-of", "2026-11-30")
    offer = answer["offers"][0]
    assert offer["as_of_known"] is True and offer["as_of"] == "2026-11-30"
    assert "as of 2026-11-30" in text and "date unknown" not in text
