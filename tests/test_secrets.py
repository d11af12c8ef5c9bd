"""Secrets at rest and in logs, and Enterprise Grid installs.

- GPUBOT_HOME is created 0700, the SQLite state database and its -wal/-shm 0600; looser modes are reported.
- With GPUBOT_SECRET_KEY set, bot tokens are stored encrypted (Fernet), on SQLite and PostgreSQL: the token's text
  is nowhere in the database files, and the app reads it back.
- With GPUBOT_LOG_LEVEL=DEBUG, a whole OAuth install and a question through the real server leave no token, OAuth
  code, client secret or signing secret in the log.
- A workspace of an Enterprise Grid org (its installation carries enterprise_id, or the org's org-wide
  installation serves it) gets its digest.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store.models.installation import Installation

from bot.cli import main
from tests.slack_standin import SlackStandIn
from tests.test_oauth import CLIENT_ID, CLIENT_SECRET, CODES, SECRET, Server, install, slash

KEY = Fernet.generate_key().decode()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_home_and_state_database_are_private(tmp_path, monkeypatch):
    from knowledge.state import db as state
    from knowledge.state import subscriptions

    old = os.umask(0o022)  # the usual umask: files 0644, folders 0755 unless gpubot says otherwise
    try:
        home = tmp_path / "fresh" / "gpubot"
        monkeypatch.setenv("GPUBOT_HOME", str(home))
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{home / 'state.db'}")
        subscriptions.subscribe("default", "C0PRIVATE")  # creates the home, the database, its WAL
        with sa.create_engine(f"sqlite:///{home / 'state.db'}").connect() as conn:  # another reader: -shm stays
            conn.execute(sa.text("SELECT 1"))
            assert mode(home) == 0o700
            for name in ("state.db", "state.db-wal", "state.db-shm"):
                assert mode(home / name) == 0o600, name
        assert state.loose_modes() == []
        os.chmod(home / "state.db", 0o644)
        os.chmod(home, 0o755)
        warnings = state.loose_modes()
        assert any("state.db is mode 0644" in w and "chmod 600" in w for w in warnings)
        assert any("is mode 0755" in w and "chmod 700" in w for w in warnings)
    finally:
        os.umask(old)


def _installation(team: str | None, token: str, enterprise: str | None = None) -> Installation:
    return Installation(
        app_id="A_GPUBOT",
        enterprise_id=enterprise,
        team_id=team,
        bot_token=token,
        bot_id="B_BOT",
        bot_user_id="U_BOT",
        bot_scopes="commands,chat:write",
        user_id="U_ADMIN",
        installed_at=dt.datetime.now(dt.UTC).timestamp(),
    )


def _oauth_settings(monkeypatch, api_url: str = "http://127.0.0.1:9/api/"):
    from bot.settings import load_settings

    for name, value in {
        "SLACK_CLIENT_ID": CLIENT_ID,
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": api_url,
    }.items():
        monkeypatch.setenv(name, value)
    return load_settings()


def test_bot_tokens_are_encrypted_at_rest(state_url, tmp_path, monkeypatch):
    from bot.slack.oauth import client_for_team, installation_store

    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUBOT_SECRET_KEY", KEY)
    settings = _oauth_settings(monkeypatch)
    token = "xoxb-T0CRYPT-4242424242-s3cr3t"
    installation_store(settings).save(_installation("T0CRYPT", token))
    engine = sa.create_engine(state_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT bot_token FROM slack_bots WHERE team_id='T0CRYPT'")).scalars().all()
        stored += (
            conn.execute(sa.text("SELECT bot_token FROM slack_installations WHERE team_id='T0CRYPT'")).scalars().all()
        )
    engine.dispose()
    assert len(stored) == 2 and all(v.startswith("fernet:") and "xoxb" not in v for v in stored)
    if state_url.startswith("sqlite"):
        raw = b"".join(p.read_bytes() for p in Path(state_url.removeprefix("sqlite:///")).parent.glob("state.db*"))
        assert token.encode() not in raw, "the token's text is nowhere in the database files"
    assert client_for_team("T0CRYPT", settings).token == token  # read back decrypted
    monkeypatch.setenv("GPUBOT_SECRET_KEY", Fernet.generate_key().decode())  # a different key: no token, no crash
    with pytest.raises(LookupError):
        client_for_team("T0CRYPT", settings)


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(oauth_codes=CODES, client_id=CLIENT_ID, client_secret=CLIENT_SECRET) as standin:
        yield standin


class DebugServer(Server):
    def env(self) -> dict[str, str]:
        return {**super().env(), "GPUBOT_LOG_LEVEL": "DEBUG", "GPUBOT_SECRET_KEY": KEY}


def test_no_secret_reaches_the_log_at_debug_level(kb, gpubot_home, slack, tmp_path):
    server = DebugServer(gpubot_home, slack, f"sqlite:///{tmp_path / 'state.db'}").start()
    try:
        install(server, "valid-code")
        token = next(c.response["access_token"] for c in slack.calls("oauth.v2.access") if c.ok)
        answer = slash(server, slack, "T0002", "C0DEBUG", "cheapest A100 spot")
        assert "A100" in answer["text"]
    finally:
        server.stop()
    log = (gpubot_home / f"oauth-serve-{server.port}.log").read_text(errors="replace")
    assert "[DEBUG]" in log and "api/oauth.v2.access" in log, "the log is at DEBUG and covers the OAuth exchange"
    for secret in (token, "valid-code", CLIENT_SECRET, SECRET, KEY):
        assert secret not in log, f"{secret[:8]}… is in the log"
    assert "xoxb-" not in log


@pytest.mark.parametrize("org_wide", [False, True], ids=["workspace-install-in-an-org", "org-wide-install"])
def test_an_enterprise_grid_workspace_gets_its_digest(tmp_path, monkeypatch, org_wide):
    from bot.slack.oauth import installation_store
    from knowledge.history import snapshots as history
    from knowledge.state import subscriptions

    offer = {"instance_type": "p5.48xlarge", "region": "us-east-1", "pricing": "spot", "gpu": "H100", "gpu_count": 8}
    now = dt.datetime.now(dt.UTC)
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    monkeypatch.setattr(history, "ensure_baselines", lambda *a, **k: [])
    history.record_snapshot("aws", [{**offer, "price_per_hour_usd": 20.0}], "old", now - dt.timedelta(days=2))
    history.record_snapshot("aws", [{**offer, "price_per_hour_usd": 18.0}], "new", now - dt.timedelta(hours=3))
    with SlackStandIn() as standin:
        settings = _oauth_settings(monkeypatch, standin.base_url)
        token = "xoxb-E0GRID-88" if org_wide else "xoxb-T0GRID-77"
        grid = _installation(None if org_wide else "T0GRID", token, enterprise="E0GRID")
        grid.is_enterprise_install = org_wide  # org-wide: the installation names only the org
        standin.orgs["E0GRID"] = ["T0GRID"]  # the workspaces Slack says the org-wide install is granted to
        installation_store(settings).save(grid)
        subscriptions.subscribe("T0GRID", "C0GRID", charts=False)
        assert main(["digest", "--post"]) == 0
        posted = standin.messages("C0GRID")
        assert len(posted) == 1 and "H100" in posted[0]["text"]
        call = next(c for c in standin.calls("chat.postMessage") if c.ok)
        assert call.headers["authorization"] == f"Bearer {token}", "posted with the token of the Grid install"


def test_a_malformed_secret_key_is_a_clear_startup_error(gpubot_home, slack):
    import subprocess

    from tests.test_slack_http import GPUBOT, free_port, server_env

    env = server_env(gpubot_home, slack, GPUBOT_SECRET_KEY="not-a-fernet-key")
    done = subprocess.run(
        [GPUBOT, "serve", "--http", "--port", str(free_port())], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "GPUBOT_SECRET_KEY is not a Fernet key" in done.stderr and "not-a-fernet-key" not in done.stderr


def test_key_rotation_keeps_every_workspace_working(state_url, tmp_path, monkeypatch, capsys):
    """Issue 25: install with K1, then GPUBOT_SECRET_KEY=K2,K1, `gpubot db rotate-key`, then K2 alone."""
    from bot.installations import undecryptable_tokens
    from bot.slack.oauth import client_for_team, installation_store
    from knowledge.state import db as state

    k1, k2 = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    settings = _oauth_settings(monkeypatch)
    tokens = {"T0ROT1": "xoxb-T0ROT1-1111-one", "T0ROT2": "xoxb-T0ROT2-2222-two", "T0PLAIN": "xoxb-T0PLAIN-3-plain"}
    installation_store(settings).save(_installation("T0PLAIN", tokens["T0PLAIN"]))  # stored before any key was set
    monkeypatch.setenv("GPUBOT_SECRET_KEY", k1)
    for team in ("T0ROT1", "T0ROT2"):
        installation_store(settings).save(_installation(team, tokens[team]))

    def working() -> dict[str, bool]:
        found = {}
        for team, token in tokens.items():
            try:
                found[team] = client_for_team(team, settings).token == token
            except LookupError:
                found[team] = False
        return found

    monkeypatch.setenv("GPUBOT_SECRET_KEY", k2)  # the old key dropped too early: what start-up would say
    assert undecryptable_tokens(state.engine()) == 4  # two workspaces, each a bot row and an installation row
    assert working() == {"T0ROT1": False, "T0ROT2": False, "T0PLAIN": True}
    monkeypatch.setenv("GPUBOT_SECRET_KEY", f"{k2},{k1}")
    assert undecryptable_tokens(state.engine()) == 0 and all(working().values())
    assert main(["db", "rotate-key"]) == 0
    assert "re-encrypted 6 stored tokens" in capsys.readouterr().out
    monkeypatch.setenv("GPUBOT_SECRET_KEY", k2)
    assert undecryptable_tokens(state.engine()) == 0
    assert all(working().values()), "every workspace keeps working with the new key alone"
    engine = sa.create_engine(state_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        stored = conn.execute(sa.text("SELECT bot_token FROM slack_bots")).scalars().all()
    engine.dispose()
    assert stored and all(v.startswith("fernet:") for v in stored), "the plain token is encrypted now too"


def test_rotate_key_without_a_key_is_one_line(state_url, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GPUBOT_SECRET_KEY", raising=False)
    assert main(["db", "rotate-key"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "gpubot db rotate-key: GPUBOT_SECRET_KEY is not set: there is no key to rotate to"
