"""Reply phrases in English and Chinese; a question gets its answer in the language it was asked in."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "cheapest.title": {
        "en": "Cheapest {what} ({pricing}), per GPU-hour",
        "zh": "{what}（{pricing}）最便宜的报价，按每GPU小时计",
    },
    "cheapest.none": {
        "en": "No {pricing} offers for {what} match these filters.",
        "zh": "没有符合条件的{what}{pricing}报价。",
    },
    "cheapest.count_fallback": {
        "en": "No instance has exactly {count:g} GPUs; showing all sizes.",
        "zh": "没有正好{count:g}卡的实例，以下列出所有规格。",
    },
    "cheapest.article_context": {
        "en": "Seed-article figure ({status}, not a list price), {as_of}: {provider} {subject} {price}; catalog best: "
        "{best}.",
        "zh": "种子文章中的数字（{status}，非官方目录价，{as_of}）：{provider} {subject} {price}；目录最低：{best}。",
    },
    "cheapest.article_only": {
        "en": "{provider} has no price catalog: its figures come from the seed articles and are labelled as such.",
        "zh": "{provider}没有价格目录：其数字来自种子文章，已标注。",
    },
    "cheapest.which_gpu": {
        "en": "Which GPU? For example: `cheapest A100 spot`, `cheapest 8x H100 on aws`.",
        "zh": "请指明GPU型号，例如：`最便宜的A100竞价实例`、`aws上最便宜的8卡H100`。",
    },
    "cheapest.vgpu": {
        "en": "vGPU slices are priced per whole GPU-hour so they compare fairly; they are not whole GPUs.",
        "zh": "vGPU分片已折算为整卡每小时价格以便公平比较；它们不是整张物理GPU。",
    },
    "cheapest.gpu_only_excluded": {
        "en": "{count} GCP figures without a host-VM price (GPU only, not what you pay) are not ranked; "
        "`price of` an instance lists them.",
        "zh": "{count}条GCP报价缺少宿主虚拟机价格（仅GPU，并非实付价），未参与排名。",
    },
    "price.title": {"en": "Prices of {what}", "zh": "{what}的价格"},
    "price.none": {
        "en": "No {pricing} price for {what}{where} in the knowledge base.",
        "zh": "知识库中没有{what}{where}的{pricing}价格。",
    },
    "price.no_term": {
        "en": "{provider} publishes no {pricing} term for {what}{where}; available: {available}.",
        "zh": "{provider}没有为{what}{where}提供{pricing}价格；可用的有：{available}。",
    },
    "price.other_terms": {"en": "Other terms ({region}, {as_of}): {terms}", "zh": "其他条款（{region}，{as_of}）：{terms}"},
    "price.which": {
        "en": "Which instance type or GPU? For example: `price of p4d.24xlarge`, `g5.xlarge 一小时多少钱`.",
        "zh": "请指明实例规格或GPU，例如：`p4d.24xlarge 多少钱`、`A100 价格`。",
    },
    "names.unknown": {"en": "I don't know the {kind} '{text}'.", "zh": "我不认识{kind}“{text}”。"},
    "names.ambiguous": {"en": "'{text}' could mean several {kind}s.", "zh": "“{text}”可能指多个{kind}。"},
    "names.did_you_mean": {"en": "Did you mean {candidates}?", "zh": "您是不是指 {candidates}？"},
    "help.title": {"en": "What gpubot can answer", "zh": "gpubot 能回答的问题"},
    "help.not_understood": {
        "en": "I didn't understand that. Here is what I can answer:",
        "zh": "没看懂这个问题。我可以回答这些：",
    },
    "error.internal": {
        "en": "Sorry, something went wrong while answering. The error was logged.",
        "zh": "抱歉，回答时出错了，错误已记录。",
    },
    "error.kb": {
        "en": "The knowledge base is unavailable ({detail}). An operator can rebuild it with `gpubot kb build`.",
        "zh": "知识库不可用（{detail}）。管理员可运行 `gpubot kb build` 重建。",
    },
    "coming": {
        "en": "'{intent}' questions are not answered yet.",
        "zh": "暂不支持“{intent}”类问题。",
    },
    "word.or": {"en": " or ", "zh": " 或 "},
    "word.in": {"en": " in ", "zh": " 在"},
    "kind.gpu": {"en": "GPU", "zh": "GPU"},
    "kind.provider": {"en": "provider", "zh": "云厂商"},
    "kind.region": {"en": "region", "zh": "地域"},
    "kind.instance_type": {"en": "instance type", "zh": "实例规格"},
    "pricing.on_demand": {"en": "on-demand", "zh": "按需"},
    "pricing.spot": {"en": "spot", "zh": "竞价"},
    "pricing.reserved_1y": {"en": "1-year reserved", "zh": "1年预留"},
    "pricing.reserved_3y": {"en": "3-year reserved", "zh": "3年预留"},
    "sources": {"en": "Sources", "zh": "来源"},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The phrase `key` in `lang` (English when missing), formatted with `values`."""
    phrases = MESSAGES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)
