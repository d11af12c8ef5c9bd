"""Faults: what a user sees, and that nothing is lost or sent twice, when the things gpubot depends on fail.

- The Slack Web API answers 429 (with Retry-After), 500, or too slowly while gpubot posts an answer (@-mention, DM)
  or a digest (stand-in failure injection; the production clients and their retry handlers).
- A digest run dies half-way (a real process exit), also while a post is in flight; the rerun.
- The SQLite state database is locked by another process (an exclusive transaction held in another process).
- The knowledge base is missing, damaged or cannot be built when the CLI or the server starts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import io
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from slack_bolt import BoltRequest
from slack_sdk import WebClient

from bot.cli import main
from tests.conftest import seed_bundled_part
from tests.slack_standin import SlackStandIn, check_message
from tests.test_slack_http import GPUBOT, free_port, request, server_env, signed, slash_body

ROOT = Path(__file__).resolve().parents[1]
SECRET = "faults-secret"
BOT_USER = SlackStandIn.bot_user_id


# --- answers: mentions and DMs ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture(autouse=True)
def _fresh(request):
    if "slack" in request.fixturenames:
        standin = request.getfixturevalue("slack")
        standin.clear()
        yield
        standin.delay("chat.postMessage", 0)
        standin._rules.clear()  # leave no programmed failure to the next test
    else:
        yield


@pytest.fixture(scope="module")
def app(slack, kb):
    """The real app with the production Web API client (its retry handlers), a short timeout for the tests."""
    from bot.settings import load_settings
    from bot.slack.app import build_app
    from bot.slack.oauth import make_client

    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    client = make_client(settings)
    client.timeout = 1
    return build_app(settings, kb, client=client)


def dispatch(app, body: str, **headers: str):
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return app.dispatch(
        BoltRequest(
            body=body,
            headers={
                "content-type": "application/json",
                "x-slack-request-timestamp": ts,
                "x-slack-signature": f"v0={digest}",
                **{k.replace("_", "-"): v for k, v in headers.items()},
            },
        )
    )


def mention_body(text: str, channel: str = "C0FAULT") -> tuple[str, dict]:
    ts = f"{time.time():.6f}"
    event = {
        "type": "app_mention",
        "user": "U_ASKER",
        "text": f"<@{BOT_USER}> {text}",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    return json.dumps(
        {
            "team_id": "T0FAULT",
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": event,
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
        }
    ), event


def dm_body(text: str) -> str:
    ts = f"{time.time():.6f}"
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D0FAULT",
        "user": "U_ASKER",
        "text": text,
        "ts": ts,
        "event_ts": ts,
    }
    return json.dumps(
        {
            "team_id": "T0FAULT",
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": event,
            "event_id": f"Ev{uuid.uuid4().hex}",
            "event_time": int(time.time()),
        }
    )


def settle(slack: SlackStandIn, seconds: float = 0.5) -> None:
    time.sleep(seconds)


def test_a_rate_limited_reply_waits_for_retry_after_and_is_posted_once(app, slack):
    slack.rate_limit("chat.postMessage", retry_after=1, times=2)
    body, event = mention_body("cheapest A100 spot")
    started = time.monotonic()
    assert dispatch(app, body).status == 200
    calls = slack.wait_for("chat.postMessage", 3, timeout=10)
    assert time.monotonic() - started >= 2.0, "each retry waited Retry-After (1 s)"
    settle(slack)
    assert [c.status for c in slack.calls("chat.postMessage")] == [429, 429, 200]
    posted = slack.messages("C0FAULT")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"] and calls[-1].ok
    assert check_message(posted[0]) == (None, []) and "A100" in posted[0]["text"]


def test_a_reply_rate_limited_past_the_retries_is_answered_by_slacks_retry_of_the_event(app, slack, caplog):
    from bot.slack.reply_once import RATE_LIMIT_RETRIES

    attempts = RATE_LIMIT_RETRIES + 1
    slack.rate_limit("chat.postMessage", retry_after=0, times=attempts)
    body, event = mention_body("price of p4d.24xlarge")
    with caplog.at_level(logging.WARNING):
        assert dispatch(app, body).status == 200
        slack.wait_for("chat.postMessage", attempts, timeout=20)
        settle(slack)
    # the first delivery: no reply (Slack kept refusing), the operator sees why, the claim is released
    assert [c.status for c in slack.calls("chat.postMessage")] == [429] * attempts
    assert any("ratelimited" in r.getMessage() for r in caplog.records)
    assert dispatch(app, body, x_slack_retry_num="1", x_slack_retry_reason="http_timeout").status == 200
    slack.wait_for("chat.postMessage", attempts + 1, timeout=10)
    settle(slack)
    posted = slack.messages("C0FAULT")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"]


def test_a_500_on_a_reply_is_retried_and_posted_once(app, slack):
    """Slack documents 5xx as retryable: the client's ServerErrorRetryHandler posts it again, once."""
    slack.server_error("chat.postMessage", 500, times=1)
    body, event = mention_body("cheapest L4 spot")
    assert dispatch(app, body).status == 200
    slack.wait_for("chat.postMessage", 2, timeout=10)
    settle(slack)
    assert [c.status for c in slack.calls("chat.postMessage")] == [500, 200]
    posted = slack.messages("C0FAULT")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"]


def test_a_reply_that_times_out_is_not_posted_twice(app, slack, caplog):
    """Slack took the message but answered after the client gave up: the post may have gone through, so it is
    not sent again (neither by the client's retries nor when Slack redelivers the event)."""
    slack.delay("chat.postMessage", 2.0)
    body, event = mention_body("cheapest A10G on demand")
    with caplog.at_level(logging.WARNING):
        assert dispatch(app, body).status == 200
        slack.wait_for("chat.postMessage")
        time.sleep(2.0)
    slack.delay("chat.postMessage", 0)
    assert dispatch(app, body, x_slack_retry_num="1", x_slack_retry_reason="http_timeout").status == 200
    settle(slack)
    assert len(slack.calls("chat.postMessage")) == 1, "sent once"
    assert slack.messages("C0FAULT")[0]["thread_ts"] == event["ts"]  # the user sees it: Slack had it
    assert any("Timeout" in r.getMessage() or "timed out" in r.getMessage() for r in caplog.records)


def test_a_rate_limited_dm_reply_is_posted_once(app, slack):
    slack.rate_limit("chat.postMessage", retry_after=0, times=1)
    assert dispatch(app, dm_body("price of g5.xlarge")).status == 200
    slack.wait_for("chat.postMessage", 2)
    settle(slack)
    assert [c.status for c in slack.calls("chat.postMessage")] == [429, 200]
    assert len(slack.messages("D0FAULT")) == 1


# --- digests ---------------------------------------------------------------------------------------------------------

NOW = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.UTC)
TOKEN = "xoxb-T0001-faults"
CHANNELS = ("C0001", "C0002", "C0003")
OLD = [
    {
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "pricing": "spot",
        "gpu": "H100",
        "gpu_count": 8,
        "price_per_hour_usd": 20.0,
    }
]
NEW = [
    {
        "instance_type": "p5.48xlarge",
        "region": "us-east-1",
        "pricing": "spot",
        "gpu": "H100",
        "gpu_count": 8,
        "price_per_hour_usd": 18.0,
    }
]


@pytest.fixture
def digest_state(tmp_path, monkeypatch):
    """Own state database: two snapshots (H100 spot 10% cheaper) and three subscribed channels."""
    from knowledge.history import snapshots as history
    from knowledge.state import subscriptions

    url = f"sqlite:///{tmp_path / 'state.db'}"
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])
    history.record_snapshot("aws", OLD, "old catalog", NOW - dt.timedelta(days=2))
    history.record_snapshot("aws", NEW, "new catalog", NOW - dt.timedelta(hours=3))
    for channel in CHANNELS:
        subscriptions.subscribe("default", channel, charts=False)
    return url


@pytest.fixture
def digest_slack():
    with SlackStandIn() as standin:
        yield standin


def per_channel(slack) -> dict[str, int]:
    return {c: len(slack.messages(c)) for c in CHANNELS}


def client_for(slack, timeout: float = 30):
    """A client with the retry policy of bot.slack.digest.default_client_for_team (429s retried 3 times)."""
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    return lambda team: WebClient(
        token=TOKEN,
        base_url=slack.base_url,
        timeout=timeout,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=3)],
    )


def test_a_digest_rate_limited_past_its_retries_fails_that_channel_and_the_rerun_posts_it_once(
    digest_state, digest_slack
):
    from bot.slack.digest import post_digests

    digest_slack.rate_limit("chat.postMessage", retry_after=0, times=4)  # the first channel, every attempt
    report = post_digests(client_for(digest_slack), NOW)
    statuses = {r.channel: (r.status, r.detail) for r in report.results}
    assert statuses["C0001"] == ("failed", "ratelimited")
    assert per_channel(digest_slack) == {"C0001": 0, "C0002": 1, "C0003": 1}
    report = post_digests(client_for(digest_slack), NOW)  # the next run (the clock, an hour later)
    assert {r.channel: r.status for r in report.results} == {
        "C0001": "posted",
        "C0002": "already_sent",
        "C0003": "already_sent",
    }
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}


def test_a_digest_post_that_times_out_is_not_posted_twice(digest_state, digest_slack):
    from bot.slack.digest import post_digests

    digest_slack.delay("chat.postMessage", 2.0)
    report = post_digests(client_for(digest_slack, timeout=0.5), NOW)
    assert {r.status for r in report.results} <= {"failed", "unknown", "posted"}
    digest_slack.delay("chat.postMessage", 0)
    post_digests(client_for(digest_slack), NOW)
    post_digests(client_for(digest_slack), NOW + dt.timedelta(hours=1))
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}


@pytest.mark.parametrize("unreadable", ["missing_scope", "ratelimited", "over-a-page-of-newer-messages"])
def test_a_digest_retry_that_cannot_verify_its_earlier_post_does_not_post_again(digest_state, digest_slack, unreadable):
    """The first post times out after Slack stored it; the retry cannot read the channel's history (a group DM
    or an old install without the history scope, rate limits, or more newer messages than one page): it records
    "unverified" and reports it instead of posting a second time."""
    from bot.slack.digest import post_digests

    digest_slack.delay("chat.postMessage", 0.6)
    first = post_digests(client_for(digest_slack, timeout=0.3), NOW)
    assert {r.status for r in first.results} == {"failed"}
    digest_slack.delay("chat.postMessage", 0)
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}, "Slack had every post"
    if unreadable == "missing_scope":
        digest_slack.fail("conversations.history", "missing_scope", times=100)
    elif unreadable == "ratelimited":
        digest_slack.rate_limit("conversations.history", retry_after=0, times=100)
    else:
        chatter = WebClient(token=TOKEN, base_url=digest_slack.base_url)
        for channel in CHANNELS:
            for i in range(201):
                chatter.chat_postMessage(channel=channel, text=f"chatter {i}")
    retry = post_digests(client_for(digest_slack), NOW + dt.timedelta(minutes=5))
    assert {r.status for r in retry.results} == {"unverified"}
    assert all("not posted again" in r.detail for r in retry.results)
    assert retry.as_json()["unverified"] == 3
    later = post_digests(client_for(digest_slack), NOW + dt.timedelta(hours=1))
    assert {r.status for r in later.results} == {"already_unverified"}
    digests = {
        c: [m for m in digest_slack.messages(c) if (m.get("metadata") or {}).get("event_type")] for c in CHANNELS
    }
    assert {c: len(found) for c, found in digests.items()} == {c: 1 for c in CHANNELS}, "never posted twice"


_RUNNER = textwrap.dedent("""
    import datetime as dt, os, sys
    from slack_sdk import WebClient
    from knowledge.history import snapshots as history
    from bot.slack.digest import post_digests
    history.ensure_baselines = lambda *a, **k: []
    now = dt.datetime.fromisoformat(sys.argv[1])
    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"])
    def died(result):  # the process dies right after the first channel's post is recorded: no cleanup at all
        if sys.argv[2] == "exit-after-first":
            os._exit(137)
    post_digests(lambda team: client, now, on_posted=died)
""")


def run_digest_process(digest_state, slack, tmp_path, mode: str, now: dt.datetime = NOW) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": digest_state,
        "GPUBOT_HOME": str(tmp_path / "proc-home"),
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_API_URL": slack.base_url,
    }
    return subprocess.Popen(
        [sys.executable, "-c", _RUNNER, now.isoformat(), mode],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_digest_process_that_dies_between_channels_is_completed_exactly_once_by_the_rerun(
    digest_state, digest_slack, tmp_path
):
    from bot.slack.digest import post_digests

    proc = run_digest_process(digest_state, digest_slack, tmp_path, "exit-after-first")
    proc.communicate(timeout=60)
    assert proc.returncode == 137
    assert sum(per_channel(digest_slack).values()) == 1  # the user saw one channel's digest so far
    report = post_digests(client_for(digest_slack), NOW + dt.timedelta(minutes=5))
    assert sorted(r.status for r in report.results) == ["already_sent", "posted", "posted"]
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}


def test_a_digest_process_killed_mid_post_leaves_the_other_channels_for_the_rerun(digest_state, digest_slack, tmp_path):
    """SIGKILL while Slack holds the second post: the first channel is recorded sent, the third never tried; the
    rerun posts the third once and leaves the second (claimed by a dead sender) alone until the claim is stale."""
    from bot.slack.digest import post_digests

    digest_slack.delay("chat.postMessage", 1.5)  # Slack records each post at once and answers 1.5 s later
    proc = run_digest_process(digest_state, digest_slack, tmp_path, "normal")
    digest_slack.wait_for("chat.postMessage", 2, timeout=30)  # the second post: Slack has it, the sender waits
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    digest_slack.delay("chat.postMessage", 0)
    report = post_digests(client_for(digest_slack), NOW + dt.timedelta(minutes=5))
    statuses = {r.channel: r.status for r in report.results}
    assert statuses == {"C0001": "already_sent", "C0002": "in_progress", "C0003": "posted"}
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}  # C0002's post reached Slack before the kill


def test_after_a_kill_mid_post_the_stale_claim_is_not_posted_twice(digest_state, digest_slack, tmp_path):
    from bot.slack.digest import post_digests

    digest_slack.delay("chat.postMessage", 1.5)
    proc = run_digest_process(digest_state, digest_slack, tmp_path, "normal")
    digest_slack.wait_for("chat.postMessage", 2, timeout=30)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    digest_slack.delay("chat.postMessage", 0)
    post_digests(client_for(digest_slack), NOW + dt.timedelta(minutes=40))  # the dead sender's claim is stale
    assert per_channel(digest_slack) == {c: 1 for c in CHANNELS}


# --- the state database locked by another process ---------------------------------------------------------------

_LOCKER = textwrap.dedent("""
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("ROLLBACK")
""")


class Locker:
    """Another process holding an exclusive transaction on the SQLite state database for `seconds`."""

    def __init__(self, url: str, seconds: float):
        self.path, self.seconds = url.removeprefix("sqlite:///"), seconds

    def __enter__(self) -> Locker:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _LOCKER, self.path, str(self.seconds)], stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "locked"
        self.since = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def _state_with_timeout(tmp_path, monkeypatch, seconds: str) -> str:
    from knowledge.state import subscriptions

    url = f"sqlite:///{tmp_path / 'state.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("GPUBOT_DB_BUSY_TIMEOUT", seconds)
    subscriptions.subscribe("default", "C0001")
    subscriptions.subscribe("default", "C0002")
    return url


@pytest.fixture
def locked_state(tmp_path, monkeypatch):
    """A fresh SQLite state database (two subscriptions) whose writers wait up to 3 s for a lock."""
    return _state_with_timeout(tmp_path, monkeypatch, "3")


@pytest.fixture
def impatient_state(tmp_path, monkeypatch):
    """The same, with writers that wait only 0.5 s (GPUBOT_DB_BUSY_TIMEOUT): a 2 s lock outlasts them."""
    return _state_with_timeout(tmp_path, monkeypatch, "0.5")


def subscription_rows(url: str) -> list[tuple]:
    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        return conn.execute("SELECT team, channel, hour, timezone FROM digest_subscriptions ORDER BY id").fetchall()


def test_a_write_waits_for_another_process_lock_and_succeeds(locked_state):
    from knowledge.state import subscriptions

    with Locker(locked_state, 1.0) as lock:
        subscriptions.subscribe("default", "C0003", hour=7)
        waited = time.monotonic() - lock.since
    assert waited >= 0.8, f"the write went through a held lock ({waited:.2f} s)"
    assert [r[1] for r in subscription_rows(locked_state)] == ["C0001", "C0002", "C0003"]


def test_a_write_locked_out_too_long_fails_clearly_and_loses_nothing(impatient_state, capsys):
    before = subscription_rows(impatient_state)
    with Locker(impatient_state, 2.0):
        code = main(["digest", "subscribe", "--channel", "C0009", "--hour", "8"])
        err = capsys.readouterr().err
    assert code == 2
    assert "is locked by another process" in err and "try again" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert subscription_rows(impatient_state) == before, "nothing half-written, nothing lost"
    assert main(["digest", "subscribe", "--channel", "C0009", "--hour", "8"]) == 0  # once the lock is gone
    assert [r[1] for r in subscription_rows(impatient_state)] == ["C0001", "C0002", "C0009"]


def test_a_digest_run_locked_out_posts_nothing_and_the_rerun_posts_once(
    impatient_state, digest_slack, monkeypatch, capsys
):
    from knowledge.history import snapshots as history

    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])
    history.record_snapshot("aws", OLD, "old catalog", NOW - dt.timedelta(days=2))
    history.record_snapshot("aws", NEW, "new catalog", NOW - dt.timedelta(hours=3))
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_API_URL", digest_slack.base_url)
    with Locker(impatient_state, 2.0):
        code = main(["digest", "--post"])
        err = capsys.readouterr().err
    assert code == 2 and "is locked by another process" in err
    assert not digest_slack.calls("chat.postMessage")
    assert main(["digest", "--post"]) == 0
    assert main(["digest", "--post"]) == 0
    assert {c: len(digest_slack.messages(c)) for c in ("C0001", "C0002")} == {"C0001": 1, "C0002": 1}


def test_a_mention_while_the_database_is_locked_is_answered_once(locked_state, app, slack):
    with Locker(locked_state, 1.0):
        body, event = mention_body("cheapest A100 spot", channel="C0LOCK")
        assert dispatch(app, body).status == 200
        retry = dispatch(app, body, x_slack_retry_num="1", x_slack_retry_reason="http_timeout")
        assert retry.status == 200
    slack.wait_for("chat.postMessage", timeout=10)
    settle(slack, 1.0)
    assert len(slack.messages("C0LOCK")) == 1 and slack.messages("C0LOCK")[0]["thread_ts"] == event["ts"]


def test_a_mention_while_the_database_stays_locked_is_still_answered(impatient_state, app, slack, caplog):
    with Locker(impatient_state, 2.0), caplog.at_level(logging.WARNING):
        body, event = mention_body("price of p4d.24xlarge", channel="C0LOCK")
        assert dispatch(app, body).status == 200
        reply = slack.wait_for("chat.postMessage", timeout=15)[0]
    settle(slack)
    assert reply.ok and reply.body["thread_ts"] == event["ts"] and "p4d.24xlarge" in reply.body["text"]
    assert len(slack.calls("chat.postMessage")) == 1
    # the claim gave up after GPUBOT_CLAIM_TIMEOUT instead of the busy timeout, and says so
    assert any("state database unavailable" in r.getMessage() for r in caplog.records)


def test_a_price_refresh_locked_out_records_nothing_and_succeeds_later(impatient_state, tmp_path, capsys):
    from knowledge.history import snapshots as history

    catalog = tmp_path / "prices.csv"
    catalog.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
        "x1.big,A100,8,96,1152,,20.5,8.1,r1\n",
        encoding="utf-8",
    )
    argv = ["prices", "refresh", "--catalog", str(catalog), "--provider", "lockcloud", "--no-kb"]
    with Locker(impatient_state, 2.0):
        code = main(argv)
        err = capsys.readouterr().err
    assert code != 0 and "is locked by another process" in err and "try again" in err and "Traceback" not in err
    assert history.snapshots_of("lockcloud") == []
    assert main(argv) == 0
    assert len(history.snapshots_of("lockcloud")) == 1


# --- the knowledge base missing or damaged at start-up ------------------------------------------------------------


def _damage(path: Path, how: str, good: bytes) -> None:
    if how == "missing":
        path.unlink(missing_ok=True)
    elif how == "garbage":
        path.write_bytes(os.urandom(64 * 1024))
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(good[: len(good) // 3])
    elif how == "foreign-sqlite":
        path.unlink(missing_ok=True)
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (x TEXT)")
    elif how == "damaged-pages":
        path.write_bytes(good)
        with sqlite3.connect(path) as conn:
            root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'offers'").fetchone()[0]
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        with open(path, "r+b") as handle:
            handle.seek((root - 1) * page_size)
            handle.write(b"\xff" * page_size)


@pytest.fixture
def cli_home(tmp_path, kb):
    home = tmp_path / "home"
    home.mkdir()
    return home, Path(kb.path).read_bytes()


def ask(home: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GPUBOT_HOME": str(home), "DATABASE_URL": f"sqlite:///{home / 'state.db'}"}
    return subprocess.run([GPUBOT, *argv], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("how", ["missing", "garbage", "empty", "truncated", "foreign-sqlite"])
def test_the_cli_rebuilds_a_missing_or_damaged_knowledge_base_and_answers(cli_home, kb, how):
    home, good = cli_home
    _damage(home / "kb.db", how, good)
    done = ask(home, "ask", "cheapest A100 spot", "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if how != "missing":
        assert "rebuilding the knowledge base" in done.stderr  # one warning line says what happened
    result = json.loads(done.stdout)
    from bot.pipeline import answer

    assert [o["instance_type"] for o in result["offers"]] == [
        o.instance_type for o in answer("cheapest A100 spot", kb).offers
    ]


def test_damage_inside_the_file_is_moved_aside_and_repaired_on_the_next_run(cli_home):
    """Damage inside a page passes the cheap checks at open; the first query that reads it marks the file
    (`kb.db.damaged`) and that one question gets an apology; the next run rebuilds and answers."""
    home, good = cli_home
    _damage(home / "kb.db", "damaged-pages", good)
    first = ask(home, "ask", "cheapest A100 spot")
    assert first.returncode == 0 and "unavailable" in first.stdout.lower() and "/GPU-h" not in first.stdout
    assert "is damaged" in first.stderr and "rebuilt on next use" in first.stderr
    assert (home / "kb.db.damaged").exists(), "the damaged file is marked"
    second = ask(home, "ask", "cheapest A100 spot")
    assert second.returncode == 0 and "/GPU-h" in second.stdout  # the answer's figures (issue 16 wording)
    assert "was found damaged" in second.stderr and not (home / "kb.db.damaged").exists()


def test_damage_inside_the_file_gets_the_unavailable_answer_without_a_traceback(cli_home):
    home, good = cli_home
    _damage(home / "kb.db", "damaged-pages", good)
    first = ask(home, "ask", "cheapest A100 spot")
    assert "knowledge base is unavailable" in first.stdout.lower()
    assert "Traceback" not in first.stderr


def test_a_knowledge_base_that_cannot_be_built_is_a_clear_cli_error(cli_home, bundled_part):
    home, _ = cli_home
    seed_bundled_part(home, bundled_part)  # a home that built before: the import's build starts from the cache
    _store_a_bad_import(home / "state.db")
    done = ask(home, "ask", "cheapest A100 spot")
    assert done.returncode == 2
    assert "could not be built" in done.stderr and "badcloud.csv, line 3, column Price" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2


def _store_a_bad_import(state_db: Path) -> None:
    """An import stored by an older gpubot that today's validation refuses (a control character in a price)."""
    from knowledge.catalog.imports import catalog_imports
    from knowledge.state import db as state

    eng = state._engine_for(f"sqlite:///{state_db}")
    state.upgrade(eng)
    with eng.begin() as conn:
        conn.execute(
            catalog_imports.insert().values(
                provider="badcloud",
                filename="badcloud.csv",
                currency="USD",
                usd_per_unit=1.0,
                as_of="2026-01-01",
                source="old import",
                sha256="x",
                imported_at=dt.datetime.now(dt.UTC),
                content="InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nb1,A100,1,1.5,r1\nb2,A100,1,\x1b2,r1\n",
            )
        )
    eng.dispose()


def test_a_stale_knowledge_base_keeps_serving_when_the_rebuild_fails(cli_home, bundled_part, monkeypatch):
    from knowledge.kb.opener import open_kb

    home, good = cli_home
    (home / "kb.db").write_bytes(good)
    seed_bundled_part(home, bundled_part)  # the home that built it kept the bundled part
    _store_a_bad_import(home / "state.db")  # a newer import makes the kb stale, and its rebuild fails
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{home / 'state.db'}")
    from knowledge.kb.live import LiveKB

    live = LiveKB(open_kb(home / "kb.db"), interval=0)
    assert live.is_stale()
    with pytest.raises(Exception, match="badcloud.csv, line 3"):
        live.refresh()
    assert live.get().rows("SELECT COUNT(*) n FROM offers")[0]["n"] > 0  # still answering from the old one


# the server --------------------------------------------------------------------------------------------------------


def start_server(home: Path, slack: SlackStandIn, **env: str):
    port = free_port()
    log = open(home / f"serve-{port}.log", "w+b")  # noqa: SIM115 - closed by stop()
    proc = subprocess.Popen(
        [GPUBOT, "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
        env=server_env(home, slack, DATABASE_URL=f"sqlite:///{home / 'state.db'}", **env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            status, raw, _ = request(port, "GET", "/healthz")
            return proc, port, status, raw, log
        except OSError:
            time.sleep(0.1)
    log.seek(0)
    return proc, port, None, log.read(), log


def stop(proc, log) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()


@pytest.mark.parametrize("how", ["missing", "garbage", "truncated"])
def test_the_server_starts_on_a_missing_or_damaged_knowledge_base_and_healthz_tells(cli_home, slack, kb, how):
    home, good = cli_home
    (home / "kb.db").write_bytes(good)
    damaged_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
    _damage(home / "kb.db", how, good)
    proc, port, status, raw, log = start_server(home, slack)
    try:
        assert status == 200, raw
        health = json.loads(raw)
        assert health["ok"] is True and health["kb"]["offers"] > 0
        assert health["kb"]["built_at"] >= damaged_at, "rebuilt at start-up"
        body, _ = slash_body(slack, "cheapest A100 spot")
        status, raw, _ = request(port, "POST", "/slack/events", body, signed(body, "application/x-www-form-urlencoded"))
        assert status == 200 and b"/GPU-h" in raw
    finally:
        stop(proc, log)


def test_the_server_starts_when_the_knowledge_base_cannot_be_built_and_healthz_says_why(cli_home, bundled_part, slack):
    home, _ = cli_home
    seed_bundled_part(home, bundled_part)  # a home that built before: the import's build starts from the cache
    _store_a_bad_import(home / "state.db")
    proc, port, status, raw, log = start_server(home, slack)
    try:
        assert status == 503, raw
        health = json.loads(raw)
        assert health["ok"] is False and "badcloud.csv, line 3, column Price" in health["kb"]["error"]
        body, _ = slash_body(slack, "cheapest A100 spot")
        status, raw, _ = request(port, "POST", "/slack/events", body, signed(body, "application/x-www-form-urlencoded"))
        assert status == 200 and b"knowledge base is unavailable" in raw.lower()
    finally:
        stop(proc, log)


def test_damage_inside_the_served_knowledge_base_is_told_by_healthz_and_repaired(cli_home, slack):
    home, good = cli_home
    _damage(home / "kb.db", "damaged-pages", good)
    proc, port, status, raw, log = start_server(home, slack, GPUBOT_KB_REFRESH_SECONDS="1")
    try:
        assert status in (200, 503)
        if status == 503:
            assert "damaged" in json.loads(raw)["kb"]["error"]
        deadline = time.monotonic() + 30
        while request(port, "GET", "/healthz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert request(port, "GET", "/healthz")[0] == 200
    finally:
        stop(proc, log)


def test_the_answer_cache_follows_a_knowledge_base_swap(kb):
    """Answers are cached per knowledge base: when LiveKB swaps in a rebuilt one, nothing old is served."""
    from handlers.cache import cached
    from knowledge.kb.live import CurrentKB
    from knowledge.kb.reader import KB

    calls = []

    def handler(query, kb_):
        calls.append(kb_.current())
        return len(calls)

    class Live:
        def __init__(self, current):
            self.current = current

        def get(self):
            return self.current

    from handlers.models import Query

    first, second = KB(Path(kb.path)), KB(Path(kb.path))
    live = Live(first)
    proxy = CurrentKB(live)
    answer = cached("cheapest", handler)
    query = Query(text="cheapest A100", intent="cheapest", gpus=["A100"])
    assert answer(query, proxy) == 1 and answer(query, proxy) == 1  # the second is a hit
    live.current = second  # a rebuild was swapped in
    assert answer(query, proxy) == 2 and answer(query, proxy) == 2
    assert calls == [first, second]


# --- exactly-once: leased claims, a locked state database never holds up the ack ---------------------------------

_CLAIM_AND_DIE = textwrap.dedent("""
    import os, signal, sys
    from knowledge.state import claims
    from knowledge.state import db as state
    state.engine()  # a serving worker's state is migrated before it serves
    assert claims.claim(sys.argv[1])
    print("claimed", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # the worker vanishes before it answers (or acks)
""")


def test_a_retry_answers_an_event_whose_first_worker_died_after_claiming_it(locked_state, app, slack, monkeypatch):
    import sqlalchemy as sa

    from knowledge.state import claims
    from knowledge.state.db import engine

    def leases_run_out() -> None:  # a minute passes: every lease is over (renewed ones would have moved on)
        with engine().begin() as conn:
            conn.execute(sa.update(claims.event_claims).values(lease_until=time.time() - 1))

    monkeypatch.setenv("GPUBOT_CLAIM_TIMEOUT", "5")  # a loaded machine: claims must reach the database here
    body, event = mention_body("cheapest A100 spot", channel="C0KILLED")
    key = f"slack-event:{json.loads(body)['event_id']}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUBOT_CLAIM_LEASE_SECONDS": "60"}
    died = subprocess.run(
        [sys.executable, "-c", _CLAIM_AND_DIE, key], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert died.returncode == -signal.SIGKILL and died.stdout.strip() == "claimed"
    # Slack's immediate retry finds the claim still leased: the first worker might still be answering
    assert dispatch(app, body, x_slack_retry_num="1", x_slack_retry_reason="http_timeout").status == 200
    settle(slack, 0.3)
    assert not slack.messages("C0KILLED")
    leases_run_out()  # the dead worker renewed nothing
    claims.forget_local()  # the next retry may land on any worker
    assert dispatch(app, body, x_slack_retry_num="2", x_slack_retry_reason="http_timeout").status == 200
    slack.wait_for("chat.postMessage", timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the answering worker marks the event handled once its post is done
        with engine().connect() as conn:
            if (
                conn.execute(
                    sa.select(claims.event_claims.c.done_at).where(claims.event_claims.c.claim_key == key)
                ).scalar()
                is not None
            ):
                break
        time.sleep(0.05)
    leases_run_out()  # a finished claim is never taken over, however old
    claims.forget_local()
    assert dispatch(app, body, x_slack_retry_num="3", x_slack_retry_reason="http_timeout").status == 200
    settle(slack)
    posted = slack.messages("C0KILLED")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"] and "A100" in posted[0]["text"]


def test_a_live_workers_claim_is_renewed_while_it_answers(locked_state, monkeypatch):
    from knowledge.state import claims

    # a lease long enough that a heartbeat tick (every lease/3) delayed by a loaded machine still lands in time
    monkeypatch.setenv("GPUBOT_CLAIM_LEASE_SECONDS", "2")
    monkeypatch.setenv("GPUBOT_CLAIM_TIMEOUT", "5")  # a loaded machine: the claim itself must reach the database
    key = f"slack-event:Ev{uuid.uuid4().hex}"
    assert claims.claim(key)
    time.sleep(2.6)  # past one lease: only the heartbeat's renewals keep it
    claims.forget_local()  # another worker asks
    assert not claims.claim(key)
    claims.finish(key)
    time.sleep(2.3)
    assert not claims.claim(key), "a finished claim stays finished"


def wsgi_call(wsgi, body: str, content_type: str, **headers: str) -> tuple[str, bytes, float]:
    from wsgiref.util import setup_testing_defaults

    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    raw = body.encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/slack/events",
        "CONTENT_TYPE": content_type,
        "CONTENT_LENGTH": str(len(raw)),
        "wsgi.input": io.BytesIO(raw),
        "HTTP_X_SLACK_REQUEST_TIMESTAMP": ts,
        "HTTP_X_SLACK_SIGNATURE": f"v0={digest}",
        **{f"HTTP_{k.upper()}": v for k, v in headers.items()},
    }
    setup_testing_defaults(environ)
    started, status = time.monotonic(), []
    chunks = wsgi(environ, lambda s, h, exc_info=None: status.append(s))
    return status[0], b"".join(chunks), time.monotonic() - started


def test_a_locked_state_database_never_holds_up_the_ack_and_gives_one_reply(tmp_path, monkeypatch, app, slack, kb):
    """Another process holds the state's write lock for 4 s, longer than Slack waits for an ack (3 s), with the
    default busy timeout (30 s): every request is still acked in time, never a 5xx, and a mention retried by Slack
    while the lock lasts is answered once."""
    from urllib.parse import urlencode

    from bot.serve import make_wsgi

    url = _state_with_timeout(tmp_path, monkeypatch, "30")
    wsgi = make_wsgi(app, kb, SECRET)
    mention, event = mention_body("cheapest H100 on demand", channel="C0LOCKED")
    slash = urlencode(
        {
            "team_id": "T0FAULT",
            "channel_id": "C0LOCKED",
            "user_id": "U_ASKER",
            "command": "/gpu",
            "text": "price of g5.xlarge",
            "response_url": slack.hook_url("locked"),
            "trigger_id": "1.2",
        }
    )
    with Locker(url, 4.0):
        results = [
            wsgi_call(wsgi, mention, "application/json"),
            wsgi_call(wsgi, mention, "application/json", x_slack_retry_num="1", x_slack_retry_reason="http_timeout"),
            wsgi_call(wsgi, slash, "application/x-www-form-urlencoded"),
        ]
    for status, raw, seconds in results:
        assert status.startswith("200") and seconds < 3.0, (status, raw[:200], f"{seconds:.2f} s")
    slash_reply = json.loads(results[2][1]) if results[2][1] else slack.wait_for("hooks/locked")[0].body
    assert "g5.xlarge" in slash_reply["text"]
    slack.wait_for("chat.postMessage", timeout=10)
    settle(slack, 1.0)
    posted = slack.messages("C0LOCKED")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"] and "H100" in posted[0]["text"]


def test_an_unreachable_state_database_never_holds_up_the_ack(monkeypatch, app, slack, kb):
    """The state database is a PostgreSQL server that accepts connections and never answers: every request is
    still acked in time with an answer (without the channel's settings), never a 5xx, and a mention is answered."""
    import socket
    from urllib.parse import urlencode

    from bot.serve import make_wsgi

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # the kernel completes the handshakes; nothing ever answers
    try:
        monkeypatch.setenv("DATABASE_URL", f"postgresql://gpubot@127.0.0.1:{silent.getsockname()[1]}/gpubot")
        wsgi = make_wsgi(app, kb, SECRET)
        slash = urlencode(
            {
                "team_id": "T0FAULT",
                "channel_id": "C0DOWN",
                "user_id": "U_ASKER",
                "command": "/gpu",
                "text": "cheapest L4 spot",
                "response_url": slack.hook_url("down"),
                "trigger_id": "1.2",
            }
        )
        mention, event = mention_body("price of g5.xlarge", channel="C0DOWN")
        results = [
            wsgi_call(wsgi, slash, "application/x-www-form-urlencoded"),
            wsgi_call(wsgi, mention, "application/json"),
        ]
        for status, raw, seconds in results:
            assert status.startswith("200") and seconds < 3.0, (status, raw[:200], f"{seconds:.2f} s")
        reply = json.loads(results[0][1]) if results[0][1] else slack.wait_for("hooks/down", timeout=10)[0].body
        assert "L4" in reply["text"]
        slack.wait_for("chat.postMessage", timeout=10)
        settle(slack, 0.5)
        posted = slack.messages("C0DOWN")
        assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"] and "g5.xlarge" in posted[0]["text"]
    finally:
        silent.close()
