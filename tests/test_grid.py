"""Enterprise Grid (issue 19): settings of a Grid workspace, through the real Bolt app in OAuth mode (`app.dispatch`
of signed requests, each authorized from the installation store) against the stand-in Slack Web API.

The app is installed org-wide: the installation names only the org (`E0GRID`), not the workspace. A channel's
and the workspace's settings set from workspace `T0WSA` are found again when asked from that workspace, also by
interactions whose payload says `team: null` (Slack does so for org-wide installs) and names the workspace only as
the user's or the view's team; a workspace of the same org keeps its own settings. The alerts and digests of Grid
workspaces are in tests/test_alerts.py and tests/test_secrets.py.
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
from slack_sdk.oauth.installation_store.models.installation import Installation

from bot.grid import workspace_of
from bot.settings import load_settings
from bot.slack import blocks
from bot.slack.app import build_app
from knowledge.state import settings_store
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import SECRET, assert_valid, buttons, column, dispatch, new_ts

ORG, WORKSPACE, OTHER = "E0GRID", "T0WSA", "T0WSB"
ORG_TOKEN = "xoxb-E0GRID-4242"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(team_id=WORKSPACE) as standin:
        standin.orgs[ORG] = [WORKSPACE, OTHER]
        yield standin


@pytest.fixture(scope="module")
def app(slack, kb, tmp_path_factory, gpubot_home):
    """The Bolt app in OAuth mode, with one org-wide installation in its own state database."""
    from bot.slack.oauth import installation_store

    before = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('grid') / 'state.db'}"
    settings = load_settings(
        slack_signing_secret=SECRET,
        slack_client_id="1111.2222",
        slack_client_secret="grid-client-secret",
        slack_api_url=slack.base_url,
    )
    installation_store(settings).save(
        Installation(
            app_id="A_GPUBOT",
            enterprise_id=ORG,
            team_id=None,
            is_enterprise_install=True,
            bot_token=ORG_TOKEN,
            bot_id="B_BOT",
            bot_user_id="U_BOT",
            bot_scopes="commands,chat:write",
            user_id="U_ADMIN",
            installed_at=time.time(),
        )
    )
    yield build_app(settings, kb)
    if before is None:
        os.environ.pop("DATABASE_URL", None)
    else:
        os.environ["DATABASE_URL"] = before


def channel_id() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def slash(app, slack, text: str, channel: str, *, team: str = WORKSPACE, user: str = "U_MEMBER") -> dict[str, Any]:
    """`/gpu <text>` from a workspace of the org, as Slack sends it for an org-wide install."""
    hook = f"grid-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": team,
            "enterprise_id": ORG,
            "is_enterprise_install": "true",
            "channel_id": channel,
            "user_id": user,
            "command": "/gpu",
            "text": text,
            "api_app_id": "A_GPUBOT",
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = dispatch(app, body, FORM)
    assert response.status == 200, response.body
    message = json.loads(response.body) if response.body else slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(message)
    return message


def interaction(app, payload: dict) -> Any:
    """An interaction of an org-wide install: `team` null, the org in `enterprise`."""
    grid = {"team": None, "enterprise": {"id": ORG}, "is_enterprise_install": True, "api_app_id": "A_GPUBOT"}
    return dispatch(app, urlencode({"payload": json.dumps({**grid, **payload})}), FORM)


def test_channel_settings_of_a_grid_workspace_apply_to_its_questions_and_buttons(app, slack):
    mine = channel_id()
    done = slash(app, slack, "set providers aws", mine)
    assert "aws" in json.dumps(done)
    assert settings_store.scope_settings(WORKSPACE, mine) == {"providers": ["aws"]}  # kept for the workspace
    message = slash(app, slack, "cheapest A100", mine)
    assert set(column(message, "provider")) == {"aws"}
    toggle = buttons(message)[blocks.ACTION_IDS["toggle"]]
    hook = f"grid-click-{uuid.uuid4().hex[:8]}"
    clicked = interaction(
        app,
        {
            "type": "block_actions",
            "user": {"id": "U_CLICKER", "team_id": WORKSPACE},  # the workspace is named only here
            "trigger_id": "1.2.3",
            "response_url": slack.hook_url(hook),
            "container": {"type": "message", "message_ts": "1.1", "channel_id": mine, "is_ephemeral": True},
            "channel": {"id": mine},
            "actions": [{**toggle, "block_id": "b1", "action_ts": new_ts()}],
        },
    )
    assert clicked.status == 200
    toggled = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(toggled)
    assert set(column(toggled, "provider")) == {"aws"}, "the button re-applies the Grid channel's settings"
    elsewhere = slash(app, slack, "cheapest A100", mine, team=OTHER)  # another workspace of the org
    assert set(column(elsewhere, "provider")) != {"aws"}


def test_workspace_defaults_saved_from_the_home_form_are_read_back_in_that_workspace(app, slack):
    slack.clear()
    state = {
        "values": {
            "setting_providers": {"value": {"type": "multi_static_select", "selected_options": [{"value": "aws"}]}}
        }
    }
    view = {
        "id": "V1",
        "type": "modal",
        "team_id": WORKSPACE,  # the view's workspace; `team` is null and the user's team names the org
        "callback_id": blocks.SETTINGS_MODAL_ID,
        "private_metadata": json.dumps({"lang": "en"}),
        "state": state,
    }
    saved = interaction(app, {"type": "view_submission", "user": {"id": "U_ADMIN", "team_id": ORG}, "view": view})
    assert saved.status == 200 and not saved.body, saved.body
    slack.wait_for("views.publish")  # the saver's Home tab is published again, after the save
    assert settings_store.scope_settings(WORKSPACE, "") == {"providers": ["aws"]}
    assert settings_store.scope_settings(ORG, "") == {}, "not kept under the org id"
    message = slash(app, slack, "cheapest A100", channel_id())  # any channel of that workspace
    assert set(column(message, "provider")) == {"aws"}
    settings_store.clear(WORKSPACE, "")


def test_an_alert_set_in_a_grid_workspace_belongs_to_that_workspace(app, slack):
    from knowledge.state import alerts

    mine = channel_id()
    slash(app, slack, "alert H100 spot on aws below 0.01", mine)
    [alert] = alerts.list_alerts(channel=mine)
    assert alert.team == WORKSPACE  # posted with the org's bot when it fires: tests/test_alerts.py
    assert "#" + str(alert.id) in json.dumps(slash(app, slack, "alerts", mine))
    assert "#" + str(alert.id) not in json.dumps(slash(app, slack, "alerts", mine, team=OTHER))
    alerts.remove_alert(WORKSPACE, alert.id)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"team_id": "T1", "enterprise_id": "E1"}, "T1"),  # slash command
        ({"team": {"id": "T1", "enterprise_id": "E1"}, "user": {"team_id": "E1"}}, "T1"),  # interaction, Grid
        ({"team": None, "enterprise": {"id": "E1"}, "user": {"id": "U1", "team_id": "T1"}}, "T1"),  # org-wide
        ({"team": None, "enterprise": {"id": "E1"}, "user": {"team_id": "E1"}, "view": {"team_id": "T1"}}, "T1"),
        ({"team": None, "enterprise": {"id": "E1"}, "user": {"team_id": "E1"}}, "E1"),  # only the org is named
        ({"view": {"app_installed_team_id": "T2", "team_id": "T1"}, "team": {"id": "T1"}}, "T2"),  # Slack Connect
        ({}, None),
    ],
)
def test_the_workspace_of_a_payload(body, expected):
    assert workspace_of(body) == expected
