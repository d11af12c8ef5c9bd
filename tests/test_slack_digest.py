"""What a subscribed channel sees of the daily digest (issue 24), posted against the stand-in Slack Web API:
Block Kit people read (a verdict header, at most five moves, the price lists by dataset and date, the rest in the
thread, in the channel's language), never a server path or a CLI command; a channel that refuses the post pauses
its subscription and its subscriber is told once.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from slack_sdk import WebClient

from bot.slack.digest import next_refresh, post_digests
from knowledge.history import snapshots as history
from knowledge.state import subscriptions
from tests.slack_standin import SlackStandIn, check_message

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
TOKEN = "xoxb-T0001-digest"
SERVER_PATH = "/srv/gpubot/imports/aws_vms.csv"


def _offer(instance_type, region, pricing, usd, gpu="H100", count=8):
    return {
        "instance_type": instance_type,
        "region": region,
        "pricing": pricing,
        "gpu": gpu,
        "gpu_count": count,
        "price_per_hour_usd": usd,
    }


REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "ap-northeast-1", "sa-east-1")
OLD = [_offer("p5.48xlarge", r, "spot", 20.0 + i) for i, r in enumerate(REGIONS)]
OLD += [_offer("g6.xlarge", r, "spot", 0.80, "L4", 1) for r in REGIONS]
OLD += [_offer("p4d.24xlarge", r, "on_demand", 32.0, "A100") for r in REGIONS[:4]]
NEW = [_offer("p5.48xlarge", r, "spot", (20.0 + i) * 0.9) for i, r in enumerate(REGIONS)]
NEW += [_offer("g6.xlarge", r, "spot", 0.80 * (0.73 if i == 0 else 0.95), "L4", 1) for i, r in enumerate(REGIONS)]
NEW += [_offer("p4d.24xlarge", r, "on_demand", 34.0, "A100") for r in REGIONS[:4]]


@pytest.fixture()
def slack(tmp_path, monkeypatch):
    """Own state (SQLite), two AWS snapshots (the newer one imported from a file on the server)."""
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])
    history.record_snapshot("aws", OLD, SERVER_PATH.replace("aws_vms", "old_aws"), NOW - dt.timedelta(days=1))
    history.record_snapshot("aws", NEW, SERVER_PATH, NOW - dt.timedelta(hours=3))
    with SlackStandIn() as standin:
        yield standin


def client_for(slack):
    return lambda team: WebClient(token=TOKEN, base_url=slack.base_url)


def visible(message: dict) -> str:
    """Every string Slack would show of a message: text, blocks, attachments."""
    return json.dumps({k: message.get(k) for k in ("text", "blocks", "attachments")}, ensure_ascii=False)


def test_the_digest_is_block_kit_with_a_verdict_five_moves_and_the_rest_in_the_thread(slack):
    subscriptions.subscribe("default", "C0001", created_by="U_ANA", charts=False)
    report = post_digests(client_for(slack), NOW)
    assert [r.status for r in report.results] == ["posted"]
    post, thread = slack.messages("C0001")
    assert check_message(post) == (None, [])
    head = post["blocks"][0]
    assert head["type"] == "header"
    assert head["text"]["text"].startswith("GPU prices since 2026-03-01: 14 cheaper, 4 dearer; biggest: L4 spot on AWS")
    assert "-27.0%" in head["text"]["text"]
    fields = [f for b in post["blocks"] if b["type"] == "section" for f in b.get("fields", [])]
    assert len(fields) == 5  # at most five moves in view
    assert (
        "*L4 spot · AWS* -27.0%" in fields[0]["text"]
        and "g6.xlarge · us-east-1: $0.8000 → $0.5840/h" in fields[0]["text"]
    )
    shown = visible(post)
    assert "Price lists compared:* AWS: price list imported by your admin (2026-03-02)" in shown
    assert "The full list is in the thread." in shown
    assert thread["thread_ts"] == post["ts"]
    assert "A100 on-demand on AWS: 4 regions dearer, median +6.2%" in visible(thread)
    assert len([line for line in visible(thread).split("\\n") if line[:2] in {"1.", "5.", "9."}]) >= 2
    for message in (post, thread):
        assert "/srv/" not in visible(message) and ".csv" not in visible(message)
        assert "gpubot digest" not in visible(message) and "`gpubot " not in visible(message)


def test_the_digest_speaks_the_channels_language(slack):
    subscriptions.subscribe("default", "C0002", language="zh", charts=False)
    post_digests(client_for(slack), NOW)
    post = slack.messages("C0002")[0]
    header = post["blocks"][0]["text"]["text"]
    assert header.startswith("自 2026-03-01 以来的 GPU 价格：14 个降价，4 个涨价；最大变化：AWS L4 竞价")
    assert "对比的价格表" in visible(post) and "管理员导入的价格表" in visible(post)
    assert "/srv/" not in visible(post)


def test_a_chart_of_the_biggest_moves_goes_in_the_thread(slack):
    subscriptions.subscribe("default", "C0003", charts=True)
    post_digests(client_for(slack), NOW)
    post = slack.messages("C0003")[0]
    slack.wait_for("files.completeUploadExternal")
    (chart,) = slack.uploads()
    assert chart.thread_ts == post["ts"] and chart.content.startswith(b"\x89PNG")
    assert "/srv/" not in (chart.initial_comment or "") and "/srv/" not in (chart.title or "")


@pytest.mark.parametrize("error", ["not_in_channel", "channel_not_found", "is_archived"])
def test_a_channel_that_refuses_the_digest_pauses_it_and_tells_the_subscriber_once(slack, error):
    subscriptions.subscribe("default", "C0004", created_by="U_ANA", charts=False)
    slack.fail("chat.postMessage", error, times=1)
    report = post_digests(client_for(slack), NOW)
    assert report.results[0].status == "failed" and "paused; U_ANA told" in report.results[0].detail
    sub = subscriptions.get_subscription("default", "C0004")
    assert not sub.active and sub.disabled_reason == error
    dms = slack.messages("U_ANA")
    assert len(dms) == 1 and "<#C0004>" in dms[0]["text"] and "paused" in dms[0]["text"]
    if error == "not_in_channel":
        assert "`/invite @gpubot`" in dms[0]["text"]
    for day in (1, 2):  # not retried blindly every day, not told again
        post_digests(client_for(slack), NOW + dt.timedelta(days=day))
    assert len(slack.messages("U_ANA")) == 1
    assert len(slack.calls("chat.postMessage")) == 2  # the refused post and the one DM
    assert subscriptions.subscribe("default", "C0004").active  # subscribing again switches it back on


def test_next_refresh_is_the_clocks_next_daily_refresh(monkeypatch):
    monkeypatch.setenv("GPUBOT_REFRESH_HOUR", "5")
    assert next_refresh(dt.datetime(2026, 3, 2, 4, 0, tzinfo=dt.UTC)) == "2026-03-02 05:00 UTC"
    assert next_refresh(dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)) == "2026-03-03 05:00 UTC"


def test_digest_now_with_changes_posts_the_block_kit_digest_in_the_channel(slack):
    from bot.slack.digest import digest_now_message

    message = digest_now_message("default", "C0NOW", "zh")
    assert message["response_type"] == "in_channel" and check_message(message) == (None, [])
    assert message["blocks"][0]["text"]["text"].startswith("自 2026-03-01 以来的 GPU 价格：14 个降价")
    assert "完整列表见本消息的讨论串" not in visible(message)  # no thread under a slash reply
    assert "/srv/" not in visible(message)
