"""Which gpubot code is running: a short hash over the package's source files (path, size, modification time).

File caches of printed output (`bot.cli`'s answers, `bot.history_cache`) put it in their keys, so an upgrade (pip,
git pull, an edit) never serves an answer computed by the code it replaced. Read once per process (~1 ms): the
code a process runs is the code it loaded.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

__all__ = ["code_version", "tree_version"]

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "handlers", "knowledge")
SUFFIXES = (".py", ".j2")


@cache
def code_version() -> str:
    """The running package's version hash (computed once per process)."""
    return tree_version(ROOT)


def tree_version(root: Path) -> str:
    """A hash over the source files (`.py`, `.j2`) of `PACKAGES` under `root`: names, sizes, modification times."""
    digest = hashlib.sha1()
    for package in PACKAGES:
        for folder, dirs, files in os.walk(root / package):
            dirs[:] = sorted(d for d in dirs if d not in ("data", "__pycache__"))  # data: the KB fingerprint's
            rel = os.path.relpath(folder, root)
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    stat = os.stat(os.path.join(folder, name))
                    digest.update(f"{rel}/{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]
