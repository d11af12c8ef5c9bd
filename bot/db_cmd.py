"""Persistent-state database: `gpubot db upgrade` applies schema migrations (safe from every worker at start-up).

gpubot db upgrade      migrate the database DATABASE_URL points at (default: SQLite in GPUBOT_HOME)
gpubot db current      print the applied migration
gpubot db rotate-key   re-encrypt every stored bot token with the first key of GPUBOT_SECRET_KEY (new,old), in one
                       transaction; then the old key can be dropped from GPUBOT_SECRET_KEY
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["upgrade", "current", "rotate-key"], help="what to do")


def run(args: argparse.Namespace) -> int:
    import sqlalchemy as sa

    from knowledge.state import db as state

    url = state.database_url()
    shown = sa.make_url(url).render_as_string(hide_password=True)
    if args.action == "upgrade":
        state.upgrade()
        print(f"database {shown} is at the newest schema")
        return 0
    if args.action == "rotate-key":
        return _rotate_key(state.engine())
    with state.engine().connect() as conn:
        version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    print(f"database {shown}: migration {version}")
    return 0


def _rotate_key(engine) -> int:
    from bot.installations import SecretKeyError, rotate_tokens

    try:
        rotated, failed = rotate_tokens(engine)
    except SecretKeyError as exc:
        print(f"gpubot db rotate-key: {exc}", file=sys.stderr)
        return 2
    print(f"re-encrypted {rotated} stored token{'' if rotated == 1 else 's'} with the first key of GPUBOT_SECRET_KEY")
    if failed:
        print(
            f"gpubot db rotate-key: {failed} stored token{'' if failed == 1 else 's'} no key of GPUBOT_SECRET_KEY "
            "decrypts (left as they were: add the key they were stored with, or those workspaces reinstall)",
            file=sys.stderr,
        )
        return 1
    return 0
