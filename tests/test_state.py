"""Persistent state: 'once' is enforced by the database, across threads and processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from knowledge.state import db as state


def test_an_event_is_claimed_once(state_url):
    assert state.claim_event("Ev1") is True
    assert state.claim_event("Ev1") is False  # Slack's retry of the same event
    assert state.claim_event("Ev2") is True


def test_concurrent_claims_one_winner(state_url):
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: state.claim_event("EvRace"), range(16)))
    assert results.count(True) == 1


def test_claims_across_processes(state_url, tmp_path):
    code = "from knowledge.state import db as state; print(state.claim_event('EvProc'))"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
            env={**__import__("os").environ, "GPUBOT_HOME": str(tmp_path / f"home{i}")},
        )
        for i in range(3)
    ]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(outputs) == ["False", "False", "True"]


def test_upgrade_is_idempotent(empty_state_url):
    state.upgrade()
    state.upgrade()
    assert state.claim_event("EvAfterUpgrade") is True
