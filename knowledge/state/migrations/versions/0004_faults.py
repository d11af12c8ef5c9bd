"""Leased claims for exactly-once Slack deliveries (`knowledge.state.claims.event_claims`).

Revision ID: 0004_faults
Revises: 0003_alerts
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0004_faults"
down_revision = "0003_alerts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.claims import event_claims

    event_claims.create(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    from knowledge.state.claims import event_claims

    event_claims.drop(op.get_bind(), checkfirst=True)
