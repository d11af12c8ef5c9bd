"""Posting the digest (issue 6) against the stand-in Slack Web API: once per subscribed channel and day, across
reruns, a crash mid-run, a dead sender's stale claim and two processes; 429s retried after Retry-After; a failing
channel reported without blocking the others and not retried forever; quiet subscriptions stay quiet.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.cli import main
from bot.slack.digest import digest_answer, post_digests
from knowledge.history import snapshots as history
from knowledge.state import subscriptions
from tests.slack_standin import SlackStandIn

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
TOKEN = "xoxb-T0001-digest"
CHANNELS = ("C0001", "C0002", "C0003")


def _offer(instance_type, region, pricing, usd, gpu="H100", count=8):
    return {
        "instance_type": instance_type,
        "region": region,
        "pricing": pricing,
        "gpu": gpu,
        "gpu_count": count,
        "price_per_hour_usd": usd,
    }


OLD = [
    _offer("p5.48xlarge", "us-east-1", "spot", 20.0),
    _offer("p5.48xlarge", "us-west-2", "spot", 22.0),
    _offer("g5.xlarge", "us-east-1", "on_demand", 1.006, "A10G", 1),
]
NEW = [
    _offer("p5.48xlarge", "us-east-1", "spot", 18.0),
    _offer("p5.48xlarge", "us-west-2", "spot", 19.8),
    _offer("g5.xlarge", "us-east-1", "on_demand", 1.006, "A10G", 1),
    _offer("g5.xlarge", "eu-west-1", "on_demand", 1.123, "A10G", 1),
]


@pytest.fixture()
def slack(tmp_path, monkeypatch, state_url):
    """Own state (SQLite, then PostgreSQL), two AWS snapshots (H100 spot 10% cheaper), three subscribed channels."""
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])  # bundled baselines: not the point here
    history.record_snapshot("aws", OLD, "old catalog", NOW - dt.timedelta(days=2))
    history.record_snapshot("aws", NEW, "new catalog", NOW - dt.timedelta(hours=3))
    for channel in CHANNELS:
        subscriptions.subscribe("default", channel)
    with SlackStandIn() as standin:
        monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
        monkeypatch.setenv("SLACK_API_URL", standin.base_url)
        yield standin


def client_for(slack):
    return lambda team: WebClient(token=TOKEN, base_url=slack.base_url)


def per_channel(slack) -> dict[str, int]:
    return {c: len(slack.messages(c)) for c in CHANNELS}


def statuses(report) -> dict[str, str]:
    return {r.channel: r.status for r in report.results}


def test_posting_twice_posts_once_per_channel(slack, capsys):
    assert main(["digest", "--post"]) == 0
    assert main(["digest", "--post"]) == 0
    assert per_channel(slack) == {c: 1 for c in CHANNELS}
    out = capsys.readouterr().out
    assert out.count(" posted") == 3 and out.count("already_sent") == 3
    text = slack.messages("C0001")[0]["text"]
    assert "H100 spot on AWS: 2 regions cheaper, median -10.0%" in text
    assert "A10G on-demand on AWS: 1 new offer" in text
    assert slack.messages("C0001")[0]["metadata"]["event_type"] == "gpubot_digest"


def test_a_crash_mid_run_then_a_rerun_posts_the_rest_exactly_once(slack):
    def crash(result):
        raise RuntimeError("process killed after the first channel")

    with pytest.raises(RuntimeError):
        post_digests(client_for(slack), NOW, on_posted=crash)
    assert sum(per_channel(slack).values()) == 1
    report = post_digests(client_for(slack), NOW)
    assert sorted(statuses(report).values()) == ["already_sent", "posted", "posted"]
    assert per_channel(slack) == {c: 1 for c in CHANNELS}


def test_a_dead_senders_claim_blocks_until_it_is_stale(slack):
    period = NOW.date().isoformat()
    claim = subscriptions.claim_post("default", "C0002", period, now=NOW - dt.timedelta(minutes=5))
    assert isinstance(claim, subscriptions.Claim)  # ...and the process holding it died before posting
    report = post_digests(client_for(slack), NOW)
    assert statuses(report) == {"C0001": "posted", "C0002": "in_progress", "C0003": "posted"}
    report = post_digests(client_for(slack), NOW + dt.timedelta(minutes=40))
    assert statuses(report) == {"C0001": "already_sent", "C0002": "posted", "C0003": "already_sent"}
    assert per_channel(slack) == {c: 1 for c in CHANNELS}
    assert not subscriptions.finish_post(claim, "sent")  # the dead sender's token no longer counts


def test_429_is_retried_after_retry_after(slack):
    slack.rate_limit("chat.postMessage", retry_after=1, times=1)
    started = time.monotonic()
    report = post_digests(client_for(slack), NOW)
    assert time.monotonic() - started >= 1.0
    assert set(statuses(report).values()) == {"posted"}
    assert [c.status for c in slack.calls("chat.postMessage")] == [429, 200, 200, 200]
    assert per_channel(slack) == {c: 1 for c in CHANNELS}


def test_a_failing_channel_is_reported_and_does_not_block_the_others(slack, capsys):
    slack.fail("chat.postMessage", "not_in_channel", times=1)  # the first channel, C0001
    assert main(["digest", "--post"]) == 1
    out = capsys.readouterr().out
    assert "C0001" in out and "failed: not_in_channel (not retried this period)" in out
    assert per_channel(slack) == {"C0001": 0, "C0002": 1, "C0003": 1}
    calls = len(slack.calls("chat.postMessage"))
    assert main(["digest", "--post"]) == 0  # same day: not retried
    assert len(slack.calls("chat.postMessage")) == calls
    assert "already_failed" in capsys.readouterr().out


def test_a_channel_failing_three_days_is_switched_off(slack):
    for day in range(3):
        slack.fail("chat.postMessage", "channel_not_found", times=1)
        report = post_digests(client_for(slack), NOW + dt.timedelta(days=day))
        assert statuses(report)["C0001"] == "failed"
    assert "switched off" in report.results[0].detail
    sub = subscriptions.get_subscription("default", "C0001")
    assert not sub.active and sub.disabled_reason == "channel_not_found"
    report = post_digests(client_for(slack), NOW + dt.timedelta(days=3))
    assert "C0001" not in statuses(report)
    assert subscriptions.subscribe("default", "C0001").active  # subscribing again switches it back on


def test_a_server_error_is_retried_on_the_next_run(slack):
    slack.server_error("chat.postMessage", 500, times=1)
    report = post_digests(client_for(slack), NOW)
    assert statuses(report)["C0001"] == "failed"
    report = post_digests(client_for(slack), NOW)
    assert statuses(report) == {"C0001": "posted", "C0002": "already_sent", "C0003": "already_sent"}
    assert per_channel(slack) == {c: 1 for c in CHANNELS}


def test_quiet_subscriptions_post_nothing_when_nothing_changed(slack):
    subscriptions.subscribe("default", "C0003", quiet=True)
    report = post_digests(client_for(slack), NOW)
    assert set(statuses(report).values()) == {"posted"}  # there were changes: quiet ones post too
    next_day = post_digests(client_for(slack), NOW + dt.timedelta(days=1))
    assert statuses(next_day) == {"C0001": "posted", "C0002": "posted", "C0003": "quiet"}
    assert per_channel(slack) == {"C0001": 2, "C0002": 2, "C0003": 1}
    assert slack.messages("C0001")[1]["text"].startswith("No GPU price changes since")


def test_each_channel_gets_its_gpus_threshold_and_language(slack):
    subscriptions.subscribe("default", "C0002", gpus=["a10g"], language="zh")
    subscriptions.subscribe("default", "C0003", gpus="H100", threshold_pct=15)
    post_digests(client_for(slack), NOW)
    zh = slack.messages("C0002")[0]["text"]
    assert "AWS 上 A10G 按需：新增 1 个报价" in zh and "H100" not in zh
    assert slack.messages("C0003")[0]["text"].startswith("No GPU price changes")  # -10% is below 15%
    answer, digest = digest_answer("default", "C0002")
    assert answer.query.language == "zh" and digest.gpus == ("A10G",)


def test_due_only_waits_for_the_local_hour(slack):
    subscriptions.subscribe("default", "C0001", hour=9, timezone="Asia/Shanghai")  # 10:00 UTC = 18:00 there
    subscriptions.subscribe("default", "C0002", hour=11, timezone="UTC")
    report = post_digests(client_for(slack), NOW, due_only=True)
    assert statuses(report) == {"C0001": "posted", "C0002": "not_due", "C0003": "posted"}


def test_subscription_options_are_validated(slack, capsys):
    with pytest.raises(ValueError, match="unknown timezone"):
        subscriptions.subscribe("default", "C9", timezone="Mars/Olympus")
    with pytest.raises(ValueError, match="unknown GPU family 'H1OO'"):
        subscriptions.subscribe("default", "C9", gpus=["H1OO"])
    assert (
        main(
            [
                "digest",
                "subscribe",
                "--channel",
                "C0009",
                "--hour",
                "8",
                "--tz",
                "Asia/Shanghai",
                "--gpus",
                "H100,A100",
                "--threshold",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    assert main(["digest", "list", "--json"]) == 0
    assert main(["digest", "unsubscribe", "--channel", "C0009"]) == 0
    out = capsys.readouterr().out
    assert "subscribed default/C0009: daily at 08:00 Asia/Shanghai, GPUs H100, A100, threshold 2%, quiet" in out
    assert '"channel": "C0009"' in out and "unsubscribed C0009" in out
    assert [s.channel for s in subscriptions.list_subscriptions()] == list(CHANNELS)


def test_two_processes_at_the_same_moment_post_once(slack, tmp_path):
    slack.delay("chat.postMessage", 0.2)  # widen the window in which both processes are mid-run
    env = {**os.environ, "SLACK_BOT_TOKEN": TOKEN, "SLACK_API_URL": slack.base_url}
    procs = []
    for name in ("machine-a", "machine-b"):  # separate homes, one database: two machines
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "digest", "--post"],
                env={**env, "GPUBOT_HOME": str(tmp_path / name)},
                cwd=Path(__file__).resolve().parents[1],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert per_channel(slack) == {c: 1 for c in CHANNELS}
    joined = "".join(out for out, _err in outputs)
    assert joined.count(" posted") == 3


def test_the_clock_refreshes_then_posts_and_one_failing_source_does_not_stop_the_others(slack, monkeypatch):
    from bot import clock, prices_cmd
    from knowledge.paths import CATALOG_DIR

    jobs = {job.id: str(job.trigger) for job in clock.build_scheduler().get_jobs()}
    live = {k: v for k, v in jobs.items() if k.startswith("live-")}  # issue 28: each live source on its cadence
    assert {k: v for k, v in jobs.items() if k not in live} == {
        "refresh": "cron[hour='5', minute='0']",
        "digest": "cron[minute='5']",
    }
    assert live == {
        "live-aws_spot": "interval[0:10:00]",
        "live-aws_price_list": "interval[1 day, 0:00:00]",
        "live-oci": "interval[1 day, 0:00:00]",
        "live-runpod": "interval[0:15:00]",
        "live-vast": "interval[0:10:00]",
    }
    monkeypatch.setattr(prices_cmd, "_import_into_kb", lambda *a: "skipped in this test")
    monkeypatch.setenv("GPUBOT_REFRESH_SOURCES", "nowhere,gcp")
    monkeypatch.setenv("GPUBOT_CATALOG_URL_NOWHERE", str(CATALOG_DIR / "missing.csv"))
    monkeypatch.setenv("GPUBOT_CATALOG_URL_GCP", str(CATALOG_DIR / "gcp_vms.csv"))
    results = clock.refresh_all()
    assert "cannot read file" in results["nowhere"] and results["gcp"]["created"]
    for channel in CHANNELS[1:]:
        subscriptions.unsubscribe("default", channel)
    subscriptions.subscribe("default", "C0001", hour=0)
    clock.post_due()
    assert per_channel(slack) == {"C0001": 1, "C0002": 0, "C0003": 0}
