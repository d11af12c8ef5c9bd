"""gpubot's own files are private: GPUBOT_HOME is created 0700 and the SQLite state database (bot tokens, OAuth
states, settings) 0600 (SQLite gives its `-wal` and `-shm` files the database's mode). `loose()` lists what is
readable by others (an older install, a changed umask); `gpubot serve` warns about each at start."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIR_MODE, FILE_MODE = 0o700, 0o600


def private_dir(path: Path) -> Path:
    if not path.exists():
        path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(path, DIR_MODE)  # mkdir's mode is narrowed by the umask, never widened: set it exactly
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty with mode 0600 if it does not exist (SQLite then opens it as a new database)."""
    if not path.exists():
        private_dir(path.parent)
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    return path


def loose(home: Path, state_file: Path | None) -> list[str]:
    """What others can read or write: `home` looser than 0700, the state file (and -wal/-shm) looser than 0600."""
    found = []
    candidates = [(home, DIR_MODE)]
    if state_file is not None:
        candidates += [(Path(f"{state_file}{suffix}"), FILE_MODE) for suffix in ("", "-wal", "-shm")]
    for path, wanted in candidates:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError:
            continue
        if mode & ~wanted & 0o077:
            found.append(f"{path} is mode {mode:04o} (others can read it); run: chmod {wanted:o} {path}")
    return found
