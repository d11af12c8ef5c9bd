"""One path from a question to an answer, shared by the CLI and Slack: parse -> route -> handler -> Answer.

`answer_with(query, kb, prefs)` applies preferences the same way on every edge: a Slack channel's effective
settings, or the CLI's `--providers/--regions/--pricing/--currency/--language/--budget` flags (`prefs_from`).
Errors never escape as tracebacks: a knowledge-base problem and an unexpected error both become short answers
(the latter logged with context), in the question's language.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from handlers.language import language_of
from handlers.models import Answer, Query
from knowledge.kb.reader import KB, KnowledgeBaseError

if TYPE_CHECKING:
    from knowledge.history.reader import HistoryReader

log = logging.getLogger("gpubot")

WITH_PITFALLS = ("cheapest", "recommend", "tco")  # answers that recommend something carry what bites


def understand(text: str, kb: KB) -> Query:
    """Parse a question into a `Query` against the knowledge base's names."""
    from handlers.parse import Vocabulary, parse

    return parse(text, Vocabulary.from_kb(kb))


def answer_query(query: Query, kb: KB, reader: HistoryReader | None = None) -> Answer:
    """Answer an already-parsed query; never raises. History and digest questions read the price history through
    `reader` (default: the state database's), after the edge's one write: baselines still missing are recorded.
    A query in another currency than USD (asked, or a preference) gets `extra["display_currency"]` and the rate's
    note here, for every edge (`handlers.display`)."""
    from handlers import READS_HISTORY, route
    from handlers.constraints import annotate, narrowed, unknown_names
    from handlers.display import with_display
    from handlers.i18n import t
    from handlers.parse.reroute import settle

    try:
        query = settle(query, kb)  # the intent, final, where the knowledge base decides it; no handler re-decides
        if (said := unknown_names(query, kb)) is not None:  # "on coreweave": said back, never the global answer
            return said
        seen = narrowed(kb, query)  # what the question excluded is not there for any handler
        if query.intent in READS_HISTORY:
            result = route(query)(query, seen, _history_reader(query, reader))
        else:
            result = route(query)(query, seen)
        if query.intent in WITH_PITFALLS and not result.pitfalls:
            result = _with_pitfalls(result, kb)
        result = annotate(result, kb)
        if query.currency and query.currency != "USD":  # "in CNY", "人民币", a preference: both currencies shown
            result = with_display(result, kb.fx())  # the one rate (providers.yaml, with its source and date)
        return result
    except KnowledgeBaseError as exc:
        return _kb_unavailable(query, exc)
    except Exception:  # the outermost edge of an answer: the apology, never a traceback
        log.exception("internal error answering %r (intent %s)", query.text, query.intent)
        return Answer(query=query, title=t("error.internal", query.language))


def _kb_unavailable(query: Query, exc: KnowledgeBaseError) -> Answer:
    from handlers.i18n import t

    log.error("knowledge base unavailable: %s", exc)
    return Answer(query=query, title=t("error.kb", query.language, detail=type(exc).__name__))


def _history_reader(query: Query, reader: HistoryReader | None) -> HistoryReader:
    """The reader a history/digest handler gets; with the real state, its missing baselines recorded first."""
    if reader is not None:
        return reader
    from knowledge.history import baselines
    from knowledge.history.reader import state_reader

    baselines.ensure(query.providers if query.intent == "history" else None)
    return state_reader()


def _with_pitfalls(result: Answer, kb: KB) -> Answer:
    """Attach the one to three pitfalls that matter most for what the answer recommends."""
    from handlers.pitfalls import relevant

    offers = [*result.offers, *(r.offer for r in result.recommendations if r.offer)]
    return result.model_copy(update={"pitfalls": relevant(kb, result.query, offers[:5], limit=3)})


def understood(text: str, kb: KB) -> Query | Answer:
    """The question parsed once, or the answer that says it could not be (the knowledge base, the apology)."""
    from handlers.i18n import t

    try:
        return understand(text, kb)
    except KnowledgeBaseError as exc:
        return _kb_unavailable(Query(text=text[:500], language=language_of(text)), exc)
    except Exception:  # the outermost edge of an answer: the apology, never a traceback
        log.exception("internal error parsing %r", text[:200])
        lang = language_of(text)
        return Answer(query=Query(text=text[:500], language=lang), title=t("error.internal", lang))


def answer(text: str, kb: KB) -> Answer:
    """Answer a question in plain text; never raises."""
    query = understood(text, kb)
    return query if isinstance(query, Answer) else answer_query(query, kb)


def answer_with(query: Query, kb: KB, prefs: Mapping[str, Any]) -> Answer:
    """Answer `query` with preferences applied (channel/workspace settings, CLI flags); never raises.

    What the preferences filled in and filtered is said in `extra["settings_notes"]`; the filled fields are listed
    in `extra["defaulted"]`, so a Slack button can re-apply the channel's current settings."""
    from handlers import defaults

    applied, notes = defaults.apply_defaults(query, prefs, region_providers=kb.regions)
    result = answer_query(applied, kb)
    extra = dict(result.extra)
    if notes:
        extra["settings_notes"] = [*(extra.get("settings_notes") or []), *notes]
    filled = defaults.defaulted_fields(query, applied)
    if filled:
        extra["defaulted"] = filled
    return result.model_copy(update={"extra": extra}) if extra != result.extra else result


def answer_text_with(text: str, kb: KB, prefs: Mapping[str, Any]) -> Answer:
    """Parse `text` once and answer it with `prefs` applied; never raises."""
    query = understood(text, kb)
    if isinstance(query, Answer):
        return query
    return answer_with(query, kb, prefs) if prefs else answer_query(query, kb)


def typed_setting(key: str, raw: Any) -> Any:
    """What a setting's words hand to the settings store: a budget read by the question's budget grammar, typed
    ("2 USD/GPU-hour", "$20/hour", "预算每小时20元"), so a setting and a question mean the same by the same words;
    other values as given (the store validates them against the knowledge base).

    Raises `knowledge.state.settings_store.SettingError` for a budget that cannot be read."""
    from handlers.parse.budget import BudgetError, read
    from knowledge.state.settings_store import SettingError, key_of

    if key_of(key) != "budget" or not isinstance(raw, str):
        return raw
    try:
        return read(raw)
    except BudgetError as exc:
        raise SettingError(str(exc), exc.suggestions, key="budget") from None


def prefs_from(values: Mapping[str, Any], kb: KB) -> Mapping[str, Any]:
    """Validated preferences from raw values ({"providers": "aws,gcp", "budget": "2 USD/GPU-hour", ...}).

    Raises `knowledge.state.settings_store.SettingError` (with suggestions) for a value that is not understood."""
    from knowledge.state.settings_store import EffectiveSettings, normalize

    chosen = {
        key: normalize(key, typed_setting(key, value), kb) for key, value in values.items() if value not in (None, "")
    }
    return EffectiveSettings(chosen, {key: "options" for key in chosen})
