"""Where gpubot reads bundled data and where it writes its own files.

Nothing is ever written inside the installed package: the knowledge base (a rebuildable artifact) and the
persistent state (price history, subscriptions, settings) live under `GPUBOT_HOME`, by default a per-user data
folder (`$XDG_DATA_HOME/gpubot`, else `~/.local/share/gpubot`).
"""

from __future__ import annotations

from pathlib import Path

from knowledge.config import raw

DATA_DIR = Path(__file__).resolve().parent / "data"
CATALOG_DIR = DATA_DIR / "catalogs"
PRICING_DIR = DATA_DIR / "pricing"


def home() -> Path:
    """The folder gpubot writes to (created on demand)."""
    configured = raw("GPUBOT_HOME")
    if configured:
        path = Path(configured).expanduser()
    else:
        base = raw("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(base) / "gpubot"
    from knowledge.state.private_files import private_dir

    return private_dir(path)  # 0700: it holds the state database (tokens)


def kb_path() -> Path:
    """The knowledge-base SQLite file (rebuilt from bundled data by `gpubot kb build`)."""
    return home() / "kb.db"
