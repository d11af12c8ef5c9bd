"""Intent handlers: pure functions `handle(query, kb) -> Answer`, one module per intent.

`INTENTS` maps an intent to its handler; its docstring's first line is the help text. `route(query)` picks the
handler, falling back to help for intents that have no handler (yet) or were not understood.
"""

from __future__ import annotations

from collections.abc import Callable

from handlers import cheapest, help, price
from handlers.models import Answer, Query
from knowledge.kb import KB

Handler = Callable[[Query, KB], Answer]

INTENTS: dict[str, Handler] = {
    "cheapest": cheapest.handle,
    "price": price.handle,
    "help": help.handle,
}


def route(query: Query) -> Handler:
    return INTENTS.get(query.intent, help.handle)
