"""Workspace state in one database (SQLite or PostgreSQL): settings and their audit, alerts, subscriptions,
claims, post-once, Grid members, private files and the Alembic migrations. May import knowledge's top-level
modules and `facts`; alerts and settings validation read the built knowledge base (`kb`), nothing else.
Imports: top, facts; alerts also kb; settings_store also kb
"""
