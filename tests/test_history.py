"""Price history and the digest (issue 6): importing the older then the current shared catalogs and running
`gpubot digest --json` lists every change and nothing else, checked against an independent diff written here
with plain `csv`; snapshots are idempotent; a failing refresh records nothing and the previous one keeps serving.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import httpx
import pytest

from bot.cli import main
from knowledge.history import snapshots as history
from knowledge.paths import CATALOG_DIR, DATA_DIR

HISTORY = CATALOG_DIR / "history"
PLACEHOLDER = 700.0  # GCP fetcher's "price unknown" value (catalogs/README.md, gcp caveats)


@pytest.fixture()
def state_home(tmp_path, monkeypatch, state_url):
    """A fresh GPUBOT_HOME and state database for one test (each test runs on SQLite and on PostgreSQL)."""
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    return tmp_path


# --- the independent diff ----------------------------------------------------------------------------------------
# Region-level offers straight from the CSV files: a key is (instance type, region, pricing); an empty cell is no
# offer; a region's price is the lowest over its zones. GCP accelerator rows go through the documented host-VM
# rule (knowledge/data/host_vms.csv + gcp_host_vms.csv, same zone, same pricing model), which is the rule the
# product applies; TPU rows need no host, and the 700.0 placeholder is not a price.


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _put(offers: dict, key: tuple, price: str | float | None) -> None:
    if price in (None, ""):
        return
    value = float(price)
    offers[key] = min(value, offers.get(key, value))


def aws_offers(path: Path) -> dict[tuple, float]:
    offers: dict[tuple, float] = {}
    for row in _csv(path):
        if not row["AcceleratorName"]:
            continue
        _put(offers, (row["InstanceType"], row["Region"], "on_demand"), row["Price"])
        _put(offers, (row["InstanceType"], row["Region"], "spot"), row["SpotPrice"])
    return offers


def gcp_offers(path: Path) -> dict[tuple, float]:
    rules = _csv(DATA_DIR / "host_vms.csv")
    hosts = {(r["InstanceType"], r["AvailabilityZone"]): r for r in _csv(CATALOG_DIR / "gcp_host_vms.csv")}
    offers: dict[tuple, float] = {}
    for row in _csv(path):
        name, count = row["AcceleratorName"], float(row["AcceleratorCount"])
        if name.startswith("tpu-"):
            for pricing, price in (("on_demand", row["Price"]), ("spot", row["SpotPrice"])):
                if price and float(price) != PLACEHOLDER:
                    _put(offers, (name, row["Region"], pricing), price)
            continue
        exact = [
            r
            for r in rules
            if r["provider"] == "gcp"
            and r["accelerator"] == name
            and r["accelerator_count"] != "*"
            and float(r["accelerator_count"]) == count
        ]
        anyn = [
            r for r in rules if r["provider"] == "gcp" and r["accelerator"] == name and r["accelerator_count"] == "*"
        ]
        rule = (exact or anyn or [None])[0]
        host = hosts.get((rule["host_instance_type"], row["AvailabilityZone"])) if rule else None
        if host is None:
            instance = f"{count:g}x {name} (GPU only)"
        elif rule["accelerator_count"] == "*":
            instance = f"{rule['host_instance_type']} + {count:g}x {name}"
        else:
            instance = rule["host_instance_type"]
        for pricing, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
            if not row[column]:
                continue
            if host is None:
                _put(offers, (instance, row["Region"], pricing), row[column])
            elif host[column]:
                _put(offers, (instance, row["Region"], pricing), float(row[column]) + float(host[column]))
    return offers


def independent_diff(old: dict, new: dict, threshold_pct: float) -> dict[str, set]:
    changed = set()
    for key in old.keys() & new.keys():
        if old[key] != new[key] and abs(new[key] - old[key]) / old[key] * 100 >= threshold_pct - 1e-9:
            changed.add(key)
    return {"added": set(new) - set(old), "removed": set(old) - set(new), "changes": changed}


def _refresh(path: Path, provider: str) -> int:
    return main(["prices", "refresh", "--catalog", str(path), "--provider", provider, "--no-kb"])


def _digest_json(capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert main(["digest", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _keys(records: list[dict], provider: str) -> set:
    return {(r["instance_type"], r["region"], r["pricing"]) for r in records if r["provider"] == provider}


@pytest.fixture(scope="module")
def _imported_home(tmp_path_factory):
    """The older then the current AWS and GCP catalogs, refreshed through the CLI once for this module."""
    tmp = tmp_path_factory.mktemp("history")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUBOT_HOME", str(tmp / "home"))
        patch.setenv("DATABASE_URL", f"sqlite:///{tmp / 'state.db'}")
        for provider in ("aws", "gcp"):
            assert _refresh(HISTORY / f"{provider}_vms.csv", provider) == 0
            assert _refresh(CATALOG_DIR / f"{provider}_vms.csv", provider) == 0
    return tmp


@pytest.fixture()
def imported(_imported_home, monkeypatch, capsys):
    """That state, for one test (tests using it do not record snapshots)."""
    monkeypatch.setenv("GPUBOT_HOME", str(_imported_home / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{_imported_home / 'state.db'}")
    capsys.readouterr()
    return _imported_home


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_digest_lists_every_change_and_nothing_else(imported, capsys, threshold):
    data = _digest_json(capsys, "--threshold", str(threshold))
    expected = {
        "aws": independent_diff(
            aws_offers(HISTORY / "aws_vms.csv"), aws_offers(CATALOG_DIR / "aws_vms.csv"), threshold
        ),
        "gcp": independent_diff(
            gcp_offers(HISTORY / "gcp_vms.csv"), gcp_offers(CATALOG_DIR / "gcp_vms.csv"), threshold
        ),
    }
    for provider, diff in expected.items():
        for kind in ("changes", "added", "removed"):
            assert _keys(data[kind], provider) == diff[kind], (provider, kind)
    # nothing from any other provider (their bundled baselines have nothing to compare with yet)
    assert {r["provider"] for kind in ("changes", "added", "removed") for r in data[kind]} == {"aws", "gcp"}
    # what the data README says moved, AWS: new types and a new region; on-demand prices unchanged
    added_types = {r["instance_type"] for r in data["added"] if r["provider"] == "aws"}
    assert {"p6-b300.48xlarge", "trn2.48xlarge", "g7e.48xlarge"} <= added_types
    assert any(r["region"] == "ap-southeast-4" for r in data["added"] if r["provider"] == "aws")
    assert {r["instance_type"] for r in data["removed"] if r["provider"] == "aws"} == {"dl2q.24xlarge"}
    assert not [r for r in data["changes"] if r["provider"] == "aws" and r["pricing"] == "on_demand"]


def test_digest_records_have_the_documented_shape(imported, capsys):
    data = _digest_json(capsys)
    keys = {"provider", "instance_type", "gpu", "region", "pricing", "old", "new", "change_pct"}
    for record in data["changes"]:
        assert keys <= record.keys()
        assert record["change_pct"] == pytest.approx((record["new"] - record["old"]) / record["old"] * 100, abs=1e-3)
        assert abs(record["change_pct"]) >= 1.0
    for record in data["added"]:
        assert keys <= record.keys() and record["old"] is None and record["change_pct"] is None
    for record in data["removed"]:
        assert keys <= record.keys() and record["new"] is None
    # dl1.24xlarge us-east-1 spot: min over zones 2.819 (history) -> 4.1917 (current), read off the two files
    dl1 = next(r for r in data["changes"] if r["instance_type"] == "dl1.24xlarge" and r["region"] == "us-east-1")
    assert (dl1["old"], dl1["new"], dl1["gpu"]) == (2.819, 4.1917, "Gaudi")


def test_zone_moves_that_keep_the_region_minimum_are_not_changes(imported, capsys):
    old_rows = [r for r in _csv(HISTORY / "aws_vms.csv") if r["SpotPrice"]]
    new_rows = [r for r in _csv(CATALOG_DIR / "aws_vms.csv") if r["SpotPrice"]]
    old_zone = {(r["InstanceType"], r["AvailabilityZone"]): r for r in old_rows}
    moved_zone_only = set()
    old_min, new_min = aws_offers(HISTORY / "aws_vms.csv"), aws_offers(CATALOG_DIR / "aws_vms.csv")
    for row in new_rows:
        before = old_zone.get((row["InstanceType"], row["AvailabilityZone"]))
        key = (row["InstanceType"], row["Region"], "spot")
        if before and before["SpotPrice"] != row["SpotPrice"] and old_min.get(key) == new_min.get(key):
            moved_zone_only.add(key)
    assert moved_zone_only, "the data has zone-level moves that leave the region's minimum alone"
    listed = _keys(_digest_json(capsys, "--threshold", "0")["changes"], "aws")
    assert not moved_zone_only & listed


def test_gaining_or_losing_a_spot_price_is_added_or_removed(state_home):
    base = {"gpu": "H100", "gpu_count": 8, "currency": "USD"}
    old = [
        {
            **base,
            "instance_type": "p5.48xlarge",
            "region": "us-east-1",
            "pricing": "on_demand",
            "price_per_hour_usd": 55.0,
        },
        {**base, "instance_type": "p5.48xlarge", "region": "us-west-2", "pricing": "spot", "price_per_hour_usd": 20.0},
    ]
    new = [
        {**old[0], "price_per_hour_usd": 55.2},  # +0.36%: below the 1% threshold
        {**base, "instance_type": "p5.48xlarge", "region": "us-east-1", "pricing": "spot", "price_per_hour_usd": 19.0},
    ]
    a = history.record_snapshot("aws", old, "old").snapshot
    b = history.record_snapshot("aws", new, "new").snapshot
    diff = history.changes(a, b)
    assert [(c.region, c.pricing) for c in diff.added] == [("us-east-1", "spot")]
    assert [(c.region, c.pricing) for c in diff.removed] == [("us-west-2", "spot")]
    assert not diff.changed and diff.below_threshold == 1
    assert len(history.changes(a, b, threshold_pct=0.1).changed) == 1


def test_importing_the_same_snapshot_twice_changes_nothing(imported, capsys):
    before = [s.as_json() for p in ("aws", "gcp") for s in history.snapshots_of(p)]
    digest_before = _digest_json(capsys)
    for provider in ("aws", "gcp"):
        assert _refresh(CATALOG_DIR / f"{provider}_vms.csv", provider) == 0
        assert "unchanged" in capsys.readouterr().out
    assert [s.as_json() for p in ("aws", "gcp") for s in history.snapshots_of(p)] == before
    assert _digest_json(capsys) == digest_before


def test_concurrent_imports_of_one_snapshot_store_it_once(state_home):
    from concurrent.futures import ThreadPoolExecutor

    offers = history.offers_from_catalog("aws", CATALOG_DIR / "aws_vms.csv", source="x", as_of="2026-12-01")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: history.record_snapshot("aws", offers, "same file"), range(4)))
    assert sum(r.created for r in results) == 1
    assert len(history.snapshots_of("aws")) == 1
    assert len({r.snapshot.id for r in results}) == 1


def test_prices_moving_back_are_recorded(state_home):
    offer = {"instance_type": "g5.xlarge", "region": "us-east-1", "pricing": "spot", "gpu": "A10G", "gpu_count": 1}
    for price in (0.5, 0.4, 0.5):
        history.record_snapshot("aws", [{**offer, "price_per_hour_usd": price}], f"{price}")
    assert [s.seq for s in history.snapshots_of("aws")] == [1, 2, 3]
    assert [round(c.change_pct) for c in history.diff_since().changed] == [25]


def test_failing_refresh_leaves_the_previous_snapshot_serving(imported, capsys, tmp_path, monkeypatch):
    from bot.prices_cmd import refresh_catalog
    from knowledge.catalog import fetchers
    from knowledge.catalog.fetchers import FetchError

    before = [s.as_json() for s in history.snapshots_of("aws")]
    digest_before = _digest_json(capsys)
    # a malformed file: the last row cut short
    text = (CATALOG_DIR / "aws_vms.csv").read_text(encoding="utf-8")
    broken = tmp_path / "broken.csv"
    broken.write_text(text[: len(text) - 40], encoding="utf-8")
    assert _refresh(broken, "aws") == 2
    err = capsys.readouterr().err
    assert "broken.csv, line 2275" in err and "previous snapshot keeps serving" in err
    # a network error while downloading (retried, then given up)
    waits = []
    monkeypatch.setattr(fetchers, "_sleep", waits.append)

    def refuse(request):
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.Client(transport=httpx.MockTransport(refuse))
    with pytest.raises(FetchError, match="after 5 attempts"):
        refresh_catalog("https://example.invalid/aws/vms.csv", "aws", client=client, update_kb=False)
    assert len(waits) == 4
    assert [s.as_json() for s in history.snapshots_of("aws")] == before
    assert _digest_json(capsys) == digest_before


def test_a_failure_half_way_through_recording_leaves_nothing(state_home, monkeypatch):
    rows = [
        {
            "instance_type": f"t{i}",
            "region": "r",
            "pricing": "spot",
            "gpu": "T4",
            "gpu_count": 1,
            "price_per_hour_usd": 1.0 + i,
        }
        for i in range(50)
    ]
    real = history._offer_rows

    def bad_rows(provider, offers):
        out = real(provider, offers)
        out[30]["price_per_hour"] = None  # NOT NULL: the 31st insert fails inside the transaction
        return out

    with pytest.MonkeyPatch.context() as patch:  # undo only this patch, not the fixture's DATABASE_URL
        patch.setattr(history, "_offer_rows", bad_rows)
        with pytest.raises(Exception):  # noqa: B017 - the database's own IntegrityError
            history.record_snapshot("aws", rows, "half")
    assert history.snapshots_of("aws") == []
    assert history.offers_of(1) == {}


def test_since_a_date_and_the_bundled_baseline(state_home, capsys):
    import datetime as dt

    day = dt.datetime(2026, 1, 10, 12, tzinfo=dt.UTC)
    history.record_snapshot(
        "aws",
        [
            {
                "instance_type": "g5.xlarge",
                "region": "us-east-1",
                "pricing": "spot",
                "gpu": "A10G",
                "gpu_count": 1,
                "price_per_hour_usd": 1.0,
            }
        ],
        "first",
        day,
    )
    # one refresh on a fresh install: the bundled catalog is recorded before it, so the digest has a baseline
    data = _digest_json(capsys)
    baseline = history.snapshots_of("aws")[0]
    assert baseline.seq == history.BASELINE_SEQ and baseline.kind == "bundled" and baseline.taken_at < day
    assert data["added"] == []
    assert len(data["removed"]) > 1000  # everything but the one offer
    # --since a date after every snapshot: nothing changed since then
    assert _digest_json(capsys, "--since", "2026-02-01")["removed"] == []
    with pytest.raises(SystemExit):
        main(["digest", "--since", "not-a-date"])


def test_digest_text_summarises_per_family_in_both_languages(imported, capsys):
    capsys.readouterr()
    assert main(["digest", "--gpus", "H100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("GPU price changes since")
    assert "H100 spot on AWS:" in out and "regions cheaper" in out and "median" in out
    assert "Biggest moves:" in out and "L4" not in out.split("Biggest moves:")[0]
    assert main(["digest", "--gpus", "H100", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "AWS 上 H100 竞价" in out and "变化最大的报价" in out


def test_snapshot_offers_are_stored_as_validated_and_overlong_values_refused(state_home):
    """The snapshot's rows go through the driver's executemany (issue 29): every column reads back as the validated
    row (booleans as booleans, empty zone and stock as NULL) on both databases, and a value longer than its column
    is refused with the state's own error before anything is stored."""
    import sqlalchemy as sa

    from knowledge.state.db import engine
    from knowledge.state.limits import ValueTooLongError

    offers = [
        {
            "instance_type": "a.8x",
            "region": "r1",
            "pricing": "on_demand",
            "gpu": "H100",
            "accelerator": "H100",
            "gpu_memory_gb": 80.0,
            "gpu_count": 8,
            "zone": "r1a",
            "price_per_hour_usd": 20.0,
            "price_per_hour": 140.0,
            "currency": "CNY",
            "vgpu": False,
            "stock": "low",
        },
        {
            "instance_type": "b.slice",
            "region": "r2",
            "pricing": "spot",
            "gpu": "A10",
            "accelerator": "A10*1/6",
            "gpu_memory_gb": None,
            "gpu_count": 0.166667,
            "zone": "",
            "price_per_hour_usd": 0.3,
            "vgpu": True,
        },
    ]
    result = history.record_snapshot("unitcloud", offers, "test")
    table = history.snapshot_offers
    with engine().connect() as conn:
        stored = [dict(r._mapping) for r in conn.execute(sa.select(table).order_by(table.c.instance_type))]
    assert stored == [{"snapshot_id": result.snapshot.id, **row} for row in history._offer_rows("unitcloud", offers)]
    assert [r["vgpu"] for r in stored] == [False, True] and stored[1]["zone"] is None and stored[1]["stock"] is None

    overlong = [*offers, {**offers[0], "instance_type": "x" * 201, "price_per_hour_usd": 1.0}]
    with pytest.raises(ValueTooLongError, match="instance type is longer than 200 characters"):
        history.record_snapshot("unitcloud", overlong, "test")
    assert [s.id for s in history.snapshots_of("unitcloud")] == [result.snapshot.id]
    with engine().connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 2
