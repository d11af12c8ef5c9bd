"""Where the persistent state lives (`DATABASE_URL`, default a SQLite file in `GPUBOT_HOME`), without SQLAlchemy:
a CLI start that only needs to know whether imports moved reads the SQLite file directly
(`knowledge.catalog.imports_version`).
"""

from __future__ import annotations

from knowledge.paths import home


def database_url() -> str:
    from knowledge.config import raw

    url = raw("DATABASE_URL")
    if not url:
        return f"sqlite:///{home() / 'state.db'}"
    if url.startswith("postgres://"):  # Heroku-style scheme
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url
