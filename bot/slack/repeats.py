"""A `/gpu` command repeated within a minute (same workspace, channel, user and text: a user who retried after a slow
ack) is answered as the first one was and never applied twice (alerts, subscriptions, settings) (issue 24).

    Repeats().once(team, channel, user, text, compute, already) -> dict   the first run's reply, for both

Across processes the repeat is recognised through the shared state (`knowledge.state.claims`, keys per minute: a
repeat is caught for one to two minutes); the first run's reply is kept in this process for `WINDOW` seconds, and a
repeat that reached another process is told the command was already done.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

__all__ = ["WINDOW", "Repeats", "changes_state"]

WINDOW = 60.0  # seconds


def changes_state(kind: str, action: str | None) -> bool:
    """Commands that change something (a repeat must not apply them twice); showing and listing are harmless."""
    return kind in ("set", "unset") or (kind, action) in {
        ("alert", "add"),
        ("alert", "remove"),
        ("digest", "subscribe"),
        ("digest", "unsubscribe"),
    }


def _key(team: str, channel: str, user: str, text: str) -> str:
    """The command's identity; the state database's address is part of it (the processes sharing one state share
    the key; another state, e.g. another test's, never sees it)."""
    from knowledge.state.url import database_url

    parts = (database_url(), team, channel, user, " ".join(text.split()))
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def _seen_in_state(key: str, now: float) -> bool:
    """True when another run of `key` was recorded in this or the previous minute (bounded, never raising)."""
    from knowledge.state import claims

    minute = int(now // 60)
    try:
        earlier = not claims.claim(f"slash-repeat:{minute - 1}:{key}", hold=False)
        return not claims.claim(f"slash-repeat:{minute}:{key}", hold=False) or earlier
    except Exception:  # the state cannot be read: this process's memory decides
        return False


@dataclass
class Repeats:
    """The first run of each recent command, per process."""

    window: float = WINDOW
    _runs: dict[str, tuple[float, Future]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def once(
        self, team: str, channel: str, user: str, text: str, compute: Callable[[], dict], already: Callable[[], dict]
    ) -> dict:
        """The reply of the first run of this command (`compute()`, run once); a repeat within the window gets that
        same reply, or, when the first ran in another process, `already()` (nothing applied again)."""
        key = _key(team, channel, user, text)
        now = time.time()
        with self._lock:
            self._runs = {k: v for k, v in self._runs.items() if now - v[0] < self.window}
            found = self._runs.get(key)
            mine: Future = Future()
            if found is None:
                self._runs[key] = (now, mine)
        if found is not None:
            return found[1].result()
        try:
            result = already() if _seen_in_state(key, now) else compute()
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        mine.set_result(result)
        return result
