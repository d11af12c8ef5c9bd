"""Many workspaces (issue 9), through the real thing: `gpubot serve --http` (gunicorn) in OAuth mode as a subprocess,
signed requests over real sockets, and the stand-in Slack Web API serving `oauth.v2.access` and `auth.test`.

The install link carries the client id, the scopes and a state; the redirect with a valid state (and its cookie)
stores the installation in gpubot's state database, after which a slash command or a mention from that workspace is
answered with that workspace's own token; a bad, replayed or expired state is refused; `app_uninstalled` deletes the
workspace's tokens and settings; channel settings change the answers in that channel only and survive a restart.
Every test runs on SQLite (the default) and on PostgreSQL (DATABASE_URL).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import sqlalchemy as sa

from bot.slack.tables import tables_of
from tests.slack_standin import SlackStandIn, check_message, message_blocks
from tests.test_slack_http import FORM, GPUBOT, JSON, free_port, request, signed
from tests.yaml_text import yaml_load

CLIENT_ID, CLIENT_SECRET = "1111.2222", "oauth-client-secret"
SECRET = "http-test-secret"  # the signing secret `signed()` uses
CODES = {
    "valid-code": "T0002",
    "other-code": "T0002",
    "gone-code": "T0003",
    "late-code": "T0004",
    "fifth-code": "T0005",
}
MANIFEST = Path(__file__).resolve().parent.parent / "manifest.yml"


class Server:
    """One `gpubot serve --http` process in OAuth mode; `restart()` replaces it with a fresh one (same database)."""

    def __init__(self, home: Path, slack: SlackStandIn, database_url: str) -> None:
        self.home, self.slack, self.database_url = home, slack, database_url
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def env(self) -> dict[str, str]:
        import os

        env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_") and k != "DATABASE_URL"}
        env.update(
            SLACK_SIGNING_SECRET=SECRET,
            SLACK_CLIENT_ID=CLIENT_ID,
            SLACK_CLIENT_SECRET=CLIENT_SECRET,
            SLACK_API_URL=self.slack.base_url,
            GPUBOT_HOME=str(self.home),
            DATABASE_URL=self.database_url,
            GPUBOT_LOG_LEVEL="WARNING",
        )
        return env

    def start(self) -> Server:
        self.port = free_port()
        self.log = open(self.home / f"oauth-serve-{self.port}.log", "w+b")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [GPUBOT, "serve", "--http", "--host", "127.0.0.1", "--port", str(self.port)],
            env=self.env(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if request(self.port, "GET", "/healthz")[0] == 200:
                    return self
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                output = self.log.read().decode()[-3000:]
                pytest.fail(f"gpubot serve did not start (exit {self.proc.poll()}):\n{output}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.log.close()
            self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(oauth_codes=CODES, client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as standin:
        yield standin


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, kb, gpubot_home, slack, tmp_path_factory) -> Iterator[Server]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('oauth') / 'state.db'}"
    else:
        url = request.getfixturevalue("postgres").new_database()
    running = Server(gpubot_home, slack, url).start()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _fresh(slack) -> None:
    slack.clear()


def engine_of(server: Server) -> sa.Engine:
    url = server.database_url.replace("postgresql://", "postgresql+psycopg://", 1)
    return sa.create_engine(url)


def bot_of(server: Server, team: str):
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    eng = engine_of(server)
    try:
        return SQLAlchemyInstallationStore(client_id=CLIENT_ID, engine=eng).find_bot(enterprise_id=None, team_id=team)
    finally:
        eng.dispose()


def install_link(server: Server) -> tuple[str, dict[str, list[str]], str]:
    """GET /slack/install: (the link, its query, the state cookie)."""
    status, _, headers = request(server.port, "GET", "/slack/install")
    assert status == 302
    link = headers["location"]
    cookie = headers["set-cookie"].split(";")[0]
    return link, parse_qs(urlsplit(link).query), cookie


def redirect(server: Server, code: str, state: str, cookie: str | None) -> tuple[int, bytes]:
    path = "/slack/oauth_redirect?" + urlencode({"code": code, "state": state})
    status, body, _ = request(server.port, "GET", path, headers={"Cookie": cookie} if cookie else {})
    return status, body


def install(server: Server, code: str) -> None:
    _, query, cookie = install_link(server)
    assert redirect(server, code, query["state"][0], cookie)[0] == 200


def slash(server: Server, slack: SlackStandIn, team: str, channel: str, text: str, *, hook: str = "") -> dict:
    hook = hook or f"oauth-{uuid.uuid4().hex[:8]}"
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
    status, raw, _ = request(server.port, "POST", "/slack/events", body, signed(body, FORM))
    assert status == 200
    message = json.loads(raw) if raw.startswith(b"{") else {"text": raw.decode()}
    if message.get("text") == "Looking that up…":
        message = slack.wait_for(f"hooks/{hook}", timeout=5)[0].body
    return message


def event(server: Server, team: str, payload: dict) -> int:
    body = json.dumps(
        {
            "team_id": team,
            "api_app_id": "A_GPUBOT",
            "type": "event_callback",
            "event": payload,
            "event_id": f"Ev{uuid.uuid4().hex[:10]}",
            "event_time": int(time.time()),
        }
    )
    return request(server.port, "POST", "/slack/events", body, signed(body, JSON))[0]


def providers(message: dict) -> set[str]:
    table = tables_of(message)[0]  # in the attachments (issue 17)
    return {row[1]["text"] for row in table["rows"][1:]}


def context_text(message: dict) -> str:
    return "\n".join(
        e.get("text", "") for b in message_blocks(message) if b["type"] == "context" for e in b["elements"]
    )


# --- the install flow ------------------------------------------------------------------------------------------


def test_the_install_link_carries_client_id_scopes_and_a_state(server):
    link, query, cookie = install_link(server)
    assert link.startswith("https://slack.com/oauth/v2/authorize?")
    assert query["client_id"] == [CLIENT_ID]
    manifest_scopes = yaml_load(MANIFEST.read_text())["oauth_config"]["scopes"]["bot"]
    assert sorted(query["scope"][0].split(",")) == sorted(manifest_scopes)
    state = query["state"][0]
    assert len(state) >= 32 and cookie == f"slack-app-oauth-state={state}"
    assert install_link(server)[1]["state"][0] != state  # a fresh state per link


def test_a_valid_state_installs_and_that_workspace_is_answered_with_its_own_token(server, slack, kb):
    _, query, cookie = install_link(server)
    status, page = redirect(server, "valid-code", query["state"][0], cookie)
    assert status == 200, page[:500]
    exchange = slack.calls("oauth.v2.access")
    assert len(exchange) == 1 and exchange[0].body["code"] == "valid-code"
    bot = bot_of(server, "T0002")
    assert bot is not None and bot.bot_token.startswith("xoxb-T0002-")
    slack.clear()

    message = slash(server, slack, "T0002", "C0ANY", "cheapest A100 spot")
    assert check_message(message) == (None, [])
    from bot.pipeline import answer

    table = tables_of(message)[0]
    assert [row[2]["text"] for row in table["rows"][1:]] == [
        o.instance_type for o in answer("cheapest A100 spot", kb).offers
    ]
    checks = slack.calls("auth.test")
    assert checks and {c.headers["authorization"] for c in checks} == {f"Bearer {bot.bot_token}"}

    ts = f"{time.time():.6f}"
    assert (
        event(
            server,
            "T0002",
            {
                "type": "app_mention",
                "user": "U_ASKER",
                "channel": "C0ANY",
                "ts": ts,
                "text": f"<@{SlackStandIn.bot_user_id}> price of p4d.24xlarge",
            },
        )
        == 200
    )
    post = slack.wait_for("chat.postMessage")[0]
    assert post.headers["authorization"] == f"Bearer {bot.bot_token}" and post.body["thread_ts"] == ts


def test_a_workspace_that_never_installed_is_asked_to_install(server, slack):
    assert slash(server, slack, "T0999", "C0ANY", "cheapest A100 spot", hook="never") == {"text": ""}
    told = slack.wait_for("hooks/never")[0].body
    assert "install" in told["text"].lower() and "blocks" not in told
    assert not slack.calls("auth.test")  # no token to check


@pytest.mark.parametrize("case", ["unknown-state", "no-cookie", "other-cookie", "replayed"])
def test_a_bad_state_is_refused(server, slack, case):
    _, query, cookie = install_link(server)
    state = query["state"][0]
    if case == "unknown-state":
        state = str(uuid.uuid4())
        cookie = f"slack-app-oauth-state={state}"  # even with a matching cookie
    elif case == "no-cookie":
        cookie = None
    elif case == "other-cookie":
        cookie = f"slack-app-oauth-state={uuid.uuid4()}"
    elif case == "replayed":
        assert redirect(server, "other-code", state, cookie)[0] == 200
        slack.clear()
    status, _ = redirect(server, "other-code", state, cookie)
    assert status in (400, 401)
    assert not slack.calls("oauth.v2.access")


def test_an_expired_state_is_refused(server, slack):
    _, query, cookie = install_link(server)
    state = query["state"][0]
    eng = engine_of(server)
    with eng.begin() as conn:
        done = conn.execute(
            sa.text("UPDATE slack_oauth_states SET expire_at = :past WHERE state = :state"),
            {"past": "2000-01-01 00:00:00", "state": state},
        ).rowcount
    eng.dispose()
    assert done == 1
    status, _ = redirect(server, "late-code", state, cookie)
    assert status == 401
    assert not slack.calls("oauth.v2.access") and bot_of(server, "T0004") is None


def test_anonymous_install_links_do_not_pile_up_states(server):
    """Issue 17: every anonymous GET /slack/install issues a state; the expired ones are deleted when the next is
    issued, so the table holds the live ones only (and at most MAX_OAUTH_STATES of them)."""
    issued = [install_link(server)[1]["state"][0] for _ in range(5)]
    eng = engine_of(server)
    with eng.begin() as conn:  # they all expire
        conn.execute(sa.text("UPDATE slack_oauth_states SET expire_at = :past"), {"past": "2000-01-01 00:00:00"})
    fresh = install_link(server)[1]["state"][0]
    with eng.connect() as conn:
        left = conn.execute(sa.text("SELECT state FROM slack_oauth_states")).scalars().all()
    eng.dispose()
    assert left == [fresh] and not set(issued) & set(left)


def test_app_uninstalled_deletes_the_workspace_tokens_and_settings(server, slack):
    install(server, "gone-code")
    assert bot_of(server, "T0003") is not None
    assert "alibaba" in slash(server, slack, "T0003", "C0GONE", "set providers alibaba")["text"]
    assert event(server, "T0003", {"type": "app_uninstalled", "event_ts": f"{time.time():.6f}"}) == 200
    deadline = time.monotonic() + 5
    while bot_of(server, "T0003") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bot_of(server, "T0003") is None
    eng = engine_of(server)
    with eng.connect() as conn:
        left = conn.execute(sa.text("SELECT COUNT(*) FROM channel_settings WHERE team_id = 'T0003'")).scalar()
        installs = conn.execute(sa.text("SELECT COUNT(*) FROM slack_installations WHERE team_id = 'T0003'")).scalar()
    eng.dispose()
    assert (left, installs) == (0, 0)
    assert slash(server, slack, "T0003", "C0GONE", "cheapest A100", hook="gone") == {"text": ""}
    assert "install" in slack.wait_for("hooks/gone")[0].body["text"].lower()


def test_the_digest_posts_to_each_workspace_with_its_own_token(server, slack, monkeypatch):
    from bot.settings import load_settings
    from bot.slack.digest import post_digests
    from bot.slack.oauth import client_for_team

    for code in ("valid-code", "fifth-code"):
        install(server, code)
    for team in ("T0002", "T0005"):
        reply = slash(server, slack, team, f"C0DIGEST{team}", "digest subscribe")
        assert "daily GPU price digest" in reply["text"]
    slack.clear()
    monkeypatch.setenv("DATABASE_URL", server.database_url)
    settings = load_settings(slack_client_id=CLIENT_ID, slack_client_secret=CLIENT_SECRET, slack_api_url=slack.base_url)
    with pytest.raises(LookupError):
        client_for_team("T0999", settings)
    report = post_digests(lambda team: client_for_team(team, settings), team=None)
    assert sorted(r.channel for r in report.posted) == ["C0DIGESTT0002", "C0DIGESTT0005"]
    tokens = {c.body["channel"]: c.headers["authorization"] for c in slack.calls("chat.postMessage")}
    assert tokens == {f"C0DIGEST{team}": f"Bearer {bot_of(server, team).bot_token}" for team in ("T0002", "T0005")}


# --- channel settings: that channel only, across a restart ---------------------------------------------------------


def test_channel_settings_change_that_channel_only_and_survive_a_restart(server, slack):
    if bot_of(server, "T0002") is None:
        install(server, "valid-code")
    reply = slash(server, slack, "T0002", "C0ALIBABA", "set providers alibaba")
    assert "alibaba" in reply["text"] and reply["response_type"] == "in_channel"  # issue 17: announced
    here = slash(server, slack, "T0002", "C0ALIBABA", "cheapest A100")
    assert providers(here) == {"alibaba"}
    assert "filtered to your channel's providers: alibaba" in context_text(here)
    there = slash(server, slack, "T0002", "C0ELSEWHERE", "cheapest A100")
    assert providers(there) - {"alibaba"}, "another channel is not filtered"

    server.restart()
    slack.clear()
    again = slash(server, slack, "T0002", "C0ALIBABA", "cheapest A100")
    assert providers(again) == {"alibaba"}
    assert "filtered to your channel's providers: alibaba" in context_text(again)
    assert providers(slash(server, slack, "T0002", "C0ELSEWHERE", "cheapest A100")) - {"alibaba"}
    assert slack.calls("auth.test"), "still authorized with the stored installation after the restart"


def test_a_client_id_without_its_secret_is_a_clear_startup_error(gpubot_home, slack):
    env = {
        k: v
        for k, v in Server(gpubot_home, slack, "").env().items()
        if k not in ("SLACK_CLIENT_SECRET", "DATABASE_URL")
    }
    done = subprocess.run(
        [GPUBOT, "serve", "--http", "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert "SLACK_CLIENT_SECRET" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
