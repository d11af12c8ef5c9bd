"""A large import builds its knowledge base in a forked child while it stores the import (`knowledge.kb.forked`):
the same knowledge base as the one-after-the-other path, row for row and with the stored imports' token (no process
rebuilds after it); a store or a build that fails, or a child that is killed, leaves the knowledge base and the
state exactly as they were, with no half-written file; an import stored by someone else meanwhile leaves the new
build behind (rebuilt where it is opened), never claiming what it does not hold.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa

import knowledge.catalog.importer as importer
from knowledge.catalog.imports import imports_version
from knowledge.catalog.reader import CatalogError
from knowledge.kb import build, forked
from knowledge.kb.reader import KB
from knowledge.paths import kb_path
from tests.conftest import seed_bundled_part
from tests.kb_dump import first_difference

ROWS = 5_000  # on-demand and spot: `BESIDE_FROM_OFFERS` offers, the forked path without changing it
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"


def _catalog(path: Path, rows: int) -> Path:
    """`rows` H100/A100 machines in three regions, prices all different (every row an offer)."""
    lines = [
        f"bx{i}.{8 if i % 2 else 1}x,{'H100' if i % 3 else 'A100'},{8 if i % 2 else 1},32,256,,"
        f"{2 + i / 1000:.3f},{1 + i / 2000:.4f},r{i % 3}\n"
        for i in range(rows)
    ]
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def children(monkeypatch) -> list[forked.Forked]:
    """Every child the imports fork, in order. Forking is allowed whatever other threads earlier tests left in
    this worker (the child only computes and writes its file)."""
    started: list[forked.Forked] = []
    real = forked.Forked.__init__

    def spy(self, *args):
        real(self, *args)
        started.append(self)

    monkeypatch.setattr(forked.Forked, "__init__", spy)
    monkeypatch.setattr(forked, "possible", lambda: True)
    return started


def _state() -> dict[str, tuple[int, str]]:
    from knowledge.state import db as state

    with state.engine().connect() as conn:
        return {
            table: (len(rows), hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest())
            for table in ("snapshots", "snapshot_offers", "catalog_imports")
            for rows in [conn.execute(sa.text(f"SELECT * FROM {table}")).all()]
        }


def _as_they_were(home: Path):
    kb_bytes, state = (home / "kb.db").read_bytes(), _state()
    return lambda: (home / "kb.db").read_bytes() == kb_bytes and _state() == state and not list(home.glob(".kb-*"))


def test_the_build_beside_the_store_is_the_sequential_build(machine, tmp_path, monkeypatch, children, bundled_part):
    path = _catalog(tmp_path / "big.csv", ROWS)
    report = importer.import_catalog(path, "bigcloud", as_of="2026-11-30")
    assert report["offers"] == 2 * ROWS == importer.BESIDE_FROM_OFFERS and len(children) == 1  # built beside
    assert KB(kb_path()).meta("imports_version") == imports_version()  # current: nobody rebuilds after it
    beside = tmp_path / "beside.db"
    os.replace(kb_path(), beside)

    other = tmp_path / "other"  # the same import, one step after the other
    other.mkdir()
    seed_bundled_part(other, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(other))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{other / 'state.db'}")
    monkeypatch.setattr(importer, "BESIDE_FROM_OFFERS", 10**9)
    importer.import_catalog(path, "bigcloud", as_of="2026-11-30")
    assert len(children) == 1
    assert first_difference(beside, kb_path()) is None


def test_beside_a_postgresql_store(machine, tmp_path, monkeypatch, beside_always, postgres):
    """The child inherits the parent's open PostgreSQL connections and never uses them: the parent's store and
    its reads after the child has ended work, and the build holds the token."""
    monkeypatch.setenv("DATABASE_URL", postgres.new_database())
    importer.import_catalog(_catalog(tmp_path / "c.csv", 300), "bigcloud", as_of="2026-11-30")
    importer.import_catalog(_catalog(tmp_path / "d.csv", 200), "bigcloud", as_of="2026-12-01")
    assert len(beside_always) == 2 and KB(kb_path()).meta("imports_version") == imports_version()
    with sqlite3.connect(kb_path()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM offers WHERE provider = 'bigcloud'").fetchone()[0] == 400


@pytest.fixture
def beside_always(monkeypatch, children):
    """Every import takes the forked path, however small (the paths are the same code at any size)."""
    monkeypatch.setattr(importer, "BESIDE_FROM_OFFERS", 1)
    return children


def test_a_store_that_fails_stops_the_build_and_leaves_everything(machine, tmp_path, monkeypatch, beside_always):
    unchanged = _as_they_were(machine)
    real = importer._store

    def refused(*args):
        raise sa.exc.OperationalError("INSERT", {}, Exception("database is locked"))

    monkeypatch.setattr(importer, "_store", refused)
    with pytest.raises(sa.exc.OperationalError, match="database is locked"):
        importer.import_catalog(_catalog(tmp_path / "c.csv", 300), "bigcloud", as_of="2026-11-30")
    assert len(beside_always) == 1 and beside_always[0]._process.exitcode is not None  # the child is gone
    assert unchanged()
    monkeypatch.setattr(importer, "_store", real)


def test_a_build_that_fails_in_the_child_undoes_the_store(machine, tmp_path, monkeypatch, beside_always):
    unchanged = _as_they_were(machine)

    def damaged(job, temporary):
        temporary.write_bytes(b"half")
        temporary.unlink()  # as `write_temporary` does when it fails
        raise CatalogError(temporary, "a damaged bundled file")

    monkeypatch.setattr(build, "write_temporary", damaged)
    with pytest.raises(CatalogError, match="a damaged bundled file"):
        importer.import_catalog(_catalog(tmp_path / "c.csv", 300), "bigcloud", as_of="2026-11-30")
    assert len(beside_always) == 1 and unchanged()


def test_a_child_killed_while_building_undoes_the_store(machine, tmp_path, monkeypatch, beside_always):
    unchanged = _as_they_were(machine)

    def killed(job, temporary):
        assert os.getpid() != test_process  # never the test's own process
        temporary.write_bytes(b"half-written")
        os.kill(os.getpid(), signal.SIGKILL)

    test_process = os.getpid()

    monkeypatch.setattr(build, "write_temporary", killed)
    with pytest.raises(forked.ChildFailed, match="signal 9"):
        importer.import_catalog(_catalog(tmp_path / "c.csv", 300), "bigcloud", as_of="2026-11-30")
    assert unchanged()


def test_an_import_stored_meanwhile_leaves_the_build_behind(machine, tmp_path, monkeypatch, beside_always):
    from knowledge.catalog.imports import catalog_imports
    from knowledge.catalog.sources import CatalogSource
    from knowledge.state.db import engine

    real = importer._store
    small = _catalog(tmp_path / "small.csv", 20)
    other = CatalogSource("othercloud", small, None, "USD", 1.0, "2026-11-29", "small.csv")

    def another_first(*args):  # another process stores its import between our build's start and our store
        with engine().begin() as conn:
            conn.execute(catalog_imports.insert().values(**importer._record(other, True)))
        return real(*args)

    monkeypatch.setattr(importer, "_store", another_first)
    importer.import_catalog(_catalog(tmp_path / "c.csv", 300), "bigcloud", as_of="2026-11-30")
    assert KB(kb_path()).meta("imports_version") != imports_version()  # behind: the next open rebuilds
    with sqlite3.connect(kb_path()) as conn:
        held = dict(conn.execute("SELECT provider, COUNT(*) FROM offers GROUP BY provider").fetchall())
    assert held["bigcloud"] == 600 and "othercloud" not in held


def test_no_fork_in_a_process_with_other_threads():
    alone = threading.active_count() == 1
    assert forked.possible() is alone
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        assert not forked.possible()  # a server's threads: the store and the build one after the other
    finally:
        done.set()
        other.join()
