"""Price history in Slack (issue 10), against the stand-in Slack Web API: a history question gets exactly one
chart uploaded into its thread, with alt text and the one-line summary; the slash command's summary and its
"Post chart in channel" button stay within Block Kit's limits; the digest's movers chart goes under the digest.
"""

from __future__ import annotations

import threading

import pytest
from slack_sdk import WebClient

from bot.cli import main
from bot.slack import blocks
from bot.slack.history import (
    ACTION_ID,
    attach_digest_chart,
    history_summary_blocks,
    history_summary_message,
    post_history_chart,
)
from handlers.models import Query
from knowledge.paths import CATALOG_DIR
from tests.slack_standin import SlackStandIn, validate_blocks
from tests.test_history_series import png_info

THREAD = "1700000000.000100"
A100_SPOT_AWS = Query(
    text="A100 spot price history on aws", intent="history", gpus=["A100"], providers=["aws"], pricing="spot"
)


@pytest.fixture(scope="module")
def _home(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history_slack")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUBOT_HOME", str(tmp / "home"))
        patch.setenv("DATABASE_URL", f"sqlite:///{tmp / 'state.db'}")
        for path, when in (
            (CATALOG_DIR / "history" / "aws_vms.csv", "2026-11-02T06:00:00"),
            (CATALOG_DIR / "aws_vms.csv", "2026-12-01T06:00:00"),
        ):
            assert (
                main(["prices", "refresh", "--catalog", str(path), "--provider", "aws", "--no-kb", "--taken-at", when])
                == 0
            )
    return tmp


@pytest.fixture()
def home(_home, monkeypatch):
    monkeypatch.setenv("GPUBOT_HOME", str(_home / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{_home / 'state.db'}")
    return _home


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture()
def client(slack) -> WebClient:
    slack.clear()
    return WebClient(base_url=slack.base_url, token="xoxb-T0001-test", timeout=10)


def test_a_history_question_gets_one_chart_in_its_thread(home, slack, client):
    result = post_history_chart(client, "C0GENERAL", THREAD, A100_SPOT_AWS, None)
    assert result["ok"] and result["uploaded"], result
    [upload] = slack.uploads()
    assert (upload.channel_id, upload.thread_ts) == ("C0GENERAL", THREAD)
    assert upload.initial_comment == "A100 spot on AWS: $0.5102 -&gt; $0.3082 per GPU-hour, -40% since 2026-11-02"
    assert upload.filename.endswith(".png") and "a100" in upload.filename
    assert "A100" in (upload.title or "")
    info = png_info(upload.content)
    assert info["width"] >= 800
    [request] = slack.calls("files.getUploadURLExternal")
    alt = request.body.get("alt_txt") or ""
    assert "A100" in alt and "$0.5102" in alt and "$0.3082" in alt and len(alt) <= 1000
    assert not slack.calls("chat.postMessage")  # the chart and its comment are the whole reply


def test_no_history_posts_the_explanation_not_a_chart(home, slack, client):
    query = Query(text="A100 price history on nosuchcloud", intent="history", gpus=["A100"], providers=["nosuchcloud"])
    result = post_history_chart(client, "C0GENERAL", THREAD, query, None)
    assert result == {"ok": True, "uploaded": False, "summary": result["summary"]}
    assert not slack.uploads()
    [message] = slack.messages()
    assert message["thread_ts"] == THREAD and "No price history" in message["text"]


def test_a_slack_error_is_returned_not_raised(home, slack, client):
    slack.fail("files.getUploadURLExternal", "not_in_channel")
    result = post_history_chart(client, "C0ELSEWHERE", THREAD, A100_SPOT_AWS, None)
    assert result["ok"] is False and result["error"] == "not_in_channel"
    assert not slack.uploads()
    [apology] = slack.messages()
    assert apology["thread_ts"] == THREAD  # the reason, then the answer itself (issue 18: never dropped)
    assert apology["text"] == (
        "Could not post the chart (not_in_channel).\n"
        "A100 spot on AWS: $0.5102 -&gt; $0.3082 per GPU-hour, -40% since 2026-11-02"
    )
    slack.clear()
    slack.fail("files.completeUploadExternal", "is_archived")
    quiet = post_history_chart(client, "C0ELSEWHERE", None, A100_SPOT_AWS, None, notify_failure=False)
    assert quiet["error"] == "is_archived" and not slack.messages() and not slack.uploads()


def test_a_chart_that_cannot_be_drawn_says_why_and_keeps_the_answer(home, slack, client, monkeypatch):
    import bot.charts

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'matplotlib'")

    monkeypatch.setattr(bot.charts, "render_history_png", missing)
    result = post_history_chart(client, "C0GENERAL", THREAD, A100_SPOT_AWS, None)
    assert result["ok"] and not result["uploaded"] and "matplotlib" in result["chart_error"]
    assert not slack.uploads()
    [message] = slack.messages()
    assert message["thread_ts"] == THREAD
    assert message["text"].startswith("The chart could not be drawn: the plotting library is not installed")
    assert "A100 spot on AWS: $0.5102 -&gt; $0.3082 per GPU-hour" in message["text"]  # Slack-escaped


def test_charts_render_safely_from_many_worker_threads(home, slack, client):
    results: list[dict] = []
    queries = [
        A100_SPOT_AWS,
        A100_SPOT_AWS.model_copy(update={"pricing": "on_demand"}),
        A100_SPOT_AWS.model_copy(update={"gpus": ["H100"]}),
        A100_SPOT_AWS.model_copy(update={"gpus": ["L4"]}),
    ]
    threads = [
        threading.Thread(
            target=lambda q=q, n=n: results.append(
                post_history_chart(client, "C0GENERAL", f"1700000000.00{n}", q, None)
            )
        )
        for n, q in enumerate(queries)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(results) == 4 and all(r["ok"] and r["uploaded"] for r in results), results
    uploads = slack.uploads()
    assert sorted(u.thread_ts for u in uploads) == [f"1700000000.00{n}" for n in range(4)]
    assert len({u.content for u in uploads}) == 4
    assert all(png_info(u.content)["width"] >= 800 for u in uploads)


def test_slash_summary_has_the_post_chart_button(home):
    from handlers.history import handle

    answer = handle(A100_SPOT_AWS)
    found = history_summary_blocks(answer)
    assert validate_blocks(found) == []
    [actions] = [b for b in found if b["type"] == "actions"]
    [button] = actions["elements"]
    assert button["action_id"] == ACTION_ID and button["text"]["text"] == "Post chart in channel"
    query, extra = blocks.decode_value(button["value"])
    assert query == A100_SPOT_AWS and extra == {}
    assert "$0.5102 -> $0.3082" in found[0]["text"]["text"]
    message = history_summary_message(answer)
    assert message["text"] and len(message["text"]) <= 3500


def test_slash_summary_without_data_has_no_button(home):
    from handlers.history import handle

    answer = handle(Query(text="Z9000 history", intent="history", gpus=["Z9000"], providers=["aws"], language="zh"))
    found = history_summary_blocks(answer)
    assert validate_blocks(found) == []
    assert not [b for b in found if b["type"] == "actions"]


def test_slash_summary_stays_within_limits_when_huge(home):
    from handlers.history import handle

    answer = handle(A100_SPOT_AWS)
    huge = answer.model_copy(
        update={
            "title": "T" * 500,
            "lines": [f"line {n} " + "x" * 300 for n in range(100)],
            "notes": ["<!channel> " + "n" * 500] * 30,
            "query": A100_SPOT_AWS.model_copy(update={"text": "A100 " + "very " * 2000}),
        }
    )
    found = history_summary_blocks(huge)
    assert validate_blocks(found) == []
    assert all("<!channel>" not in str(b) for b in found)
    [button] = [b for b in found if b["type"] == "actions"][0]["elements"]
    assert len(button["value"]) <= 2000 and blocks.decode_value(button["value"])[0].gpus == ["A100"]


def test_the_digest_gets_one_movers_chart_under_it(home, slack, client):
    from knowledge.history import snapshots as history

    digest = history.diff_since(provider_names=["aws"])
    assert digest.changed
    result = attach_digest_chart(client, "C0DIGEST", THREAD, digest, lang="en")
    assert result["ok"] and result["uploaded"], result
    [upload] = slack.uploads()
    assert (upload.channel_id, upload.thread_ts) == ("C0DIGEST", THREAD)
    info = png_info(upload.content)
    assert info["width"] >= 800 and "Biggest GPU price moves" in info["texts"]["Title"]
    [request] = slack.calls("files.getUploadURLExternal")
    assert "Bar chart" in request.body.get("alt_txt", "")


def test_a_digest_without_moves_gets_no_chart(home, slack, client):
    from bot.charts import digest_chart
    from knowledge.history.snapshots import Digest

    assert digest_chart(Digest()) is None
    assert attach_digest_chart(client, "C0DIGEST", THREAD, Digest()) == {"ok": True, "uploaded": False}
    assert not slack.uploads()
