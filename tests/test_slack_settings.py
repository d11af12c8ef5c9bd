"""Channel and workspace settings, digest subscriptions and the App Home form through the real Bolt app
(`app.dispatch` of signed requests, single-workspace mode), against the stand-in Slack Web API (issue 9).

What a user sees is asserted: `/gpu set ...` replies (did-you-mean for typos), answers in that channel filtered and
saying so in their context line, other channels unchanged, buttons re-applying the channel's current settings,
`/gpu digest ...` wired to the subscriptions, the Home tab listing them and editing the workspace defaults.
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.pipeline import answer
from bot.settings import load_settings
from bot.slack import blocks
from bot.slack.app import build_app
from bot.slack.commands import parse_command
from bot.slack.oauth import client_for_team
from knowledge.state import settings_store, subscriptions
from tests.slack_standin import SlackStandIn, message_blocks, validate_blocks
from tests.test_slack_app import (
    assert_valid,
    buttons,
    column,
    dispatch,
    new_ts,
    rendered_strings,
    table_rows,
)

TEAM = "TSET1"
FORM, JSON = "application/x-www-form-urlencoded", "application/json"


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(team_id=TEAM) as standin:
        standin.admins.add("U_ASKER")  # issue 17: workspace settings need an admin (tests/test_slack_admin.py)
        yield standin


@pytest.fixture(scope="module", autouse=True)
def own_state(tmp_path_factory, gpubot_home) -> Iterator[None]:
    """This module's own state database (settings, subscriptions), on SQLite in its own folder."""
    before = os.environ.get("DATABASE_URL")
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp_path_factory.mktemp('slack_settings') / 'state.db'}"
    yield
    if before is None:
        os.environ.pop("DATABASE_URL", None)
    else:
        os.environ["DATABASE_URL"] = before


@pytest.fixture(scope="module")
def app(slack, kb):
    settings = load_settings(
        slack_signing_secret="test-signing-secret", slack_bot_token="xoxb-test", slack_api_url=slack.base_url
    )
    return build_app(settings, kb)


@pytest.fixture(autouse=True)
def _fresh(slack) -> None:
    slack.clear()


def channel_id() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def slash(app, slack, text: str, channel: str, *, team: str = TEAM) -> dict[str, Any]:
    """What the user sees after `/gpu text` in `channel`: the ack body, or what came through response_url."""
    hook = f"set-{uuid.uuid4().hex[:8]}"
    body = urlencode(
        {
            "team_id": team,
            "channel_id": channel,
            "channel_name": "x",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": text,
            "api_app_id": "A_GPUBOT",
            "response_url": slack.hook_url(hook),
            "trigger_id": "1.2.3",
        }
    )
    response = dispatch(app, body, FORM)
    assert response.status == 200
    message = json.loads(response.body) if response.body else {}
    # a slow answer (a loaded machine): an empty ack, then the answer once through response_url
    if not message:  # an empty ack: the reply comes by the response_url
        message = slack.wait_for(f"hooks/{hook}")[0].body
    return message


def context_text(message: dict) -> str:
    return "\n".join(
        e.get("text", "") for b in message_blocks(message) if b["type"] == "context" for e in b["elements"]
    )


def text_of(message: dict) -> str:
    return "\n".join(rendered_strings(message_blocks(message)))


def per_gpu_usd(cell: str) -> float:
    return float(re.match(r"\$([\d,.]+)", cell).group(1).replace(",", ""))


# --- /gpu set, and what it does to answers -------------------------------------------------------------------


def test_channel_providers_filter_that_channel_only(app, slack, kb):
    mine, other = channel_id(), channel_id()
    reply = slash(app, slack, "set providers alibaba", mine)
    # issue 17: a channel's change is announced in the channel
    assert reply["response_type"] == "in_channel" and "<@U_ASKER> set providers to alibaba" in reply["text"]
    assert_valid(reply)
    here = slash(app, slack, "cheapest A100", mine)
    assert_valid(here)
    assert set(column(here, "provider")) == {"alibaba"}
    assert "filtered to your channel's providers: alibaba" in context_text(here)
    assert "filtered to your channel's providers: alibaba" in here["text"]  # the fallback says it too
    there = slash(app, slack, "cheapest A100", other)
    assert column(there, "instance") == [o.instance_type for o in answer("cheapest A100", kb).offers]
    assert "filtered" not in context_text(there)


def test_a_question_naming_a_provider_overrides_the_channel(app, slack):
    mine = channel_id()
    slash(app, slack, "set providers alibaba", mine)
    message = slash(app, slack, "cheapest A100 on aws", mine)
    assert set(column(message, "provider")) == {"aws"}
    assert "you named aws, so your channel's providers (alibaba) do not apply" in context_text(message)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("set providers awz", ["Not set", "awz", "Did you mean", "*aws*"]),
        ("set regions cn-hangzou", ["cn-hangzou", "*cn-hangzhou*"]),
        ("set provders aws", ["Unknown setting", "provders", "*providers*"]),
        ("set currency EUR", ["EUR", "USD"]),
        ("set budget cheap", ["budget", "2 USD/GPU-hour"]),
        ("set pricing", ["/gpu set pricing spot"]),  # no value: how to write it
        ("set", ["Usage"]),
    ],
)
def test_invalid_settings_get_a_clear_reply_and_change_nothing(app, slack, text, expected):
    mine = channel_id()
    reply = slash(app, slack, text, mine)
    assert_valid(reply)
    shown = text_of(reply)
    for part in expected:
        assert part in shown
    assert settings_store.scope_settings(TEAM, mine) == {}


def test_settings_shows_each_value_and_where_it_comes_from(app, slack):
    team, mine = "TSHOW", channel_id()
    slash(app, slack, "set workspace pricing spot", mine, team=team)
    slash(app, slack, "set workspace providers aws", mine, team=team)
    slash(app, slack, "set providers aws, alibaba", mine, team=team)
    slash(app, slack, "set budget 2 USD/GPU-hour", mine, team=team)
    shown = slash(app, slack, "settings", mine, team=team)
    assert_valid(shown)
    lines = {line.split("*")[1]: line for line in shown["blocks"][1]["text"]["text"].splitlines()}
    assert "aws, alibaba" in lines["providers"] and "this channel" in lines["providers"]
    assert "workspace: aws" in lines["providers"]  # the workspace value it overrides
    assert "spot" in lines["pricing"] and "_workspace_" in lines["pricing"]
    assert "2 USD/GPU-hour" in lines["budget (hourly cap)"]
    assert "gpubot's default" in lines["currency"]
    reply = slash(app, slack, "unset providers", mine, team=team)
    assert "Removed" in reply["text"] and "aws (workspace)" in reply["text"]
    assert settings_store.get_settings(team, mine)["providers"] == ["aws"]
    assert "Removed every setting" in slash(app, slack, "unset workspace all", mine, team=team)["text"]
    assert settings_store.scope_settings(team, "") == {}


def test_budget_language_currency_and_pricing_apply(app, slack):
    mine = channel_id()
    for text in ("set budget 2 USD/GPU-hour", "set language zh", "set currency CNY", "set pricing spot"):
        assert_valid(slash(app, slack, text, mine))
    message = slash(app, slack, "cheapest A100", mine)
    assert_valid(message)
    assert table_rows(message)[0][1] == "云厂商"  # answered in the channel's language
    assert set(column(message, "pricing")) == {"竞价"}  # the channel's pricing
    assert all(per_gpu_usd(cell) <= 2.0 for cell in column(message, "per_gpu_hour"))
    assert all("≈ ¥" in cell for cell in column(message, "per_gpu_hour"))  # converted to the channel's currency
    notes = context_text(message)
    assert "已按本频道预算筛选：不超过 2 USD/GPU-hour" in notes
    assert "已按本频道设置使用计费方式：竞价" in notes


def test_a_mention_is_answered_with_the_channel_settings(app, slack):
    mine = channel_id()
    slash(app, slack, "set providers alibaba", mine)
    ts = new_ts()
    event = {
        "type": "app_mention",
        "user": "U_ASKER",
        "text": f"<@{SlackStandIn.bot_user_id}> cheapest A100",
        "ts": ts,
        "channel": mine,
        "event_ts": ts,
    }
    body = json.dumps(
        {
            "team_id": TEAM,
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": event,
            "event_id": f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": 1,
        }
    )
    assert dispatch(app, body, JSON).status == 200
    reply = slack.wait_for("chat.postMessage")[0].body
    assert reply["channel"] == mine and set(column(reply, "provider")) == {"alibaba"}
    assert "filtered to your channel's providers: alibaba" in context_text(reply)


def click(app, slack, button: dict, channel: str, *, team: str = TEAM) -> dict:
    hook = f"click-{uuid.uuid4().hex[:8]}"
    payload = {
        "type": "block_actions",
        "team": {"id": team},
        "user": {"id": "U_CLICKER", "team_id": team},
        "api_app_id": "A_GPUBOT",
        "trigger_id": "1.2.3",
        "response_url": slack.hook_url(hook),
        "container": {"type": "message", "message_ts": "1.1", "channel_id": channel, "is_ephemeral": True},
        "channel": {"id": channel},
        "actions": [{**button, "block_id": "b1", "action_ts": new_ts()}],
    }
    assert dispatch(app, urlencode({"payload": json.dumps(payload)}), FORM).status == 200
    return slack.wait_for(f"hooks/{hook}")[0].body


def test_buttons_re_apply_the_channel_current_settings(app, slack):
    mine = channel_id()
    slash(app, slack, "set providers alibaba", mine)
    slash(app, slack, "set pricing spot", mine)
    message = slash(app, slack, "cheapest A100", mine)
    assert set(column(message, "pricing")) == {"spot"}
    toggle = buttons(message)[blocks.ACTION_IDS["toggle"]]
    assert json.loads(toggle["value"])["d"] == ["providers", "pricing"]
    slash(app, slack, "set providers aws", mine)  # the channel changes its mind before the click
    toggled = click(app, slack, toggle, mine)
    assert_valid(toggled)
    assert set(column(toggled, "pricing")) == {"on-demand"}  # what the button asked for
    assert set(column(toggled, "provider")) == {"aws"}  # the channel's providers now
    assert "filtered to your channel's providers: aws" in context_text(toggled)


# --- /gpu digest -------------------------------------------------------------------------------------------------


def test_digest_subscribe_unsubscribe_and_list(app, slack):
    mine = channel_id()
    reply = slash(app, slack, "digest subscribe hour 8 tz Asia/Shanghai gpus H100, A100 threshold 2 quiet", mine)
    assert_valid(reply)
    sub = subscriptions.get_subscription(TEAM, mine)
    assert (sub.hour, sub.timezone, sub.gpus, sub.threshold_pct, sub.quiet) == (
        8,
        "Asia/Shanghai",
        ("H100", "A100"),
        2.0,
        True,
    )
    assert "08:00" in reply["text"] and "Asia/Shanghai" in text_of(reply) and "/invite" in text_of(reply)
    listed = slash(app, slack, "digest list", mine)
    assert f"<#{mine}>" in text_of(listed)
    bad = slash(app, slack, "digest subscribe hour 25", mine)
    assert "hour must be 0..23" in text_of(bad) and "Usage" in text_of(bad)
    assert "unknown timezone" in text_of(slash(app, slack, "digest subscribe tz Mars/Olympus", mine))
    first = slash(app, slack, "digest unsubscribe", mine)["text"]
    assert "no longer" in first
    assert subscriptions.get_subscription(TEAM, mine) is None
    assert slash(app, slack, "digest unsubscribe", mine)["text"] == first  # issue 24: a repeat, answered the same
    assert "was not subscribed" in slash(app, slack, "digest stop", mine)["text"]  # another command


@pytest.mark.parametrize(
    ("text", "said"), [("digest now", "next price refresh is due"), ("摘要 现在", "下次价格刷新时间")]
)
def test_digest_now_with_one_snapshot_says_privately_when_the_next_refresh_is_due(app, slack, text, said):
    message = slash(app, slack, text, channel_id())
    assert message["response_type"] == "ephemeral"  # nothing to compare: not posted to the whole channel
    assert_valid(message)
    assert said in message["text"] and " UTC" in message["text"] and "—" not in message["text"]


def test_a_digest_question_is_still_a_question():
    assert parse_command("digest") is None and parse_command("digest since 2026-01-01") is None
    assert parse_command("settings for H100") is None
    assert parse_command("set workspace budget 2 USD/GPU-hour").scope == "workspace"


# --- App Home: subscriptions and the workspace defaults' form ----------------------------------------------------


def home(app, slack, team: str) -> dict:
    event = {"type": "app_home_opened", "user": "U_ADMIN", "channel": "D0ADMIN", "tab": "home", "event_ts": new_ts()}
    body = json.dumps(
        {
            "team_id": team,
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": event,
            "event_id": f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": 1,
        }
    )
    assert dispatch(app, body, JSON).status == 200
    return slack.wait_for("views.publish")[-1].body["view"]


def interaction(app, payload: dict):
    return dispatch(app, urlencode({"payload": json.dumps(payload)}), FORM)


def test_home_lists_subscriptions_and_edits_the_workspace_defaults(app, slack, kb):
    team, mine = "THOME", channel_id()
    slash(app, slack, "digest subscribe hour 7 gpus H100", mine, team=team)
    slash(app, slack, "set workspace providers aws", mine, team=team)
    view = home(app, slack, team)
    assert validate_blocks(view["blocks"], surface="view") == []
    shown = text_of(view)
    assert f"<#{mine}>" in shown and "07:00 UTC" in shown and "H100" in shown
    assert "Workspace defaults" in shown and "providers*: aws — _workspace_" in shown
    edit = next(
        e
        for b in view["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == blocks.ACTION_IDS["settings_open"]
    )
    slack.clear()
    assert (
        interaction(
            app,
            {
                "type": "block_actions",
                "team": {"id": team},
                "user": {"id": "U_ADMIN"},
                "api_app_id": "A_GPUBOT",
                "trigger_id": "9.9.9",
                "container": {"type": "view"},
                "actions": [{**edit, "block_id": "b", "action_ts": new_ts()}],
            },
        ).status
        == 200
    )
    modal = slack.wait_for("views.open")[0].body["view"]
    assert modal["type"] == "modal" and validate_blocks(modal["blocks"], surface="view") == []
    providers = next(b for b in modal["blocks"] if b["block_id"] == "setting_providers")["element"]
    assert [o["value"] for o in providers["initial_options"]] == ["aws"]

    def submit(values: dict):
        state = {"values": {f"setting_{k}": {"value": v} for k, v in values.items()}}
        return interaction(
            app,
            {
                "type": "view_submission",
                "team": {"id": team},
                "user": {"id": "U_ADMIN"},
                "api_app_id": "A_GPUBOT",
                "trigger_id": "9.9.9",
                "view": {**modal, "id": "V1", "state": state},
            },
        )

    bad = submit(
        {
            "regions": {"type": "plain_text_input", "value": "cn-hangzou"},
            "budget": {"type": "plain_text_input", "value": "cheap"},
        }
    )
    errors = json.loads(bad.body)
    assert errors["response_action"] == "errors"
    assert "cn-hangzhou" in errors["errors"]["setting_regions"] and "setting_budget" in errors["errors"]
    assert settings_store.scope_settings(team, "") == {"providers": ["aws"]}  # nothing saved
    good = submit(
        {
            "providers": {"type": "multi_static_select", "selected_options": [{"value": "alibaba"}, {"value": "aws"}]},
            "regions": {"type": "plain_text_input", "value": "us-east-1, cn-hangzhou"},
            "currency": {"type": "static_select", "selected_option": {"value": "CNY"}},
            "language": {"type": "static_select", "selected_option": {"value": "-"}},
            "pricing": {"type": "static_select", "selected_option": {"value": "spot"}},
            "budget": {"type": "plain_text_input", "value": "15 CNY/GPU-hour"},
        }
    )
    assert good.status == 200 and not good.body
    assert settings_store.scope_settings(team, "") == {
        "providers": ["alibaba", "aws"],
        "regions": ["us-east-1", "cn-hangzhou"],
        "currency": "CNY",
        "pricing": "spot",
        "budget": {"amount": 15.0, "currency": "CNY", "per": "gpu_hour"},
    }
    republished = slack.wait_for("views.publish")[-1].body["view"]
    assert "15 CNY/GPU-hour" in text_of(republished)
    answered = slash(app, slack, "cheapest A100", channel_id(), team=team)
    assert "filtered to your workspace's providers: alibaba, aws" in context_text(answered)


# --- the app leaves a workspace; the digest's client --------------------------------------------------------------


def test_app_uninstalled_drops_the_workspace_settings_and_subscriptions(app, slack):
    team, mine = "TGONE", channel_id()
    slash(app, slack, "set providers aws", mine, team=team)
    slash(app, slack, "digest subscribe", mine, team=team)
    body = json.dumps(
        {
            "team_id": team,
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": {"type": "app_uninstalled", "event_ts": new_ts()},
            "event_id": f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": 1,
        }
    )
    assert dispatch(app, body, JSON).status == 200
    deadline = time.monotonic() + 3  # events are handled after the 200
    while subscriptions.list_subscriptions(team) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert subscriptions.list_subscriptions(team) == []
    assert settings_store.scope_settings(team, mine) == {}
    from knowledge.state import settings_audit

    assert settings_audit.recent(team, mine) == [], "issue 17: the change record goes too"


def test_client_for_team_uses_the_single_token(slack):
    settings = load_settings(slack_bot_token="xoxb-single", slack_api_url=slack.base_url)
    client = client_for_team("T0001", settings)
    assert client.token == "xoxb-single" and client.base_url == slack.base_url


@pytest.mark.parametrize(
    ("said", "stored", "shown"),
    [
        ("$3/GPU-h", {"amount": 3.0, "currency": "USD", "per": "gpu_hour"}, "3 USD/GPU-hour"),
        ("$20/hour", {"amount": 20.0, "currency": "USD", "per": "instance_hour"}, "20 USD/hour"),  # the machine
        ("预算每小时20元", {"amount": 20.0, "currency": "CNY", "per": "instance_hour"}, "20 CNY/小时"),  # said in zh
        ("每卡时不超过3美元", {"amount": 3.0, "currency": "USD", "per": "gpu_hour"}, "3 USD/GPU·小时"),
    ],
)
def test_set_budget_reads_the_question_grammar(app, slack, said, stored, shown):
    """`/gpu set budget ...` means what the same words mean in a question (issue 23), and says it back."""
    mine = channel_id()
    reply = slash(app, slack, f"set budget {said}", mine)
    assert settings_store.scope_settings(TEAM, mine) == {"budget": stored}
    assert shown in json.dumps(reply, ensure_ascii=False)


@pytest.mark.parametrize(("said", "words"), [("1e999 USD/h", "out of range"), ("$5000 for the month", "is a total")])
def test_set_budget_refuses_what_cannot_be_an_hourly_cap(app, slack, said, words):
    mine = channel_id()
    reply = slash(app, slack, f"set budget {said}", mine)
    assert words in json.dumps(reply, ensure_ascii=False) and settings_store.scope_settings(TEAM, mine) == {}
