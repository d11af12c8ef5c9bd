"""Extractor 7: what the words of a question say beyond its names and numbers, as named flags on the `Query`.

Every keyword pattern that used to be applied to the raw text by a handler, the routing step or the rules' facts
lives here, read once: handlers and rules test `"no_interruptions" in query.flags`, never the text. English and
Chinese. `find_flags(low)` gives the flags, the precisions asked about ("fp16", "bf16") and training tokens said.
"""

from __future__ import annotations

import re

from handlers.language import has_chinese

# flag -> pattern over the question's lower-case text (first 2,000 characters, like the parser)
FLAGS: dict[str, str] = {
    # the rules' facts (knowledge.facts.question_facts)
    "large_model": r"large[- ]model|\bllms?\b|foundation model|大模型|大语言模型|千亿|百亿",
    "distributed": r"distributed|multi[- ]?node|cluster|分布式|多机|多节点|集群",
    "not_compute": (
        r"not compute[- ]intensive|cpu[- ]only|no gpu|without (a )?gpu|非计算密集|不是计算密集|不需要gpu|无需gpu"
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
    # routing (handlers/parse/reroute.py)
    "spot_word": r"spot|preemptible|竞价|抢占式",
    "on_demand_word": r"on[- ]?demand|按需|pay[- ]as[- ]you[- ]go",
    "reserved_word": r"reserv|commit(?:ted|ment)?|savings plan|预留|包年|包月|承诺",
    "either": r"\bor\b|\bvs\.?|\bversus\b|还是|或者|或|对比|比较|哪个|which",
    "break_even_word": r"break[- ]?even|盈亏平衡|保本|回本",
    "risk_word": r"\bsafe\b|\bsafety\b|reliab|\brisk|dependab|\bstable\b|安全|靠谱|可靠|风险|稳定|稳不稳",
    "job": r"\bjob\b|\brun\b|training|train|任务|训练|跑",
    "domain": (
        r"gpu|cuda|cloud|instance|\bvms?\b|compute|price|pricing|cost|cheap|rent|train|inference|infer|fine[- ]?tun|"
        r"\bmodel|llm|node|cluster|spot|reserv|on[- ]?demand|tco|benchmark|flops|vram|memory|nvidia|amd|tpu|"
        r"accelerator|render|hpc|simulation|budget|egress|storage|region|datacenter|data center|server|machine|"
        r"显卡|算力|云|实例|训练|推理|模型|价格|多少钱|便宜|租|集群|节点|显存|服务器|机器|预算|竞价|按需|预留|成本|费用|区域|地域"
    ),
    # handlers: a short answer per region (brief), a job that must not stop (tco_terms), fact vs price (spec)
    "regions_asked": r"\bregions?\b|\bwhere\b|\bzones?\b|地域|区域|哪个地区|哪些地区|哪里|可用区",
    "no_interruptions": (
        r"(can ?not|can't|cannot|must not|mustn't|never) be interrupted|no interruptions?|"
        r"uninterrupt|without interruption|不能中断|不可中断|不能被中断|不允许中断|不能停"
    ),
    "fact_words": (
        r"bandwidth|带宽|network|网络|memory|显存|\d+\s*gb\b|which gpu|what gpu|gpu型号|什么gpu|什么卡|nvlink|"
        r"\bfp(8|16|32|64)\b|\bbf16\b|tflops|算力|images? per second|images?/s|img/s|吞吐|throughput|benchmark|基准"
    ),
    "whole_instance": (  # rank per instance-hour (handlers/ranking.py)
        r"whole (instance|machine|node|server|vm)|per instance[- ]hour|per[- ]instance|instance[- ]hour|"
        r"整机|整台|每台|按实例"
    ),
    "price_words": r"price|cost|how much does|多少钱|价格|费用|\$|per hour|每小时|一小时|cheap|便宜|value|性价比",
    "figure": r"[$¥]\s*\d|\d(\.\d+)?\s*(美元|元|usd|cny|gbps|gb\b|tflops|img|images|张)",
}
_COMPILED = {name: re.compile(pattern) for name, pattern in FLAGS.items()}
PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")
_PRECISION_WORDS = {"双精度": "fp64", "单精度": "fp32", "半精度": "fp16"}
_TOKENS = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>t|b|m|trillion|billion|million|万亿|亿)\s*(?:tokens?|个?token)")
_TOKEN_UNIT = {"t": 1e12, "trillion": 1e12, "万亿": 1e12, "b": 1e9, "billion": 1e9, "亿": 1e8, "m": 1e6, "million": 1e6}


def find_flags(low: str) -> tuple[list[str], list[str], float | None]:
    """(flags raised, precisions asked about, training tokens said) for a question's lower-case text."""
    flags = [name for name, pattern in _COMPILED.items() if pattern.search(low)]
    if has_chinese(low):
        flags.append("chinese")  # written in Chinese: answered in Chinese whatever a channel prefers
    precisions = [p for p in PRECISIONS if re.search(rf"(?<![a-z0-9]){p}(?![0-9])", low)]
    precisions += [p for word, p in _PRECISION_WORDS.items() if word in low and p not in precisions]
    m = _TOKENS.search(low)
    tokens = float(m["n"]) * _TOKEN_UNIT[m["unit"]] if m else None
    return flags, precisions, tokens
