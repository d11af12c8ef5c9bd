"""`/gpu` texts that are commands, not questions: channel/workspace settings and digest subscriptions.

/gpu set [workspace] providers aws,alibaba | regions ... | currency CNY | language zh | pricing spot |
         budget 2 USD/GPU-hour
/gpu unset [workspace] KEY|all
/gpu settings
/gpu digest subscribe [hour 9] [tz Asia/Shanghai] [gpus H100,A100] [threshold 2] [quiet] | unsubscribe | now |
            list
/gpu alert H100 spot below 2.50 | /gpu alerts | /gpu alert remove N | H100竞价低于每卡每小时2美元时提醒我
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Command", "digest_options", "parse_command"]


@dataclass(frozen=True)
class Command:
    """A `/gpu` text that is a command, not a question."""

    kind: str  # set | unset | show | digest | alert | sources
    scope: str = "channel"  # channel | workspace
    key: str | None = None
    value: str = ""
    action: str | None = None  # digest: subscribe | unsubscribe | now | list; alert: add | list | remove
    args: tuple[str, ...] = ()


_SCOPES = {
    "workspace": "workspace",
    "team": "workspace",
    "channel": "channel",
    "here": "channel",
    "工作区": "workspace",
    "频道": "channel",
}
_KEYS_ZH = {  # `/gpu 设置 云厂商 aws`: the setting's Chinese name
    "云厂商": "providers",
    "厂商": "providers",
    "地域": "regions",
    "区域": "regions",
    "货币": "currency",
    "币种": "currency",
    "语言": "language",
    "计费方式": "pricing",
    "计费": "pricing",
    "预算": "budget",
    "全部": "all",
}
_HEADS_ZH = {  # Chinese command words -> the English words they stand for
    "设置": "set",
    "取消设置": "unset",
    "查看设置": "settings",
    "订阅每日摘要": "digest subscribe",
    "订阅摘要": "digest subscribe",
    "退订": "digest unsubscribe",
    "退订摘要": "digest unsubscribe",
    "取消订阅摘要": "digest unsubscribe",
    "摘要": "digest",
    "立即摘要": "digest now",
    "摘要列表": "digest list",
    "添加提醒": "alert",
    "删除提醒": "alert remove",
    "提醒列表": "alerts",
}
_DIGEST_ACTIONS = {
    "subscribe": "subscribe",
    "sub": "subscribe",
    "unsubscribe": "unsubscribe",
    "unsub": "unsubscribe",
    "stop": "unsubscribe",
    "now": "now",
    "list": "list",
    "订阅": "subscribe",
    "取消订阅": "unsubscribe",
    "退订": "unsubscribe",
    "现在": "now",
    "立即": "now",
    "列表": "list",
}


def _english_words(words: list[str]) -> list[str]:
    """`设置 云厂商 aws` -> `set providers aws`, `订阅每日摘要 hour 9` -> `digest subscribe hour 9`; `设置` alone is
    still "show the settings"."""
    head = _HEADS_ZH.get(words[0])
    if head is None or (words[0] == "设置" and len(words) == 1):
        return words
    words = [*head.split(), *words[1:]]
    if words[0] in ("set", "unset"):
        words = [words[0], *(_KEYS_ZH.get(w, w) for w in words[1:3]), *words[3:]]
    return words


def parse_command(text: str) -> Command | None:
    """The command in a `/gpu` text, or None when it is a question."""
    words = (text or "").split()
    if not words:
        return None
    words = _english_words(words)
    head = words[0].lower()
    if head in ("settings", "setting", "config", "设置") and len(words) == 1:
        return Command("show")
    if head == "show" and len(words) == 2 and words[1].lower() in ("settings", "config"):
        return Command("show")
    if head in ("set", "unset"):
        rest = words[1:]
        scope = "channel"
        if rest and rest[0].lower() in _SCOPES:
            scope, rest = _SCOPES[rest[0].lower()], rest[1:]
        key = rest[0] if rest else None
        return Command(head, scope=scope, key=key, value=" ".join(rest[1:]))
    if head in ("sources", "来源") and len(words) == 1:  # every price source and how fresh it is (issue 28)
        return Command("sources")
    if head == "digest" and len(words) >= 2 and words[1].lower() in _DIGEST_ACTIONS:
        return Command("digest", action=_DIGEST_ACTIONS[words[1].lower()], args=tuple(words[2:]))
    alert = _alert_command(words, text)
    if alert is not None:
        return alert
    return None


_ALERT_ACTIONS = {
    "list": "list",
    "ls": "list",
    "remove": "remove",
    "rm": "remove",
    "delete": "remove",
    "del": "remove",
    "删除": "remove",
    "列表": "list",
}


def _alert_command(words: list[str], text: str) -> Command | None:
    """`alerts`, `alert list`, `alert remove N`, `alert <question> below <price>`, or "…低于…时提醒我"."""
    from handlers.parse.alert import is_alert_text

    head = words[0].lower()
    if head in ("alerts", "提醒列表") and len(words) == 1:
        return Command("alert", action="list")
    if head in ("alert", "提醒"):
        rest = words[1:]
        if rest and rest[0].lower() in _ALERT_ACTIONS:
            return Command("alert", action=_ALERT_ACTIONS[rest[0].lower()], value=" ".join(rest[1:]))
        return Command("alert", action="add", value=" ".join(rest))
    if is_alert_text(text):
        return Command("alert", action="add", value=text.strip())
    return None


def digest_options(args: tuple[str, ...]) -> dict[str, Any]:
    """`hour 9 tz Asia/Shanghai gpus H100,A100 threshold 2 quiet` -> subscribe() options; ValueError if unreadable."""
    options: dict[str, Any] = {}
    words = list(args)
    while words:
        word = words.pop(0).lower()
        if word in ("quiet", "loud", "charts", "no-charts", "nocharts"):
            if word in ("quiet", "loud"):
                options["quiet"] = word == "quiet"
            else:
                options["charts"] = word == "charts"
            continue
        if word in ("hour", "at", "tz", "timezone", "gpus", "gpu", "threshold", "lang", "language"):
            if not words:
                raise ValueError(f"`{word}` needs a value")
            value = words.pop(0)
            if word in ("hour", "at"):
                hour = value.split(":")[0]
                if not hour.isdigit():
                    raise ValueError(f"hour must be 0..23, not {value!r}")
                options["hour"] = int(hour)
            elif word in ("tz", "timezone"):
                options["timezone"] = value
            elif word in ("gpus", "gpu"):
                while value.endswith(",") and words:  # "gpus H100, A100"
                    value += words.pop(0)
                options["gpus"] = [g for g in value.split(",") if g.strip()]
            elif word == "threshold":
                try:
                    options["threshold_pct"] = float(value.rstrip("%"))
                except ValueError:
                    raise ValueError(f"threshold must be a percentage, not {value!r}") from None
            else:
                options["language"] = value.lower()
            continue
        raise ValueError(f"unknown digest option {word!r}")
    return options
