"""Several workers on several machines sharing state in PostgreSQL: once means once, whichever worker is hit.

"Machines" are processes with their own GPUBOT_HOME (own knowledge-base file) and one DATABASE_URL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.conftest import copy_kb, seed_bundled_part
from tests.reference_calc import CATALOGS
from tests.slack_standin import SlackStandIn
from tests.test_slack_http import FORM, GPUBOT, JSON, mention_body, request, running_server, signed, slash_body


def serve(home: Path, slack: SlackStandIn, database_url: str):
    """A "machine": a server with its own GPUBOT_HOME on the shared database, checking for new prices every second."""
    return running_server(home, slack, DATABASE_URL=database_url, GPUBOT_KB_REFRESH_SECONDS="1")


@pytest.fixture
def machines(kb, tmp_path, postgres):
    """Two machine homes, each with its own copy of the knowledge base, and one shared PostgreSQL database."""
    url = postgres.new_database()
    homes = []
    for name in ("machine-a", "machine-b"):
        home = tmp_path / name
        home.mkdir()
        copy_kb(kb, home / "kb.db")
        homes.append(home)
    return homes, url


def test_a_retry_delivered_to_another_machine_gets_no_second_reply(machines):
    (home_a, home_b), url = machines
    with SlackStandIn() as slack, ExitStack() as stack:
        port_a = stack.enter_context(serve(home_a, slack, url))
        port_b = stack.enter_context(serve(home_b, slack, url))
        body, event = mention_body("cheapest A100 spot")
        assert request(port_a, "POST", "/slack/events", body, signed(body, JSON))[0] == 200
        retry = signed(body, JSON, X_Slack_Retry_Num="1", X_Slack_Retry_Reason="http_timeout")
        assert request(port_b, "POST", "/slack/events", body, retry)[0] == 200
        posted = slack.wait_for("chat.postMessage", 1, timeout=15)
        time.sleep(1.5)  # give a wrong second reply time to arrive
        posted = slack.calls("chat.postMessage")
        assert len(posted) == 1
        assert posted[0].body["thread_ts"] == event["ts"]


def test_prices_imported_on_one_machine_reach_the_other(machines, bundled_part):
    (home_a, home_b), url = machines
    for home in (home_a, home_b):  # machines that built before: each build after the import starts from the cache
        seed_bundled_part(home, bundled_part)
    with SlackStandIn() as slack, ExitStack() as stack:
        port_b = stack.enter_context(serve(home_b, slack, url))
        env = {**os.environ, "GPUBOT_HOME": str(home_a), "DATABASE_URL": url}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bot.cli",
                "kb",
                "import",
                str(CATALOGS / "tencent_vms.csv"),
                "--provider",
                "scalecloud",
                "--currency",
                "CNY",
                "--usd-per-unit",
                "0.138",
            ],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        deadline = time.monotonic() + 20  # GPUBOT_KB_REFRESH_SECONDS=1, plus a rebuild of ~2 s
        while True:
            body, hook = slash_body(slack, "cheapest V100 on scalecloud")
            status, raw, _ = request(port_b, "POST", "/slack/events", body, signed(body, FORM), timeout=10)
            assert status == 200
            text = json.loads(raw).get("text", "")
            if "1. scalecloud GN10X" in text:  # ranked offers of the new provider, not "unknown provider"
                break
            assert time.monotonic() < deadline, raw[:500]
            time.sleep(1)


def test_two_digest_posters_at_once_post_once(machines):
    (home_a, home_b), url = machines
    with SlackStandIn() as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
        env.update(DATABASE_URL=url, SLACK_BOT_TOKEN="xoxb-test", SLACK_API_URL=slack.base_url)
        for channel in ("C1", "C2", "C3"):
            subprocess.run(
                [GPUBOT, "digest", "subscribe", "--channel", channel, "--team", "T0001"],
                env={**env, "GPUBOT_HOME": str(home_a)},
                check=True,
                capture_output=True,
                timeout=60,
            )
        listed = subprocess.run(
            [GPUBOT, "digest", "list", "--json"],
            env={**env, "GPUBOT_HOME": str(home_b)},
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        channels = {s["channel"] for s in json.loads(listed.stdout)["subscriptions"]}
        assert channels >= {"C1", "C2", "C3"}  # a subscription made on one machine is seen from the other
        for old in ("aws_vms.csv",):  # a price change to report
            subprocess.run(
                [
                    GPUBOT,
                    "prices",
                    "refresh",
                    "--catalog",
                    str(CATALOGS / "history" / old),
                    "--provider",
                    "aws",
                    "--no-kb",
                ],
                env={**env, "GPUBOT_HOME": str(home_a)},
                check=True,
                capture_output=True,
                timeout=120,
            )
            subprocess.run(
                [GPUBOT, "prices", "refresh", "--catalog", str(CATALOGS / old), "--provider", "aws", "--no-kb"],
                env={**env, "GPUBOT_HOME": str(home_a)},
                check=True,
                capture_output=True,
                timeout=120,
            )
        procs = [
            subprocess.Popen(
                [GPUBOT, "digest", "--post"],
                env={**env, "GPUBOT_HOME": str(home)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for home in (home_a, home_b)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
        messages = [m for m in slack.messages() if not m.get("thread_ts")]  # the digest; its details go in its thread
        assert sorted(m["channel"] for m in messages) == ["C1", "C2", "C3"]
