"""Live sources: what each last did (`knowledge.state.live_sources`); `catalog_imports.as_of_known`; the stock of
each recorded offer (`snapshot_offers.stock`).

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
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("snapshot_offers")}
    if "stock" not in columns:
        with op.batch_alter_table("snapshot_offers") as batch:
            batch.add_column(sa.Column("stock", sa.String(16)))


def downgrade() -> None:
    from knowledge.state.live_sources import live_sources

    live_sources.drop(op.get_bind(), checkfirst=True)
    with op.batch_alter_table("catalog_imports") as batch:
        batch.drop_column("as_of_known")
    with op.batch_alter_table("snapshot_offers") as batch:
        batch.drop_column("stock")
