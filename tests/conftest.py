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
    from knowledge.kb.opener import open_kb

    return open_kb(gpubot_home / "kb.db")


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


# The fast tier (`./scripts/test -m "not slow"`, under a minute): everything but real servers, subprocesses and
# PostgreSQL. The whole suite (no -m) runs everything, always.
SLOW_MODULES = frozenset(
    {
        "test_scale",
        "test_faults",
        "test_fuzz",
        "test_injection",
        "test_slack_http",
        "test_oauth",
        "test_live_kb",
        "test_bad_requests",
        "test_migrations",
        "test_digest_post",
        "test_state",
        "test_history_series",
        "test_import_unit",
        "test_import_serving",
        "test_import_faults",  # real CLI processes, a server rebuilding in a child process
        "test_hostile",  # real servers, slow-client sockets, nginx
        "test_live_refresh",  # a stand-in HTTP server for the live price sources, a real server answering
        "test_stock_alerts",  # the live-source stand-in server builds its knowledge bases
    }
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: starts servers, subprocesses or PostgreSQL (left out by -m 'not slow')")
    config.addinivalue_line(
        "markers", "live: fetches the real vendor endpoints (internet); runs only with GPUBOT_LIVE_TESTS=1 -m live"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    live = os.environ.get("GPUBOT_LIVE_TESTS") == "1"
    for item in items:
        if item.get_closest_marker("live") is not None and not live:
            item.add_marker(pytest.mark.skip(reason="fetches real endpoints: set GPUBOT_LIVE_TESTS=1 and run -m live"))
        module = item.module.__name__.rsplit(".", 1)[-1] if item.module else ""
        callspec = getattr(item, "callspec", None)
        on_postgres = "postgres" in item.fixturenames or (callspec and callspec.params.get("state_url") == "postgresql")
        if module in SLOW_MODULES or on_postgres:
            item.add_marker(pytest.mark.slow)
