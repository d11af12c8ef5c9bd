"""Price alerts: `price_alerts` and `price_alert_firings` (knowledge/state/alerts.py).

Revision ID: 0003_alerts
Revises: 0002_slack
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0003_alerts"
down_revision = "0002_slack"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.alerts import alerts, firings

    bind = op.get_bind()
    for table in (alerts, firings):
        table.create(bind, checkfirst=True)


def downgrade() -> None:
    from knowledge.state.alerts import alerts, firings

    bind = op.get_bind()
    for table in (firings, alerts):
        table.drop(bind, checkfirst=True)
