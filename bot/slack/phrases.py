"""Slack-only phrases, English and Chinese (the phrases the CLI shares are in `handlers.i18n`)."""

from __future__ import annotations

__all__ = ["PHRASES", "phrase"]

PHRASES: dict[str, dict[str, str]] = {
    "col.#": {"en": "#", "zh": "#"},
    "col.provider": {"en": "Provider", "zh": "云厂商"},
    "col.instance": {"en": "Instance", "zh": "实例规格"},
    "col.gpus": {"en": "GPUs", "zh": "GPU"},
    "col.region": {"en": "Region", "zh": "地域"},
    "col.pricing": {"en": "Pricing", "zh": "计费方式"},
    "col.per_gpu_hour": {"en": "Per GPU-hour", "zh": "每GPU小时"},
    "col.per_hour": {"en": "Per hour", "zh": "每小时"},
    "col.source": {"en": "Source", "zh": "来源"},
    "more": {"en": "… {n} more", "zh": "… 还有 {n} 条"},
    "more_sections": {"en": "… {n} more sections (see the full text)", "zh": "… 还有 {n} 段（见完整文本）"},
    "more_sources": {"en": "… {n} more sources", "zh": "… 还有 {n} 个来源"},
    "sources": {"en": "Sources", "zh": "来源"},
    "as_of": {"en": "as of", "zh": "截至"},
    "date_unknown": {"en": "date unknown, bundled", "zh": "数据日期未知，打包于"},
    "age.today": {"en": "today", "zh": "今天"},
    "age.days": {"en": "{n} days old", "zh": "{n} 天前"},
    "rules": {"en": "Rules applied", "zh": "应用的规则"},
    "pitfalls": {"en": "Pitfalls", "zh": "注意事项"},
    "recommendations": {"en": "Recommendations", "zh": "推荐"},
    "compute": {"en": "compute", "zh": "计算"},
    "storage": {"en": "storage", "zh": "存储"},
    "egress": {"en": "egress", "zh": "出网流量"},
    "btn.share": {"en": "Share in channel", "zh": "分享到频道"},
    "btn.spot": {"en": "Show spot prices", "zh": "看竞价价格"},
    "btn.on_demand": {"en": "Show on-demand prices", "zh": "看按需价格"},
    "btn.more": {"en": "More results", "zh": "更多结果"},
    "btn.pitfalls": {"en": "Show pitfalls", "zh": "注意事项"},
    "btn.why": {"en": "Why", "zh": "原因"},
    "pages": {"en": "Pricing pages", "zh": "官方价格页"},
    "details": {"en": "Details", "zh": "详细说明"},
    "shared_by": {"en": "Shared by <@{user}>", "zh": "由 <@{user}> 分享"},
    "working": {"en": "Looking that up…", "zh": "正在查询…"},
    "home.title": {"en": "gpubot: where to rent GPUs", "zh": "gpubot：去哪里租GPU"},
    "home.can_do": {"en": "What I can answer", "zh": "我能回答的问题"},
    "home_try": {
        "en": "Ask with `/gpu <question>`, mention me in a channel, or message me here.",
        "zh": "使用 `/gpu <问题>`、在频道里 @我，或在这里直接给我发消息。",
    },
    "home.freshness": {"en": "How fresh my data is", "zh": "数据有多新"},
    "built_at": {"en": "Knowledge base built", "zh": "知识库构建于"},
    "offers": {"en": "offers", "zh": "条报价"},
    "home.digests": {"en": "Digest subscriptions", "zh": "价格摘要订阅"},
    "home.no_digests": {
        "en": "No digest subscriptions for this workspace yet.",
        "zh": "本工作区还没有价格摘要订阅。",
    },
    "home.digest_hint": {
        "en": "Subscribe a channel with `/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] "
        "[threshold 2] [quiet]` in it.",
        "zh": "在频道中输入 `/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] "
        "[quiet]` 即可订阅。",
    },
    "digest.line": {"en": "daily at {hour:02d}:00 {tz}", "zh": "每天 {hour:02d}:00（{tz}）"},
    "digest.gpus": {"en": "GPUs: {gpus}", "zh": "GPU：{gpus}"},
    "digest.all_gpus": {"en": "all GPUs", "zh": "全部GPU"},
    "digest.threshold": {"en": "moves of {pct}% or more", "zh": "变动 ≥ {pct}%"},
    "digest.quiet": {"en": "quiet on days without changes", "zh": "无变化时不发送"},
    "digest.off": {"en": "off: {reason}", "zh": "已停用：{reason}"},
    "settings.context": {"en": "Settings", "zh": "设置"},
    "settings.title": {"en": "Settings for this channel", "zh": "本频道的设置"},
    "settings.title_dm": {"en": "Settings for this conversation", "zh": "本会话的设置"},
    "settings.from.channel": {"en": "this channel", "zh": "本频道"},
    "settings.from.workspace": {"en": "workspace", "zh": "工作区"},
    "settings.from.default": {"en": "gpubot's default", "zh": "gpubot 默认"},
    "settings.overrides": {"en": "workspace: {value}", "zh": "工作区：{value}"},
    "settings.help": {
        "en": "Change with `/gpu set providers aws,alibaba` (this channel) or `/gpu set workspace providers aws` "
        "(every channel without its own); remove with `/gpu unset providers` (`/gpu unset all`).",
        "zh": "修改：`/gpu set providers aws,alibaba`（本频道）或 `/gpu set workspace providers aws`（所有未单独设置的"
        "频道）；删除：`/gpu unset providers`（`/gpu unset all`）。",
    },
    "settings.key.providers": {"en": "providers", "zh": "云厂商"},
    "settings.key.regions": {"en": "regions", "zh": "地域"},
    "settings.key.currency": {"en": "currency", "zh": "币种"},
    "settings.key.language": {"en": "language", "zh": "语言"},
    "settings.key.pricing": {"en": "pricing", "zh": "计费方式"},
    "settings.key.budget": {"en": "budget (per GPU-hour)", "zh": "预算（每GPU小时）"},
    "settings.default.providers": {"en": "all", "zh": "全部"},
    "settings.default.regions": {"en": "all", "zh": "全部"},
    "settings.default.currency": {"en": "as quoted; totals in USD", "zh": "按报价币种；合计用美元"},
    "settings.default.language": {"en": "the question's", "zh": "跟随提问语言"},
    "settings.default.pricing": {"en": "as asked (on-demand when not said)", "zh": "按提问（未说明时为按需）"},
    "settings.default.budget": {"en": "none", "zh": "不限"},
    "home.settings": {"en": "Workspace defaults", "zh": "工作区默认设置"},
    "home.settings_hint": {
        "en": "Every channel uses these unless it has its own (`/gpu set ...` in the channel; `/gpu settings` shows "
        "them).",
        "zh": "未单独设置的频道都使用这些默认值（在频道中用 `/gpu set ...` 单独设置，`/gpu settings` 查看）。",
    },
    "btn.settings": {"en": "Edit workspace defaults", "zh": "编辑工作区默认设置"},
    "modal.title": {"en": "Workspace defaults", "zh": "工作区默认设置"},
    "modal.save": {"en": "Save", "zh": "保存"},
    "modal.cancel": {"en": "Cancel", "zh": "取消"},
    "modal.not_set": {"en": "not set", "zh": "不设置"},
    "modal.providers_hint": {"en": "Only these clouds (empty: all).", "zh": "只看这些云厂商（留空：全部）。"},
    "modal.regions_hint": {
        "en": "Region ids, comma-separated, e.g. us-east-1, cn-hangzhou (empty: all).",
        "zh": "地域 ID，用逗号分隔，例如 us-east-1, cn-hangzhou（留空：全部）。",
    },
    "modal.budget_hint": {
        "en": "Most to pay per GPU-hour, e.g. 2 USD/GPU-hour or 15 CNY/GPU-hour (empty: none).",
        "zh": "每GPU小时最高价格，例如 2 USD/GPU-hour 或 15 CNY/GPU-hour（留空：不限）。",
    },
}


def phrase(key: str, lang: str = "en", **values: object) -> str:
    """A Slack-only phrase in `lang` (English when missing)."""
    phrases = PHRASES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)
