"""A small per-knowledge-base LRU of answers, for the intents whose answer depends on nothing but the query and the
knowledge base.

Why: a long-running server answers the same questions again and again (a team asks "cheapest H100 spot" every
morning, the spot/on-demand button flips back and forth, every App Home visit asks for the help answer). An answer
takes 2-10 ms to compute and a hit about 0.03 ms. Correctness rests on three facts:

- the key is the whole parsed `Query` (its repr: text, intent, every filter and the channel's defaults already
  applied), so two questions share an answer only when the handler would see the same input;
- the cache lives in the `KB` object's memo (`KB.memo`, released with it; through a `CurrentKB` stand-in, the memo
  of the KB it stands for at that moment) and a KB object never changes: a rebuild writes a new file and `LiveKB`
  swaps in a new `KB` (new object, empty cache), so new prices are never hidden by old answers;
- only intents that read nothing else are cached (`CACHEABLE`): `digest` and `history` read the price history in
  the state database, which moves without a knowledge-base rebuild, so they are never cached.

An `Answer` is a frozen model and every edge derives new answers with `model_copy(update=...)`, so sharing one
answer between requests is safe. A handler that raises is not cached. `GPUBOT_ANSWER_CACHE=0` turns it off,
`GPUBOT_ANSWER_CACHE=N` sets the size per knowledge base (default 512 answers, a few MB at most).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

CACHEABLE = frozenset(
    {"cheapest", "price", "compare", "spec", "recommend", "tco", "pitfalls", "checklist", "help", "work"}
    | {"train_cost", "rent_or_api"}  # issue 27: pure over (query, KB) too
)
DEFAULT_SIZE = 512

_lock = threading.Lock()
_generation = [0]  # `clear()` moves it on: every KB's answers from before are dropped at their next use
stats = {"hits": 0, "misses": 0}


def size() -> int:
    from knowledge.config import get

    return int(get("GPUBOT_ANSWER_CACHE"))


def clear() -> None:
    with _lock:
        _generation[0] += 1
        stats.update(hits=0, misses=0)


def _entries(owner) -> OrderedDict:
    """The answers kept for this knowledge base (call with `_lock` held)."""
    held = owner.memo("handlers.cache.answers", lambda: [_generation[0], OrderedDict()])
    if held[0] != _generation[0]:
        held[:] = [_generation[0], OrderedDict()]
    return held[1]


def cached(intent: str, handler: Callable) -> Callable:
    """`handler` answering through the cache when `intent` is cacheable (else `handler` itself)."""
    if intent not in CACHEABLE:
        return handler

    def answer(query, kb):
        limit = size()
        if not limit:
            return handler(query, kb)
        key = (intent, repr(query))  # every field (JSON would fail on lone surrogates, which a str may hold)
        owner = kb.current() if hasattr(kb, "current") else kb  # a live stand-in: the KB it stands for right now
        if not hasattr(owner, "memo"):  # a stand-in without a memo (a test double): no cache
            return handler(query, kb)
        with _lock:
            entries = _entries(owner)
            found = entries.get(key)
            if found is not None:
                entries.move_to_end(key)
                stats["hits"] += 1
                return found
        result = handler(query, kb)
        with _lock:
            stats["misses"] += 1
            entries[key] = result
            while len(entries) > limit:
                entries.popitem(last=False)
        return result

    answer.__doc__ = handler.__doc__  # the help text is built from handlers' docstrings
    answer.__wrapped__ = handler  # type: ignore[attr-defined]
    return answer
