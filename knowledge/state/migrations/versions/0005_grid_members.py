"""The workspaces each Enterprise Grid org-wide install served (`knowledge.state.grid_members.members`).

Revision ID: 0005_grid_members
Revises: 0004_faults
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0005_grid_members"
down_revision = "0004_faults"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.grid_members import members

    members.create(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    from knowledge.state.grid_members import members

    members.drop(op.get_bind(), checkfirst=True)
