"""Who may change what, and the record of every change (issue 17), through the real Bolt app against the stand-in
Slack API (whose `users.info` tells admins, owners and guests like Slack does); `/gpu help`; OAuth install states.

- Workspace settings (`/gpu set|unset workspace ...`, the App Home form) need a workspace admin or owner; a
  member or guest is told so and nothing changes; `users.info` is asked once per user per minute.
- Channel settings and digest subscriptions can be changed by anyone in the channel and are announced there.
- Every change is recorded (who, when, old, new) and `/gpu settings` shows the latest.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa

from bot.settings import load_settings
from bot.slack import auth as slack_auth
from bot.slack import blocks
from bot.slack.app import build_app
from bot.slack.help import COMMANDS
from knowledge.state import settings_audit, settings_store, subscriptions
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import SECRET, assert_valid, dispatch, rendered_strings

TEAM = "TADM1"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(team_id=TEAM) as standin:
        yield standin


@pytest.fixture(scope="module", autouse=True)
def own_state(tmp_path_factory, gpubot_home) -> Iterator[None]:
    before = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('slack_admin') / 'state.db'}"
    yield
    if before is None:
        os.environ.pop("DATABASE_URL", None)
    else:
        os.environ["DATABASE_URL"] = before


@pytest.fixture(scope="module")
def app(slack, kb):
    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    return build_app(settings, kb)


@pytest.fixture(autouse=True)
def _fresh(slack) -> None:
    slack.clear()
    slack_auth.clear_cache()
    settings_store.clear(TEAM, "")  # each test starts without workspace defaults


def channel_id() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def slash(app, slack, text: str, channel: str, user: str = "U_MEMBER") -> dict[str, Any]:
    hook = f"adm-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": TEAM,
            "channel_id": channel,
            "channel_name": "x",
            "user_id": user,
            "command": "/gpu",
            "text": text,
            "api_app_id": "A_GPUBOT",
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = dispatch(app, body, FORM)
    assert response.status == 200
    message = json.loads(response.body) if response.body else slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(message)
    return message


def shown(message: dict) -> str:
    return "\n".join(rendered_strings(message["blocks"]))


def changes(team: str = TEAM) -> list[tuple]:
    with settings_store.state.engine().connect() as conn:
        rows = conn.execute(
            sa.select(settings_audit.changes_table)
            .where(settings_audit.changes_table.c.team_id == team)
            .order_by(settings_audit.changes_table.c.id)
        ).all()
    return [
        (
            r.channel_id,
            r.key,
            None if r.old_value is None else json.loads(r.old_value),
            None if r.new_value is None else json.loads(r.new_value),
            r.changed_by,
            r.via,
        )
        for r in rows
    ]


# --- the admin rule ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "user, allowed",
    [
        ("U_ADMIN", True),  # is_admin
        ("U_OWNER", True),  # is_owner
        ("U_MEMBER", False),  # a member
        ("U_GUEST", False),  # a guest (is_restricted): the case that emptied another user's answers
    ],
)
@pytest.mark.parametrize(
    "text", ["set workspace providers aws", "set workspace budget 2 USD/GPU-hour", "unset workspace all"]
)
def test_workspace_settings_need_an_admin_or_owner(app, slack, user, allowed, text):
    settings_store.set_setting(TEAM, "", "pricing", "spot")
    before = settings_store.scope_settings(TEAM, "")
    reply = slash(app, slack, text, channel_id(), user=user)
    after = settings_store.scope_settings(TEAM, "")
    if allowed:
        assert after != before and "Only a workspace admin" not in reply["text"]
    else:
        assert after == before, "nothing changed"
        assert reply["response_type"] == "ephemeral"
        assert "Only a workspace admin or owner can change the workspace defaults" in reply["text"]
    assert [c.body["user"] for c in slack.calls("users.info")] == [user]
    settings_store.clear(TEAM, "")


def test_the_refusal_is_in_the_asker_language(app, slack):
    mine = channel_id()
    slash(app, slack, "set language zh", mine)
    reply = slash(app, slack, "set workspace providers aws", mine)
    assert "只有工作区管理员或所有者可以更改工作区默认设置" in reply["text"]


def test_users_info_is_asked_once_per_user_per_minute(app, slack, monkeypatch):
    for provider in ("aws", "gcp", "azure"):
        slash(app, slack, f"set workspace providers {provider}", channel_id(), user="U_ADMIN")
    assert len(slack.calls("users.info")) == 1
    clock = time.monotonic() + slack_auth.ADMIN_CACHE_SECONDS + 1
    monkeypatch.setattr(slack_auth.time, "monotonic", lambda: clock)
    slash(app, slack, "set workspace providers aws", channel_id(), user="U_ADMIN")
    assert len(slack.calls("users.info")) == 2, "asked again once the cached answer is old"


def test_when_slack_cannot_say_who_is_admin_nothing_changes(app, slack):
    slack.fail("users.info", "ratelimited", times=1)
    reply = slash(app, slack, "set workspace providers aws", channel_id(), user="U_ADMIN")
    assert "could not check with Slack" in reply["text"]
    assert "providers" not in settings_store.scope_settings(TEAM, "")


def test_the_home_form_saves_the_workspace_defaults_for_admins_only(app, slack):
    def submit(user: str) -> Any:
        view = {
            "id": "V1",
            "type": "modal",
            "callback_id": blocks.SETTINGS_MODAL_ID,
            "private_metadata": json.dumps({"lang": "en"}),
            "state": {
                "values": {
                    "setting_providers": {
                        "value": {"type": "multi_static_select", "selected_options": [{"value": "aws"}]}
                    }
                }
            },
        }
        body = urlencode(
            {
                "payload": json.dumps(
                    {
                        "type": "view_submission",
                        "team": {"id": TEAM},
                        "user": {"id": user},
                        "api_app_id": "A_GPUBOT",
                        "view": view,
                    }
                )
            }
        )
        return dispatch(app, body, FORM)

    refused = submit("U_MEMBER")
    assert refused.status == 200 and json.loads(refused.body)["response_action"] == "errors"
    assert "Only a workspace admin" in json.loads(refused.body)["errors"]["setting_providers"]
    assert "providers" not in settings_store.scope_settings(TEAM, "")
    saved = submit("U_OWNER")
    assert saved.status == 200 and not saved.body
    assert settings_store.scope_settings(TEAM, "")["providers"] == ["aws"]
    assert ("", "providers", None, ["aws"], "U_OWNER", "home") in changes()
    settings_store.clear(TEAM, "")


# --- channel changes: anyone in the channel, announced, recorded --------------------------------------------------


@pytest.mark.parametrize("user", ["U_MEMBER", "U_GUEST"])
def test_channel_settings_are_changed_by_members_and_announced(app, slack, user):
    mine = channel_id()
    reply = slash(app, slack, "set providers aws, gcp", mine, user=user)
    assert reply["response_type"] == "in_channel"
    assert reply["blocks"][0]["text"]["text"] == f"<@{user}> set providers to aws, gcp."
    assert settings_store.scope_settings(TEAM, mine)["providers"] == ["aws", "gcp"]
    assert not slack.calls("users.info"), "no admin check for a channel's own settings"
    removed = slash(app, slack, "unset providers", mine, user=user)
    assert removed["response_type"] == "in_channel" and f"<@{user}> removed this channel's providers" in removed["text"]


def test_digest_subscriptions_are_announced_and_recorded(app, slack):
    mine = channel_id()
    reply = slash(app, slack, "digest subscribe hour 8 tz Asia/Shanghai", mine)
    assert reply["response_type"] == "in_channel" and "<@U_MEMBER> subscribed this channel" in reply["text"]
    gone = slash(app, slack, "digest unsubscribe", mine, user="U_GUEST")
    assert gone["response_type"] == "in_channel" and "<@U_GUEST> unsubscribed this channel" in gone["text"]
    assert subscriptions.get_subscription(TEAM, mine) is None
    recorded = [c for c in changes() if c[0] == mine]
    assert [(c[1], c[2] is None, c[3] is None, c[4]) for c in recorded] == [
        ("digest", True, False, "U_MEMBER"),
        ("digest", False, True, "U_GUEST"),
    ]
    assert recorded[0][3]["hour"] == 8 and recorded[0][3]["timezone"] == "Asia/Shanghai"


def test_every_change_is_recorded_and_shown_by_settings(app, slack):
    mine = channel_id()
    slash(app, slack, "set providers aws", mine, user="U_MEMBER")
    slash(app, slack, "set providers aws, alibaba", mine, user="U_GUEST")
    slash(app, slack, "set providers aws, alibaba", mine, user="U_GUEST")  # no change: not recorded twice
    slash(app, slack, "set workspace currency CNY", mine, user="U_ADMIN")
    slash(app, slack, "unset providers", mine, user="U_MEMBER")
    ours = [c for c in changes() if c[0] in (mine, "") and c[1] in ("providers", "currency")]
    assert ours[-4:] == [
        (mine, "providers", None, ["aws"], "U_MEMBER", "slash"),
        (mine, "providers", ["aws"], ["aws", "alibaba"], "U_GUEST", "slash"),
        ("", "currency", None, "CNY", "U_ADMIN", "slash"),
        (mine, "providers", ["aws", "alibaba"], None, "U_MEMBER", "slash"),
    ]
    reply = slash(app, slack, "settings", mine)
    text = shown(reply)
    assert "Recent changes" in text
    record = text[text.index("Recent changes") :].splitlines()[1:]
    assert "<@U_MEMBER> *providers* (this channel): aws, alibaba → not set" in record[0]
    assert "<@U_ADMIN> *currency* (this workspace): not set → CNY" in record[1]
    assert "<@U_GUEST> *providers* (this channel): aws → aws, alibaba" in record[2]
    assert time.strftime("%Y-%m-%d", time.gmtime()) in record[0] and "UTC" in record[0]
    settings_store.clear(TEAM, "")


# --- /gpu help --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, user, locale, lang",
    [
        ("help", "U_EN", "en-US", "en"),
        ("help", "U_ZH", "zh-CN", "zh"),  # the asker's Slack locale
        ("帮助", "U_EN2", "en-US", "zh"),  # asked in Chinese
        ("", "U_EN3", "en-GB", "en"),
    ],
)
def test_help_lists_every_command_in_the_askers_language(app, slack, text, user, locale, lang):
    slack.locales[user] = locale
    reply = slash(app, slack, text, channel_id(), user=user)
    listed = shown(reply)
    for command in COMMANDS:
        assert f"`/gpu {command}" in listed or (command == "alerts" and "`/gpu alerts`" in listed), command
    assert ("命令" in listed) == (lang == "zh") and ("Commands" in listed) == (lang == "en")
    assert "/gpu set" in reply["text"], "the text fallback lists them too"


# --- OAuth install states -----------------------------------------------------------------------------------------


def test_install_states_expire_and_stay_bounded(tmp_path, monkeypatch):
    """Every anonymous GET /slack/install issues a state; expired ones go, and at most MAX_OAUTH_STATES stay."""
    import bot.slack.oauth as oauth

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'oauth.db'}")
    expiring = oauth._Stores("cid", 0).states
    for _ in range(30):
        expiring.issue()
    with expiring.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(expiring.oauth_states)).scalar() == 1

    monkeypatch.setattr(oauth, "MAX_OAUTH_STATES", 10)
    live = oauth._Stores("cid", 600).states
    issued = [live.issue() for _ in range(25)]
    with live.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(live.oauth_states)).scalar() == 10
    assert live.consume(issued[-1]), "the newest state still installs"
    assert not live.consume(issued[0]), "the oldest was dropped"
