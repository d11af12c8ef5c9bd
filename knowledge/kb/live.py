"""Keep a long-running process's knowledge base current without a restart.

Every worker has its own read-only knowledge base file (fast, local). Prices imported by another worker, the
clock, or another machine land in the shared persistent state (`catalog_imports`); `LiveKB` notices within
`interval` seconds (default 30, `GPUBOT_KB_REFRESH_SECONDS`) that the state's `imports_version` (a token of
every import's identity and content) differs from the one its knowledge base was built at, rebuilds the local
file in a child process (never holding this one's GIL; one process per `GPUBOT_HOME` at a time, under a file
lock) and swaps the new knowledge base in. Requests in
flight keep the old one; the next request gets the new.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from knowledge.config import config
from knowledge.kb.reader import KB, KnowledgeBaseError, damage_marker, marked_damaged
from knowledge.kb.schema import fingerprint
from knowledge.paths import home, kb_path

log = logging.getLogger("gpubot.kb")
DEFAULT_INTERVAL = 30.0


@contextmanager
def build_lock(path: Path):
    """One rebuild of a GPUBOT_HOME's knowledge base at a time (servers' refreshes, `gpubot kb import`)."""
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LiveKB:
    """The current knowledge base of this process; `refresh()` swaps in a newer one when the state moved on."""

    def __init__(self, kb: KB | None = None, *, interval: float | None = None, tolerate_missing: bool = False):
        """`tolerate_missing`: when no knowledge base can be opened or built, start without one (every use raises
        `KnowledgeBaseError` saying why) and keep trying to build it; a server stays up and says what is wrong."""
        from knowledge.kb.opener import open_kb  # here: importing this module stays free of the state's SQLAlchemy

        self._error: KnowledgeBaseError | None = None
        try:
            self._kb: KB | None = kb or open_kb()
        except KnowledgeBaseError as exc:
            if not tolerate_missing:
                raise
            self._kb, self._error = None, exc
            log.error("no knowledge base (%s); answers say so until it can be built", exc)
        self.interval = interval if interval is not None else config().gpubot_kb_refresh_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.warm: Callable[[KB], object] | None = None  # run on a new knowledge base before it is swapped in

    def get(self) -> KB:
        if self._kb is None:
            raise KnowledgeBaseError(str(self._error))
        return self._kb

    @property
    def available(self) -> bool:
        return self._kb is not None

    def is_stale(self) -> bool:
        from knowledge.catalog.imports import imports_version

        current = self._kb
        if current is None:
            return True  # none yet: keep trying to build one
        if not Path(current.path).exists() or marked_damaged(Path(current.path), getattr(current, "_identity", None)):
            return True  # deleted, or found damaged by a query: rebuild
        try:
            return (current.meta("imports_version") or "0") != str(imports_version()) or (
                current.meta("fingerprint") != fingerprint()
            )
        except KnowledgeBaseError:  # damaged under us
            return True

    def refresh(self) -> bool:
        """Rebuild and swap if the knowledge base is behind the shared state; True if it was swapped."""
        with self._lock:
            if not self.is_stale():
                return False
            path = kb_path()
            with build_lock(home() / "kb.lock"):
                try:
                    on_disk = KB(path) if path.exists() else None
                except KnowledgeBaseError:  # damaged on disk: rebuilt below
                    on_disk = None
                try:  # another worker of this machine may have rebuilt it while we waited for the lock
                    fresh = (
                        on_disk is not None
                        and on_disk.meta("imports_version") == _version()
                        and (on_disk.meta("fingerprint") == fingerprint())
                        and not marked_damaged(path, on_disk._identity)
                    )
                finally:
                    if on_disk is not None:
                        on_disk.close()
                if not fresh:
                    try:
                        report = build_elsewhere(path)
                    except Exception as exc:  # any failure of the child build: the current one keeps serving
                        if self._kb is None:
                            self._error = KnowledgeBaseError(f"the knowledge base cannot be built: {exc}")
                        raise
                    damage_marker(path).unlink(missing_ok=True)
                    log.info("knowledge base rebuilt: %s offers in %s s", report["offers"], report["seconds"])
            new = KB(path)
            if self.warm is not None:  # its first questions (caches, vocabulary) here, not on a request's time
                try:
                    self.warm(new)
                except Exception:  # noqa: BLE001 - a failed warm-up only costs the first request some time
                    log.exception("warming the new knowledge base failed; swapping it in cold")
            old, self._kb, self._error = self._kb, new, None
            log.info("knowledge base swapped in (imports version %s)", self._kb.meta("imports_version"))
            # the old connection stays open for requests still using it; it is closed when garbage-collected
            del old
            return True

    def start(self) -> LiveKB:
        """Check for newer prices every `interval` seconds in a daemon thread."""
        if self._thread is None and self.interval > 0:
            self._thread = threading.Thread(target=self._run, name="kb-refresh", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.refresh()
            except Exception:  # a failed refresh leaves the current knowledge base serving
                log.exception("knowledge base refresh failed; still serving the previous one")


class CurrentKB:
    """Stands in for a `LiveKB`'s current knowledge base: every attribute is read from whichever is current.

    Code written for a plain `KB` (the Slack app's listeners) gets the new prices on its next access, without
    knowing that the knowledge base is live. `current()` gives the underlying `KB` (per-KB caches key on it).
    """

    def __init__(self, live: LiveKB):
        object.__setattr__(self, "_live", live)

    def current(self) -> KB:
        return self._live.get()

    def __getattr__(self, name: str):
        return getattr(self._live.get(), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._live.get(), name, value)


_BUILD = """
import json, sys
from pathlib import Path
try:
    from knowledge.kb.build import build
    report = build(Path(sys.argv[1]))
except Exception as exc:  # the child's outermost edge: the parent reads why from its output
    print(json.dumps({"error": f"{exc}"}))
    sys.exit(1)
print(json.dumps({"offers": report["offers"], "seconds": report["seconds"]}))
"""


def build_elsewhere(path: Path) -> dict:
    """Build the knowledge base at `path` in a child process: a long build (a 100k-row import) holds that
    process's GIL, not the one answering requests, which swaps the finished file in. Raises `KnowledgeBaseError`
    with the build's own message when it fails."""
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {}
    except ValueError:
        report = {}
    if done.returncode != 0 or "offers" not in report:
        why = report.get("error") or (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise KnowledgeBaseError(why)
    return report


def _version() -> str:
    from knowledge.catalog.imports import imports_version

    return str(imports_version())
