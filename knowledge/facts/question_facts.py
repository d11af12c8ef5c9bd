"""The facts of a question, as the rules (`knowledge.facts.rules`) read them: a Query's fields plus keyword flags.

`query_facts(query)` is what `rules.evaluate` is given; `text_flags` reads the few flags only the text carries
(large model, distributed, data in China, long or short project, ...), in English and Chinese.
"""

from __future__ import annotations

import re
from typing import Any

_FLAGS = {
    "large_model": r"large[- ]model|\bllms?\b|foundation model|大模型|大语言模型|千亿|百亿",
    "distributed": r"distributed|multi[- ]?node|cluster|分布式|多机|多节点|集群",
    "not_compute": (
        r"not compute[- ]intensive|cpu[- ]only|no gpu|without (a )?gpu|"
        r"非计算密集|不是计算密集|不需要gpu|无需gpu"
    ),
    "china": r"\bchina\b|chinese mainland|mainland|中国|国内|境内|大陆|数据本地化|本地化存储|等保|\bmlps\b",
    "long": r"long[- ]term|long project|long-running|长期",
    "short": r"short[- ]term|experiment|quick test|\bpoc\b|短期|实验|试验|临时",
    "training": r"train|训练",
    "inference": r"inferenc|serving|推理",
    "qlora": r"qlora",
    "lora": r"\blora\b",
    "full": r"full fine[- ]?tun|full[- ]parameter|全量微调|全参数",
    "int4": r"\bint4\b|4[- ]?bit|\bgptq\b|\bawq\b|4位量化",
    "int8": r"\bint8\b|8[- ]?bit|fp8 inference|8位量化",
    "cross_region": r"cross[- ]region|inter[- ]region|跨区域|跨地域",
    "interruption": r"interrupt|preempt|reclaim|中断|回收|被抢占",
    "break_even": r"break[- ]?even|盈亏平衡|保本|回本|利用率|utili[sz]ation",
}
_MAINLAND = ("cn-", "ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-chengdu", "ap-chongqing", "ap-nanjing")
LONG_PROJECT_HOURS = 4380.0  # 6 months
SHORT_PROJECT_HOURS = 168.0  # 1 week


def text_flags(text: str) -> set[str]:
    """Which of the keyword flags (`_FLAGS`) a question's text raises."""
    low = text.lower()
    return {name for name, pattern in _FLAGS.items() if re.search(pattern, low)}


def in_mainland_china(region: str) -> bool:
    return region.startswith(_MAINLAND) and region != "cn-hongkong"


def query_facts(query: Any) -> dict[str, Any]:
    """The facts of a question (a handlers.models.Query): its fields plus a few flags read from its text."""
    flags = text_flags((query.text or "")[:2000])  # read like the parser: a huge paste is not scanned
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
