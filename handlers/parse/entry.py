"""`parse(text, vocab)`: one message -> a validated `Query`, through the extractors and the intent rules."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from handlers import parse_budget, parse_cluster, routing
from handlers.language import has_chinese
from handlers.models import Query
from handlers.parse.ids import find_ids
from handlers.parse.intent import choose, pricing_of, topic_of
from handlers.parse.leftovers import find_leftovers
from handlers.parse.numbers import find_numbers
from handlers.parse.state import State
from handlers.parse.words import find_cjk, find_words
from knowledge.kb.vocabulary import Vocabulary

MAX_CHARS = 2000  # a question longer than this is read up to here (the Query keeps the whole text)
_MENTION = re.compile(r"^\s*(?:<@[^>]+>|@[\w.\-]+|/gpu\b|/gpubot\b)[\s,:，：]*", re.IGNORECASE)
_ASCII_WORD = re.compile(r"[a-z0-9]")

# In this order: each blanks what it consumed, so later ones never read it twice.
_EXTRACTORS: tuple[Callable[[State, Vocabulary], None], ...] = (
    find_ids, find_numbers, find_words, find_cjk, find_leftovers,
)  # fmt: skip


def _lower(text: str) -> str:
    """Lower case, keeping every character where it was (a few characters lower to two)."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def parse(text: str, vocab: Vocabulary) -> Query:
    """Parse one message into a validated `Query` (pure: same text and vocabulary, same query).

    Args:
        text: the message as typed, with or without "/gpu" or an @-mention in front.
        vocab: `Vocabulary.from_kb(kb)`.
    """
    typed = text or ""
    text = unicodedata.normalize("NFKC", typed)  # full-width "Ａ１００" is "A100"
    body = _MENTION.sub("", text, count=1).strip()
    body = _MENTION.sub("", body, count=1).strip()[:MAX_CHARS]  # "@gpubot /gpu ..."
    st = State(text=body, low=_lower(body))
    budget, budget_span = parse_budget.find(st.low)  # "under $2/GPU-h": read first, so "$2" is no count or size
    if budget is not None and budget_span:
        st.take(*budget_span)
        st.currency = budget.currency  # "$2/GPU-h" still says the question is in dollars
    machines, machines_span = parse_cluster.find(st.low)  # "2 nodes of 8 H100": 2 machines, 8 GPUs each
    if machines_span:
        st.take(*machines_span)
    for extract in _EXTRACTORS:
        extract(st, vocab)
    chinese = has_chinese(body)
    empty = not _ASCII_WORD.search(body.lower()) and not chinese
    pricing, term_years = pricing_of(st)
    if term_years:
        st.durations.remove(term_years * 8760.0)  # "3-year reserved": a pricing term, not how long it runs
    chosen = choose(st, empty)
    duration = st.durations[0] if st.durations else (term_years * 8760.0 if term_years and chosen == "tco" else None)
    query = Query(
        text=typed,
        intent=chosen,
        gpus=st.ordered("gpus"),
        gpu_count=st.gpu_count,
        min_gpu_memory_gb=st.min_gpu_memory_gb,
        pricing=pricing,
        providers=st.ordered("providers"),
        regions=st.ordered("regions"),
        instance_types=st.ordered("instance_types"),
        workload=st.workload,
        model_size_b=st.model_size_b,
        priority=st.priority,
        duration_hours=duration,
        storage_gb=st.storage_gb,
        egress_gb=st.egress_gb,
        currency=st.currency,
        top_n=st.top_n,
        language="zh" if chinese else "en",
        topic=topic_of(st) if chosen in {"pitfalls", "checklist"} else None,
        issues=st.issues,
        gpu_variants=st.gpu_variants,
        budget=budget,
        machines=machines,
    )
    from handlers.parse_train import refine as refine_27  # train_cost and rent_or_api fields (issue 27)
    from handlers.parse_work import refine  # the "work" intent: $ per 1M tokens of a benchmarked model

    query = refine_27(refine(query, body), body)
    return routing.reroute(query)  # routing: break-even, spot-or-on-demand and off-topic questions
