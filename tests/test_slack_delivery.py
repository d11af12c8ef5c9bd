"""Slack delivery that never loses an answer (issue 17), through the real Bolt app (`app.dispatch` of signed
requests) against the stand-in Slack API, which refuses blocks and throttles the way Slack does.

- A reply Slack refuses for its blocks is sent again: the offers table as section text when the refusal points at
  the table, else text only; the refusal is logged with the block type. Mentions, DMs, slash-command responses
  (response_url) and the digest posted by `/gpu digest now`.
- "Share in channel" posts the public message first and deletes the private one only when that worked; a failure
  is explained in plain words and the button works when pressed again.
- One message per slash command; buttons on a threaded reply answer in that thread; charts render on their own
  worker, off every request.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator

import pytest

from bot.pipeline import answer
from bot.settings import load_settings
from bot.slack import blocks
from bot.slack.app import build_app
from bot.slack.tables import tables_of
from tests.slack_standin import SlackStandIn, message_blocks
from tests.test_slack_app import (
    SECRET,
    assert_valid,
    block_action,
    buttons,
    column,
    command_body,
    dispatch,
    dm,
    event_body,
    mention,
    settle,
    slash,
)

FORM, JSON = "application/x-www-form-urlencoded", "application/json"
PHRASINGS = [("cheapest A100 spot", "en"), ("最便宜的A100竞价", "zh")]


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn() as standin:
        yield standin


def _app(slack, kb, **options):
    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    return build_app(settings, kb, **options)


@pytest.fixture(scope="module")
def app(slack, kb):
    return _app(slack, kb)


@pytest.fixture(scope="module")
def quick_app(slack, kb):
    """The app with a 0.05 s ack budget: a held answer goes through response_url."""
    return _app(slack, kb, ack_budget_seconds=0.05)


@pytest.fixture(autouse=True)
def _fresh(slack) -> Iterator[None]:
    slack.clear()
    yield
    slack._refused_types.clear()  # a refusal a test did not use up must not reach the next test


def instances(kb, text: str) -> list[str]:
    expected = answer(text, kb)
    assert expected.offers, f"the knowledge base answers {text!r} with offers"
    return [o.size_label or o.instance_type for o in expected.offers]  # a family of sizes shows as one label


def _at(shown: str, kb, text: str, n: int) -> int:
    """Where the n-th offer is in `shown`: by its family label ("A/B/C"), or by its own instance type (a cell)."""
    offer = answer(text, kb).offers[n]
    label = offer.size_label or offer.instance_type
    return shown.index(label) if label in shown else shown.index(offer.instance_type)


@pytest.fixture
def held(monkeypatch):
    """Answers wait until the test releases them, so the ack goes out first and the answer via response_url."""
    import bot.slack.digest
    import handlers

    gate = threading.Event()
    for intent in ("cheapest",):
        real = handlers.INTENTS[intent]
        monkeypatch.setitem(handlers.INTENTS, intent, lambda q, kb, real=real: (gate.wait(10), real(q, kb))[1])
    real_digest = bot.slack.digest.digest_answer
    monkeypatch.setattr(bot.slack.digest, "digest_answer", lambda *a, **k: (gate.wait(10), real_digest(*a, **k))[1])
    yield gate
    gate.set()


def refusal_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "refused a reply's blocks" in r.getMessage()]


# --- refused blocks ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, lang", PHRASINGS)
def test_a_refused_table_is_posted_again_with_the_offers_as_section_text(app, slack, kb, caplog, text, lang):
    slack.refuse_block_type("table")
    with caplog.at_level(logging.WARNING, logger="gpubot.slack"):
        dispatch(app, event_body(mention(text)), JSON)
        first, second = slack.wait_for("chat.postMessage", 2)
        settle(0.2)
    assert first.response["error"] == "invalid_blocks" and second.ok
    assert len(slack.messages()) == 1, "one answer in the thread"
    reply = second.body
    assert_valid(reply)
    assert not tables_of(reply) and "attachments" not in reply
    shown = "\n".join(b["text"]["text"] for b in message_blocks(reply) if b["type"] == "section")
    positions = [_at(shown, kb, text, n) for n in range(len(instances(kb, text)))]
    assert positions == sorted(positions), "every offer, in the answer's order"
    assert buttons(reply), "the buttons stay"
    assert any("block types: table" in m and "table as text" in m for m in refusal_logs(caplog))


@pytest.mark.parametrize("text, lang", PHRASINGS)
@pytest.mark.parametrize("where", ["mention", "dm"])
def test_refused_blocks_are_posted_again_as_text_only(app, slack, kb, caplog, text, lang, where):
    slack.refuse_block_type("header")
    event = mention(text) if where == "mention" else dm(text)
    with caplog.at_level(logging.WARNING, logger="gpubot.slack"):
        dispatch(app, event_body(event), JSON)
        first, second = slack.wait_for("chat.postMessage", 2)
        settle(0.2)
    assert first.response["error"] == "invalid_blocks" and second.ok
    assert "blocks" not in second.body and len(slack.messages()) == 1
    assert second.body.get("thread_ts") == first.body.get("thread_ts")
    for name in instances(kb, text):
        assert name in second.body["text"]
    assert any("block types: header" in m and "text only" in m for m in refusal_logs(caplog))


@pytest.mark.parametrize("text, lang", PHRASINGS)
def test_a_slash_answer_refused_on_its_response_url_arrives_as_text(quick_app, slack, kb, held, caplog, text, lang):
    slack.refuse_block_type("header")
    body, hook = command_body(slack, text)
    with caplog.at_level(logging.WARNING, logger="gpubot.slack"):
        assert dispatch(quick_app, body, FORM).body == ""
        held.set()
        refused, sent = slack.wait_for(f"hooks/{hook}", 2)
        settle(0.2)
    assert (refused.status, refused.response, sent.status) == (400, "invalid_blocks", 200)
    assert "blocks" not in sent.body and sent.body["response_type"] == "ephemeral"
    assert all(name in sent.body["text"] for name in instances(kb, text))  # (computed once the gate is open)
    assert len(slack.calls(f"hooks/{hook}")) == 2 and refusal_logs(caplog)


def test_a_throttled_response_url_is_tried_again_once(quick_app, slack, held):
    body, hook = command_body(slack, "cheapest A100 spot")
    slack.rate_limit(f"hooks/{hook}", retry_after=0, times=1)
    assert dispatch(quick_app, body, FORM).body == ""
    held.set()
    throttled, sent = slack.wait_for(f"hooks/{hook}", 2)
    settle()
    assert (throttled.status, sent.status) == (429, 200) and len(slack.calls(f"hooks/{hook}")) == 2
    assert column(sent.body, "instance")


def test_the_digest_posted_by_digest_now_survives_a_refusal(quick_app, slack, held):
    slack.refuse_block_type("section")
    body, hook = command_body(slack, "digest now")
    assert dispatch(quick_app, body, FORM).body == ""
    held.set()
    refused, sent = slack.wait_for(f"hooks/{hook}", 2)
    assert refused.status == 400 and sent.status == 200
    assert sent.body["response_type"] == "ephemeral" and sent.body["text"] and "blocks" not in sent.body


def test_the_offers_table_has_slacks_documented_shape(app, slack):
    """One table, in the message's attachments, raw_text cells (never empty), column settings Slack knows (the
    table-block reference); the stand-in checks each rule."""
    message = slash(app, slack, "cheapest A100 spot")
    assert_valid(message)
    assert not any(b["type"] == "table" for b in message["blocks"])
    tables = tables_of(message)
    assert len(message["attachments"]) == 1 and len(tables) == 1
    assert message["attachments"][0]["blocks"][0] == tables[0]  # right after the verdict (issue 24)
    cells = [cell for row in tables[0]["rows"] for cell in row]
    assert {c["type"] for c in cells} == {"raw_text"} and all(c["text"] for c in cells)
    assert all(set(s) <= {"align", "is_wrapped"} for s in tables[0]["column_settings"])


# --- one message per slash command --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, lang", PHRASINGS)
def test_a_fast_slash_answer_is_the_ack_and_nothing_else(app, slack, text, lang):
    body, hook = command_body(slack, text)
    response = dispatch(app, body, FORM)
    message = json.loads(response.body)
    assert message["response_type"] == "ephemeral" and column(message, "instance")
    settle()
    assert not slack.calls(f"hooks/{hook}") and not slack.calls("chat.*")


# --- share ---------------------------------------------------------------------------------------------------------


def test_share_posts_publicly_before_it_deletes_the_private_answer(app, slack):
    message = slash(app, slack, "cheapest A100 spot")
    body, hook = block_action(slack, buttons(message)[blocks.ACTION_IDS["share"]])
    dispatch(app, body, FORM)
    shared, deleted = slack.wait_for(f"hooks/{hook}", 2)
    assert shared.body["response_type"] == "in_channel" and shared.ok
    assert deleted.body.get("delete_original") is True and shared.time <= deleted.time


@pytest.mark.parametrize(
    "lang, text, expected",
    [
        ("en", "cheapest A100 spot", "I can't post in #general: invite me with `/invite @gpubot`"),
        ("zh", "最便宜的A100竞价", "我无法在 #general 发消息：请用 `/invite @gpubot` 邀请我"),
    ],
)
def test_a_failed_share_keeps_the_answer_explains_why_and_works_when_pressed_again(app, slack, lang, text, expected):
    message = slash(app, slack, text)
    share = buttons(message)[blocks.ACTION_IDS["share"]]
    body, hook = block_action(slack, share)
    slack.fail(f"hooks/{hook}", "channel_not_found", times=1)  # the response_url refuses the public post
    slack.fail("chat.postMessage", "not_in_channel", times=1)  # and the bot is not in the channel
    dispatch(app, body, FORM)
    refused, told = slack.wait_for(f"hooks/{hook}", 2)
    settle()
    assert refused.status == 404 and slack.calls("chat.postMessage")[0].response["error"] == "not_in_channel"
    assert told.body["response_type"] == "ephemeral" and told.body["replace_original"] is False
    assert expected in told.body["text"] and "not_in_channel" not in json.dumps(told.body)
    assert not any(c.body.get("delete_original") for c in slack.calls(f"hooks/{hook}")), "the answer stays"

    again, hook2 = block_action(slack, share)  # invited: the same button, pressed again
    dispatch(app, again, FORM)
    shared, deleted = slack.wait_for(f"hooks/{hook2}", 2)
    assert shared.body["response_type"] == "in_channel" and shared.ok and deleted.body["delete_original"] is True


def test_when_the_response_url_fails_the_bot_posts_the_share_itself(app, slack):
    message = slash(app, slack, "cheapest A100 spot")
    body, hook = block_action(slack, buttons(message)[blocks.ACTION_IDS["share"]])
    slack.fail(f"hooks/{hook}", "expired_url", times=1)
    dispatch(app, body, FORM)
    posted = slack.wait_for("chat.postMessage")[0]
    deleted = slack.wait_for(f"hooks/{hook}", 2)[1]
    assert posted.ok and posted.body["channel"] == "C0GENERAL" and column(posted.body, "instance")
    assert deleted.body["delete_original"] is True


# --- buttons in threads; charts off the request path ---------------------------------------------------------------


@pytest.mark.parametrize("channel", ["C0GENERAL", "D0ASKER"])
def test_a_button_on_a_threaded_reply_answers_in_that_thread(app, slack, channel):
    thread = "1700000000.000777"
    dispatch(app, event_body(mention("cheapest A100 spot", channel=channel, thread_ts=thread)), JSON)
    reply = slack.wait_for("chat.postMessage")[0].body
    assert reply["thread_ts"] == thread
    toggle = buttons(reply)[blocks.ACTION_IDS["toggle"]]
    body, hook = block_action(
        slack, toggle, ephemeral=False, channel=channel, message={"ts": "1700000000.000900", "thread_ts": thread}
    )
    dispatch(app, body, FORM)
    if channel.startswith("D"):  # a DM: answered in the conversation's thread
        answered = slack.wait_for(f"hooks/{hook}")[0].body
    else:  # issue 24: privately, in the thread, through chat.postEphemeral (a response_url ignores thread_ts)
        answered = slack.wait_for("chat.postEphemeral")[0].body
        assert answered["user"] == "U_CLICKER" and not slack.calls(f"hooks/{hook}")
    assert answered["thread_ts"] == thread
    assert set(column(answered, "pricing")) == {"on-demand"}


def test_charts_render_on_the_chart_worker_not_in_a_request(app, slack, monkeypatch):
    import bot.slack.history

    real = bot.slack.history.post_history_chart
    seen: list[str] = []

    def recording(*args, **kwargs):
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(bot.slack.history, "post_history_chart", recording)
    event = mention("H100 spot price history on gcp")
    assert dispatch(app, event_body(event), JSON).status == 200
    upload = slack.wait_for("files.completeUploadExternal", timeout=30)[0]
    assert upload.ok and upload.body["thread_ts"] == event["ts"]
    assert seen and all(name.startswith("gpubot-chart") for name in seen), seen
