"""The intent of a parsed message, and the fields read from all its cues at once (pricing, pitfalls topic).

`choose` walks `_INTENT_RULES`, an ordered table of (intent, predicate) over the cues (`knowledge/data/lexicon/
intents.json`) and the fields found; the first rule that holds gives the intent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from handlers.models import Intent, Pricing
from handlers.parse.leftovers import STOPWORDS
from handlers.parse.state import WORD, State


def _items(st: State) -> int:
    """How many things of one kind the question names: two or more make a comparison possible."""
    return max(
        len(st.gpus), len(st.providers), st.mentions.get("instance_types", 0), len(set(st.pricings)),
        st.mentions.get("regions", 0),
    )  # fmt: skip


def _has_target(st: State) -> bool:
    return bool(st.gpus or st.instance_types or st.min_gpu_memory_gb)


def _needs_advice(st: State) -> bool:
    return bool(st.workload or st.model_size_b)


def _anything_else(st: State) -> bool:
    """Named anything that narrows the question (so "prices today" is the digest, "H100 prices today" is not)."""
    return any((st.providers, st.regions, st.pricings, st.workload, st.model_size_b, st.gpu_count, st.issues))


def _anything(st: State) -> bool:
    return any((st.gpus, st.providers, st.regions, st.instance_types, st.pricings, st.workload, st.model_size_b,
                st.gpu_count, st.priority, st.issues, st.durations, st.min_gpu_memory_gb))  # fmt: skip


_Rule = tuple[Intent, Callable[[State], bool]]
# Evaluated in order; the first rule whose predicate holds gives the intent.
_INTENT_RULES: tuple[_Rule, ...] = (
    ("help", lambda s: set(s.cues) == {"help"} and not _anything(s)),
    ("checklist", lambda s: "checklist" in s.cues),
    ("history", lambda s: "history" in s.cues or ("change" in s.cues and _has_target(s))),
    ("digest", lambda s: "digest" in s.cues or "change" in s.cues
        or ("recent" in s.cues and "price" in s.cues and not _has_target(s) and not _anything_else(s))),
    ("pitfalls", lambda s: "pitfalls" in s.cues),
    ("tco", lambda s: "tco" in s.cues),
    ("compare", lambda s: "compare" in s.cues
        or (("either" in s.cues or "cheaper" in s.cues) and "cheapest" not in s.cues and _items(s) >= 2)),
    ("tco", lambda s: bool(s.durations) and bool({"price", "cheapest", "cheaper"} & set(s.cues))
        or bool(s.storage_gb or s.egress_gb)),
    ("rent_or_api", lambda s: "rent_or_api" in s.cues),  # rent GPUs or pay an API per token (handlers/rent_or_api)
    ("train_cost", lambda s: "train_cost" in s.cues),  # what a training run costs, MLPerf (handlers/train_cost)
    ("cheapest", lambda s: "cheapest" in s.cues and _has_target(s)),
    ("recommend", lambda s: "recommend" in s.cues
        or bool({"cheapest", "cheaper"} & set(s.cues) and _needs_advice(s) and not _has_target(s))),
    ("cheapest", lambda s: "cheapest" in s.cues or "cheaper" in s.cues),
    ("spec", lambda s: "spec" in s.cues),
    ("price", lambda s: "price" in s.cues),
    ("cheapest", lambda s: s.priority == "cost" and _has_target(s) and not _needs_advice(s)),
    ("recommend", lambda s: _needs_advice(s) or (bool(s.priority) and not _has_target(s))),
    ("tco", lambda s: bool(s.durations) and _has_target(s)),
    ("price", lambda s: bool(s.gpus or s.instance_types or s.providers or s.pricings or s.min_gpu_memory_gb
                             or s.regions or s.issues)),
    ("unknown", lambda s: True),
)  # fmt: skip


def choose(st: State, empty: bool) -> Intent:
    """The intent of the message: help for an empty one, else the first rule that holds."""
    if empty:
        return "help"
    return next(intent for intent, holds in _INTENT_RULES if holds(st))


def pricing_of(st: State) -> tuple[Pricing | None, int | None]:
    """(pricing, reserved term in years). Two different pricings named (a comparison) leave it unset."""
    kinds = list(dict.fromkeys(st.pricings))
    term = None
    if "reserved" in kinds:
        term = 3 if 3 * 8760.0 in st.durations else (1 if 8760.0 in st.durations else None)
        kinds = [f"reserved_{term or 1}y" if k == "reserved" else k for k in kinds]
    return (cast(Pricing, kinds[0]) if len(kinds) == 1 else None), term  # a lexicon pricing: the Query checks it


def topic_of(st: State) -> str | None:
    """What a pitfalls or checklist question is about: topic ids ("spot egress"), else the words left over."""
    if st.topics:
        return " ".join(st.topics)
    words = [w for w in WORD.findall(st.low) if w not in STOPWORDS and not w.isdigit()]
    return " ".join(words) or None
