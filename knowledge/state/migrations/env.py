"""Alembic environment: migrations run on the connection `knowledge.state.db.upgrade` hands over (under its lock)."""

from __future__ import annotations

from alembic import context

from knowledge.state.db import load_table_owners, metadata

load_table_owners()
connection = context.config.attributes["connection"]


def include_object(obj, name, type_, reflected, compare_to) -> bool:
    """slack_sdk creates and owns its installation/OAuth-state tables: never propose to change or drop them."""
    return not (type_ == "table" and name.startswith("slack_"))


context.configure(connection=connection, target_metadata=metadata, render_as_batch=True, include_object=include_object)
with context.begin_transaction():
    context.run_migrations()
