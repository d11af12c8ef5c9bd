"""The parser's last step: questions whose words point elsewhere than their first intent (`reroute`), from the
flags read once (`handlers/parse/flags.py`), never the text again.

"reserved vs on-demand break-even for p4d.24xlarge"   compare -> tco (topic break_even)
"should I reserve p4d.24xlarge or stay on-demand?"     -> tco (topic break_even): the cheaper option for the usage
"spot or on-demand for a 3 day training job"           compare -> tco (topic spot_vs_on_demand)
"is spot safe for training on runpod"            recommend -> tco (topic spot_risk): its interruptions, what bites
"what's the weather in Paris"                          recommend (HPC) -> help (topic off_topic)
"cheapest p4d.24xlarge spot"                           cheapest -> price (that instance's prices)
"""

from __future__ import annotations

from typing import Any

from handlers.models import Query

_ANSWERING = ("recommend", "price", "cheapest", "tco")  # intents that would recommend or price something


def off_topic(query: Query) -> bool:
    """Nothing in the question is about GPUs or clouds: no name was recognised and no domain word is there."""
    # a place alone ("what's the weather in Paris") is not a GPU question; a benchmarked model is
    named = (
        query.gpus,
        query.instance_types,
        query.providers,
        query.pricing,
        query.model_size_b,
        query.model,
        query.gpu_count,
        query.min_gpu_memory_gb,
        query.issues,
        query.budget,
        query.exclude_providers,
        query.exclude_pricing,
    )
    if query.intent not in _ANSWERING:  # gibberish stays "not understood"; digest, checklist ... keep their words
        return False
    return not any(named) and "domain" not in query.flags


def reroute(query: Query) -> Query:
    """The query with its intent (and topic) corrected for the kinds of question above."""
    flags = set(query.flags)
    if off_topic(query):
        return query.model_copy(update={"intent": "help", "topic": "off_topic"})
    if query.intent == "cheapest" and query.instance_types and not query.gpus and not query.min_gpu_memory_gb:
        return query.model_copy(update={"intent": "price"})
    if query.intent in ("history", "digest", "pitfalls", "checklist", "help", "spec"):
        return query
    spot, on_demand, reserved = "spot_word" in flags, "on_demand_word" in flags, "reserved_word" in flags
    either = "either" in flags
    if "break_even_word" in flags or (
        reserved and on_demand and either and not spot and (query.instance_types or query.gpus)
    ):
        pricing = None if query.pricing == "on_demand" else query.pricing
        return query.model_copy(update={"intent": "tco", "topic": "break_even", "pricing": pricing})
    if spot and on_demand and either and not reserved and (query.duration_hours or "job" in flags):
        return query.model_copy(update={"intent": "tco", "topic": "spot_vs_on_demand", "pricing": None})
    if spot and "risk_word" in flags and not query.instance_types and query.intent in _ANSWERING:
        return query.model_copy(update={"intent": "tco", "topic": "spot_risk", "pricing": "spot"})
    return query


def settle(query: Query, kb: Any) -> Query:
    """The intent, final, where the knowledge base decides it (the pipeline's route step, before any handler):

    "how often is p4d.24xlarge interrupted", "break-even utilisation of g5.xlarge"   price -> tco (its topic)
    "what is the memory bandwidth of p4d.24xlarge", a seed erratum's own question    price/recommend -> spec
    """
    from handlers import spec

    if query.intent == "price":
        topic = (
            "interruption" if "interruption" in query.flags else "break_even" if "break_even" in query.flags else None
        )
        if query.instance_types and (query.topic in ("interruption", "break_even") or topic):
            return query.model_copy(update={"intent": "tco", "topic": query.topic or topic})
        if (query.instance_types or query.gpus) and spec.is_fact_question(query, kb):
            return query.model_copy(update={"intent": "spec"})
    advice = query.workload or query.model_size_b or query.priority or query.gpu_count
    if query.intent == "recommend" and not advice and (query.instance_types or spec.match_errata(query, kb)):
        return query.model_copy(update={"intent": "spec"})  # "which GPU is in Azure NCv3?": a fact question
    return query
