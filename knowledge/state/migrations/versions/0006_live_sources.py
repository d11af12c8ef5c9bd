"""Live sources: what each last did (`knowledge.state.live_sources`); `catalog_imports.as_of_known`.

Revision ID: 0006_live_sources
Revises: 0005_grid_members
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_live_sources"
down_revision = "0005_grid_members"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from knowledge.state.live_sources import live_sources

    live_sources.create(op.get_bind(), checkfirst=True)
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("catalog_imports")}
    if "as_of_known" not in columns:  # a database created at this head has it already
        with op.batch_alter_table("catalog_imports") as batch:
            batch.add_column(sa.Column("as_of_known", sa.Boolean))


def downgrade() -> None:
    from knowledge.state.live_sources import live_sources

    live_sources.drop(op.get_bind(), checkfirst=True)
    with op.batch_alter_table("catalog_imports") as batch:
        batch.drop_column("as_of_known")
