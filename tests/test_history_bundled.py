"""Four years of GCP price history from day one (issue 18): `gpubot history ... --provider gcp` gives one point per
bundled weekly snapshot whose minima equal an independent replay of the change-point file (plain `csv` here), the
source change to recorded snapshots is marked in the JSON, the chart draws it, and matplotlib is a dependency of
the README install (not an extra).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.paths import DATA_DIR

CHANGES = DATA_DIR / "history" / "gcp_weekly" / "gcp_gpu_price_changes.csv"
SHARED = Path("/work/shared/data/history/gcp_weekly")
ROOT = Path(__file__).resolve().parents[1]
# Cyclenerd GPU keys per family / variant (the data README's "machine types" list)
KEYS = {
    "H100": {"h100-80gb", "h100-80gb-mega"},
    "L4": {"l4"},
    "A100 80GB": {"a100-80gb"},
    "A100": {"a100", "a100-80gb"},
}
COLUMN = {
    "on_demand": ("hour", 1),
    "spot": ("hour_spot", 1),
    "reserved_1y": ("month_1y", 730),
    "reserved_3y": ("month_3y", 730),
}


def _when(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).astimezone(dt.UTC)


@pytest.fixture(scope="module")
def change_rows() -> list[dict]:
    with CHANGES.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def replay_minimum(rows: list[dict], gpu: str, pricing: str, at: dt.datetime) -> tuple[float, int]:
    """(lowest USD per GPU-hour, offers) at snapshot time `at`: each (machine type, region)'s last row up to then.

    Entries listed by one version and removed by the next (README: a3-megagpu-8g on 2024-08-17) are not offers.
    """
    column, divisor = COLUMN[pricing]
    commits = sorted({(_when(r["snapshot_date"]), r["snapshot_commit"]) for r in rows})
    order = {c: n for n, (_, c) in enumerate(commits)}
    keys, gpu_of, state, first = KEYS[gpu], {}, {}, {}
    one_version = set()
    for r in sorted(rows, key=lambda r: order[r["snapshot_commit"]]):
        entry = (r["name"], r["region"])
        if r["change"] == "first":
            first[entry] = order[r["snapshot_commit"]]
        if r["change"] == "removed" and first.get(entry) == order[r["snapshot_commit"]] - 1:
            one_version.add(entry)
        if r["gpu_name"]:
            gpu_of[r["name"]] = (r["gpu_name"], float(r["gpu_count"]))
        if _when(r["snapshot_date"]) <= at:
            state[entry] = r
    prices = []
    for entry, r in state.items():
        name = entry[0]
        if entry in one_version or name not in gpu_of or gpu_of[name][0] not in keys:
            continue
        if r["change"] != "removed" and r[column]:
            prices.append(float(r[column]) / divisor / gpu_of[name][1])
    return min(prices), len(prices)


@pytest.fixture()
def history_home(kb, tmp_path, monkeypatch, capsys):
    """The session's knowledge base and an empty state database."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    capsys.readouterr()
    return tmp_path


def history_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["history", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_bundled_files_are_the_shared_ones_with_their_licence():
    for name in ("gcp_gpu_price_changes.csv", "gcp_gpu_prices_last_snapshot.csv", "README.md"):
        bundled = DATA_DIR / "history" / "gcp_weekly" / name
        if SHARED.exists():
            assert bundled.read_bytes() == (SHARED / name).read_bytes()
        assert bundled.stat().st_size > 10_000
    readme = (DATA_DIR / "history" / "gcp_weekly" / "README.md").read_text(encoding="utf-8")
    assert "Apache" in readme and "Cyclenerd" in readme


@pytest.mark.parametrize(
    ("gpu", "pricing", "dates"),
    [
        ("H100", "spot", ["2024-05-21", "2025-09-25", "2026-07-22"]),  # the README's spot story, 8x H100 and more
        ("L4", "spot", ["2023-05-08", "2024-06-13", "2026-07-30"]),  # spot exists from 2023-05-08
        ("L4", "on_demand", ["2023-04-24", "2025-01-16"]),
        ("A100 80GB", "reserved_1y", ["2023-06-22"]),  # committed use per month / 730
        ("A100", "on_demand", ["2022-02-09", "2024-08-17"]),  # 2024-08-17: the day entries were removed
    ],
)
def test_minima_on_chosen_dates_equal_a_replay_of_the_change_points(
    history_home, capsys, change_rows, gpu, pricing, dates
):
    data = history_json(capsys, gpu, "--provider", "gcp", "--pricing", pricing)
    bundled = [p for p in data["history"] if p["series"] == "gcp_weekly"]
    assert bundled, "no bundled points"
    by_day = {p["taken_at"][:10]: p for p in bundled}
    for day in dates:
        point = by_day[day]
        want, offers = replay_minimum(change_rows, gpu, pricing, _when(point["taken_at"]))
        assert point["min_price_per_gpu_hour"] == pytest.approx(want, rel=1e-4), day  # README: float noise < 0.01 %
        assert point["offers"] == offers, day
        assert "Cyclenerd/google-cloud-pricing-cost-calculator@" in point["source"]
        assert point["snapshot"] == {"id": None, "seq": None}


def test_one_point_per_snapshot_back_to_2023_and_the_source_change_is_marked(history_home, capsys, change_rows):
    data = history_json(capsys, "L4", "--provider", "gcp", "--pricing", "spot")
    points = data["history"]
    bundled = [p for p in points if p["series"] == "gcp_weekly"]
    snapshots = {r["snapshot_commit"]: _when(r["snapshot_date"]) for r in change_rows}
    with_spot = sorted(t for t in snapshots.values() if t >= _when("2023-05-08T00:00:00+00:00"))
    assert [p["taken_at"] for p in bundled] == [t.isoformat() for t in with_spot]  # one point per snapshot
    assert bundled[0]["taken_at"].startswith("2023-05-08")
    assert len({p["source"] for p in bundled}) == len(bundled)  # each snapshot its own source (commit)
    recorded = [p for p in points if p["series"] == "snapshots"]  # the bundled SkyPilot catalog, recorded today
    assert recorded and recorded[0]["source_changed"] is True
    assert not any(p["source_changed"] for p in bundled)
    assert [(s["series"], s["points"]) for s in data["segments"]] == [
        ("gcp_weekly", len(bundled)),
        ("snapshots", len(recorded)),
    ]
    for key in ("taken_at", "source", "min_price_per_gpu_hour", "median_price_per_gpu_hour", "offers", "cheapest"):
        assert all(key in p for p in points)


def test_the_text_never_splices_two_sources(history_home, capsys):
    capsys.readouterr()
    assert main(["history", "H100", "--provider", "gcp", "--pricing", "spot"]) == 0
    text = capsys.readouterr().out
    assert "since 2024-05-17; then" in text and "from another source" in text
    assert "the source changes on" in text


def test_matplotlib_is_a_dependency_of_the_readme_install():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.split(">")[0].split("=")[0].strip() == "matplotlib" for dep in project["dependencies"])


def test_the_chart_is_drawn_with_the_source_change(history_home, tmp_path):
    out = tmp_path / "h100.png"
    env = {**__import__("os").environ}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot.cli",
            "history",
            "H100",
            "--provider",
            "gcp",
            "--pricing",
            "spot",
            "--png",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    from tests.test_history_series import png_info

    info = png_info(data)
    assert info["width"] >= 800
    assert "gcp source changes on" in info["texts"]["Description"]
    assert "130 snapshots" in info["texts"]["Description"]
    assert "wrote" in done.stdout


def test_bundled_history_costs_little_at_build_time():
    import time

    from knowledge.history import bundled as history_bundled

    started = time.process_time()  # CPU time: a machine busy with other processes does not count against it
    snapshots, intervals = history_bundled.replay()
    assert len(snapshots) == len({r[3] for r in snapshots}) == 159
    assert time.process_time() - started < 3.0  # ~0.3 s
    per = defaultdict(int)
    for row in intervals:
        per[row[1]] += 1
    assert set(per) == {"A100", "H100", "L4", "RTX PRO 6000"}


def test_a_repeated_question_is_reused_until_a_snapshot_is_recorded(history_home, capsys):
    from knowledge.paths import CATALOG_DIR

    first = history_json(capsys, "H100", "--provider", "gcp", "--pricing", "spot")
    again = history_json(capsys, "H100", "--provider", "gcp", "--pricing", "spot")
    assert again == first
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(microsecond=0)  # after the baseline (now)
    assert (
        main(
            [
                "prices",
                "refresh",
                "--catalog",
                str(CATALOG_DIR / "history" / "gcp_vms.csv"),
                "--provider",
                "gcp",
                "--no-kb",
                "--taken-at",
                later.isoformat(),
            ]
        )
        == 0
    )
    newer = history_json(capsys, "H100", "--provider", "gcp", "--pricing", "spot")
    assert len(newer["history"]) == len(first["history"]) + 1
    assert newer["history"][-1]["taken_at"] == later.isoformat()
    assert newer["history"][-1]["source_changed"] is False  # recorded after recorded: the same kind of source


@pytest.mark.parametrize(
    ("text", "pricings"),
    [
        ("H100 spot price history on gcp", {"spot"}),
        ("H100 价格走势", {"on_demand", "spot", "reserved_1y", "reserved_3y"}),
    ],
)
def test_the_history_intent_answers_from_the_bundled_history(history_home, kb, text, pricings):
    from bot.pipeline import answer_query, understand

    query = understand(text, kb)
    assert query.intent == "history"
    result = answer_query(query, kb)
    bundled = [p for p in result.extra["history"] if p["series"] == "gcp_weekly"]
    assert {p["pricing"] for p in bundled} >= pricings
    assert min(p["taken_at"] for p in bundled) < "2024-06"
    assert any("Cyclenerd" in s.source and "Apache-2.0" in s.source for s in result.sources)
    assert len(result.sources) < 20  # one line for the weekly history, not one per week
