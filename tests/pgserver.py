"""A throwaway PostgreSQL server for tests, started from the machine's PostgreSQL binaries.

`PostgresServer().start()` runs `initdb` and `pg_ctl start` in a temporary directory, listening on 127.0.0.1 on a
free port, and `url` is a `postgresql://` URL for it. PostgreSQL refuses to run as root, so under root the server
runs as the `postgres` system user. `.ci/run` installs PostgreSQL where it is missing; a test that needs it fails
loudly if it cannot start (never skipped).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path


def _bin_dir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if not candidates:
        raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl) not found; install PostgreSQL (see .ci/run)")
    return Path(candidates[0]).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.dir = Path(tempfile.mkdtemp(prefix="gpubot-pg-"))
        self.data = self.dir / "data"
        self.port = _free_port()
        self.user = "gpubot"
        self._as_postgres = os.geteuid() == 0
        self.url = f"postgresql://{self.user}@127.0.0.1:{self.port}/gpubot"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> PostgresServer:
        if self._as_postgres:
            info = pwd.getpwnam("postgres")
            os.chown(self.dir, info.pw_uid, info.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off -c max_connections=100"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"), "-w", "start")
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "gpubot")
        return self

    def new_database(self) -> str:
        """A fresh, empty database on this server (one per test that needs isolation)."""
        name = "t_" + uuid.uuid4().hex[:12]
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, name)
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        for _ in range(20):
            try:
                shutil.rmtree(self.dir)
                return
            except OSError:
                time.sleep(0.1)
