"""`/gpu help`: what gpubot answers (the help answer) and every `/gpu` command, in the asker's language.

COMMANDS                          the command names the list covers (tests check each is shown)
command_lines(lang) -> [str]      one mrkdwn line per command
with_commands(message, lang)      a rendered help answer with the commands section added
HELP_WORDS                        the `/gpu` texts that ask for help
"""

from __future__ import annotations

from typing import Any

from bot.slack.limits import LIMITS

__all__ = ["COMMANDS", "HELP_WORDS", "command_lines", "with_commands"]

HELP_WORDS = frozenset({"", "help", "?", "帮助", "幫助", "help me"})
COMMANDS = ("set", "unset", "settings", "digest", "alerts", "history", "help")

_TITLE = {"en": "Commands", "zh": "命令"}
_LINES: dict[str, dict[str, str]] = {
    "ask": {
        "en": "`/gpu QUESTION` — ask, e.g. `/gpu cheapest A100 spot` (only you see the answer until you share it)",
        "zh": "`/gpu 问题` — 提问，例如 `/gpu 最便宜的A100竞价`（回答仅您可见，分享后全频道可见）",
    },
    "set": {
        "en": "`/gpu set KEY VALUE` — this channel's defaults (providers, regions, currency, language, pricing, "
        "budget), announced in the channel; `/gpu set workspace KEY VALUE` — the workspace's (admins)",
        "zh": "`/gpu set 设置项 值` — 本频道的默认设置（providers、regions、currency、language、pricing、budget），"
        "会在频道中公告；`/gpu set workspace 设置项 值` — 工作区的默认设置（仅管理员）",
    },
    "unset": {
        "en": "`/gpu unset [workspace] KEY` or `/gpu unset [workspace] all` — remove them",
        "zh": "`/gpu unset [workspace] 设置项` 或 `/gpu unset [workspace] all` — 删除设置",
    },
    "settings": {
        "en": "`/gpu settings` — what applies here, where each value comes from, and who changed what",
        "zh": "`/gpu settings` — 这里生效的设置、各自来源，以及谁在何时做了哪些更改",
    },
    "digest": {
        "en": "`/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] [quiet]`, "
        "`/gpu digest unsubscribe`, `/gpu digest now`, `/gpu digest list` — this channel's daily "
        "price-change digest",
        "zh": "`/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] [quiet]`、"
        "`/gpu digest unsubscribe`、`/gpu digest now`、`/gpu digest list` — 本频道的每日价格变动摘要",
    },
    "alerts": {
        "en": "`/gpu alert H100 spot below 2.50`, `/gpu alerts`, `/gpu alert remove N` — tell this channel "
        "when a price falls below a threshold",
        "zh": "`/gpu alert H100 spot below 2.50`、`/gpu alerts`、`/gpu alert remove N` — 价格低于阈值时在本频道提醒",
    },
    "history": {
        "en": "`/gpu history A100 spot` — how a price moved, with a chart you can post in the channel",
        "zh": "`/gpu history A100 spot` — 价格走势，可将图表发布到频道",
    },
    "help": {"en": "`/gpu help` — this list", "zh": "`/gpu help` — 本列表"},
}


def command_lines(lang: str) -> list[str]:
    return ["• " + (_LINES[name].get(lang) or _LINES[name]["en"]) for name in ("ask", *COMMANDS)]


def with_commands(message: dict[str, Any], lang: str) -> dict[str, Any]:
    """The help message with a "Commands" section before its closing context/actions blocks."""
    text = f"*{_TITLE.get(lang, _TITLE['en'])}*\n" + "\n".join(command_lines(lang))
    section = {"type": "section", "text": {"type": "mrkdwn", "text": text[: LIMITS["section_text"]]}}
    out = list(message.get("blocks") or [])
    at = len(out)
    while at > 0 and out[at - 1].get("type") in ("context", "actions"):
        at -= 1
    out.insert(at, section)
    fallback = (message.get("text") or "") + "\n\n" + text.replace("*", "")
    return {**message, "text": fallback[: LIMITS["fallback_text"]], "blocks": out[: LIMITS["blocks_message"]]}
