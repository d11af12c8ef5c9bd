"""Persistent-state database: `gpubot db upgrade` applies schema migrations (safe from every worker at start-up).

gpubot db upgrade      migrate the database DATABASE_URL points at (default: SQLite in GPUBOT_HOME)
gpubot db current      print the applied migration
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["upgrade", "current"], help="what to do")


def run(args: argparse.Namespace) -> int:
    import sqlalchemy as sa

    from knowledge.state import db as state

    url = state.database_url()
    shown = sa.make_url(url).render_as_string(hide_password=True)
    if args.action == "upgrade":
        state.upgrade()
        print(f"database {shown} is at the newest schema")
        return 0
    with state.engine().connect() as conn:
        version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    print(f"database {shown}: migration {version}")
    return 0
