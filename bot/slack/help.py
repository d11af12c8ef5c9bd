"""`/gpu help`: what gpubot answers (the help answer) and every `/gpu` command, in the asker's language.

COMMANDS                          the command names the list covers (tests check each is shown)
command_lines(lang) -> [str]      one mrkdwn line per command
with_commands(message, lang)      a rendered help answer with the commands section added
"""

from __future__ import annotations

from typing import Any

from bot.slack.limits import LIMITS
from handlers.i18n import t

__all__ = ["COMMANDS", "command_lines", "with_commands"]

COMMANDS = ("set", "unset", "settings", "digest", "alerts", "history", "help")

_TITLE = {"en": "Commands", "zh": "命令"}


def command_lines(lang: str) -> list[str]:
    return ["• " + t(f"slack_help.{name}", lang) for name in ("ask", *COMMANDS)]


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
