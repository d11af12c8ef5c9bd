"""One path from a question to an answer, shared by the CLI and Slack: parse -> route -> handler -> Answer.

Errors never escape as tracebacks: a knowledge-base problem and an unexpected error both become short answers
(the latter logged with context), in the question's language.
"""

from __future__ import annotations

import logging

from handlers.models import Answer, Query
from knowledge.kb import KB, KnowledgeBaseError

log = logging.getLogger("gpubot")

WITH_PITFALLS = ("cheapest", "recommend", "tco")  # answers that recommend something carry what bites


def understand(text: str, kb: KB) -> Query:
    """Parse a question into a `Query` against the knowledge base's names."""
    from handlers.parse import Vocabulary, parse

    return parse(text, Vocabulary.from_kb(kb))


def answer_query(query: Query, kb: KB) -> Answer:
    """Answer an already-parsed query; never raises."""
    from handlers import route
    from handlers.i18n import t

    try:
        result = route(query)(query, kb)
        if query.intent in WITH_PITFALLS and not result.pitfalls:
            result = _with_pitfalls(result, kb)
        return result
    except KnowledgeBaseError as exc:
        log.error("knowledge base unavailable: %s", exc)
        return Answer(query=query, title=t("error.kb", query.language, detail=type(exc).__name__))
    except Exception:
        log.exception("internal error answering %r (intent %s)", query.text, query.intent)
        return Answer(query=query, title=t("error.internal", query.language))


def _with_pitfalls(result: Answer, kb: KB) -> Answer:
    """Attach the one to three pitfalls that matter most for what the answer recommends."""
    from handlers.pitfalls import relevant

    offers = [*result.offers, *(r.offer for r in result.recommendations if r.offer)]
    return result.model_copy(update={"pitfalls": relevant(kb, result.query, offers[:5], limit=3)})


def answer(text: str, kb: KB) -> Answer:
    """Answer a question in plain text; never raises."""
    from handlers.i18n import t

    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text[:2000]) else "en"
    try:
        query = understand(text, kb)
    except KnowledgeBaseError as exc:
        log.error("knowledge base unavailable: %s", exc)
        return Answer(query=Query(text=text[:500], language=lang), title=t("error.kb", lang, detail=type(exc).__name__))
    except Exception:
        log.exception("internal error parsing %r", text[:200])
        return Answer(query=Query(text=text[:500], language=lang), title=t("error.internal", lang))
    return answer_query(query, kb)
