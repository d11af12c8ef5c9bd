"""The settings change record: who changed which channel/workspace setting or digest subscription, when, old, new.

Revision ID: 0002_slack
Revises: 0001_baseline
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0002_slack"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.settings_audit import changes_table

    changes_table.create(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    from knowledge.state.settings_audit import changes_table

    changes_table.drop(op.get_bind(), checkfirst=True)
