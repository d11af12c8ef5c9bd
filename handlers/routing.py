"""Questions whose words point elsewhere than their parsed intent: the parser's last step (`reroute`).

"reserved vs on-demand break-even for p4d.24xlarge"   compare -> tco (topic break_even)
"should I reserve p4d.24xlarge or stay on-demand?"     -> tco (topic break_even): the cheaper option for the usage
"spot or on-demand for a 3 day training job"           compare -> tco (topic spot_vs_on_demand)
"what's the weather in Paris"                          recommend (HPC) -> help (topic off_topic)
"""

from __future__ import annotations

import re

from handlers.models import Query

_SPOT = r"spot|preemptible|竞价|抢占式"
_ON_DEMAND = r"on[- ]?demand|按需|pay[- ]as[- ]you[- ]go"
_RESERVED = r"reserv|commit(?:ted|ment)?|savings plan|预留|包年|包月|承诺"
_EITHER = r"\bor\b|\bvs\.?|\bversus\b|还是|或者|或|对比|比较|哪个|which"
_BREAK_EVEN = r"break[- ]?even|盈亏平衡|保本|回本"
# words of the domain: a question with none of them, and no GPU, cloud, instance or model size, is not for us
_DOMAIN = re.compile(
    r"gpu|cuda|cloud|instance|\bvms?\b|compute|price|pricing|cost|cheap|rent|train|inference|infer|fine[- ]?tun|"
    r"\bmodel|llm|node|cluster|spot|reserv|on[- ]?demand|tco|benchmark|flops|vram|memory|nvidia|amd|tpu|"
    r"accelerator|render|hpc|simulation|budget|egress|storage|region|datacenter|data center|server|machine|"
    r"显卡|算力|云|实例|训练|推理|模型|价格|多少钱|便宜|租|集群|节点|显存|服务器|机器|预算|竞价|按需|预留|成本|费用|区域|地域"
)


_ANSWERING = ("recommend", "price", "cheapest", "tco")  # intents that would recommend or price something
_JOB = r"\bjob\b|\brun\b|training|train|任务|训练|跑"


def _has(pattern: str, text: str) -> bool:
    return re.search(pattern, text) is not None


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
    )
    if query.intent not in _ANSWERING:  # gibberish stays "not understood"; digest, checklist ... keep their words
        return False
    return not any(named) and not _DOMAIN.search((query.text or "")[:2000].lower())


def reroute(query: Query) -> Query:
    """The query with its intent (and topic) corrected for the three kinds of question above."""
    text = (query.text or "")[:2000].lower()
    if off_topic(query):
        return query.model_copy(update={"intent": "help", "topic": "off_topic"})
    if query.intent == "cheapest" and query.instance_types and not query.gpus and not query.min_gpu_memory_gb:
        return query.model_copy(update={"intent": "price"})  # "cheapest p4d.24xlarge spot": that instance's prices
    if query.intent in ("history", "digest", "pitfalls", "checklist", "help", "spec"):
        return query
    spot, on_demand, reserved = _has(_SPOT, text), _has(_ON_DEMAND, text), _has(_RESERVED, text)
    either = _has(_EITHER, text)
    break_even = _has(_BREAK_EVEN, text)
    if break_even or (reserved and on_demand and either and not spot and (query.instance_types or query.gpus)):
        pricing = None if query.pricing == "on_demand" else query.pricing
        return query.model_copy(update={"intent": "tco", "topic": "break_even", "pricing": pricing})
    if spot and on_demand and either and not reserved and (query.duration_hours or _has(_JOB, text)):
        return query.model_copy(update={"intent": "tco", "topic": "spot_vs_on_demand", "pricing": None})
    return query
