"""Printed answers kept on disk, bounded: least recently used first out, by count and by bytes.

    read(path) -> str | None     the kept output (and marks it used), None when not kept
    keep(path, output)           keep it (written whole: a temporary file, then renamed), then trim the folder

A folder holds at most `MAX_FILES` outputs and `MAX_BYTES` bytes; past either, the outputs used longest ago (by
modification time, which `read` refreshes) are removed. Temporary files left by a killed writer go too. A cache is
an optimisation: an error reading, writing or trimming never fails a question.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

__all__ = ["MAX_BYTES", "MAX_FILES", "keep", "read"]

MAX_FILES = 2000
MAX_BYTES = 32 * 1024 * 1024
STALE_TMP_SECONDS = 600.0


def read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
        os.utime(path)  # used now: the last to go
    except OSError:
        return None
    return text


def keep(path: Path, output: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(output, encoding="utf-8")
        os.replace(tmp, path)
        trim(path.parent)
    except OSError:
        pass


def trim(folder: Path) -> None:
    """Remove the least recently used outputs until the folder is within both bounds."""
    max_files, max_bytes = MAX_FILES, MAX_BYTES
    entries = []
    now = time.time()
    with os.scandir(folder) as found:
        for entry in found:
            with contextlib.suppress(OSError):
                stat = entry.stat()
                if entry.name.endswith(".tmp"):
                    if now - stat.st_mtime > STALE_TMP_SECONDS:  # a writer killed mid-write
                        os.unlink(entry.path)
                    continue
                entries.append((stat.st_mtime, stat.st_size, entry.path))
    total = sum(size for _, size, _ in entries)
    if len(entries) <= max_files and total <= max_bytes:
        return
    entries.sort()  # oldest use first
    count = len(entries)
    for _, size, where in entries:
        if count <= max_files and total <= max_bytes:
            break
        with contextlib.suppress(OSError):
            os.unlink(where)
        count, total = count - 1, total - size
