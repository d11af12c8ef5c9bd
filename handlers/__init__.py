"""Intent handlers: pure functions `handle(query, kb) -> Answer`, one module per intent.

`INTENTS` maps an intent to its handler; its docstring's first line is the help text. Handlers are imported on
first use, so answering one question loads only the code it needs (the command line stays fast). `route(query)`
picks the handler, falling back to help for intents that have no handler or were not understood.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the models (pydantic) load with the first handler, not with the package
    from handlers.models import Answer, Query

Handler = Callable[..., "Answer"]  # (query, kb), or (query, kb, reader) for READS_HISTORY

# intent -> "module:function"
HANDLERS: dict[str, str] = {
    "cheapest": "handlers.spec:cheapest_checked",  # cheapest.handle, plus corrections of seed errors asked about
    "price": "handlers.spec:price_checked",  # price.handle, plus corrections of seed errors asked about
    "recommend": "handlers.recommend:handle",
    "compare": "handlers.compare:handle",
    "spec": "handlers.spec:handle",
    "tco": "handlers.tco:handle",
    "pitfalls": "handlers.pitfalls:handle",
    "checklist": "handlers.checklist:handle",
    "digest": "handlers.digest:handle",
    "history": "handlers.history:handle",
    "help": "handlers.help:handle",
    "work": "handlers.work:handle",
    "train_cost": "handlers.train_cost:handle",
    "rent_or_api": "handlers.rent_or_api:handle",
}
# intents whose handler reads the price history: `handle(query, kb, reader)`, the reader injected by the edge
READS_HISTORY = frozenset({"digest", "history"})


class _Registry(MutableMapping[str, Handler]):
    """A mapping intent -> handler that imports each handler's module on first access (and can be overridden)."""

    def __init__(self, targets: dict[str, str]):
        self._targets = targets
        self._loaded: dict[str, Handler] = {}

    def __getitem__(self, intent: str) -> Handler:
        if intent not in self._loaded:
            from handlers.cache import cached  # answers that depend only on the query and the KB are kept

            module, _, function = self._targets[intent].partition(":")
            self._loaded[intent] = cached(intent, getattr(importlib.import_module(module), function))
        return self._loaded[intent]

    def __setitem__(self, intent: str, handler: Handler) -> None:
        self._targets.setdefault(intent, "")
        self._loaded[intent] = handler

    def __delitem__(self, intent: str) -> None:
        del self._targets[intent]
        self._loaded.pop(intent, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)


INTENTS: MutableMapping[str, Handler] = _Registry(dict(HANDLERS))


# (intent, topic) -> "module:function": a topic that routing gave its own handler (handlers/parse/reroute.py)
TOPIC_HANDLERS: dict[tuple[str, str], str] = {
    ("tco", "spot_vs_on_demand"): "handlers.spot_choice:handle",  # "spot or on-demand for a 3-day job"
}


def route(query: Query) -> Handler:
    if target := TOPIC_HANDLERS.get((query.intent, query.topic or "")):
        module, _, function = target.partition(":")
        return getattr(importlib.import_module(module), function)
    return INTENTS[query.intent] if query.intent in INTENTS else INTENTS["help"]
