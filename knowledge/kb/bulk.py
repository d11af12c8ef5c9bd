"""Bulk work (an import, a knowledge-base build) without the cyclic garbage collector.

Parsing and converting 100,000 catalog rows creates millions of objects that stay alive until the build ends; the
collector's passes over them (triggered by the allocations, not by garbage) were about 2,200 collections and 0.6 s of
a 100,000-row import's CPU. `paused()`, a context manager or a decorator, turns it off for the block and back on
after if it was on (a block inside another, or in another thread, leaves it as it found it).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
