"""`gpubot db upgrade`: migrations apply once, concurrently from several processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys

import sqlalchemy as sa


def test_concurrent_upgrades_from_several_workers(empty_state_url, tmp_path):
    env = {**os.environ, "DATABASE_URL": empty_state_url}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "db", "upgrade"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "GPUBOT_HOME": str(tmp_path / f"w{i}")},
        )
        for i in range(3)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "newest schema" in out
    engine = sa.create_engine(empty_state_url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all() == [_head()]
        tables = set(sa.inspect(conn).get_table_names())
    engine.dispose()
    assert {
        "handled_events",
        "catalog_imports",
        "snapshots",
        "snapshot_offers",
        "digest_subscriptions",
        "digest_posts",
        "settings_changes",
        "price_alerts",
        "price_alert_firings",
        "event_claims",
    } <= tables


def _head() -> str:
    """The newest migration (later migrations are chained after 0001_baseline)."""
    from pathlib import Path

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent.parent / "knowledge" / "state" / "migrations"))
    return ScriptDirectory.from_config(config).get_current_head()


def test_the_head_read_without_alembic_is_alembics_head():
    """`state.engine()` skips Alembic when the database is at `head_revision()`: it must be Alembic's own head."""
    from knowledge.state.db import head_revision

    assert head_revision() == _head()


def test_a_current_database_is_opened_without_importing_alembic(tmp_path):
    """A process whose state is already migrated never imports Alembic (~0.1 s of every CLI start)."""
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'state.db'}", "GPUBOT_HOME": str(tmp_path)}
    code = "from knowledge.state.db import engine; engine(); import sys; print('alembic' in sys.modules)"
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (first.stdout.strip(), again.stdout.strip()) == ("True", "False")
