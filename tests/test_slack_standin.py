"""Tests of the loopback Slack Web API stand-in, driven by the real slack_sdk clients."""

from __future__ import annotations

import json
import random
import urllib.error
import urllib.request

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_standin import SlackStandIn, validate_blocks


@pytest.fixture
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture
def client(slack):
    return WebClient(token="xoxb-test", base_url=slack.base_url, timeout=2)


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(action_id: str) -> dict:
    return {"type": "button", "action_id": action_id, "text": {"type": "plain_text", "text": "Go"}, "value": "v"}


def table(rows: int = 2, cols: int = 2) -> dict:
    return {
        "type": "table",
        "rows": [[{"type": "raw_text", "text": f"{r},{c}"} for c in range(cols)] for r in range(rows)],
    }


def test_urls_are_loopback(slack):
    assert slack.base_url.startswith("http://127.0.0.1:") and slack.base_url.endswith("/api/")
    assert slack.hook_url("cmd") == slack.url + "/hooks/cmd"


def test_auth_test_returns_bot_identity_and_scopes(client, slack):
    resp = client.auth_test()
    assert (resp["team_id"], resp["user_id"], resp["bot_id"]) == ("T0001", "U_BOT", "B_BOT")
    assert resp["url"] and resp["team"] and resp["user"]
    assert "chat:write" in resp.headers["x-oauth-scopes"]
    call = slack.wait_for("auth.test")[0]
    assert call.path == "/api/auth.test" and call.headers["authorization"] == "Bearer xoxb-test"


@pytest.mark.parametrize("token", ["xoxp-user-token", "garbage"])
def test_auth_test_rejects_bad_token(slack, token):
    with pytest.raises(SlackApiError) as exc:
        WebClient(token=token, base_url=slack.base_url).auth_test()
    assert exc.value.response["error"] == "invalid_auth"


def test_auth_test_accepts_token_form_field(slack):
    resp = WebClient(base_url=slack.base_url).api_call("auth.test", data={"token": "xoxb-form"})
    assert resp["ok"] and slack.calls("auth.test")[0].body == {"token": "xoxb-form"}


def test_methods_other_than_oauth_need_a_token(slack):
    with pytest.raises(SlackApiError) as exc:
        WebClient(base_url=slack.base_url).chat_postMessage(channel="C1", text="hi")
    assert exc.value.response["error"] == "not_authed"


def test_post_message_is_recorded_with_json_body(client, slack):
    blocks = [section("*A100* from $1.10/h"), {"type": "divider"}]
    first = client.chat_postMessage(channel="C1", text="A100 prices", blocks=blocks, thread_ts="1.2")
    second = client.chat_postMessage(channel="C2", text="second")
    assert first["channel"] == "C1" and first["message"]["text"] == "A100 prices"
    assert first["ts"] == "1700000000.000100" and float(second["ts"]) > float(first["ts"])

    call = slack.wait_for("chat.postMessage", count=2)[0]
    assert call.headers["content-type"].startswith("application/json")
    assert call.body == {"channel": "C1", "text": "A100 prices", "blocks": blocks, "thread_ts": "1.2"}
    assert json.loads(call.raw) == call.body and call.status == 200 and call.ok
    assert [m["text"] for m in slack.messages()] == ["A100 prices", "second"]
    assert slack.messages("C1")[0]["ts"] == first["ts"]


def test_form_encoded_blocks_are_decoded(client, slack):
    client.api_call("chat.postMessage", data={"channel": "C1", "text": "t", "blocks": json.dumps([section("x")])})
    assert slack.calls("chat.postMessage")[0].body["blocks"][0]["type"] == "section"


def test_limits_are_accepted_at_the_boundary(client):
    client.chat_postMessage(channel="C1", text="t", blocks=[{"type": "divider"}] * 50)
    client.chat_postMessage(
        channel="C1", text="t", blocks=[section("x" * 3000)], attachments=[{"blocks": [table(rows=100, cols=20)]}]
    )


@pytest.mark.parametrize(
    "blocks, fragment",
    [
        ([{"type": "divider"}] * 51, "no more than 50"),
        ([section("x" * 3001)], "/blocks/0/text/text"),
        ([{"type": "table", "rows": [[{"type": "raw_number", "value": 1}]]}], "/blocks/0/rows/0/0"),  # data_table's
        ([{"type": "table", "rows": [[{"type": "raw_text", "text": ""}]]}], "/blocks/0/rows/0/0/text"),
        ([{"type": "table", "rows": [[{"type": "rich_text"}]]}], "/blocks/0/rows/0/0/elements"),
        ([{**table(), "column_settings": [{"align": "middle"}]}], "/blocks/0/column_settings/0/align"),
        ([{"type": "actions", "elements": [button("pick"), button("pick")]}], "duplicate action_id"),
        (
            [{"type": "actions", "elements": [button("pick")]}, {"type": "actions", "elements": [button("pick")]}],
            "duplicate action_id",
        ),
        ([{"type": "header", "text": {"type": "mrkdwn", "text": "x"}}], "/blocks/0/text"),
        ([{"type": "sectoin", "text": {"type": "mrkdwn", "text": "x"}}], "unknown block type"),
        ([{"type": "divider", "block_id": "a"}, {"type": "divider", "block_id": "a"}], "duplicate block_id"),
        ([{"type": "table", "rows": [[{"type": "raw_text", "text": "a"}], []]}], "/blocks/0/rows/1"),
        (
            [{"type": "actions", "elements": [{**button("b"), "text": {"type": "plain_text", "text": "x" * 76}}]}],
            "/blocks/0/elements/0/text/text",
        ),
    ],
)
def test_block_kit_violations_are_rejected(client, slack, blocks, fragment):
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="fallback", blocks=blocks)
    assert exc.value.response["error"] == "invalid_blocks"
    assert any(fragment in e for e in exc.value.response["errors"]), exc.value.response["errors"]
    assert slack.calls("chat.postMessage")[0].status == 200 and slack.messages() == []


@pytest.mark.parametrize(
    "message",
    [
        {"attachments": [{"blocks": [table(), table()]}]},
        {"attachments": [{"blocks": [table()]}, {"blocks": [table()]}]},  # counted over the whole message
    ],
)
def test_one_table_per_message_like_slack(client, message):
    """Slack: one table per message, else `invalid_attachments` / `only_one_table_allowed` (slack-skills-plugin)."""
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="fallback", **message)
    assert exc.value.response["error"] == "invalid_attachments"
    assert any("only_one_table_allowed" in e for e in exc.value.response["errors"])


def test_a_table_goes_in_the_attachments_of_a_message_never_in_blocks_or_a_view(client):
    """The table-block docs: a message carries its table in the `attachments` field; tables are for messages."""
    assert client.chat_postMessage(channel="C1", text="t", attachments=[{"blocks": [table()]}])["ok"]
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="t", blocks=[table()])
    assert exc.value.response["error"] == "invalid_blocks"
    assert any("attachments field [json-pointer:/blocks/0/type]" in e for e in exc.value.response["errors"])
    with pytest.raises(SlackApiError) as exc:
        client.views_publish(user_id="U1", view={"type": "home", "blocks": [table()]})
    assert any("only allowed in messages" in e for e in exc.value.response["errors"])


def test_a_refused_block_type_is_refused_once_pointing_at_it(client, slack):
    slack.refuse_block_type("table")
    message = {"blocks": [section("x")], "attachments": [{"blocks": [section("y"), table()]}]}
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="t", **message)
    assert exc.value.response["error"] == "invalid_blocks"
    assert exc.value.response["errors"] == ["unsupported type: table [json-pointer:/attachments/0/blocks/1/type]"]
    assert client.chat_postMessage(channel="C1", text="t", **message)["ok"]


def test_users_info_tells_admins_owners_and_guests(client, slack):
    roles = {u: client.users_info(user=u)["user"] for u in ("U_ADMIN", "U_OWNER", "U_GUEST", "U_SOMEONE")}
    assert [(r["is_admin"], r["is_owner"], r["is_restricted"]) for r in roles.values()] == [
        (True, False, False),
        (True, True, False),
        (False, False, True),
        (False, False, False),
    ]


def test_a_response_url_takes_five_posts(slack):
    import urllib.error
    import urllib.request

    def post() -> int:
        req = urllib.request.Request(
            slack.hook_url("five"), data=b'{"text": "x"}', method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            return urllib.request.urlopen(req, timeout=5).status
        except urllib.error.HTTPError as exc:
            return exc.code

    assert [post() for _ in range(6)] == [200] * 5 + [404]


def test_blocks_without_text_are_rejected(client):
    with pytest.warns(UserWarning), pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", blocks=[section("only blocks")])
    assert exc.value.response["error"] == "missing_text"


def test_overlong_text_is_rejected(client):
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="x" * 40_001)
    assert exc.value.response["error"] == "msg_too_long"


def test_views_publish_allows_100_blocks_not_101(client):
    assert client.views_publish(user_id="U1", view={"type": "home", "blocks": [{"type": "divider"}] * 100})["ok"]
    with pytest.raises(SlackApiError) as exc:
        client.views_publish(user_id="U1", view={"type": "home", "blocks": [{"type": "divider"}] * 101})
    assert exc.value.response["error"] == "invalid_blocks"


def test_validate_blocks_can_be_used_directly():
    assert validate_blocks([section("ok"), table()]) == []
    assert validate_blocks([{"type": "markdown", "text": "x" * 12_001}])
    assert validate_blocks([{"type": "markdown", "text": "md"}], surface="view")
    dup = [{"type": "actions", "elements": [button("a")]}, {"type": "actions", "elements": [button("a")]}]
    assert validate_blocks(dup, action_id_scope="block") == []


def test_rate_limit_is_retried_by_the_retry_handler(slack, monkeypatch):
    monkeypatch.setattr(random, "random", lambda: 0.0)  # the SDK sleeps Retry-After + random()
    slack.rate_limit("chat.postMessage", retry_after=0)
    retrying = WebClient(
        token="xoxb-test", base_url=slack.base_url, retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)]
    )
    assert retrying.chat_postMessage(channel="C1", text="digest")["ok"]
    calls = slack.calls("chat.postMessage")
    assert [c.status for c in calls] == [429, 200] and calls[0].response["error"] == "ratelimited"


def test_rate_limit_without_retry_handler_surfaces_429(client, slack):
    slack.rate_limit("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="digest")
    assert exc.value.response.status_code == 429 and exc.value.response.headers["retry-after"] == "7"


def test_programmed_failure_then_recovery(client, slack):
    slack.fail("chat.postMessage", "not_in_channel")
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel="C1", text="hi")
    assert exc.value.response["error"] == "not_in_channel"
    assert client.chat_postMessage(channel="C1", text="hi")["ok"]
    assert [c.ok for c in slack.calls()] == [False, True] and len(slack.messages()) == 1


def test_server_error_and_delay(client, slack):
    slack.server_error("auth.test", status=503)
    with pytest.raises(SlackApiError) as exc:
        client.auth_test()
    assert exc.value.response.status_code == 503

    slack.delay("users.info", 1.0)
    impatient = WebClient(token="xoxb-test", base_url=slack.base_url, timeout=0.1)
    with pytest.raises(TimeoutError):
        impatient.users_info(user="U1")
    slack.delay("users.info", 0)
    assert client.users_info(user="U1")["user"]["id"] == "U1"


def test_files_upload_v2_round_trip(client, slack):
    resp = client.files_upload_v2(
        channel="C1",
        content=b"\x89PNG fake",
        filename="x.png",
        title="Prices",
        thread_ts="1700000000.000100",
        initial_comment="chart",
    )
    assert resp["file"]["id"].startswith("F") and resp["files"][0]["title"] == "Prices"
    [upload] = slack.uploads()
    assert upload.content == b"\x89PNG fake" and upload.filename == "x.png"
    assert (upload.channel_id, upload.thread_ts, upload.initial_comment) == ("C1", "1700000000.000100", "chart")
    assert [c.method.split("/")[0] for c in slack.calls()] == [
        "files.getUploadURLExternal",
        "upload",
        "files.completeUploadExternal",
    ]


def test_response_url_posts_are_recorded_and_validated(slack):
    resp = httpx.post(slack.hook_url("cmd1"), json={"text": "Looking up A100 prices…", "response_type": "ephemeral"})
    assert (resp.status_code, resp.text) == (200, "ok")
    assert slack.wait_for("hooks/cmd1")[0].body["response_type"] == "ephemeral"

    bad = json.dumps({"text": "t", "blocks": [section("x" * 3001)]}).encode()
    req = urllib.request.Request(slack.hook_url("cmd2"), data=bad, headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=2)
    assert exc.value.code == 400 and exc.value.read() == b"invalid_blocks"
    exc.value.close()
    assert slack.calls("hooks/*")[1].errors


def test_oauth_v2_access_good_and_bad_code(client, slack):
    resp = client.oauth_v2_access(client_id="cid", client_secret="secret", code="valid-code")
    assert resp["access_token"].startswith("xoxb-T0002-") and resp["token_type"] == "bot"
    assert resp["team"]["id"] == "T0002" and resp["enterprise"] is None
    assert resp["bot_user_id"] == "U_BOT" and resp["authed_user"]["id"] and resp["app_id"] and resp["scope"]
    assert client.auth_test(token=resp["access_token"])["team_id"] == "T0002"
    with pytest.raises(SlackApiError) as exc:
        client.oauth_v2_access(client_id="cid", client_secret="secret", code="nope")
    assert exc.value.response["error"] == "invalid_code"


def test_other_methods(client, slack):
    assert client.conversations_open(users="U42")["channel"]["id"] == "D42"
    assert client.conversations_info(channel="C1")["channel"]["is_member"]
    assert client.chat_postEphemeral(channel="C1", user="U1", text="psst")["message_ts"]
    assert client.chat_update(channel="C1", ts="1.1", text="edited")["ts"] == "1.1"
    assert client.chat_delete(channel="C1", ts="1.1")["ok"]
    assert client.api_call("apps.connections.open")["url"] == "ws://127.0.0.1:1/"
    assert client.api_call("reactions.add", json={"name": "eyes"})["ok"]


def test_wait_for_times_out_with_what_was_received(client, slack):
    client.auth_test()
    with pytest.raises(AssertionError, match="auth.test -> 200"):
        slack.wait_for("chat.postMessage", timeout=0.05)
    slack.clear()
    assert slack.calls() == []
