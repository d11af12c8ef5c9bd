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

import psycopg


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
        self._template = ""

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

    def new_database(self, *, migrated: bool = True) -> str:
        """A fresh database on this server (one per test that needs isolation), created over one connection (a
        `createdb` process per test cost ~50 ms of CPU). `migrated`: a copy of a template database migrated once to
        the newest schema (`CREATE DATABASE ... TEMPLATE`: milliseconds, where migrating each one took ~0.3 s);
        otherwise empty, for the tests whose point is migrating."""
        name = "t_" + uuid.uuid4().hex[:12]
        template = self._migrated_template() if migrated else "template1"
        with psycopg.connect(self._url("gpubot", driver=False), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return self._url(name, driver=False)

    def _url(self, database: str, *, driver: bool) -> str:
        scheme = "postgresql+psycopg" if driver else "postgresql"
        return f"{scheme}://{self.user}@127.0.0.1:{self.port}/{database}"

    def _migrated_template(self) -> str:
        if not self._template:
            import sqlalchemy as sa

            from knowledge.state.db import upgrade

            with psycopg.connect(self._url("gpubot", driver=False), autocommit=True) as conn:
                conn.execute('CREATE DATABASE "migrated_template"')
            engine = sa.create_engine(self._url("migrated_template", driver=True), poolclass=sa.pool.NullPool)
            upgrade(engine)
            engine.dispose()  # no session may stay connected to a template being copied
            self._template = "migrated_template"
        return self._template

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        for _ in range(20):
            try:
                shutil.rmtree(self.dir)
                return
            except OSError:
                time.sleep(0.1)
