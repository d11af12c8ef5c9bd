"""help: what gpubot can answer, built from each intent handler's docstring."""

from __future__ import annotations

from handlers.i18n import MESSAGES, t
from handlers.models import Answer, Query

EXAMPLES_ZH = {
    "cheapest": "最便宜的H100按需实例 / aws上最便宜的8卡A100竞价",
    "price": "g5.xlarge 一小时多少钱 / 腾讯云 GN10Xp 多少钱",
    "work": "8B模型每百万token成本 / 70B模型用竞价跑推理每百万token多少钱",
}


OFF_TOPIC_EXAMPLES = {
    "en": [
        "cheapest A100 spot",
        "price of p4d.24xlarge",
        "A100 vs H100",
        "tco 8x H100 for 3 days",
        "spot or on-demand for a 3 day training job",
        "GPU for fine-tuning a 70B model",
    ],
    "zh": [
        "最便宜的A100竞价实例",
        "p4d.24xlarge 多少钱",
        "A100和H100对比",
        "8卡H100跑3天的成本",
        "训练任务跑3天用竞价还是按需",
        "微调70B模型用什么GPU",
    ],
}


def handle(query: Query, kb: object = None) -> Answer:
    """help: this list"""
    from handlers import INTENTS

    lang = query.language
    if query.topic == "off_topic":  # not a GPU cloud question: say so, with examples (never a recommendation)
        return Answer(query=query, title=t("help.off_topic", lang), lines=[f"• {e}" for e in OFF_TOPIC_EXAMPLES[lang]])
    lines = []
    for intent, handler in INTENTS.items():
        doc = (handler.__doc__ or "").strip().splitlines()[0] if handler.__doc__ else intent
        if lang == "zh" and f"help.{intent}" in MESSAGES:  # a Chinese answer is Chinese (issue 16)
            doc = t(f"help.{intent}", lang)
        line = f"• {doc}"
        if lang == "zh" and intent in EXAMPLES_ZH:
            line += f"（例：{EXAMPLES_ZH[intent]}）"
        lines.append(line)
    title = t("help.not_understood" if query.intent == "unknown" else "help.title", lang)
    return Answer(query=query, title=title, lines=lines)
