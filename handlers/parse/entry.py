"""`parse(text, vocab)`: one message -> a validated `Query`, through the extractors and the intent rules."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from handlers.language import has_chinese
from handlers.models import Budget, Intent, NumberIssue, Query, Usage
from handlers.parse.budget import find as find_budget
from handlers.parse.cluster import find as find_machines
from handlers.parse.cluster import machines_of_instance
from handlers.parse.flags import find_flags
from handlers.parse.ids import find_ids
from handlers.parse.intent import choose, pricing_of, topic_of
from handlers.parse.leftovers import find_leftovers
from handlers.parse.numbers import find_numbers
from handlers.parse.polarity import find_exclusions
from handlers.parse.reroute import reroute
from handlers.parse.state import State
from handlers.parse.usage import find as find_usage
from handlers.parse.words import find_cjk, find_words
from knowledge.kb.vocabulary import Vocabulary

MAX_CHARS = 2000  # a question longer than this is read up to here (the Query keeps the whole text)
_MENTION = re.compile(r"^\s*(?:<@[^>]+>|@[\w.\-]+|/gpu\b|/gpubot\b)[\s,:，：]*", re.IGNORECASE)
_ASCII_WORD = re.compile(r"[a-z0-9]")
_ANY_GPU = re.compile(r"\bgpus?\b|\bcards?\b|\baccelerators?\b|显卡|gpu|算力|加速卡")  # "cheapest GPU in asia"

# In this order: each blanks what it consumed, so later ones never read it twice.
_EXTRACTORS: tuple[Callable[[State, Vocabulary], None], ...] = (
    find_ids, find_numbers, find_words, find_cjk, find_leftovers, lambda st, _: find_exclusions(st),
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
    body = _body(typed)
    st = State(text=body, low=_lower(body))
    budget, machines, usage = _read_first(st, body)
    for extract in _EXTRACTORS:
        extract(st, vocab)
    chinese = has_chinese(body)
    empty = not _ASCII_WORD.search(body.lower()) and not chinese
    pricing, term_years = pricing_of(st)
    if term_years:
        st.durations.remove(term_years * 8760.0)  # "3-year reserved": a pricing term, not how long it runs
    chosen = choose(st, empty)
    duration = st.durations[0] if st.durations else (term_years * 8760.0 if term_years and chosen == "tco" else None)
    if usage is not None:
        usage = usage.model_copy(update={"duration_hours": duration or (term_years * 8760.0 if term_years else None)})
    chosen, topic = _usage_intent(chosen, usage, pricing, st)
    flags, precisions, tokens = find_flags(_lower(body))
    query = Query(
        text=typed,
        flags=flags,
        precisions=precisions,
        train_tokens=tokens,
        intent=chosen,
        pricing=pricing,
        duration_hours=duration,
        language="zh" if chinese else "en",
        topic=topic or (topic_of(st) if chosen in {"pitfalls", "checklist"} else None),
        budget=budget,
        machines=machines,
        usage=usage,
        **_fields_read(st, body),
    )
    from handlers.parse.train import refine as refine_27  # train_cost and rent_or_api fields (issue 27)
    from handlers.parse.work import refine  # the "work" intent: $ per 1M tokens of a benchmarked model

    query = machines_of_instance(query, _lower(body))  # "3 x p4d.24xlarge": three instances
    return reroute(refine_27(refine(query, body), body))  # break-even, spot-or-on-demand, off-topic questions


def _body(typed: str) -> str:
    """The question without "/gpu" or an @-mention in front (both: "@gpubot /gpu ..."), NFKC-normalised (full-width
    "Ａ１００" is "A100") and cut at MAX_CHARS."""
    text = unicodedata.normalize("NFKC", typed)
    body = _MENTION.sub("", text, count=1).strip()
    return _MENTION.sub("", body, count=1).strip()[:MAX_CHARS]


def _read_first(st: State, body: str) -> tuple[Budget | None, int | None, Usage | None]:
    """The budget, the cluster shape and the usage, read before the extractors and blanked in `st`, so that their
    numbers are never read again as a count, a size or a duration."""
    budget, budget_span, too_big = find_budget(st.low)  # "under $2/GPU-h": read first, so "$2" is no count or size
    if budget_span:
        st.take(*budget_span)
    if budget is not None:
        st.currency = budget.currency  # "$2/GPU-h" still says the question is in dollars
    if too_big is not None and budget_span:  # "under $1e999/h": refused, never read as $1
        st.out_of_range.append(("budget", body[budget_span[0] : budget_span[1]].strip()))
    machines, machines_span = find_machines(st.low)  # "2 nodes of 8 H100": 2 machines, 8 GPUs each
    if machines_span:
        st.take(*machines_span)
    usage, usage_spans = find_usage(st.low)  # "12 hours a day": how much it runs, never a 12-hour job
    for span in usage_spans:
        st.take(*span)
    return budget, machines, usage


def _fields_read(st: State, body: str) -> dict[str, Any]:
    """The `Query` fields as the extractors left them in `st`: names, numbers, words, exclusions, region names."""
    return {
        "gpus": st.ordered("gpus"),
        "gpu_count": st.gpu_count,
        "min_gpu_memory_gb": st.min_gpu_memory_gb,
        "providers": st.ordered("providers"),
        "regions": st.ordered("regions"),
        "instance_types": st.ordered("instance_types"),
        "workload": st.workload,
        "model_size_b": st.model_size_b,
        "priority": st.priority,
        "storage_gb": st.storage_gb,
        "egress_gb": st.egress_gb,
        "currency": st.currency,
        "top_n": st.top_n,
        "issues": st.issues,
        "out_of_range": [NumberIssue(kind=kind, text=text) for kind, text in st.out_of_range],
        "gpu_variants": st.gpu_variants,
        "any_gpu": not st.gpus and not st.instance_types and bool(_ANY_GPU.search(body.lower())),
        "exclude_providers": st.excluded.get("providers", []),
        "exclude_pricing": st.excluded.get("pricing", []),
        "exclude_regions": st.excluded.get("regions", []),
        "exclude_gpus": st.excluded.get("gpus", []),
        "exclude_region_names": st.excluded.get("region_names", []),
        "region_names": [st.said[pos] for pos in sorted(st.said)],
        "unapplied": st.excluded.get("unapplied", []),
    }


def _usage_intent(chosen: Intent, usage: object, pricing: str | None, st: State) -> tuple[Intent, str | None]:
    """ "reserve g5.xlarge for a year if I use it 12 hours a day": a usage with a reservation is a break-even
    question (the verdict follows from the usage)."""
    reserved = (pricing or "").startswith("reserved") or "reserved" in st.pricings
    if (
        usage is not None
        and reserved
        and st.instance_types
        and chosen in ("tco", "price", "cheapest", "compare", "recommend")
    ):
        return "tco", "break_even"
    return chosen, None
