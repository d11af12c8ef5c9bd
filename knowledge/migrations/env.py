"""Alembic environment: migrations run on the connection `knowledge.state.upgrade` hands over (under its lock)."""

from __future__ import annotations

from alembic import context

from knowledge.state import load_table_owners, metadata

load_table_owners()
connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
