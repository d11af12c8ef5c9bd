"""Stock alerts (issue 28): "/gpu alert H100 on runpod in stock" posts once when stock returns, on SQLite and
PostgreSQL, through the same post-once ledger as price alerts.

Two knowledge bases are built for the module by real refreshes of the RunPod source over a 127.0.0.1 stand-in:
"out" (every H100 data centre without stock status: out of stock) and "in" (US-TX-3 back to `High`). Stock moves
by asking against one or the other.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from slack_sdk import WebClient

from bot.alert_cmd import add_alert, check_and_post
from knowledge.kb.reader import KB
from knowledge.state import alerts
from tests.live_standin import LiveStandin
from tests.slack_standin import SlackStandIn

LIVE = Path(__file__).parent / "data" / "live"
TOKEN = "xoxb-T0001-stock"
T0 = dt.datetime(2026, 12, 2, 6, 0, tzinfo=dt.UTC)


def runpod_body(stock: str | None) -> bytes:
    data = json.loads((LIVE / "runpod.json").read_bytes())
    h100 = data["data"]["gpuTypes"][0]
    for key, low in h100.items():
        if key.startswith("dc_"):
            low["stockStatus"] = None
    h100["dc_US_TX_3"]["stockStatus"] = stock
    return json.dumps(data).encode()


@pytest.fixture(scope="module")
def kbs(tmp_path_factory):
    from bot.live_refresh import refresh_source
    from knowledge.catalog import sources

    standin = LiveStandin().start()
    out = {}
    original = sources.bundled_catalogs
    try:
        for name, stock in (("out", None), ("in", "High")):
            home = tmp_path_factory.mktemp(f"stock-{name}")
            standin.route("/graphql", runpod_body(stock))
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("GPUBOT_HOME", str(home))
                patch.setenv("DATABASE_URL", f"sqlite:///{home / 'state.db'}")
                patch.setenv("GPUBOT_SOURCE_RUNPOD_URL", standin.url("/graphql"))
                patch.setattr(
                    sources,
                    "bundled_catalogs",
                    lambda *a, **k: [c for c in original(*a, **k) if c.provider == "lambda"],
                )
                refresh_source("runpod", now=T0)
            out[name] = KB(home / "kb.db")
    finally:
        standin.stop()
    yield out
    for kb in out.values():
        kb.close()


@pytest.fixture()
def slack(state_url, monkeypatch):
    with SlackStandIn() as standin:
        monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
        monkeypatch.setenv("SLACK_API_URL", standin.base_url)
        yield standin


def check(slack, kb, hours: float):
    client = WebClient(token=TOKEN, base_url=slack.base_url)
    return check_and_post(lambda team: client, kb=kb, now=T0 + dt.timedelta(hours=hours))


def test_out_of_stock_ranks_after_and_is_labelled(kbs):
    from bot.pipeline import answer
    from bot.render import render_text

    reply = answer("cheapest H100 on runpod by region", kbs["in"])
    assert [o.stock for o in reply.offers] == ["in_stock", "out_of_stock"]
    assert reply.offers[0].price_per_gpu_hour_usd > reply.offers[1].price_per_gpu_hour_usd  # dearer, but can be had
    assert "out of stock, read" in render_text(reply)


def test_a_stock_alert_posts_once_when_stock_returns(slack, kbs):
    alert, offer = add_alert("H100 on runpod in stock", "T0001", "C0STOCK", kbs["out"], now=T0)
    assert alert.armed and alert.spec.stock == "in_stock" and offer["stock"] == "out_of_stock"
    assert check(slack, kbs["out"], 1).results == []  # still out: nothing
    first, second = check(slack, kbs["in"], 2), check(slack, kbs["in"], 3)
    assert [r.status for r in first.results] == ["posted"] and second.results == []
    [message] = slack.messages("C0STOCK")
    assert "back in stock (in stock)" in message["text"] and "US" in message["text"]
    assert check(slack, kbs["out"], 4).results == []  # out again: re-armed, nothing posted
    assert [r.status for r in check(slack, kbs["in"], 5).results] == ["posted"]  # back again: once more
    assert len(slack.messages("C0STOCK")) == 2
    assert [f["generation"] for f in alerts.firings_of(alert.id)] == [1, 2]
    from handlers.alerts import list_text

    assert list_text(alerts.list_alerts(), "en").splitlines()[1:] == [
        f"• #{alert.id} H100 on-demand on runpod back in stock; in stock now: waiting for it to run out and return"
    ]


def test_a_stock_alert_set_while_in_stock_waits_for_the_next_return(slack, kbs):
    alert, _ = add_alert("H100 on runpod back in stock", "T0001", "C0STOCK", kbs["in"], now=T0)
    assert not alert.armed
    assert check(slack, kbs["in"], 1).results == []
    check(slack, kbs["out"], 2)
    assert [r.status for r in check(slack, kbs["in"], 3).results] == ["posted"]


def test_a_stock_alert_needs_stock_data(slack, kbs):
    from knowledge.state.alerts import AlertError

    with pytest.raises(AlertError, match="stock"):
        add_alert("H100 on lambda in stock", "T0001", "C0STOCK", kbs["out"], now=T0)
