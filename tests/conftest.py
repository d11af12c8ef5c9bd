"""Shared fixtures: one knowledge base, built once per test session from the real bundled data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

for name in [key for key in os.environ if key.startswith("SLACK_")]:
    del os.environ[name]  # Bolt reads SLACK_* silently; tests configure everything explicitly


@pytest.fixture(scope="session")
def gpubot_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("gpubot_home")
    os.environ["GPUBOT_HOME"] = str(home)
    return home


@pytest.fixture(scope="session")
def kb(gpubot_home: Path):
    """The full knowledge base (every bundled catalog, price file and seed fact)."""
    from knowledge.kb import KB

    return KB.open(gpubot_home / "kb.db")


@pytest.fixture(scope="session")
def postgres():
    """One real PostgreSQL server for the session, from the machine's binaries (never skipped)."""
    from tests.pgserver import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def state_url(request, tmp_path, monkeypatch) -> str:
    """A fresh, empty persistent-state database, on SQLite and on PostgreSQL (each test runs on both)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        url = request.getfixturevalue("postgres").new_database()
    monkeypatch.setenv("DATABASE_URL", url)
    return url
