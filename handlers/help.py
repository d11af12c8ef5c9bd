"""help: what gpubot can answer, built from each intent handler's docstring."""

from __future__ import annotations

from handlers.i18n import t
from handlers.models import Answer, Query

EXAMPLES_ZH = {
    "cheapest": "最便宜的H100按需实例 / aws上最便宜的8卡A100竞价",
    "price": "g5.xlarge 一小时多少钱 / 腾讯云 GN10Xp 多少钱",
}


def handle(query: Query, kb: object = None) -> Answer:
    """help: this list"""
    from handlers import INTENTS

    lang = query.language
    lines = []
    for intent, handler in INTENTS.items():
        doc = (handler.__doc__ or "").strip().splitlines()[0] if handler.__doc__ else intent
        line = f"• {doc}"
        if lang == "zh" and intent in EXAMPLES_ZH:
            line += f"（例：{EXAMPLES_ZH[intent]}）"
        lines.append(line)
    title = t("help.not_understood" if query.intent == "unknown" else "help.title", lang)
    return Answer(query=query, title=title, lines=lines)
