"""The bundled part of the knowledge base, cached in GPUBOT_HOME/cache for the builds that follow an import.

A build after `gpubot kb import` copies it (`knowledge.kb.incremental`) instead of parsing, converting, checking and
inserting the twelve bundled catalogs again. The file is a knowledge base built from the bundled data alone plus
its `Ledger` (table `_ledger`), named by a key over the schema version, the running code (`code_version`) and the
bundled files (`fingerprint`, and the catalog and price folders when they are not the bundled ones): a changed file
or code never reuses it. It is written under a temporary name and renamed, so a killed build leaves at most a
`.kb-<pid>-*.db` leftover, never a file a later build reads.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from knowledge.code_version import code_version
from knowledge.kb.parts import Ledger
from knowledge.kb.schema import SCHEMA_VERSION, fingerprint
from knowledge.paths import DATA_DIR, home

LEDGER_VERSION = 1  # bump when the ledger changes shape
PREFIX = "kb_bundled-"


@dataclass(frozen=True, slots=True)
class Base:
    path: Path
    ledger: Ledger


def folder() -> Path:
    path = home() / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def key(catalog_dir: Path, pricing_dir: Path, code: str | None = None) -> str:
    """Identifies the bundled part these folders and this code (default: the running code) build."""
    code = code or code_version()
    digest = hashlib.sha1(f"{SCHEMA_VERSION};{LEDGER_VERSION};{code};{fingerprint()}".encode())
    for directory in (catalog_dir, pricing_dir):
        digest.update(f"|{directory.resolve()}".encode())
        if not directory.resolve().is_relative_to(DATA_DIR):  # the fingerprint covers the bundled data only
            for path in sorted(directory.rglob("*")):
                if path.is_file():
                    stat = path.stat()
                    digest.update(f"{path.relative_to(directory)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:20]


def load(key: str) -> Base | None:
    """The cached part for `key`, or None (missing or unreadable: the build makes a new one)."""
    path = home() / "cache" / f"{PREFIX}{key}.db"
    if not path.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            (blob,) = conn.execute("SELECT ledger FROM _ledger").fetchone()
        ledger = pickle.loads(blob)  # our own file, in the user's own private home
    except (sqlite3.Error, pickle.PickleError, TypeError, ValueError, EOFError, AttributeError, ImportError):
        return None
    return Base(path, ledger) if isinstance(ledger, Ledger) else None


def store(key: str, built: Path, ledger: Ledger) -> None:
    """Keep a copy of `built` (a knowledge base of the bundled data alone) with its ledger as the part for `key`;
    other keys' parts are removed. A cache is an optimisation: a failure to write it is not the build's."""
    try:
        directory = folder()
        fd, tmp = tempfile.mkstemp(prefix=f".kb-{os.getpid()}-", suffix=".db", dir=directory)
        os.close(fd)
        try:
            shutil.copyfile(built, tmp)
            with closing(sqlite3.connect(tmp)) as conn, conn:
                conn.execute("CREATE TABLE _ledger (ledger BLOB NOT NULL)")
                conn.execute("INSERT INTO _ledger VALUES (?)", [pickle.dumps(ledger, pickle.HIGHEST_PROTOCOL)])
            os.replace(tmp, directory / f"{PREFIX}{key}.db")
        finally:
            Path(tmp).unlink(missing_ok=True)
        for old in directory.glob(f"{PREFIX}*.db"):
            if old.name != f"{PREFIX}{key}.db":
                old.unlink(missing_ok=True)
    except (OSError, sqlite3.Error):
        return
