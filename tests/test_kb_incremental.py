"""A knowledge base built after an import from the cached bundled part is the full build's, table for table and row
for row (`tests/kb_dump.py`: every schema entry and every row in rowid order), and answers the same; the cached part
is never reused for other bundled files, and a half-written one is never read.

Three imports: a new cloud of 20,000 real-shaped rows (the bundled Lambda rows under distinct names, as the
benchmark's file), a changed copy of the bundled Lambda catalog (replacing a bundled provider), and a changed copy of
the bundled GCP catalog (its offers cross-checked against Google's billing catalog, its committed-use terms derived
from its offers).
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.catalog.importer import import_catalog
from knowledge.kb import base_cache
from knowledge.kb.build import build
from knowledge.paths import CATALOG_DIR, kb_path
from tests.conftest import SMALL_KB_DATA, seed_bundled_part
from tests.kb_dump import dump, first_difference

QUESTIONS = (
    "cheapest A100 spot",
    "最便宜的 H100",
    "compare H100 and A100",
    "cheapest H100 on lambda",
    "gcp 上最便宜的 L4",
    "price of bigmark.8x",
)


def _rows(name: str) -> tuple[list[str], list[dict]]:
    with (CATALOG_DIR / name).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, header: list[str], rows: list[dict]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _scaled(row: dict, factor: float) -> dict:
    out = dict(row)
    for column in ("Price", "SpotPrice"):
        if out.get(column):
            out[column] = f"{float(out[column]) * factor:.4f}"
    return out


def new_cloud(tmp_path: Path) -> tuple[Path, str]:
    """20,000 rows: the bundled Lambda rows over and over under distinct instance names, then one marker row."""
    header, rows = _rows("lambda_vms.csv")
    out = [
        {**rows[i % len(rows)], "InstanceType": f"{rows[i % len(rows)]['InstanceType']}-r{i}"} for i in range(19_999)
    ]
    h100 = next(r for r in rows if r["AcceleratorName"] == "H100" and float(r["AcceleratorCount"]) == 8)
    out.append({**h100, "InstanceType": "bigmark.8x", "Price": "43.21", "SpotPrice": ""})
    return _write(tmp_path / "bigcloud.csv", header, out), "bigcloud"


def changed_lambda(tmp_path: Path) -> tuple[Path, str]:
    """The bundled Lambda catalog, every third row dropped and the others 20 % dearer."""
    header, rows = _rows("lambda_vms.csv")
    kept = [_scaled(r, 1.2) for i, r in enumerate(rows) if i % 3]
    return _write(tmp_path / "lambda_new.csv", header, kept), "lambda"


def changed_gcp(tmp_path: Path) -> tuple[Path, str]:
    """The bundled GCP catalog with A100 prices 30 % lower: now far from Google's billing catalog (cross-check)."""
    header, rows = _rows("gcp_vms.csv")
    out = [_scaled(r, 0.7) if r["AcceleratorName"].startswith("A100") else r for r in rows]
    return _write(tmp_path / "gcp_new.csv", header, out), "gcp"


@pytest.fixture
def home(tmp_path, monkeypatch, bundled_part):
    """A GPUBOT_HOME of its own with its SQLite state and a copy of the session's cached bundled part."""
    path = tmp_path / "home"
    path.mkdir()
    seed_bundled_part(path, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(path))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path / 'state.db'}")
    return path


def _answers(home: Path, monkeypatch, capsys) -> list[dict]:
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    out = []
    for question in QUESTIONS:
        assert main(["ask", question, "--json"]) == 0
        out.append(json.loads(capsys.readouterr().out))
    return out


@pytest.mark.parametrize("make", [new_cloud, changed_lambda, changed_gcp], ids=["new-cloud", "lambda", "gcp"])
def test_a_build_after_an_import_is_the_full_build(home, tmp_path, monkeypatch, capsys, make):
    path, provider = make(tmp_path)
    report = import_catalog(path, provider, as_of="2026-11-30")
    assert report["offers"] > 0
    fast = tmp_path / "fast.db"
    assert build(fast)["incremental"] is True  # the bundled part copied from the cache
    full_home = tmp_path / "full-home"
    full_home.mkdir()
    full = build(full_home / "kb.db", reuse_bundled=False)
    assert full["incremental"] is False
    content = dump(fast)  # each KB read once
    assert first_difference(content, full_home / "kb.db") is None
    assert first_difference(kb_path(), content) is None  # the import's own build, from the parts it had converted
    assert len(dict(content)["offers"]) > 12_000
    if provider == "gcp":  # the changed A100 prices disagree with the billing catalog: reported, and ranked by it
        with sqlite3.connect(fast) as conn:
            differing = conn.execute("SELECT COUNT(*) FROM crosscheck WHERE instance_type LIKE 'a2-%'").fetchone()[0]
        assert differing > 0
    capsys.readouterr()
    assert _answers(home, monkeypatch, capsys) == _answers(full_home, monkeypatch, capsys)


def test_a_changed_bundled_file_is_never_served_from_the_cached_part(home, tmp_path, capsys):
    bundled = tmp_path / "small"
    shutil.copytree(SMALL_KB_DATA, bundled)
    catalogs, prices = bundled / "catalogs", bundled / "pricing"
    path, provider = changed_lambda(tmp_path)
    import_catalog(path, provider, as_of="2026-11-30")
    first = build(tmp_path / "one.db", catalog_dir=catalogs, pricing_dir=prices)
    assert first["incremental"] is True
    runpod = catalogs / "runpod_vms.csv"
    text = runpod.read_text(encoding="utf-8").splitlines()
    header, row = text[0].split(","), dict(zip(text[0].split(","), text[1].split(","), strict=True))
    row["Price"] = "987.65"  # a price no catalog has
    runpod.write_text("\n".join([text[0], ",".join(row[h] for h in header), *text[2:]]) + "\n", encoding="utf-8")
    again = build(tmp_path / "two.db", catalog_dir=catalogs, pricing_dir=prices)
    assert again["incremental"] is True
    full = build(tmp_path / "full.db", catalog_dir=catalogs, pricing_dir=prices, reuse_bundled=False)
    assert first_difference(tmp_path / "two.db", tmp_path / "full.db") is None
    with sqlite3.connect(tmp_path / "two.db") as conn:
        found = conn.execute("SELECT COUNT(*) FROM offers WHERE provider = 'runpod' AND price_per_hour = 987.65")
        assert found.fetchone()[0] == 1
    assert full["offers"] == again["offers"]
    parts = [p.name for p in (home / "cache").glob(f"{base_cache.PREFIX}*.db")]
    assert parts == [f"{base_cache.PREFIX}{base_cache.key(catalogs, prices)}.db"]  # the older parts removed


def test_the_cached_part_is_named_by_code_and_data(tmp_path):
    small = SMALL_KB_DATA / "catalogs", SMALL_KB_DATA / "pricing"
    assert base_cache.key(*small) == base_cache.key(*small)
    assert base_cache.key(*small) != base_cache.key(CATALOG_DIR, SMALL_KB_DATA / "pricing")
    assert base_cache.key(*small, code="one") != base_cache.key(*small, code="two")


def test_a_half_written_or_damaged_part_is_never_read(home, tmp_path):
    """Any import makes a build read the cached part: a replaced bundled provider (a few hundred rows) reads it as a
    new cloud of 20,000 would (what each builds on the part: `test_a_build_after_an_import_is_the_full_build`)."""
    path, provider = changed_lambda(tmp_path)
    import_catalog(path, provider, as_of="2026-11-30")
    cache = home / "cache"
    (part,) = cache.glob(f"{base_cache.PREFIX}*.db")
    half = cache / ".kb-999999999-half.db"  # what a build killed while copying leaves: another name, a dead pid
    half.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    part.write_bytes(b"not a database")  # and the part itself damaged
    rebuilt = build(tmp_path / "again.db")
    assert rebuilt["incremental"] is True  # a new part was built and used
    assert not half.exists()
    assert first_difference(tmp_path / "again.db", kb_path()) is None
