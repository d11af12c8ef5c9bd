"""Alembic migrations of gpubot's persistent state (`gpubot db upgrade`)."""
