"""A channel's defaults applied to one question: pure functions, no I/O.

`apply_defaults(query, settings)` fills what the question leaves open from the effective settings of its channel
(`knowledge.state.settings_store.get_settings`: channel over workspace over gpubot's defaults) and returns the notes
that say so, in the answer's language, for the reply's context line:

    providers  only when the question names no provider and no instance type (an instance type names its provider);
               a question that names a provider overrides the channel's providers for that question, and says so
    regions    only when the question names no region (regions where a named provider has no offers are dropped,
               when `region_providers` tells which providers each region has)
    pricing    only when the question names none (so "price of p4d.24xlarge" still lists every pricing model
               unless the channel chose one)
    currency   only when the question names none (TCO totals; prices are also shown converted, see `bot.slack.blocks`)
    language   when the question is not written in Chinese characters (those are always answered in Chinese)

The budget (the most to pay per GPU-hour) is not a `Query` field: `widen_for_budget` asks the handler for every
offer, `apply_budget` keeps those within the budget, cuts the list back to the size asked for and says how many
were hidden.

Only questions about offers are filtered (`FILTERED_INTENTS`); help, specs and "not understood" get the language
only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from handlers.common import sources
from handlers.i18n import t
from handlers.models import Answer, Budget, Query
from handlers.ranking import MAX_TOP

__all__ = [
    "BUDGET_FETCH",
    "FIELDS",
    "FILTERED_INTENTS",
    "apply_budget",
    "apply_defaults",
    "budget_text",
    "defaulted_fields",
    "undo_defaults",
    "widen_for_budget",
]

FIELDS = ("providers", "regions", "currency", "language", "pricing")
FILTERED_INTENTS = frozenset(
    {"cheapest", "price", "compare", "recommend", "tco", "checklist", "pitfalls", "digest", "history"}
)
BUDGET_INTENTS = frozenset({"cheapest", "price", "compare"})  # answers whose offers a budget filters
BUDGET_FETCH = MAX_TOP  # offers a budgeted "cheapest" asks for, so that the cut list is still full
DEFAULT_TOP = 5


def _origin(settings: Mapping[str, Any], key: str) -> str:
    origins = getattr(settings, "origins", None) or {}
    origin = origins.get(key)
    if origin is None:
        return "channel" if settings.get(key) is not None else "default"
    return origin


def _note(kind: str, lang: str, origin: str, **values: Any) -> str:
    whose = t(f"defaults.whose.{origin if origin in ('channel', 'workspace', 'options') else 'channel'}", lang)
    return t(f"defaults.note.{kind}", lang, whose=whose, **values)


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


def budget_text(budget: Mapping[str, Any]) -> str:
    """ "2 USD/GPU-hour" """
    return f"{float(budget['amount']):g} {budget['currency']}/GPU-hour"


def apply_defaults(
    query: Query, settings: Mapping[str, Any], *, region_providers: Mapping[str, Iterable[str]] | None = None
) -> tuple[Query, list[str]]:
    """The question with the channel's defaults filled in where it says nothing, and the notes saying so."""
    update: dict[str, Any] = {}
    notes: list[str] = []
    language = settings.get("language")
    if language in ("en", "zh") and "chinese" not in query.flags and query.language != language:
        update["language"] = language
    lang = update.get("language", query.language)
    if query.intent not in FILTERED_INTENTS:
        return (query.model_copy(update=update) if update else query), notes

    providers = _list(settings.get("providers"))
    if providers:
        if query.providers:
            if not set(query.providers) <= set(providers):  # a provider outside the channel's: say it
                notes.append(
                    _note(
                        "providers_named",
                        lang,
                        _origin(settings, "providers"),
                        named=", ".join(query.providers),
                        values=", ".join(providers),
                    )
                )
        elif not query.instance_types:
            update["providers"] = providers
            notes.append(_note("providers", lang, _origin(settings, "providers"), values=", ".join(providers)))

    regions = _list(settings.get("regions"))
    if regions and not query.regions:
        named = query.providers
        if named and region_providers is not None:
            usable = [r for r in regions if set(region_providers.get(r, ())) & set(named)]
        else:
            usable = regions
        if usable:
            update["regions"] = usable
            notes.append(_note("regions", lang, _origin(settings, "regions"), values=", ".join(usable)))
        else:
            notes.append(
                _note(
                    "regions_named",
                    lang,
                    _origin(settings, "regions"),
                    named=", ".join(named),
                    values=", ".join(regions),
                )
            )

    pricing = settings.get("pricing")
    if pricing and query.pricing is None:
        update["pricing"] = pricing
        notes.append(_note("pricing", lang, _origin(settings, "pricing"), values=t(f"pricing.{pricing}", lang)))

    currency = settings.get("currency")
    if currency and query.currency is None:
        update["currency"] = currency
        if query.intent == "tco":
            notes.append(_note("currency", lang, _origin(settings, "currency"), values=currency))
    return (query.model_copy(update=update) if update else query), notes


def defaulted_fields(asked: Query, applied: Query) -> list[str]:
    """The fields `apply_defaults` filled in (what a button must re-apply, not keep)."""
    return [name for name in FIELDS if getattr(asked, name) != getattr(applied, name)]


def undo_defaults(query: Query, fields: Iterable[str], *, unless_changed_from: Query | None = None) -> Query:
    """`query` with the fields the channel's defaults filled reset to "not said" (a button re-applies the channel's
    current settings). A field a button changed (it differs from `unless_changed_from`) is kept: it was asked."""
    reset: dict[str, Any] = {}
    for name in fields:
        if name not in FIELDS:
            continue
        if unless_changed_from is not None and getattr(query, name) != getattr(unless_changed_from, name):
            continue
        if name in ("providers", "regions"):
            reset[name] = []
        elif name == "language":
            reset[name] = "zh" if "chinese" in query.flags else "en"
        else:
            reset[name] = None
    return query.model_copy(update=reset) if reset else query


def widen_for_budget(query: Query, settings: Mapping[str, Any]) -> Query:
    """With a budget, a "cheapest" question asks for every offer so that the list cut by `apply_budget` is full,
    and a question without a budget of its own is answered within the setting's (so that line one, the ranking
    and the count of offers removed respect it: per GPU-hour)."""
    budget = settings.get("budget")
    if not budget:
        return query
    fetch = max(query.top_n or 0, BUDGET_FETCH)  # a "top 200" asked stays asked (the handler caps and says so)
    update: dict[str, Any] = {"top_n": fetch} if query.intent == "cheapest" else {}
    if query.budget is None and query.intent in BUDGET_INTENTS:
        update["budget"] = Budget(
            amount=float(budget["amount"]), currency=budget["currency"], per="gpu_hour", text=budget_text(budget)
        )
    return query.model_copy(update=update) if update else query


def apply_budget(
    answer: Answer, settings: Mapping[str, Any], *, usd_per_cny: float, asked_top_n: int | None = None
) -> tuple[Answer, list[str]]:
    """Offers above the channel's budget (per GPU-hour) removed and the note saying so; for "cheapest" (asked
    with `widen_for_budget`) the list is cut back to the size asked for (`asked_top_n`, else 5). Prices are
    compared in USD; a CNY budget is converted with `usd_per_cny`."""
    budget = settings.get("budget")
    if not budget or answer.query.intent not in BUDGET_INTENTS:
        return answer, []
    limit_usd = float(budget["amount"]) * (usd_per_cny if budget["currency"] == "CNY" else 1.0)
    kept = [o for o in answer.offers if o.price_per_gpu_hour_usd <= limit_usd + 1e-9]
    hidden = len(answer.offers) - len(kept)
    update: dict[str, Any] = {"offers": kept}
    if answer.query.intent == "cheapest":
        top = asked_top_n or DEFAULT_TOP
        beyond = answer.more  # offers past what was fetched: dearer than the last one fetched (the list is sorted)
        if beyond and answer.offers and answer.offers[-1].price_per_gpu_hour_usd > limit_usd:
            hidden, beyond = hidden + beyond, 0
        update["offers"], update["more"] = kept[:top], max(0, len(kept) - top) + beyond
        update["query"] = answer.query.model_copy(update={"top_n": asked_top_n})
        update["sources"] = sources([*update["offers"], *answer.context])
    lang = answer.query.language
    note = _note("budget", lang, _origin(settings, "budget"), values=budget_text(budget))
    if hidden:
        note += t("defaults.note.budget_hidden", lang, n=hidden)
    return answer.model_copy(update=update), [note]
