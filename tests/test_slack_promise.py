"""The 3-second promise, measured from the client's send (issue 24), through the real Bolt app and the stand-in
Web API: with the state database locked for 5 s every ack (question, set, alert, digest command) is sent within
Slack's 3 s; in OAuth mode a 1.2 s `auth.test` is paid once per workspace, not per request; a command repeated
within a minute is answered as the first and applied once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from urllib.parse import urlencode

import pytest
from slack_bolt import BoltRequest
from slack_sdk.oauth.installation_store import Installation

from bot.settings import load_settings
from bot.slack.app import build_app
from bot.slack.oauth import installation_store
from knowledge.state import alerts
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import SECRET, sign

TEAM = "T0002"
COMMANDS = ("cheapest A100 spot", "set providers aws,gcp", "alert H100 spot below 1.50", "digest now")


@pytest.fixture()
def slack(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    with SlackStandIn() as standin:
        yield standin


def send(app, slack, text: str, *, team: str = TEAM, user: str = "U_ASKER") -> tuple[float, dict]:
    """`/gpu text` as Slack sends it: seconds until the ack, and what the user sees (the ack or the follow-up)."""
    hook = f"p-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": team,
            "channel_id": "C0PROMISE",
            "channel_name": "promise",
            "user_id": user,
            "command": "/gpu",
            "text": text,
            "api_app_id": "A_GPUBOT",
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    headers = {"content-type": "application/x-www-form-urlencoded", **sign(body)}
    sent = time.monotonic()
    response = app.dispatch(BoltRequest(body=body, headers=headers))
    acked = time.monotonic() - sent
    assert response.status == 200
    message = json.loads(response.body) if response.body else slack.wait_for(f"hooks/{hook}", timeout=20)[0].body
    return acked, message


class Locked:
    """Another connection holding an exclusive transaction on the SQLite state database for `seconds`."""

    def __init__(self, url: str, seconds: float) -> None:
        self.path, self.seconds = url.removeprefix("sqlite:///"), seconds
        self.ready = threading.Event()

    def _hold(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        conn.execute("BEGIN EXCLUSIVE")
        self.ready.set()
        time.sleep(self.seconds)
        conn.execute("ROLLBACK")
        conn.close()

    def __enter__(self) -> Locked:
        self.thread = threading.Thread(target=self._hold, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.thread.join(30)


def test_every_ack_keeps_the_promise_while_the_state_database_is_locked(slack, kb):
    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    app = build_app(settings, kb)
    send(app, slack, "settings")  # the state database exists (migrated) before it is locked
    with Locked(os.environ["DATABASE_URL"], 5.0):
        acks = {text: send(app, slack, text, team="T0001")[0] for text in COMMANDS}
    print("acks with the state locked:", acks)
    assert max(acks.values()) < 3.0, acks


def _install(settings, team: str) -> None:
    installation_store(settings).save(
        Installation(
            app_id="A_GPUBOT",
            team_id=team,
            bot_token=f"xoxb-{team}-promise",
            bot_id="B_BOT",
            bot_user_id="U_BOT",
            bot_scopes="commands,chat:write",
            user_id="U_ADMIN",
            installed_at=time.time(),
        )
    )


def test_a_slow_auth_test_is_paid_once_per_workspace_and_no_ack_is_late(slack, kb):
    settings = load_settings(
        slack_signing_secret=SECRET,
        slack_client_id="cid",
        slack_client_secret="csecret",
        slack_api_url=slack.base_url,
    )
    app = build_app(settings, kb, oauth=True)
    _install(settings, TEAM)
    slack.delay("auth.test", 1.2)
    acks = [send(app, slack, text)[0] for text in COMMANDS]
    assert len(slack.calls("auth.test")) == 1, "one auth.test for the workspace, not one per request"
    print("acks with a slow auth.test:", acks)
    assert max(acks) < 3.0 and acks[0] >= 1.2, acks  # the first paid the slow auth.test and still kept the promise


def test_a_repeated_alert_command_within_a_minute_leaves_one_alert(slack, kb):
    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    app = build_app(settings, kb)
    first = send(app, slack, "alert H100 spot below 1.50", team="T0001")[1]
    again = send(app, slack, "alert H100 spot below 1.50", team="T0001")[1]
    assert [a.channel for a in alerts.list_alerts("T0001")] == ["C0PROMISE"]
    assert again["text"] == first["text"] and first["text"].startswith("Alert #1 set")
    zh = send(app, slack, "添加提醒 H100 竞价 低于 1.2", team="T0001", user="U_ZH")[1]
    send(app, slack, "添加提醒 H100 竞价 低于 1.2", team="T0001", user="U_ZH")
    assert len(alerts.list_alerts("T0001")) == 2 and zh["text"].startswith("已设置提醒 #2")
