"""Issue 26: prices that look wrong are kept and marked "suspect: ..." in text, JSON and history, never an unmarked
headline minimum. Known cases of the GCP weekly billing history are found here by replaying the raw change file
with plain csv (no gpubot code): a2-megagpu-16g in northamerica-northeast2 (2022-2024, $0.61/GPU-h while every
other region asks far more) and a2-ultragpu-1g's 1-year commitment equal to on-demand (2024)."""

from __future__ import annotations

import csv
import json
import re
import statistics

import pytest

from bot.pipeline import answer
from bot.render import render_text
from handlers.models import Query
from knowledge.history import series as history_series
from knowledge.paths import DATA_DIR
from tests.reference_calc import CATALOGS, rows

CHANGES = DATA_DIR / "history" / "gcp_weekly" / "gcp_gpu_price_changes.csv"


def _replay() -> dict[str, dict[tuple[str, str], dict]]:
    """snapshot date -> (machine type, region) -> the row alive then (the change file's README: first / changed /
    removed rows per weekly snapshot)."""
    alive: dict[tuple[str, str], dict] = {}
    states: dict[str, dict[tuple[str, str], dict]] = {}
    with CHANGES.open(encoding="utf-8", newline="") as handle:
        by_date: dict[str, list[dict]] = {}
        for row in csv.DictReader(handle):
            by_date.setdefault(row["snapshot_date"], []).append(row)
    for date in sorted(by_date):
        for row in by_date[date]:
            key = (row["name"], row["region"])
            if row["change"] == "removed":
                alive.pop(key, None)
            else:
                alive[key] = row
        states[date[:10]] = dict(alive)
    return states


STATES = _replay()


def _northeast2_dates() -> list[str]:
    """Snapshots where a2-megagpu-16g in northamerica-northeast2 is the A100 40GB on-demand minimum per GPU and more
    than 3x below that machine type's median across regions."""
    found = []
    for date, alive in STATES.items():
        a100 = {k: float(r["hour"]) / float(r["gpu_count"]) for k, r in alive.items() if r["gpu_name"] == "a100"}
        if not a100:
            continue
        cheapest = min(a100, key=a100.get)
        mega = [float(r["hour"]) for k, r in alive.items() if k[0] == "a2-megagpu-16g" and r["hour"]]
        own = float(alive[cheapest]["hour"])
        if cheapest == ("a2-megagpu-16g", "northamerica-northeast2") and own * 3 < statistics.median(mega):
            found.append(date)
    return found


def _ultragpu_dates() -> list[str]:
    """2024 snapshots where a2-ultragpu-1g's 1-year commitment (month_1y / 730) is not below its on-demand hour."""
    found = []
    for date, alive in STATES.items():
        if not date.startswith("2024"):
            continue
        for (name, _), r in alive.items():
            if name == "a2-ultragpu-1g" and r["month_1y"] and float(r["month_1y"]) / 730 >= float(r["hour"]) - 1e-6:
                found.append(date)
                break
    return found


@pytest.fixture(scope="module")
def weekly(kb):
    def points(gpu: str, pricing: str) -> dict[str, history_series.Point]:
        found = history_series.series(gpu, provider="gcp", pricing=pricing, kb=kb)
        return {p.taken_at.date().isoformat(): p for p in found if p.series != "snapshots"}

    return points


def test_northamerica_northeast2_is_flagged_on_every_snapshot_it_is_the_minimum(weekly):
    dates = _northeast2_dates()
    assert dates and dates[0].startswith("2022") and dates[-1].startswith("2024")  # the 2022-02 to 2024-05
    points = weekly("A100 40GB", "on_demand")
    for date in dates:
        point = points[date]
        assert (point.cheapest_instance_type, point.cheapest_region) == ("a2-megagpu-16g", "northamerica-northeast2")
        assert json.loads(point.suspect)["code"] == "below_median", date
    later = [p for d, p in points.items() if d > dates[-1] and p.cheapest_region != "northamerica-northeast2"]
    assert later and not any(p.suspect for p in later[-3:])  # once the odd price is gone, nothing is flagged


def test_a2_ultragpu_commitment_equal_to_on_demand_is_flagged_in_2024(weekly):
    dates = _ultragpu_dates()
    assert dates
    points = weekly("A100 80GB", "reserved_1y")
    flagged = [d for d in dates if d in points and points[d].cheapest_instance_type == "a2-ultragpu-1g"]
    assert flagged
    for date in flagged:
        assert json.loads(points[date].suspect)["code"] == "commitment_not_below", date


def test_the_history_answer_marks_the_suspect_minimum_in_both_languages(kb):
    from handlers import history

    for lang, text, mark in (("en", "history A100 on gcp", "suspect: "), ("zh", "GCP A100 价格历史", "存疑：")):
        query = Query(intent="history", text=text, gpus=["A100"], providers=["gcp"], pricing="on_demand", language=lang)
        line = history.handle(query, kb).title
        assert mark in line and "2022-02-09" in line, line


def _aws_spot_not_below() -> set[tuple[str, str]]:
    """(instance type, region) whose lowest spot over the region's zones is not below its on-demand price."""
    spot: dict[tuple[str, str], float] = {}
    on_demand: dict[tuple[str, str], float] = {}
    for r in rows(CATALOGS / "aws_vms.csv"):
        key = (r["InstanceType"], r["Region"])
        if r["Price"]:
            on_demand[key] = float(r["Price"])
        if r["SpotPrice"] and re.fullmatch(r"[a-z]+\d-az\d+", r["AvailabilityZone"]):  # not a Local Zone
            spot[key] = min(float(r["SpotPrice"]), spot.get(key, float("inf")))
    return {k for k, v in spot.items() if k in on_demand and v >= on_demand[k] - 1e-9}


def test_spot_not_below_on_demand_is_marked_in_the_knowledge_base_and_in_answers(kb):
    marked = kb.rows(
        "SELECT instance_type, region, suspect FROM offers WHERE provider = 'aws' AND pricing = 'spot' "
        "AND suspect IS NOT NULL AND zone_label IS NULL"
    )
    assert marked
    expected = _aws_spot_not_below()
    assert {(r["instance_type"], r["region"]) for r in marked} == expected
    instance, region = sorted((r["instance_type"], r["region"]) for r in marked)[0]
    result = answer(f"price of {instance} spot in {region}", kb)
    spot = next(o for o in result.offers if o.pricing == "spot" and o.region == region and o.zone_label is None)
    assert spot.suspect["code"] == "spot_not_below"
    assert "suspect: spot " in render_text(result)
    assert f"spot from ${spot.price_per_hour:.2f}/h in {region}" in result.title
    assert "suspect: spot " in result.title  # the headline minimum carries its mark
    assert spot.model_dump(mode="json")["suspect"]["code"] == "spot_not_below"  # the JSON says it too
