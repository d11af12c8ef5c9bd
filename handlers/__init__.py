"""Intent handlers: pure functions `handle(query, kb) -> Answer`, one module per intent.

`INTENTS` maps an intent to its handler; its docstring's first line is the help text. `route(query)` picks the
handler, falling back to help for intents that have no handler (yet) or were not understood.
"""

from __future__ import annotations

from collections.abc import Callable

from handlers import cheapest, checklist, compare, digest, help, pitfalls, recommend, spec, tco
from handlers.models import Answer, Query
from knowledge.kb import KB

Handler = Callable[[Query, KB], Answer]

INTENTS: dict[str, Handler] = {
    "cheapest": cheapest.handle,
    "price": tco.price_or_tco,  # price.handle, plus the spot-risk / break-even / datasheet questions it gets
    "recommend": recommend.handle,
    "compare": compare.handle,
    "spec": spec.handle,
    "tco": tco.handle,
    "pitfalls": pitfalls.handle,
    "checklist": checklist.handle,
    "digest": digest.handle,
    "help": help.handle,
}


def route(query: Query) -> Handler:
    return INTENTS.get(query.intent, help.handle)
