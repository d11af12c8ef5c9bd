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
