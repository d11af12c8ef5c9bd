"""Baseline: the persistent-state tables as first released (handled events, imports, price history,
digest subscriptions and posts, channel settings). Later schema changes are explicit migrations after this one.

Revision ID: 0001_baseline
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.db import load_table_owners, metadata

    load_table_owners()
    metadata.create_all(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    raise NotImplementedError("the baseline cannot be downgraded; restore a backup instead")
