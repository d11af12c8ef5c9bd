"""Issue 25: nothing confirmed is lost, nothing answered twice: mention replies through the real Bolt app against the
stand-in Slack API failing the way Slack does, and leases on one clock.

- chat.postMessage answering 500 twice, 503 ten times, 429 ten times: the reply arrives exactly once (by the
  client's retries, or by Slack's retry of the event after the claim was released).
- A worker killed while its post is in flight (real server processes): Slack's retry finds the reply in the
  thread (its message metadata) and does not post a second one.
- A process whose clock runs 120 s ahead cannot take over a live lease (SQLite and PostgreSQL).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from slack_sdk import WebClient
from slack_sdk.http_retry import builtin_handlers
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator

from bot.slack.reply_once import RATE_LIMIT_RETRIES, SERVER_ERROR_RETRIES, outcome_of, reply_retry_handlers
from knowledge.state import claims
from tests.slack_standin import SlackStandIn
from tests.test_faults import dispatch, mention_body
from tests.test_slack_http import GPUBOT, free_port, request, server_env, signed

ROOT = Path(__file__).resolve().parents[1]
SECRET = "faults-secret"  # tests.test_faults.dispatch signs with it


@pytest.fixture(scope="module")
def slack():
    with SlackStandIn() as standin:
        yield standin


@pytest.fixture(autouse=True)
def _fresh(slack):
    slack.clear()
    yield
    slack.delay("chat.postMessage", 0)
    slack._rules.clear()


@pytest.fixture(scope="module")
def app(slack, kb):
    """The real app; its client has the production retry policy with the waits between 5xx retries shortened."""
    from bot.settings import load_settings
    from bot.slack.app import build_app

    settings = load_settings(slack_signing_secret=SECRET, slack_bot_token="xoxb-test", slack_api_url=slack.base_url)
    client = WebClient(
        token="xoxb-test",
        base_url=slack.base_url,
        timeout=1,
        retry_handlers=reply_retry_handlers(interval=FixedValueRetryIntervalCalculator(0.01)),
    )
    return build_app(settings, kb, client=client)


def delivered(app, body: str, retry: int = 0) -> None:
    """Slack delivers the event (`retry`: its X-Slack-Retry-Num); returns once this process is done with it."""
    headers = {"x_slack_retry_num": str(retry), "x_slack_retry_reason": "http_error"} if retry else {}
    assert dispatch(app, body, **headers).status == 200
    key = f"slack-event:{json.loads(body)['event_id']}"
    deadline = time.monotonic() + 30
    while key in claims._held and time.monotonic() < deadline:  # the listener still works on it
        time.sleep(0.02)
    time.sleep(0.1)


def slack_delivers_until_answered(app, slack, body: str, channel: str) -> int:
    """The first delivery and Slack's three retries (each only while nothing is posted); how many were made."""
    for attempt in range(4):
        delivered(app, body, retry=attempt)
        if slack.messages(channel):
            return attempt + 1
    return 4


@pytest.mark.parametrize(
    ("fault", "times"),
    [("500", 2), ("503", 10), ("429", 10)],
    ids=["500x2", "503x10", "429x10"],
)
def test_a_reply_slack_refuses_for_a_while_arrives_exactly_once(app, slack, monkeypatch, fault, times):
    channel = f"C0R{fault}X{times}"
    if fault == "429":
        slack.rate_limit("chat.postMessage", retry_after=0, times=times)
        # each retry waits the Retry-After alone, without slack_sdk's up-to-1-s jitter (ten of them slept ~5 s)
        monkeypatch.setattr(builtin_handlers, "random", SimpleNamespace(random=lambda: 0.0))
    else:
        slack.server_error("chat.postMessage", int(fault), times=times)
    body, event = mention_body("cheapest A100 spot", channel=channel)
    deliveries = slack_delivers_until_answered(app, slack, body, channel)
    per_delivery = 1 + (RATE_LIMIT_RETRIES if fault == "429" else SERVER_ERROR_RETRIES)
    assert deliveries == 1 + times // per_delivery, "retried by the client, then by Slack's retry of the event"
    delivered(app, body, retry=3)  # any later retry of the event changes nothing
    posted = slack.messages(channel)
    assert len(posted) == 1, [c.status for c in slack.calls("chat.postMessage")]
    assert posted[0]["thread_ts"] == event["ts"] and "A100" in posted[0]["text"]
    assert len([c for c in slack.calls("chat.postMessage") if c.ok]) == 1


def test_a_reply_whose_post_timed_out_is_found_in_the_thread_and_not_posted_again(app, slack):
    """Slack stored the reply but answered after the client gave up: the retry of the event looks in the thread
    (message metadata) and posts nothing."""
    channel = "C0RTIMEOUT"
    slack.delay("chat.postMessage", 1.5)
    body, event = mention_body("cheapest L4 spot", channel=channel)
    delivered(app, body)
    slack.delay("chat.postMessage", 0)
    assert len(slack.messages(channel)) == 1  # Slack had it
    for retry in (1, 2, 3):
        delivered(app, body, retry=retry)
    assert len(slack.calls("chat.postMessage")) == 1
    assert len(slack.calls("conversations.replies")) == 1, "the take-over looked in the thread once"
    assert slack.messages(channel)[0]["metadata"]["event_type"] == "gpubot_reply"


def test_a_reply_refused_for_good_is_not_retried(app, slack):
    channel = "C0RGONE"
    slack.fail("chat.postMessage", "not_in_channel", times=1)
    body, _ = mention_body("cheapest A100 spot", channel=channel)
    delivered(app, body)
    delivered(app, body, retry=1)
    assert len(slack.calls("chat.postMessage")) == 1 and not slack.messages(channel)


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (None, "done"),
        ("ratelimited", "failed"),
        ("internal_error", "unsure"),
        ("HTTP 503", "unsure"),
        ("unreachable", "unsure"),
        ("not_in_channel", "done"),
        ("channel_not_found", "done"),
    ],
)
def test_what_a_posts_error_means_for_its_claim(error, outcome):
    assert outcome_of(error) == outcome


# --- a worker killed with its post in flight (real servers) ----------------------------------------------------------


@contextmanager
def serving(home: Path, slack: SlackStandIn, **env: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """`gpubot serve --http` in its own process group (killed whole at the end), up when /healthz answers."""
    port = free_port()
    proc = subprocess.Popen(
        [GPUBOT, "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
        env=server_env(home, slack, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "gpubot serve did not start"
            time.sleep(0.05)
        yield proc, port
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow
def test_a_worker_killed_with_its_post_in_flight_leaves_one_reply(tmp_path, kb, slack):
    home = tmp_path / "home"
    home.mkdir()
    (home / "kb.db").symlink_to(Path(os.environ["GPUBOT_HOME"]) / "kb.db")
    env = {"GPUBOT_CLAIM_LEASE_SECONDS": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'state.db'}"}
    body, event = mention_body("cheapest A100 spot", channel="C0RKILL")
    slack.delay("chat.postMessage", 30)  # Slack has the message; its answer does not come back in time
    with serving(home, slack, **env) as (proc, port):
        assert request(port, "POST", "/slack/events", body, signed(body, "application/json"))[0] == 200
        slack.wait_for("chat.postMessage", timeout=20)
        os.killpg(proc.pid, signal.SIGKILL)  # the server dies mid-post: nothing finished, nothing released
    slack.delay("chat.postMessage", 0)
    time.sleep(1.5)  # the dead worker's lease runs out
    with serving(home, slack, **env) as (_, port):
        for retry in ("1", "2"):  # Slack's retries of the event reach the new server
            headers = signed(body, "application/json", X_Slack_Retry_Num=retry, X_Slack_Retry_Reason="http_timeout")
            assert request(port, "POST", "/slack/events", body, headers)[0] == 200
            time.sleep(1.5)
    posted = slack.messages("C0RKILL")
    assert len(posted) == 1 and posted[0]["thread_ts"] == event["ts"]
    assert slack.calls("conversations.replies"), "the take-over looked for the earlier reply"


# --- one clock for leases ------------------------------------------------------------------------------------------

_SKEWED = textwrap.dedent("""
    import sys, time
    _real = time.time
    time.time = lambda: _real() + 120  # this machine's clock runs two minutes ahead
    from knowledge.state import claims
    print("won" if claims.claim(sys.argv[1]) else "refused", flush=True)
""")


@pytest.mark.slow  # a subprocess
def test_a_process_whose_clock_runs_ahead_cannot_take_over_a_live_lease(state_url, monkeypatch):
    from knowledge.state import db as state

    state.engine()
    monkeypatch.setenv("GPUBOT_CLAIM_TIMEOUT", "10")
    key = f"slack-event:Ev-skew-{time.time_ns()}"
    assert claims.claim(key)  # a live worker holds it, lease 60 s
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUBOT_CLAIM_TIMEOUT": "10"}
    skewed = subprocess.run(
        [sys.executable, "-c", _SKEWED, key], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert skewed.stdout.strip() == "refused", skewed.stderr[-2000:]
    claims.finish(key)


def test_the_claims_heartbeat_outlives_an_environment_made_invalid(state_url, monkeypatch):
    """A setting broken after start (a test's monkeypatch, an operator's edit) must not kill the renewing thread."""
    from knowledge.state import db as state

    state.engine()
    key = f"slack-event:Ev-beat-{time.time_ns()}"
    assert claims.claim(key)  # starts the heartbeat
    monkeypatch.setenv("GPUBOT_CLAIM_LEASE_SECONDS", "soon")
    time.sleep(1.3)  # more than one tick
    assert claims._heartbeat is not None and claims._heartbeat.is_alive()
    claims.finish(key)
