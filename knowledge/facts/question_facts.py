"""The facts of a question, as the rules (`knowledge.facts.rules`) read them: a Query's fields plus keyword flags.

`query_facts(query)` is what `rules.evaluate` is given; the few flags only the words carry (large model,
distributed, data in China, long or short project, ...) are the Query's `flags`, read once by the parser.
"""

from __future__ import annotations

from typing import Any

_MAINLAND = ("cn-", "ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-chengdu", "ap-chongqing", "ap-nanjing")
LONG_PROJECT_HOURS = 4380.0  # 6 months
SHORT_PROJECT_HOURS = 168.0  # 1 week


def in_mainland_china(region: str) -> bool:
    return region.startswith(_MAINLAND) and region != "cn-hongkong"


def query_facts(query: Any) -> dict[str, Any]:
    """The facts of a question (a handlers.models.Query): its fields plus a few flags read from its text."""
    flags = set(getattr(query, "flags", ()) or ())  # read once, by the parser (handlers/parse/flags.py)
    workload = query.workload
    if workload is None and "not_compute" in flags:
        workload = "general"
    method = "qlora" if "qlora" in flags else "full" if "full" in flags else "lora"
    hours = query.duration_hours
    topic = query.topic if query.topic in ("interruption", "break_even") else None
    topic = topic or ("interruption" if "interruption" in flags else "break_even" if "break_even" in flags else None)
    return {
        "intent": query.intent,
        "workload": workload,
        "model_size_b": query.model_size_b,
        "large_model": "large_model" in flags,
        "compute_intensive": (False if workload == "general" or "not_compute" in flags else True if workload else None),
        "fine_tune_method": method if workload == "fine_tuning" else None,
        "quantization": "int4" if "int4" in flags else "int8" if "int8" in flags else None,
        "gpu_count": query.gpu_count,
        "distributed": "distributed" in flags,
        "priority": query.priority,
        "pricing": query.pricing,
        "providers": list(query.providers),
        "regions": list(query.regions),
        "instance_types": list(query.instance_types),
        "gpus": list(query.gpus),
        "data_in_china": "china" in flags or any(in_mainland_china(r) for r in query.regions),
        "duration_hours": hours,
        "duration_text": f"{hours:,.0f} h" if hours else None,
        "long_project": bool(hours and hours >= LONG_PROJECT_HOURS) or "long" in flags,
        "short_project": bool(hours and hours <= SHORT_PROJECT_HOURS) or "short" in flags,
        "mixed_workload": {"training", "inference"} <= flags,
        "storage_gb": query.storage_gb,
        "egress_gb": query.egress_gb,
        "cross_region": "cross_region" in flags or len(query.regions) > 1,
        "topic": topic,
    }
