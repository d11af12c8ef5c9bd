"""A function run in a forked child process while this one goes on: an import's build beside its store (issue 29).

A 100,000-row import stores the import and its price snapshot in the state (about 1 s of CPU) and builds the
knowledge base (about 3 s); neither reads what the other writes, so the build can run on the other core. A forked
child inherits the parsed rows as they are (nothing is pickled on the way in); only its result or its exception
comes back, pickled, through a pipe. Forking is only safe in a process with one thread (another thread may hold a
lock the child would wait for forever): `possible()` says whether this one is.
"""

from __future__ import annotations

import multiprocessing
import pickle
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from knowledge.errors import GpubotError


class ChildFailed(GpubotError):
    """The child died before it could say how its work ended (killed, out of memory)."""


def possible() -> bool:
    """Whether this process can fork a child safely: one thread, and a platform with fork."""
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


class Forked:
    """`function(*args)` running in a forked child from construction; `result()` waits for its value or raises its
    exception; `cancel()` stops it."""

    def __init__(self, function: Callable[..., Any], *args: Any) -> None:
        for stream in (sys.stdout, sys.stderr):  # else what they hold would be written twice, once by the child
            stream.flush()
        context = multiprocessing.get_context("fork")
        self._receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(sender, function, args), daemon=True)
        self._process.start()
        sender.close()  # the child holds the other copy: its exit ends the pipe

    def result(self) -> Any:
        try:
            ok, value = self._receiver.recv()
        except EOFError:
            ok, value = False, ChildFailed(f"the build's child process ended without a result ({self._exit()})")
        finally:
            self._receiver.close()
            self._process.join()
        if not ok:
            raise value
        return value

    def cancel(self) -> None:
        self._process.kill()
        self._process.join()
        self._receiver.close()

    def _exit(self) -> str:
        self._process.join()
        code = self._process.exitcode
        return f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"


def _run(sender, function: Callable[..., Any], args: tuple) -> None:
    try:
        outcome: tuple[bool, Any] = (True, function(*args))
    except BaseException as exc:  # noqa: BLE001 - every way the child's work ends goes back to the parent
        outcome = (False, exc if _travels(exc) else ChildFailed(_text(exc)))
    try:
        sender.send(outcome)
    finally:
        sender.close()


def _travels(exc: BaseException) -> bool:
    """Whether `exc` comes out of a pickle as it went in (an exception whose constructor takes other arguments
    than its message does not, unless it says how: `CatalogError.__reduce__`)."""
    try:
        back = pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - whatever stops it from travelling, its text goes instead
        return False
    return type(back) is type(exc) and str(back) == str(exc)


def _text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).strip()[-2000:]
