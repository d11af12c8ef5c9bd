"""Enterprise Grid uninstall (issue 19), through the real Bolt app in OAuth mode (`app.dispatch` of signed requests)
against the stand-in Slack Web API, on SQLite and PostgreSQL.

Org `E0GRID` has the app installed org-wide (its installation names only the org), serving workspaces `T0WSA` and
`T0WSB`; workspace `T0OWN` of the same org has an installation of its own. Settings, a price alert and a digest
subscription are made from each workspace by slash command. `app_uninstalled` / `tokens_revoked` for the org-wide
install (Slack has revoked the org's token by then: `auth.teams.list` answers `token_revoked`) remove the org's
installation and everything of `T0WSA` and `T0WSB`, so a later digest run and alert check post nothing to them and
their bot is not found; `T0OWN` keeps its own. A workspace-level uninstall of `T0OWN` leaves the org alone.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from urllib.parse import urlencode

import pytest
import sqlalchemy as sa
from slack_sdk.oauth.installation_store.models.installation import Installation

from bot.installations import find_team_bot
from bot.settings import load_settings
from bot.slack.app import build_app
from knowledge.state import alerts, settings_audit, settings_store, subscriptions
from tests.slack_standin import SlackStandIn
from tests.test_slack_app import BOT_USER, SECRET, dispatch

ORG, SERVED, OWN = "E0GRID", ("T0WSA", "T0WSB"), "T0OWN"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture()
def grid(state_url, kb, monkeypatch):
    """The stand-in, the Bolt app in OAuth mode and the org's installs, in a fresh state database."""
    from bot.slack.oauth import installation_store

    with SlackStandIn(team_id=SERVED[0]) as slack:
        slack.orgs[ORG] = list(SERVED)  # granted to the org-wide install; T0OWN is installed on its own
        env = {
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_CLIENT_ID": "1111.2222",
            "SLACK_CLIENT_SECRET": "grid-client-secret",
            "SLACK_API_URL": slack.base_url,
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        settings = load_settings()
        store = installation_store(settings)
        for team, token in ((None, "xoxb-E0GRID-4242"), (OWN, "xoxb-T0OWN-77")):
            store.save(
                Installation(
                    app_id="A_GPUBOT",
                    enterprise_id=ORG,
                    team_id=team,
                    is_enterprise_install=team is None,
                    bot_token=token,
                    bot_id="B_BOT",
                    bot_user_id=BOT_USER,
                    bot_scopes="commands,chat:write,channels:history",
                    user_id="U_ADMIN",
                    installed_at=time.time(),
                )
            )
        yield slack, build_app(settings, kb), store


def slash(app, slack, team: str, channel: str, text: str) -> str:
    """`/gpu <text>` from a workspace of the org (org-wide for the served ones), the reply's text."""
    hook = f"grid-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": team,
            "enterprise_id": ORG,
            "is_enterprise_install": "false" if team == OWN else "true",
            "channel_id": channel,
            "user_id": "U_MEMBER",
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
    return message.get("text", "")


def use(app, slack, team: str) -> str:
    """Settings, an alert and a digest subscription made in workspace `team`; its channel."""
    channel = "C0" + team
    assert "aws" in slash(app, slack, team, channel, "set providers aws")
    assert slash(app, slack, team, channel, "alert H100 spot on aws below 0.01").startswith("Alert #")
    slash(app, slack, team, channel, "digest subscribe")
    return channel


def uninstall(app, event: dict, *, org_wide: bool, team: str | None = None) -> None:
    """The event as Slack sends it: an org-wide install's names the org (and no workspace)."""
    body = {
        "token": "legacy",
        "enterprise_id": ORG,
        "is_enterprise_install": org_wide,
        "api_app_id": "A_GPUBOT",
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:10]}",
        "event_time": int(time.time()),
        "event": {"event_ts": f"{time.time():.6f}", **event},
        **({"team_id": team} if team else {}),
    }
    assert dispatch(app, json.dumps(body), "application/json").status == 200


def kept(team: str) -> tuple[int, ...]:
    """Whether a workspace still has settings, settings audit entries, alerts, digest subscriptions (1/0 each)."""
    return tuple(
        int(bool(found))
        for found in (
            settings_store.scope_settings(team, "C0" + team),
            settings_audit.recent(team, "C0" + team),
            alerts.list_alerts(team),
            subscriptions.list_subscriptions(team),
        )
    )


def org_rows(store) -> int:
    with store.engine.connect() as conn:
        return sum(
            conn.execute(
                sa.select(sa.func.count()).select_from(t).where(t.c.enterprise_id == ORG, t.c.is_enterprise_install)
            ).scalar_one()
            for t in (store.bots, store.installations)
        )


def settle(condition, seconds: float = 10.0) -> None:
    """Events are acknowledged first and handled after: wait (bounded) for the handler's effect."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def digest_run(days: int = 1):
    from bot.slack.digest import post_digests
    from bot.slack.oauth import client_for_team

    return post_digests(client_for_team, dt.datetime.now(dt.UTC) + dt.timedelta(days=days))


@pytest.mark.parametrize(
    "event",
    [
        {"type": "app_uninstalled"},
        {"type": "tokens_revoked", "tokens": {"bot": ["U_BOT"]}},
    ],
    ids=["app_uninstalled", "tokens_revoked"],
)
def test_an_org_wide_uninstall_forgets_the_org_and_its_workspaces(grid, event):
    from bot.alert_cmd import check_and_post

    slack, app, store = grid
    channels = {team: use(app, slack, team) for team in (*SERVED, OWN)}
    assert {team: kept(team) for team in channels} == {team: (1, 1, 1, 1) for team in channels}
    before = digest_run()
    assert {r.team for r in before.results if r.status == "posted"} == {*SERVED, OWN}  # all reachable until now
    slack.clear()
    slack.fail("auth.teams.list", "token_revoked", times=100)  # Slack revoked the org's token first
    uninstall(app, event, org_wide=True)
    settle(lambda: org_rows(store) == 0)
    assert org_rows(store) == 0, "the org-wide installation and bot are deleted"
    settle(lambda: alerts.list_alerts(SERVED[1]) == [])
    assert {team: kept(team) for team in SERVED} == {team: (0, 0, 0, 0) for team in SERVED}
    assert kept(OWN) == (1, 1, 1, 1), "a workspace installed on its own keeps everything"
    assert [find_team_bot(store, team) for team in SERVED] == [None, None]
    assert find_team_bot(store, OWN) is not None
    after = digest_run(2)
    assert {r.team for r in after.results} == {OWN}
    report = check_and_post(now=dt.datetime.now(dt.UTC))
    assert {r.team for r in report.results} <= {OWN}
    assert [slack.messages(channels[team]) for team in SERVED] == [[], []], "nothing posted to the org any more"


def test_a_workspace_uninstall_in_an_org_leaves_the_org_alone(grid):
    slack, app, store = grid
    for team in (*SERVED, OWN):
        use(app, slack, team)
    uninstall(app, {"type": "app_uninstalled"}, org_wide=False, team=OWN)
    settle(lambda: find_team_bot(store, OWN) is None)
    assert find_team_bot(store, OWN) is None and kept(OWN) == (0, 0, 0, 0)
    assert org_rows(store) == 2, "the org-wide installation stays"
    assert {team: kept(team) for team in SERVED} == {team: (1, 1, 1, 1) for team in SERVED}
    assert [find_team_bot(store, team).bot_token for team in SERVED] == ["xoxb-E0GRID-4242"] * 2


def test_an_org_whose_workspaces_cannot_be_listed_any_more_serves_nothing_and_raises_nothing(grid, monkeypatch):
    """After the org's token is revoked (and before or without the uninstall event), looking a workspace up
    finds no bot, and the digest fails that workspace with a clear reason rather than raising."""
    slack, app, store = grid
    channel = use(app, slack, SERVED[0])
    slack.fail("auth.teams.list", "token_revoked", times=100)
    from bot import installations

    installations._grants.clear()
    assert find_team_bot(store, SERVED[0]) is None
    slack.server_error("auth.teams.list", times=100)
    installations._grants.clear()
    assert find_team_bot(store, SERVED[0]) is None
    monkeypatch.setenv("SLACK_API_URL", "http://127.0.0.1:9/api/")  # nothing listens: a connection error
    installations._grants.clear()
    assert find_team_bot(store, SERVED[0]) is None
    monkeypatch.setenv("SLACK_API_URL", slack.base_url)
    report = digest_run()
    [result] = [r for r in report.results if r.team == SERVED[0]]
    assert result.status == "failed" and slack.messages(channel) == []
