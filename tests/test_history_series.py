"""Price history you can see (issue 10): `gpubot history` after refreshing the older then the current shared
catalogs gives, per snapshot, minima that equal a computation straight from the CSV files (done here with plain
`csv`, independently of the importer), for AWS, for GCP (host-VM rule) and for a cloud imported under a new
name; `--png` writes a real chart; one snapshot draws the spread; no data writes nothing and exits 1.
"""

from __future__ import annotations

import csv
import json
import statistics
import struct
import zlib
from pathlib import Path

import pytest

from bot.cli import main
from handlers.models import Query
from knowledge.paths import CATALOG_DIR, DATA_DIR

HISTORY = CATALOG_DIR / "history"
OLD, NEW = "2026-11-02T06:00:00", "2026-12-01T06:00:00"
# catalog accelerator names per GPU family, as catalogs/README.md documents them ("A100" covers its variants)
FAMILY = {"A100": {"A100", "A100-80GB"}, "H100": {"H100", "H100-MEGA"}, "T4": {"T4"}, "L4": {"L4"}}


# --- the independent computation -------------------------------------------------------------------------------


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _point(offers: dict[tuple[str, str], float]) -> dict:
    """Lowest / median per GPU-hour over (instance type, region) offers, and the cheapest one."""
    (instance, region), low = min(offers.items(), key=lambda kv: (kv[1], kv[0]))
    return {
        "min": low,
        "median": statistics.median(offers.values()),
        "offers": len(offers),
        "cheapest": {"instance_type": instance, "region": region},
    }


def aws_expected(path: Path, family: str, column: str) -> dict:
    """Per (instance type, region): the lowest price over its zones, divided by AcceleratorCount."""
    offers: dict[tuple[str, str], float] = {}
    for row in _csv(path):
        if row["AcceleratorName"] in FAMILY[family] and row[column]:
            key = (row["InstanceType"], row["Region"])
            per_gpu = float(row[column]) / float(row["AcceleratorCount"])
            offers[key] = min(per_gpu, offers.get(key, per_gpu))
    return _point(offers)


BILLING = DATA_DIR / "history" / "gcp_weekly" / "gcp_gpu_prices_last_snapshot.csv"


def _billing(column: str) -> dict[tuple[str, str], float]:
    """(machine type, region) -> Google's billing-catalog whole-VM price per hour (its README)."""
    cell = "hour_spot" if column == "SpotPrice" else "hour"
    return {(r["name"], r["region"]): float(r[cell]) for r in _csv(BILLING) if r["gpu_name"] and r[cell]}


def gcp_expected(path: Path, family: str, column: str, two_sources: bool = False) -> dict:
    """GCP accelerator rows plus their host VM (knowledge/data/host_vms.csv, same zone, same pricing model).

    `two_sources`: today's snapshot is read by ask's rules (issue 26): where Google's dated billing catalog and the
    undated SkyPilot figure differ by more than 5 %, the billing figure is the price (knowledge/catalog/crosscheck.py
    docstring)."""
    billing = _billing(column) if two_sources else {}
    rules = [r for r in _csv(DATA_DIR / "host_vms.csv") if r["provider"] == "gcp"]
    hosts = {(r["InstanceType"], r["AvailabilityZone"]): r for r in _csv(CATALOG_DIR / "gcp_host_vms.csv")}
    offers: dict[tuple[str, str], float] = {}
    for row in _csv(path):
        name, count = row["AcceleratorName"], float(row["AcceleratorCount"])
        if name not in FAMILY[family] or not row[column]:
            continue
        exact = [
            r
            for r in rules
            if r["accelerator"] == name and r["accelerator_count"] != "*" and float(r["accelerator_count"]) == count
        ]
        rule = (exact or [r for r in rules if r["accelerator"] == name and r["accelerator_count"] == "*"])[0]
        host = hosts.get((rule["host_instance_type"], row["AvailabilityZone"]))
        if host is None or not host[column]:
            continue  # no whole offer without the host VM's price
        instance = (
            rule["host_instance_type"]
            if rule["accelerator_count"] != "*"
            else f"{rule['host_instance_type']} + {count:g}x {name}"
        )
        key = (instance, row["Region"])
        whole = float(row[column]) + float(host[column])
        other = billing.get(key)
        if other is not None and abs(whole - other) > 0.05 * other:
            whole = other
        per_gpu = whole / count
        offers[key] = min(per_gpu, offers.get(key, per_gpu))
    return _point(offers)


# --- PNG, read by hand ---------------------------------------------------------------------------------------


def png_info(data: bytes) -> dict:
    """Width, height and text chunks of a PNG; asserts the signature and every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, info, texts = 8, {}, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        if kind == b"IHDR":
            assert pos == 8, "IHDR must come first"
            info["width"], info["height"] = struct.unpack(">II", body[:8])
        elif kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            texts[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            texts[key.decode("latin-1")] = rest[2:].split(b"\0", 2)[-1].decode("utf-8")
        pos += 12 + length
        if kind == b"IEND":
            break
    info["texts"] = texts
    return info


# --- state ---------------------------------------------------------------------------------------------------


def _refresh(path: Path, provider: str, taken_at: str) -> None:
    assert (
        main(["prices", "refresh", "--catalog", str(path), "--provider", provider, "--no-kb", "--taken-at", taken_at])
        == 0
    )


@pytest.fixture()
def fresh_home(tmp_path, monkeypatch, capsys):
    """An empty GPUBOT_HOME and state database for one test."""
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    return tmp_path


@pytest.fixture(scope="module")
def _imported_home(tmp_path_factory):
    """Older then current catalogs of AWS and GCP, and the AWS files again as a cloud named `neocloud`."""
    tmp = tmp_path_factory.mktemp("history_series")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUBOT_HOME", str(tmp / "home"))
        patch.setenv("DATABASE_URL", f"sqlite:///{tmp / 'state.db'}")
        for provider, name in (("aws", "aws"), ("gcp", "gcp"), ("neocloud", "aws")):
            _refresh(HISTORY / f"{name}_vms.csv", provider, OLD)
            _refresh(CATALOG_DIR / f"{name}_vms.csv", provider, NEW)
    return tmp


@pytest.fixture()
def imported(_imported_home, monkeypatch, capsys):
    monkeypatch.setenv("GPUBOT_HOME", str(_imported_home / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{_imported_home / 'state.db'}")
    capsys.readouterr()
    return _imported_home


def history_json(capsys, *args: str) -> list[dict]:
    capsys.readouterr()
    assert main(["history", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["history"]


# --- the minima equal the CSV files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "catalog", "gpu", "pricing", "expected"),
    [
        ("aws", "aws", "A100", "spot", aws_expected),  # the issue's example: A100 + A100-80GB, zone minima
        ("aws", "aws", "A100", "on_demand", aws_expected),  # on-demand prices did not move between the files
        ("gcp", "gcp", "T4", "spot", gcp_expected),  # n1 host added per zone (user-picked host rule)
        ("gcp", "gcp", "H100", "spot", gcp_expected),  # a3 hosts fixed by GPU count; H100-MEGA is in the family
        ("neocloud", "aws", "A100", "spot", aws_expected),  # any imported cloud, under a name of its own
    ],
)
def test_points_equal_a_computation_from_the_csv_files(imported, capsys, provider, catalog, gpu, pricing, expected):
    column = "SpotPrice" if pricing == "spot" else "Price"
    every = history_json(capsys, gpu, "--provider", provider, "--pricing", pricing)
    points = [p for p in every if p["series"] == "snapshots"]  # gcp H100 also has the bundled weekly history
    assert points[0]["source_changed"] == (len(every) > len(points))
    assert [(p["provider"], p["gpu"], p["pricing"]) for p in points] == [(provider, gpu, pricing)] * 2
    assert [p["taken_at"][:10] for p in points] == [OLD[:10], NEW[:10]]
    for point, path in zip(points, (HISTORY / f"{catalog}_vms.csv", CATALOG_DIR / f"{catalog}_vms.csv"), strict=True):
        today = path.parent == CATALOG_DIR  # the bundled catalog: ask's two-source check applies (issue 26)
        want = (
            expected(path, gpu, column, two_sources=True)
            if today and expected is gcp_expected
            else expected(path, gpu, column)
        )
        assert point["min_price_per_gpu_hour"] == pytest.approx(want["min"], rel=1e-9)
        assert point["median_price_per_gpu_hour"] == pytest.approx(want["median"], rel=1e-9)
        assert point["offers"] == want["offers"]
        assert point["cheapest"] == want["cheapest"]
        assert path.name in point["source"]


def test_the_issue_example_reads_as_one_line(imported, capsys):
    from handlers.history import handle

    answer = handle(
        Query(text="A100 spot price history on aws", intent="history", gpus=["A100"], providers=["aws"], pricing="spot")
    )
    assert answer.title == "A100 spot on AWS: $0.5102 -> $0.3082 per GPU-hour, -40% since 2026-11-02"
    assert answer.extra["headline"] == answer.title
    zh = handle(
        Query(
            text="A100 竞价 价格走势 aws",
            intent="history",
            gpus=["A100"],
            providers=["aws"],
            pricing="spot",
            language="zh",
        )
    )
    assert zh.title == "AWS 上 A100 竞价：每 GPU 小时 $0.5102 -> $0.3082，自 2026-11-02 以来 -40%"
    both = handle(Query(text="A100 price history on aws", intent="history", gpus=["A100"], providers=["aws"]))
    assert both.extra["headline"] == (
        "Lowest per GPU-hour since 2026-11-02: A100 spot AWS $0.5102 -> $0.3082 (-40%); "
        "A100 on-demand AWS $2.74 (unchanged)"
    )
    assert [line for line in both.lines if line.startswith("•")] == [
        "• A100 on-demand on AWS: $2.74 per GPU-hour, unchanged since 2026-11-02",
        "• A100 spot on AWS: $0.5102 -> $0.3082 per GPU-hour, -40% since 2026-11-02",
    ]


def test_a_variant_and_a_region_narrow_the_series(imported, capsys):
    variant = history_json(capsys, "A100-80GB", "--provider", "aws", "--pricing", "spot")
    assert {p["gpu"] for p in variant} == {"A100 80GB"}
    assert all(p["accelerators"] == ["A100-80GB"] for p in variant)
    assert (
        variant[-1]["min_price_per_gpu_hour"]
        > history_json(capsys, "A100", "--provider", "aws", "--pricing", "spot")[-1]["min_price_per_gpu_hour"]
    )
    region = history_json(capsys, "A100", "--provider", "aws", "--pricing", "spot", "--region", "us-east-1")
    assert {p["cheapest"]["region"] for p in region} == {"us-east-1"}
    since = history_json(capsys, "A100", "--provider", "aws", "--pricing", "spot", "--since", "2026-11-15")
    assert [p["taken_at"][:10] for p in since] == [NEW[:10]]


# --- charts --------------------------------------------------------------------------------------------------


def test_png_is_a_readable_chart(imported, capsys, tmp_path):
    out = tmp_path / "a100.png"
    assert main(["history", "A100", "--provider", "aws", "--pricing", "spot", "--png", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    info = png_info(out.read_bytes())
    assert info["width"] >= 800 and 400 <= info["height"] <= info["width"]
    assert "lowest price per GPU-hour" in info["texts"]["Title"]
    assert "$0.5102" in info["texts"]["Description"] and "$0.3082" in info["texts"]["Description"]
    assert out.stat().st_size > 10_000  # a drawn chart, not an empty canvas


def test_png_changes_when_the_data_changes(fresh_home, capsys):
    _refresh(HISTORY / "aws_vms.csv", "aws", OLD)
    _refresh(CATALOG_DIR / "aws_vms.csv", "aws", NEW)
    args = ["history", "A100", "--provider", "aws", "--pricing", "spot", "--png"]
    first, again, third = (fresh_home / n for n in ("1.png", "2.png", "3.png"))
    assert main([*args, str(first)]) == 0 and main([*args, str(again)]) == 0
    assert first.read_bytes() == again.read_bytes()  # same data, same chart
    rows = _csv(CATALOG_DIR / "aws_vms.csv")  # a newer catalog: every A100 spot price 10% down
    for row in rows:
        if row["AcceleratorName"] in FAMILY["A100"] and row["SpotPrice"]:
            row["SpotPrice"] = f"{float(row['SpotPrice']) * 0.9:.6f}"
    newer = fresh_home / "aws_newer.csv"
    with newer.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _refresh(newer, "aws", "2026-12-15T06:00:00")
    assert main([*args, str(third)]) == 0
    assert third.read_bytes() != first.read_bytes()
    assert png_info(third.read_bytes())["width"] >= 800
    points = history_json(capsys, "A100", "--provider", "aws", "--pricing", "spot")
    assert len(points) == 3
    assert points[-1]["min_price_per_gpu_hour"] == pytest.approx(aws_expected(newer, "A100", "SpotPrice")["min"])


def test_one_snapshot_draws_the_spread_and_says_so(fresh_home, capsys):
    _refresh(CATALOG_DIR / "aws_vms.csv", "aws", NEW)
    out = fresh_home / "one.png"
    capsys.readouterr()
    assert main(["history", "A100", "--provider", "aws", "--pricing", "spot", "--png", str(out)]) == 0
    text = capsys.readouterr().out
    assert "only one snapshot so far" in text and "spread across regions" in text
    info = png_info(out.read_bytes())
    assert info["width"] >= 800
    assert "one snapshot so far" in info["texts"]["Title"] and "spread across regions" in info["texts"]["Title"]
    points = history_json(capsys, "A100", "--provider", "aws", "--pricing", "spot")
    assert len(points) == 1
    assert points[0]["min_price_per_gpu_hour"] == pytest.approx(
        aws_expected(CATALOG_DIR / "aws_vms.csv", "A100", "SpotPrice")["min"]
    )


@pytest.fixture(scope="module")
def _aws_home(tmp_path_factory) -> Path:
    """One snapshot of the bundled AWS catalog, shared by the questions that only read it."""
    tmp = tmp_path_factory.mktemp("aws_once")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUBOT_HOME", str(tmp / "home"))
        patch.setenv("DATABASE_URL", f"sqlite:///{tmp / 'state.db'}")
        _refresh(CATALOG_DIR / "aws_vms.csv", "aws", NEW)
    return tmp


@pytest.fixture()
def _aws_once(_aws_home, monkeypatch) -> Path:
    monkeypatch.setenv("GPUBOT_HOME", str(_aws_home / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{_aws_home / 'state.db'}")
    return _aws_home


@pytest.mark.parametrize(
    "args",
    [
        ["A100", "--provider", "nosuchcloud"],  # a provider without snapshots
        ["Z9000", "--provider", "aws"],  # a GPU nobody sells
        ["A100", "--provider", "aws", "--since", "2030-01-01"],  # nothing that recent
        ["A100", "--provider", "aws", "--region", "mars-north-1"],  # no such region
    ],
)
def test_no_data_is_a_clear_message_exit_1_and_no_file(_aws_once, tmp_path, capsys, args):
    out = tmp_path / "none.png"
    capsys.readouterr()
    assert main(["history", *args, "--png", str(out)]) == 1
    captured = capsys.readouterr()
    assert "No price history for" in captured.out
    assert "no chart written" in captured.err
    assert not out.exists()


def test_chart_refuses_no_points():
    from bot.charts import ChartError, render_history_png

    with pytest.raises(ChartError, match="no price history"):
        render_history_png([])


def test_charts_stay_off_the_ask_path():
    import subprocess
    import sys

    code = (
        "import sys, bot.cli, bot.pipeline, handlers.history, bot.history_cmd, bot.slack.history, "
        "bot.charts; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)
