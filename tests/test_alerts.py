"""Price alerts (issue 18) against real knowledge bases and the stand-in Slack Web API, on SQLite and PostgreSQL.

Prices move by building knowledge bases from the real AWS catalog rows with every H100 spot price scaled (x3:
dearer, x0.5: cheaper), one per price level, built once for the module (from the small test knowledge base's rows,
which hold every GPU and size's cheapest AWS spot row). The expected prices are computed straight from the
CSV here. What a user would notice is asserted: one post when the cheapest offer crosses below the threshold
(across two runs, two worker processes on PostgreSQL and a crash between post and record), none when the price
rises, none for an alert created below its threshold until the next crossing, 5 % hysteresis, English and
Chinese, the `/gpu alert ...` commands through the real Bolt app, and uninstall removing a workspace's alerts.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

import pytest
from slack_sdk import WebClient

from bot.alert_cmd import add_alert, check_and_post
from bot.cli import main
from handlers.alerts import list_text
from knowledge.kb.reader import KB
from knowledge.paths import CATALOG_DIR
from knowledge.state import alerts
from tests.conftest import SMALL_KB_DATA, built_once
from tests.slack_standin import SlackStandIn, validate_blocks
from tests.yaml_text import yaml_load

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "xoxb-T0001-alerts"
T0 = dt.datetime(2026, 12, 1, 6, 0, tzinfo=dt.UTC)
H100 = {"H100", "H100-MEGA"}  # AWS catalog accelerator names of the H100 family (catalogs/README.md)
LEVELS = {"high": 3.0, "low": 0.5}


def h100_spot_min(path: Path, factor: float = 1.0) -> tuple[float, str, str]:
    """(lowest USD per GPU-hour, instance type, region) of H100 spot in an AWS catalog, prices x `factor`."""
    best = None
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["AcceleratorName"] in H100 and row["SpotPrice"]:
                item = (
                    float(row["SpotPrice"]) * factor / float(row["AcceleratorCount"]),
                    row["InstanceType"],
                    row["Region"],
                )
                best = min(best, item) if best else item
    assert best is not None
    return best


BASE = h100_spot_min(CATALOG_DIR / "aws_vms.csv")


@pytest.fixture(scope="module")
def kbs(tmp_path_factory, kb):
    """The session's knowledge base ("base") and two more with AWS H100 spot prices x3 ("high") and x0.5 ("low"):
    small ones (tests/data/small_kb/), which keep every GPU and size's cheapest AWS spot row, built from its catalogs
    with the AWS one's H100 spot prices scaled, once per run (`built_once`: the workers share them)."""
    from knowledge.kb.build import build

    small = SMALL_KB_DATA / "catalogs"
    with (small / "aws_vms.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with (small / "manifest.csv").open(encoding="utf-8", newline="") as handle:
        manifest = list(csv.DictReader(handle))

    def scaled(factor: float) -> Callable[[Path], None]:
        def make(path: Path) -> None:
            folder = path.with_name(f"{path.name}.catalogs")
            folder.mkdir()
            with (folder / "aws_vms.csv").open("w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                for row in rows:
                    if row["AcceleratorName"] in H100 and row["SpotPrice"]:
                        row = {**row, "SpotPrice": f"{float(row['SpotPrice']) * factor:.6f}"}
                    writer.writerow(row)
            assert h100_spot_min(folder / "aws_vms.csv") == pytest.approx(
                h100_spot_min(CATALOG_DIR / "aws_vms.csv", factor)
            )
            with (folder / "manifest.csv").open("w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(manifest[0]))
                writer.writeheader()
                for entry in manifest:  # the other catalogs: the small knowledge base's files, where they are
                    if entry["provider"] != "aws":
                        entry = {**entry, "file": str(small / entry["file"])}
                        entry["hosts_file"] = str(small / entry["hosts_file"]) if entry["hosts_file"] else ""
                    writer.writerow(entry)
            build(path, catalog_dir=folder, pricing_dir=SMALL_KB_DATA / "pricing")

        return make

    out = {"base": kb}
    tmp = tmp_path_factory.mktemp("alert_kbs")
    for name, factor in LEVELS.items():  # each level a home of this worker's: kb.db beside its catalogs/
        built = built_once(tmp_path_factory, f"alerts_{name}.db", scaled(factor))
        shutil.copytree(built.with_name(f"{built.name}.catalogs"), tmp / name / "catalogs")
        shutil.copyfile(built, tmp / name / "kb.db")
        out[name] = KB(tmp / name / "kb.db")
    yield out
    for name in LEVELS:
        out[name].close()


@pytest.fixture()
def slack(state_url, monkeypatch, tmp_path):
    with SlackStandIn() as standin:
        monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
        monkeypatch.setenv("SLACK_API_URL", standin.base_url)
        yield standin


def client_for(slack):
    return lambda team: WebClient(token=TOKEN, base_url=slack.base_url)


def check(slack, kb, when, **kwargs):
    return check_and_post(client_for(slack), kb=kb, now=when, **kwargs)


def posts(slack, channel="C0ALERT"):
    return slack.messages(channel)


def at(hours: float) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("H100 spot on aws below {t}", "en"),
        ("H100竞价 aws 低于每卡每小时{t}美元时提醒我", "zh"),
    ],
)
def test_a_crossing_below_posts_once_across_two_runs(slack, kbs, text, lang):
    threshold = round(BASE[0] * 0.75, 4)  # base is above it, "low" (x0.5) below
    alert, offer = add_alert(text.format(t=threshold), "T0001", "C0ALERT", kbs["base"], now=T0)
    assert alert.armed and offer["price_per_gpu_hour_usd"] == pytest.approx(BASE[0], rel=1e-9)
    assert alert.spec.pricing == "spot" and alert.spec.providers == ("aws",) and alert.language == lang
    assert check(slack, kbs["base"], at(1)).results == []  # still above: nothing
    first = check(slack, kbs["low"], at(2))
    second = check(slack, kbs["low"], at(3))
    assert [r.status for r in first.results] == ["posted"] and second.results == []
    [message] = posts(slack)
    low, instance, region = h100_spot_min(CATALOG_DIR / "aws_vms.csv", LEVELS["low"])
    text_seen = message["text"]
    assert f"${low:,.4f}" in text_seen if low < 1 else f"${low:,.2f}" in text_seen
    assert instance in text_seen and region in text_seen
    previous = f"${BASE[0]:,.4f}" if BASE[0] < 1 else f"${BASE[0]:,.2f}"
    if lang == "en":
        assert f"Previously {previous} on {at(1).date()}" in text_seen and "at or below your" in text_seen
    else:
        assert f"此前为 {previous}（{at(1).date()}）" in text_seen and "价格提醒" in text_seen
    assert message["metadata"]["event_type"] == "gpubot_alert"
    validate_blocks(message["blocks"])
    [button] = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert button["text"]["text"] == ("See the ranking" if lang == "en" else "查看排名")
    assert json.loads(button["value"])["q"]["intent"] == "cheapest"
    [firing] = alerts.firings_of(alert.id)
    assert firing["status"] == "sent" and firing["price"] == pytest.approx(low, rel=1e-9)
    assert firing["previous_price"] == pytest.approx(BASE[0], rel=1e-9)


def test_a_price_that_rises_posts_nothing(slack, kbs):
    alert, _ = add_alert(f"H100 spot on aws below {BASE[0] * 0.75:.4f}", "T0001", "C0ALERT", kbs["base"], now=T0)
    for n, level in enumerate(("base", "high", "high", "base")):
        assert check(slack, kbs[level], at(n + 1)).results == []
    assert posts(slack) == [] and alerts.firings_of(alert.id) == []
    assert alerts.get_alert(alert.id).armed


@pytest.mark.parametrize("text", ["H100 spot on aws below {t}", "aws 上 H100 竞价低于每卡每小时{t}美元时提醒我"])
def test_created_below_says_so_and_waits_for_the_next_crossing(slack, kbs, text, capsys):
    threshold = round(BASE[0] * 0.75, 4)
    alert, _ = add_alert(text.format(t=threshold), "T0001", "C0ALERT", kbs["low"], now=T0)
    assert not alert.armed  # already below: no post now
    from handlers.alerts import created_text

    said = created_text(alert, alerts.get_alert(alert.id).last_offer)
    assert ("already at or below" in said) if alert.language == "en" else ("已经不高于" in said)
    assert check(slack, kbs["low"], at(1)).results == [] and check(slack, kbs["low"], at(2)).results == []
    assert posts(slack) == []
    assert check(slack, kbs["base"], at(3)).results == []  # back above by more than 5 %: re-armed, no post
    assert alerts.get_alert(alert.id).armed
    assert [r.status for r in check(slack, kbs["low"], at(4)).results] == ["posted"]  # the next crossing
    assert len(posts(slack)) == 1


def test_hysteresis_five_percent(slack, kbs):
    threshold = BASE[0] / 1.03  # base is 3 % above: not enough to re-arm
    alert, _ = add_alert(f"H100 spot on aws below {threshold:.6f}", "T0001", "C0ALERT", kbs["high"], now=T0)
    assert [r.status for r in check(slack, kbs["low"], at(1)).results] == ["posted"]
    assert check(slack, kbs["base"], at(2)).results == []  # +3 %: still disarmed
    assert check(slack, kbs["low"], at(3)).results == []
    assert check(slack, kbs["high"], at(4)).results == []  # well above: re-armed
    assert [r.status for r in check(slack, kbs["low"], at(5)).results] == ["posted"]
    assert [f["generation"] for f in alerts.firings_of(alert.id)] == [1, 2] and len(posts(slack)) == 2


class Crash(BaseException):
    """A process killed between the post and its record."""


def test_a_crash_between_post_and_record_never_posts_twice(slack, kbs):
    add_alert(f"H100 spot on aws below {BASE[0] * 0.75:.4f}", "T0001", "C0ALERT", kbs["base"], now=T0)

    def crash(result):
        raise Crash

    with pytest.raises(Crash):
        check(slack, kbs["low"], at(1), on_posted=crash)
    assert len(posts(slack)) == 1
    assert [r.status for r in check(slack, kbs["low"], at(1.1)).results] == ["in_progress"]  # claim still fresh
    again = check(slack, kbs["low"], at(2), stale_after=dt.timedelta(minutes=30))  # the dead sender's claim
    assert [r.status for r in again.results] == ["already_sent"]
    assert len(posts(slack)) == 1
    assert check(slack, kbs["low"], at(3)).results == []


def test_a_retry_that_cannot_read_the_channel_records_unverified_and_never_posts_twice(slack, kbs):
    """Issue 19: the post reached Slack, the sender died before recording it, and the retry cannot read the
    channel's history (`missing_scope`: a group DM or an old install): not posted blindly again, reported."""
    add_alert(f"H100 spot on aws below {BASE[0] * 0.75:.4f}", "T0001", "C0ALERT", kbs["base"], now=T0)

    def crash(result):
        raise Crash

    with pytest.raises(Crash):
        check(slack, kbs["low"], at(1), on_posted=crash)
    slack.fail("conversations.history", "missing_scope", times=100)
    retry = check(slack, kbs["low"], at(2))
    assert [r.status for r in retry.results] == ["unverified"] and retry.as_json()["unverified"] == 1
    assert "missing_scope" in retry.results[0].detail and "not posted again" in retry.results[0].detail
    assert check(slack, kbs["low"], at(3)).results == []  # the firing is over: disarmed until the next crossing
    assert len(posts(slack)) == 1, "never posted twice"
    assert [f["status"] for f in alerts.firings_of()] == ["unverified"]


@pytest.mark.parametrize(
    ("install", "token"),
    [
        ({"enterprise_id": "E0GRID", "team_id": None, "is_enterprise_install": True}, "xoxb-E0GRID-88"),
        ({"enterprise_id": "E0GRID", "team_id": "T0WSA"}, "xoxb-T0WSA-77"),
    ],
    ids=["org-wide-install", "workspace-install-in-an-org"],
)
def test_an_alert_in_an_enterprise_grid_workspace_is_posted_once_with_that_installs_token(
    slack, kbs, monkeypatch, install, token
):
    """Issue 19: a Grid workspace's alert is posted through the bot that serves it, an org-wide install's (its
    installation names only the org; Slack's auth.teams.list says which workspaces it is granted to) or the
    workspace's own; a workspace outside the org is not posted to with the org's token."""
    from slack_sdk.oauth.installation_store.models.installation import Installation

    from bot.settings import load_settings
    from bot.slack.oauth import installation_store

    for name, value in {
        "SLACK_CLIENT_ID": "1111.2222",
        "SLACK_CLIENT_SECRET": "s",
        "SLACK_SIGNING_SECRET": "s",
    }.items():
        monkeypatch.setenv(name, value)
    slack.orgs["E0GRID"] = ["T0WSA", "T0WSB"]
    installation_store(load_settings()).save(
        Installation(
            app_id="A_GPUBOT",
            bot_token=token,
            bot_id="B_BOT",
            bot_user_id="U_BOT",
            bot_scopes="commands,chat:write",
            user_id="U_ADMIN",
            installed_at=time.time(),
            **install,
        )
    )
    text = f"H100 spot on aws below {BASE[0] * 0.75:.4f}"
    add_alert(text, "T0WSA", "C0GRIDA", kbs["base"], now=T0)
    add_alert(text, "T0ELSE", "C0ELSE", kbs["base"], now=T0)  # not in the org, not installed
    first = {r.team: r for r in check_and_post(kb=kbs["low"], now=at(1)).results}
    again = check_and_post(kb=kbs["low"], now=at(2))
    assert first["T0WSA"].status == "posted"
    assert first["T0ELSE"].status == "failed" and "not installed in workspace T0ELSE" in first["T0ELSE"].detail
    assert "T0WSA" not in {r.team for r in again.results}
    assert len(posts(slack, "C0GRIDA")) == 1 and posts(slack, "C0ELSE") == []
    assert [c.headers["authorization"] for c in slack.calls("chat.postMessage") if c.ok] == [f"Bearer {token}"]


@pytest.mark.parametrize("state_url", ["postgresql"], indirect=True)  # several workers need a shared server
def test_two_workers_post_once(slack, kbs, state_url, tmp_path):
    add_alert(f"H100 spot on aws below {BASE[0] * 0.75:.4f}", "T0001", "C0ALERT", kbs["base"], now=T0)
    slack.delay("chat.postMessage", 0.3)  # widen the window in which both workers are mid-run
    # the low prices are an import in the shared state, so every worker's knowledge base has them (a knowledge base
    # that the shared state does not explain is rebuilt by every process: issue 19)
    from knowledge.catalog.importer import import_catalog

    home = tmp_path / "workers"
    home.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPUBOT_HOME", str(home))
        import_catalog(
            Path(kbs["low"].path).parent / "catalogs" / "aws_vms.csv",  # the "low" level's AWS rows
            "aws",
            source="aws catalog, H100 spot x0.5",
            as_of="2026-12-02",
        )
    env = {
        **os.environ,
        "DATABASE_URL": state_url,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_API_URL": slack.base_url,
        "GPUBOT_HOME": str(home),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "alert", "check", "--post", "--json"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    statuses = sorted(r["status"] for out, _ in outputs for r in json.loads(out)["results"])
    assert statuses.count("posted") == 1 and len(posts(slack)) == 1, statuses


def test_cli_add_list_check_remove(slack, kbs, capsys, monkeypatch):
    monkeypatch.setenv("GPUBOT_HOME", str(Path(kbs["low"].path).parent))
    assert (
        main(["alert", "add", "A100 on aws below 1.2 per GPU-hour", "--channel", "C0CLI", "--team", "T1", "--json"])
        == 0
    )
    made = json.loads(capsys.readouterr().out)
    assert made["alert"]["query"]["pricing"] == "on_demand" and made["alert"]["threshold"] == {
        "amount": 1.2,
        "currency": "USD",
    }
    assert made["below_now"] is False and made["offer"]["price_per_gpu_hour_usd"] > 1.2
    assert main(["alert", "add", "H100 spot below 100", "--channel", "C0CLI"]) == 0
    assert "already at or below $100.00" in capsys.readouterr().out
    assert main(["alert", "add", "spot below 2", "--channel", "C0CLI"]) == 2
    assert "Which GPU" in capsys.readouterr().err
    assert main(["alert", "add", "H100 spot", "--channel", "C0CLI"]) == 2
    assert "below 2.50" in capsys.readouterr().err
    assert main(["alert", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["alerts"]
    assert [(a["team"], a["channel"]) for a in listed] == [("T1", "C0CLI"), ("default", "C0CLI")]
    assert main(["alert", "check", "--json"]) == 0  # a dry run: nothing due, nothing written
    assert json.loads(capsys.readouterr().out)["due"] == 0
    assert main(["alert", "remove", str(listed[0]["id"])]) == 0
    assert main(["alert", "remove", str(listed[0]["id"])]) == 1
    assert [a.id for a in alerts.list_alerts()] == [listed[1]["id"]]


def test_a_cny_threshold_is_converted(slack, kbs):
    alert, _ = add_alert("H100 spot on aws below 100 CNY", "T0001", "C0ALERT", kbs["base"], now=T0)
    rate = float(kbs["base"].fx()["usd_per_cny"])
    assert alert.currency == "CNY" and alert.threshold_usd == pytest.approx(100 * rate)


def _usd_per_cny() -> float:
    """The exchange rate as bundled (read from providers.yaml here, not through the code under test)."""

    data = yaml_load((Path(__file__).resolve().parents[1] / "knowledge/data/providers.yaml").read_text())
    return float(data["fx"]["usd_per_cny"])


def test_an_alert_set_in_cny_speaks_cny_when_it_fires_and_when_listed(slack, kbs):
    """Issue 26: an alert's figures are in its own currency, each with its USD twin."""
    rate = _usd_per_cny()
    threshold_cny = round(BASE[0] * 0.75 / rate, 2)
    alert, _ = add_alert(f"H100 spot on aws below {threshold_cny} CNY", "T0001", "C0ALERT", kbs["base"], now=T0)
    assert check(slack, kbs["base"], at(1)).results == []
    assert [r.status for r in check(slack, kbs["low"], at(2)).results] == ["posted"]
    [message] = posts(slack)
    low, _, _ = h100_spot_min(CATALOG_DIR / "aws_vms.csv", LEVELS["low"])
    usd = f"${low:,.4f}" if low < 1 else f"${low:,.2f}"
    assert f"¥{low / rate:,.2f} (≈ {usd})" in message["text"], message["text"]
    assert f"¥{threshold_cny:,.2f}" in message["text"]
    listed = list_text(alerts.list_alerts("T0001", "C0ALERT"), "en")
    assert f"last ¥{low / rate:,.2f} (≈ {usd})" in listed, listed


def test_the_cli_list_of_every_channel_says_whose_each_alert_is(slack, kbs, capsys, monkeypatch):
    monkeypatch.setenv("GPUBOT_HOME", str(Path(kbs["low"].path).parent))
    for channel in ("C0ONE", "C0TWO"):
        assert main(["alert", "add", "A100 on aws below 1.2", "--channel", channel, "--team", "T9"]) == 0
    capsys.readouterr()
    assert main(["alert", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Price alerts in every channel (workspace/channel):"
    assert [line.split("]")[0] for line in lines[1:]] == ["• [T9/C0ONE", "• [T9/C0TWO"]
    assert main(["alert", "list", "--team", "T9", "--channel", "C0ONE"]) == 0
    one = capsys.readouterr().out.splitlines()
    assert one[0] == "Price alerts in this channel:" and len(one) == 2 and "[" not in one[1].split("#")[0]


# --- Slack: the real Bolt app --------------------------------------------------------------------------------------


@pytest.fixture()
def app(slack, kb):
    from bot.settings import load_settings
    from bot.slack.app import build_app

    settings = load_settings(
        slack_signing_secret="test-signing-secret", slack_bot_token="xoxb-test", slack_api_url=slack.base_url
    )
    return build_app(settings, kb)


def slash(app, slack, text: str, channel: str = "C0SLASH", team: str = "T0001") -> str:
    from tests.test_slack_app import dispatch

    hook = f"alert-{uuid.uuid4().hex[:8]}"
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
    response = dispatch(app, body, "application/x-www-form-urlencoded")
    assert response.status == 200
    message = json.loads(response.body) if response.body else {}
    if not message:  # an empty ack: the reply comes by the response_url
        message = slack.wait_for(f"hooks/{hook}")[0].body
    return message.get("text", "")


def test_slash_commands_add_list_and_remove_alerts(app, slack):
    made = slash(app, slack, "alert H100 spot on aws below 0.01")
    assert made.startswith("Alert #") and "at or below $0.0100 per GPU-hour" in made
    made_zh = slash(app, slack, "H100竞价低于每卡每小时2美元时提醒我")
    assert made_zh.startswith("已设置提醒 #") and "$2.00" in made_zh
    slash(app, slack, "alert A100 on aws below 1.2 per GPU-hour", channel="C0OTHER")
    listed = slash(app, slack, "alerts")
    assert "H100 spot on aws at or below $0.0100" in listed and "H100 spot at or below $2.00" in listed
    assert "A100" not in listed  # another channel's alert
    mine = alerts.list_alerts("T0001", "C0SLASH")
    assert [a.spec.pricing for a in mine] == ["spot", "spot"] and [a.language for a in mine] == ["en", "zh"]
    other = alerts.list_alerts("T0001", "C0OTHER")[0]
    assert slash(app, slack, f"alert remove {other.id}").startswith(f"There is no alert #{other.id} in this channel")
    assert slash(app, slack, f"alert remove {mine[0].id}") == f"Alert #{mine[0].id} removed."
    assert [a.id for a in alerts.list_alerts("T0001")] == [mine[1].id, other.id]
    refused = slash(app, slack, "alert H100 spot")
    assert "below 2.50" in refused


def test_uninstall_removes_the_workspace_alerts(app, slack, kb):
    from tests.test_slack_app import dispatch, event_body

    add_alert("H100 spot below 1", "T0001", "C0GONE", kb)
    add_alert("H100 spot below 1", "T0002", "C0STAY", kb)
    body = event_body({"type": "app_uninstalled", "event_ts": f"{time.time():.6f}"})
    assert dispatch(app, body, "application/json").status == 200
    deadline = time.monotonic() + 10
    while alerts.list_alerts("T0001") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alerts.list_alerts("T0001") == [] and [a.team for a in alerts.list_alerts()] == ["T0002"]


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("H100竞价低于每卡每小时2美元时提醒我", "已设置提醒 #"),
        ("alert H100 spot on aws below 2.50", "Alert #"),
    ],
)
def test_a_mention_sets_an_alert_and_answers_in_the_thread(app, slack, text, reply):
    from tests.test_slack_app import dispatch, event_body, mention

    event = mention(text, channel="C0MENTION")
    assert dispatch(app, event_body(event), "application/json").status == 200
    [posted] = slack.wait_for("chat.postMessage")
    assert posted.body["channel"] == "C0MENTION" and posted.body["thread_ts"] == event["ts"]
    assert posted.body["text"].startswith(reply)
    [made] = alerts.list_alerts("T0001", "C0MENTION")
    assert made.spec.gpus == ("H100",) and made.spec.pricing == "spot"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("H100 spot on aws below 100", "date unknown, bundled "),
        ("aws上H100竞价低于每卡每小时100美元时提醒我", "日期未知，打包于 "),
    ],
)
def test_an_alert_on_a_bundled_catalog_says_its_date_is_unknown(kb, capsys, text, said):
    """SkyPilot's catalogs carry no date: the alert's offer says so, never the bundling day as the price's date."""
    rows = kb.rows("SELECT DISTINCT as_of, as_of_known FROM offers WHERE provider = 'aws' AND kind = 'catalog'")
    assert rows and all(not row["as_of_known"] for row in rows)  # the premise, read from the knowledge base
    from knowledge.state import alerts

    assert main(["alert", "add", text, "--channel", "C0DATE"]) == 0
    out = capsys.readouterr().out
    for alert in alerts.list_alerts(channel="C0DATE"):  # the session's home is shared: leave no alert behind
        alerts.remove_alert(alert.team, alert.id)
    assert said + rows[0]["as_of"] in out, out
