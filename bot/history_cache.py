"""The printed output of `gpubot history` kept for the current knowledge base and the current price snapshots.

A history answer is a pure function of the arguments, the knowledge-base file (bundled weekly history, imports)
and the recorded snapshots. The output is reused while the knowledge-base file is the same file (inode, size,
mtime) built from the same bundled data, the code is the same (`knowledge.code_version`: an upgrade computes
anew), and the state database holds the same snapshots (count, newest id and recording time, read with the plain
database driver, so a repeated question needs neither SQLAlchemy nor a schema check). `--png` is never served from
here (it writes a file). `GPUBOT_ANSWER_CACHE=0` turns it off.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["cache_file", "keep"]


def _state_version() -> str | None:
    """What identifies the recorded snapshots now, or None when it cannot be read cheaply (no cache then)."""
    from knowledge.config import raw
    from knowledge.paths import home

    url = raw("DATABASE_URL") or ""
    sql = "SELECT COUNT(*), COALESCE(MAX(id), 0), MAX(recorded_at) FROM snapshots"
    try:
        if not url or url.startswith("sqlite:///"):
            path = Path(url[len("sqlite:///") :]) if url else home() / "state.db"
            if not path.exists():
                return None
            conn: Any = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)  # or psycopg, below
        elif url.startswith(("postgres://", "postgresql://", "postgresql+psycopg://")):
            import psycopg

            conn = psycopg.connect("postgresql://" + url.split("://", 1)[1], connect_timeout=3)
        else:
            return None
        try:
            row = conn.execute(sql).fetchone()
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - no table yet, a locked file, a server down: just no cache
        return None
    return f"{url}|{row[0]}|{row[1]}|{row[2]}"


def cache_file(argv: list[str]) -> Path | None:
    """Where the output for these arguments is kept now, or None when there is nothing to key it on."""
    from knowledge.code_version import code_version
    from knowledge.config import raw
    from knowledge.kb.reader import _identity
    from knowledge.kb.schema import fingerprint
    from knowledge.paths import home, kb_path

    if raw("GPUBOT_ANSWER_CACHE") == "0" or not kb_path().exists():
        return None
    version = _state_version()
    if version is None:
        return None
    parts = [*argv, _identity(kb_path()), fingerprint(), version, code_version()]  # an upgrade: computed anew
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return home() / "cache" / "history" / f"{key[:32]}.out"


def keep(argv: list[str], output: str) -> None:
    """Keep `output` for `argv` (computed after the run: the run may have built the KB or recorded a baseline)."""
    path = cache_file(argv)
    if path is None:
        return
    from bot import disk_cache

    disk_cache.keep(path, output)  # bounded, least recently used out; never fails a question
