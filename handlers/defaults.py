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
    budget     only when the question says none, for the answers a budget filters (`BUDGET_INTENTS`): it becomes
               the question's `budget` (per GPU-hour or per instance-hour, as set), so the handler filters once
               and says how many offers it removed, as for a budget asked in the question

Only questions about offers are filtered (`FILTERED_INTENTS`); help, specs and "not understood" get the language
only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from handlers.i18n import t
from handlers.models import Budget, Query

__all__ = [
    "BUDGET_INTENTS",
    "FIELDS",
    "FILTERED_INTENTS",
    "apply_defaults",
    "budget_of",
    "budget_text",
    "defaulted_fields",
    "undo_defaults",
]

FIELDS = ("providers", "regions", "currency", "language", "pricing", "budget")
FILTERED_INTENTS = frozenset(
    {"cheapest", "price", "compare", "recommend", "tco", "checklist", "pitfalls", "digest", "history"}
)
BUDGET_INTENTS = frozenset({"cheapest", "price", "compare"})  # answers whose offers a budget filters


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


def budget_of(stored: Mapping[str, Any]) -> Budget:
    """The typed budget of a stored setting (`knowledge.state.settings_store`: {"amount", "currency", "per"})."""
    per = stored.get("per") or "gpu_hour"
    return Budget(amount=float(stored["amount"]), currency=stored["currency"], per=per, text=budget_text(stored))


def budget_text(budget: Mapping[str, Any]) -> str:
    """ "2 USD/GPU-hour", "20 CNY/hour" """
    unit = "/hour" if budget.get("per") == "instance_hour" else "/GPU-hour"
    return f"{float(budget['amount']):g} {budget['currency']}{unit}"


_Filled = tuple[dict[str, Any], list[str]]  # (Query fields filled in, the notes saying so)


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
    for filled, said in (
        _providers(query, settings, lang),
        _regions(query, settings, lang, region_providers),
        _pricing_currency_budget(query, settings, lang),
    ):
        update.update(filled)
        notes += said
    return (query.model_copy(update=update) if update else query), notes


def _providers(query: Query, settings: Mapping[str, Any], lang: str) -> _Filled:
    """The channel's providers where the question names none (nor an instance type); a note when it names one
    outside them."""
    providers = _list(settings.get("providers"))
    if not providers:
        return {}, []
    if query.providers:
        if set(query.providers) <= set(providers):
            return {}, []
        named, values = ", ".join(query.providers), ", ".join(providers)  # a provider outside the channel's: say it
        return {}, [_note("providers_named", lang, _origin(settings, "providers"), named=named, values=values)]
    if query.instance_types:
        return {}, []
    return {"providers": providers}, [
        _note("providers", lang, _origin(settings, "providers"), values=", ".join(providers))
    ]


def _regions(
    query: Query, settings: Mapping[str, Any], lang: str, region_providers: Mapping[str, Iterable[str]] | None
) -> _Filled:
    """The channel's regions where the question names none: those of the providers it names (`region_providers`:
    region -> providers); a note when none of them is."""
    regions = _list(settings.get("regions"))
    if not regions or query.regions:
        return {}, []
    named = query.providers
    if named and region_providers is not None:
        usable = [r for r in regions if set(region_providers.get(r, ())) & set(named)]
    else:
        usable = regions
    origin = _origin(settings, "regions")
    if usable:
        return {"regions": usable}, [_note("regions", lang, origin, values=", ".join(usable))]
    return {}, [_note("regions_named", lang, origin, named=", ".join(named), values=", ".join(regions))]


def _pricing_currency_budget(query: Query, settings: Mapping[str, Any], lang: str) -> _Filled:
    """The channel's pricing model, currency (noted for tco) and budget (for the intents that read one), each
    where the question says none."""
    update: dict[str, Any] = {}
    notes: list[str] = []
    pricing = settings.get("pricing")
    if pricing and query.pricing is None:
        update["pricing"] = pricing
        notes.append(_note("pricing", lang, _origin(settings, "pricing"), values=t(f"pricing.{pricing}", lang)))
    currency = settings.get("currency")
    if currency and query.currency is None:
        update["currency"] = currency
        if query.intent == "tco":
            notes.append(_note("currency", lang, _origin(settings, "currency"), values=currency))
    budget = settings.get("budget")
    if budget and query.budget is None and query.intent in BUDGET_INTENTS:
        update["budget"] = budget_of(budget)
        notes.append(_note("budget", lang, _origin(settings, "budget"), values=budget_text(budget)))
    return update, notes


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
