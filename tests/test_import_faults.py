"""Imports under hostile input and faults: bounded reads, a version that never repeats, every process catching up.

- `/dev/zero`, `/dev/full`, a directory, a 201 MB file and a file over the row cap are refused at once, naming the
  file and the limit, with bounded memory; the knowledge base and the state stay as they were.
- Prices are ASCII decimals: `1_5`, `１２.5`, Arabic-Indic digits, `1e400` are refused in catalogs and budgets.
- A cancelled import whose id the next import reuses: a server that built with it sees that it is behind.
- `kb import` records its price snapshot; another machine's CLI (same shared state) notices the import.
- The state database refuses values longer than their columns alike on SQLite and PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import tracemalloc
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.cli import main
from knowledge.catalog.reader import CatalogError, read_catalog
from tests.conftest import seed_bundled_part

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"


def _unchanged(home: Path):
    kb_bytes = (home / "kb.db").read_bytes()
    return lambda: (home / "kb.db").read_bytes() == kb_bytes


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/full", "directory", "oversized", "too-many-rows"])
def test_unbounded_or_oversized_imports_are_refused_fast_with_bounded_memory(
    machine, tmp_path, capsys, monkeypatch, target
):
    if target == "directory":
        path = str(tmp_path)
    elif target == "oversized":
        path = str(tmp_path / "huge.csv")
        with open(path, "wb") as handle:  # sparse: 201 MB on paper, nothing on disk
            handle.write(HEADER.encode())
            handle.truncate(201 * 1024 * 1024)
    elif target == "too-many-rows":
        monkeypatch.setenv("GPUBOT_IMPORT_MAX_ROWS", "50")
        path = str(tmp_path / "rows.csv")
        Path(path).write_text(HEADER + "".join(f"x{i}.big,A100,1,8,64,,{1 + i / 100:.2f},,r1\n" for i in range(60)))
    else:
        path = target
    unchanged = _unchanged(machine)
    tracemalloc.start()
    started = time.process_time()  # CPU time: what refusing the file costs, whatever else the machine runs
    code = main(["kb", "import", path, "--provider", "hostile"])
    seconds, (_, peak) = time.process_time() - started, tracemalloc.get_traced_memory()
    tracemalloc.stop()
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert path in err
    expected = {
        "/dev/zero": "not a regular file",
        "/dev/full": "not a regular file",
        "directory": "not a regular file",
        "oversized": "larger than 200 MB",
        "too-many-rows": "more than the 50 a catalog may have (GPUBOT_IMPORT_MAX_ROWS)",
    }[target]
    assert expected in err, err
    assert seconds < 2.0 and peak < 20 * 1024 * 1024, (seconds, peak)
    assert unchanged()


@pytest.mark.parametrize("price", ["1_5", "１２.5", "١٢", "1e400", "0x10", "½"])
def test_only_ascii_decimals_are_prices(tmp_path, price):
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + f"x1.big,A100,8,96,1152,,{price},,r1\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"line 2, column Price: .*is not a (finite )?number"):
        read_catalog(path)


@pytest.mark.parametrize("budget", ["1_5 USD/GPU-hour", "inf USD", "nan USD", "0x10 USD", "1e400 USD"])
def test_a_budget_python_would_misread_is_refused(budget):
    """`float()` reads "1_5" as 15 and "inf" as infinity: a setting's budget (the question's grammar, through the
    settings edge) refuses them in one line instead."""
    from bot.pipeline import typed_setting
    from knowledge.state.settings_store import SettingError

    with pytest.raises(SettingError, match="budget"):
        typed_setting("budget", budget)


@pytest.mark.parametrize("budget", ["１２ USD", "١٢ USD", "12 USD"])
def test_digits_of_other_scripts_are_read_as_the_same_number(budget):
    """Full-width (a Chinese keyboard's) and Arabic-Indic digits are the same decimal number, never another one."""
    from bot.pipeline import typed_setting

    read = typed_setting("budget", budget)
    assert (read.amount, read.currency, read.per) == (12.0, "USD", "gpu_hour")


def test_the_json_answer_never_holds_infinity_or_nan():
    from knowledge.numbers import finite

    data = finite({"a": float("inf"), "b": [1.5, float("nan")], "c": {"d": -float("inf")}, "e": "inf"})
    assert json.dumps(data, allow_nan=False) == '{"a": null, "b": [1.5, null], "c": {"d": null}, "e": "inf"}'


def test_an_import_with_an_infinite_exchange_rate_is_refused(machine, tmp_path, capsys):
    path = tmp_path / "cny.csv"
    path.write_text(HEADER + "x1.big,A100,8,96,1152,,20.5,,r1\n")
    assert (
        main(["kb", "import", str(path), "--provider", "yuancloud", "--currency", "CNY", "--usd-per-unit", "inf"]) == 2
    )
    assert "--usd-per-unit must be a number from 0.000001 to 1000" in capsys.readouterr().err


def _store_import(price: str, provider: str = "testcloud") -> int:
    """An import committed to the shared state (the first half of `kb import`, before the local rebuild)."""
    import hashlib

    from knowledge.catalog.imports import catalog_imports
    from knowledge.state.db import engine

    content = HEADER + f"tc1.big,A100,1,12,85,,{price},,r1\n"
    with engine().begin() as conn:
        return conn.execute(
            catalog_imports.insert().values(
                provider=provider,
                filename="testcloud.csv",
                content=content,
                currency="USD",
                usd_per_unit=1.0,
                as_of="2026-11-30",
                source="test import",
                sha256=hashlib.sha256(content.encode()).hexdigest(),
                imported_at=dt.datetime.now(dt.UTC),
            )
        ).inserted_primary_key[0]


def test_a_cancelled_import_whose_id_is_reused_leaves_no_server_behind(machine):
    from knowledge.catalog.imports import catalog_imports, imports_version
    from knowledge.kb.live import LiveKB
    from knowledge.kb.opener import open_kb
    from knowledge.state.db import engine

    first = _store_import("1.11")
    live = LiveKB(open_kb(), interval=0)  # a server that rebuilt while that import was in flight
    assert live.get().rows("SELECT price_per_hour_usd p FROM offers WHERE provider='testcloud'")[0]["p"] == 1.11
    assert not live.is_stale()
    with engine().begin() as conn:  # the import is cancelled (its rebuild failed): undone
        conn.execute(catalog_imports.delete().where(catalog_imports.c.id == first))
    assert live.is_stale(), "the cancelled import is no longer there: behind"
    second = _store_import("2.22")
    assert second == first, "SQLite reuses the id (no AUTOINCREMENT): MAX(id) could not tell them apart"
    assert live.get().meta("imports_version") != imports_version()
    assert live.is_stale(), "a reused id with other content is another version"


def test_kb_import_records_its_snapshot_and_another_machines_cli_notices(
    machine, tmp_path, capsys, kb, bundled_part, monkeypatch
):
    from knowledge.history import snapshots as history

    path = tmp_path / "testcloud.csv"
    path.write_text(HEADER + "tc1.big,A100,1,12,85,,3.33,1.25,r1\n")
    assert main(["kb", "import", str(path), "--provider", "testcloud", "--as-of", "2026-11-30"]) == 0
    capsys.readouterr()
    snapshot = history.latest_snapshot("testcloud")
    assert snapshot is not None
    prices = {(o["pricing"], o["price_per_hour_usd"]) for o in history.offers_of(snapshot).values()}
    assert prices == {("on_demand", 3.33), ("spot", 1.25)}
    # another machine: its own home and knowledge base (built before the import), the same shared state
    other = tmp_path / "other"
    other.mkdir()
    (other / "kb.db").write_bytes(Path(kb.path).read_bytes())
    seed_bundled_part(other, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(other))
    assert main(["ask", "price of tc1.big", "--json"]) == 0
    offers = json.loads(capsys.readouterr().out)["offers"]
    assert {(o["provider"], o["price_per_hour_usd"]) for o in offers} >= {("testcloud", 3.33)}


def test_values_longer_than_their_column_are_refused_alike_on_sqlite_and_postgresql(state_url):
    from knowledge.catalog.imports import catalog_imports
    from knowledge.state.db import engine
    from knowledge.state.limits import ValueTooLongError

    with pytest.raises(ValueTooLongError, match="filename is longer than 300 characters"), engine().begin() as c:
        c.execute(
            catalog_imports.insert().values(
                provider="x",
                filename="f" * 400,
                content="c",
                currency="USD",
                usd_per_unit=1.0,
                as_of="2026-11-30",
                source="s",
                sha256="0" * 64,
                imported_at=dt.datetime.now(dt.UTC),
            )
        )
    with pytest.raises(ValueTooLongError, match="provider is longer than 40"), engine().begin() as c:
        c.execute(
            catalog_imports.insert(),
            [
                {
                    "provider": "p" * 41,
                    "filename": "f",
                    "content": "c",
                    "currency": "USD",
                    "usd_per_unit": 1.0,
                    "as_of": "2026-11-30",
                    "source": "s",
                    "sha256": "0",
                    "imported_at": dt.datetime.now(dt.UTC),
                }
            ],
        )
    with engine().connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(catalog_imports)).scalar_one() == 0


def test_a_server_rebuilds_its_knowledge_base_in_another_process(machine, monkeypatch):
    """The rebuild that follows an import (76 s for 100k rows) never runs on the serving process's GIL."""
    import knowledge.kb.build
    from knowledge.kb.live import LiveKB
    from knowledge.kb.opener import open_kb

    live = LiveKB(open_kb(), interval=0)
    _store_import("4.44")  # imported elsewhere
    assert live.is_stale()

    def not_here(*args, **kwargs):
        raise AssertionError("the knowledge base was built inside the serving process")

    monkeypatch.setattr(knowledge.kb.build, "build", not_here)
    assert live.refresh() is True
    assert live.get().rows("SELECT price_per_hour_usd p FROM offers WHERE provider='testcloud'")[0]["p"] == 4.44
    assert not live.is_stale()


def test_an_expired_claim_is_taken_over_and_a_finished_one_never(state_url, monkeypatch):
    from knowledge.state import claims
    from knowledge.state.db import engine

    engine()  # migrated, as a server's state is before it serves
    monkeypatch.setenv("GPUBOT_CLAIM_LEASE_SECONDS", "0.3")
    monkeypatch.setenv("GPUBOT_CLAIM_TIMEOUT", "5")  # a loaded machine: every claim must reach the database
    key = f"slack-event:Ev-{state_url[:6]}-{time.time_ns()}"
    assert claims.claim(key)
    claims.forget_local()  # the holder vanished (nothing renews its lease any more); another worker asks
    assert not claims.claim(key), "still leased"
    time.sleep(0.4)
    assert claims.claim(key), "the lease ran out: taken over"
    claims.finish(key)
    claims.forget_local()
    time.sleep(0.4)
    assert not claims.claim(key), "finished for good"


@pytest.mark.parametrize(("rows", "refused"), [(50, False), (51, True)])
def test_the_row_cap_counts_rows_not_the_header(tmp_path, monkeypatch, rows, refused):
    """GPUBOT_IMPORT_MAX_ROWS=50 takes a file of a header and 50 rows (with or without a final newline), not 51."""
    from knowledge.catalog.reader import CatalogError, read_bounded

    monkeypatch.setenv("GPUBOT_IMPORT_MAX_ROWS", "50")
    for ending in ("\n", ""):
        path = tmp_path / f"rows{len(ending)}.csv"
        body = "".join(f"x{i}.big,A100,1,8,64,,1.00,,r1\n" for i in range(rows))
        path.write_text(HEADER + body.rstrip("\n") + ending)
        if refused:
            with pytest.raises(CatalogError, match=f"file has {rows} rows, more than the 50"):
                read_bounded(path)
        else:
            assert read_bounded(path).count(b"x") >= rows
