"""Issue 25: a state that knows it is gone. `state.db` deleted, replaced, read-only or full under a running process:
no write is confirmed that is not stored (a fresh connection, as a restart or the CLI would open, sees every
confirmed change), users get "settings can't be saved right now; nothing was changed", `/healthz` says which and
answers 503, and the process reconnects once the file is back.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import uuid
from pathlib import Path
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa

from bot.cli import main
from knowledge.state import db as state
from knowledge.state import settings_store
from knowledge.state.presence import StateUnavailableError, health
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import dispatch

TEAM = "TGONE"


@pytest.fixture
def state_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "state.db"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    settings_store.set_setting(TEAM, "C1", "providers", "aws")
    return path


def stored(path: Path, channel: str) -> str | None:
    """What a fresh process (a restart, the CLI) reads for `channel`'s providers: straight from the file."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        row = conn.execute(
            "SELECT value FROM channel_settings WHERE team_id = ? AND channel_id = ? AND key = 'providers'",
            (TEAM, channel),
        ).fetchone()
    return json.dumps(json.loads(row[0])) if row else "null"


def delete(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_deleted_state_refuses_writes_creates_nothing_and_health_says_unavailable(state_file):
    delete(state_file)
    with pytest.raises(StateUnavailableError, match="is gone"):
        settings_store.set_setting(TEAM, "C1", "providers", "azure")
    assert not state_file.exists(), "no empty database was created in its place"
    assert health(state.engine) == "unavailable"


def test_a_replaced_state_refuses_once_then_writes_to_the_file_that_is_there(state_file, tmp_path):
    backup = tmp_path / "backup.db"
    with sqlite3.connect(state_file) as src, sqlite3.connect(backup) as dst:
        src.backup(dst)
    delete(state_file)
    shutil.copy(backup, state_file)  # restored from a backup: another file (inode) at the same path
    with pytest.raises(StateUnavailableError, match="replaced"):
        settings_store.set_setting(TEAM, "C2", "providers", "azure")
    settings_store.set_setting(TEAM, "C2", "providers", "gcp")  # reconnected: confirmed, and stored
    assert health(state.engine) == "ok"
    assert stored(state_file, "C2") == json.dumps(["gcp"])
    assert stored(state_file, "C1") == json.dumps(["aws"])


@contextlib.contextmanager
def on_every_connection(pragma: str):
    """Every new connection of the state engine runs `pragma` first (the pooled ones are dropped before and after)."""
    eng = state.engine()
    eng.pool.dispose()

    def run(conn, _record) -> None:
        conn.execute(pragma)

    sa.event.listen(eng, "connect", run)
    try:
        yield eng
    finally:
        sa.event.remove(eng, "connect", run)
        eng.pool.dispose()


def test_a_full_state_refuses_with_a_clear_message(state_file):
    with (
        on_every_connection("PRAGMA max_page_count=1") as eng,
        pytest.raises(StateUnavailableError, match="refused the write"),
        eng.begin() as conn,
    ):
        settings_store.set_setting(TEAM, "C3", "providers", "aws")
        conn.execute(sa.text("CREATE TABLE filler (x BLOB)"))  # the write that finds the disk full
        conn.execute(sa.text("INSERT INTO filler VALUES (randomblob(1000000))"))
    assert stored(state_file, "C3") == json.dumps(["aws"]), "the write before the full disk was confirmed and kept"


def read_only_state():
    """Every new connection of the state engine sees a read-only database, as on a file or disk remounted read-only
    (the tests run as root, for whom a file's mode bits would not refuse a write: SQLite's own `query_only` gives
    the same SQLITE_READONLY refusal)."""
    return on_every_connection("PRAGMA query_only = ON")


def test_a_read_only_state_refuses_writes_keeps_what_was_stored_and_health_says_read_only(state_file):
    with read_only_state():
        with pytest.raises(StateUnavailableError, match="refused the write"):
            settings_store.set_setting(TEAM, "C1", "providers", "azure")
        assert health(state.engine) == "read-only"
    assert stored(state_file, "C1") == json.dumps(["aws"]), "nothing confirmed, nothing changed"
    settings_store.set_setting(TEAM, "C1", "providers", "azure")  # writable again: the next write is stored
    assert stored(state_file, "C1") == json.dumps(["azure"])


def test_the_cli_says_in_one_line_that_the_state_cannot_be_reached(monkeypatch, capsys):
    monkeypatch.setenv("DATABASE_URL", "postgresql://gpubot@127.0.0.1:9/gpubot")  # nothing listens on port 9
    assert main(["alert", "list"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpubot: the state database cannot be reached") and len(err.splitlines()) == 1


# --- what a Slack user and the load balancer see ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn(team_id=TEAM) as standin:
        standin.admins.add("U_ASKER")
        yield standin


@pytest.fixture
def app(slack, kb):
    from bot.settings import load_settings
    from bot.slack.app import build_app

    settings = load_settings(
        slack_signing_secret="test-signing-secret", slack_bot_token="xoxb-test", slack_api_url=slack.base_url
    )
    return build_app(settings, kb)


def slash_reply(app, slack, text: str, channel: str) -> str:
    hook = f"gone-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": TEAM,
            "channel_id": channel,
            "channel_name": "general",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": text,
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = dispatch(app, body, "application/x-www-form-urlencoded")
    assert response.status == 200
    message = json.loads(response.body) if response.body else {}
    if message.get("text") in (None, "…"):  # an empty ack: the reply comes by the response_url
        message = slack.wait_for(f"hooks/{hook}", timeout=10)[0].body
    return message["text"]


SAID_BACK = pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("set providers azure", "Settings can't be saved right now; nothing was changed; try again in a minute."),
        ("set providers 阿里云", "设置暂时无法保存；没有做任何更改；请一分钟后再试。"),
    ],
    ids=["en", "zh"],
)


@SAID_BACK
def test_gpu_set_on_a_deleted_state_says_nothing_was_changed(app, slack, state_file, text, expected):
    delete(state_file)
    assert slash_reply(app, slack, text, "C1") == expected


def test_healthz_drains_a_worker_whose_state_is_gone(app, kb, state_file):
    from bot.serve import make_wsgi

    wsgi = make_wsgi(app, kb, "test-signing-secret")

    def get() -> tuple[str, dict]:
        seen: dict = {}
        body = b"".join(
            wsgi(
                {"PATH_INFO": "/healthz", "REQUEST_METHOD": "GET"},
                lambda status, headers: seen.update(status=status),
            )
        )
        return seen["status"], json.loads(body)

    status, report = get()
    assert status.startswith("200") and report["state"] == "ok" and report["kb"]["offers"] > 0
    with read_only_state():
        status, report = get()
    assert status.startswith("503") and report["state"] == "read-only"
    delete(state_file)
    status, report = get()
    assert status.startswith("503") and report["state"] == "unavailable"
    assert report["kb"]["offers"] > 0, "the knowledge base is reported separately"


@SAID_BACK
def test_gpu_set_on_a_read_only_state_says_nothing_was_changed(app, slack, state_file, text, expected):
    with read_only_state():
        assert slash_reply(app, slack, text, "C1") == expected
    assert stored(state_file, "C1") == json.dumps(["aws"])
