"""Escaping for Slack text: every string that comes from a question or from data goes through `slack_escape`
(mrkdwn) or `slack_plain` (plain_text fields, table cells), so `<!channel>`, `@here` or `<@U123>` typed by a user
is shown, never executed."""

from __future__ import annotations

import re

__all__ = ["cut", "slack_escape", "slack_inline", "slack_plain"]

_BROADCAST = re.compile(r"@(channel|here|everyone)", re.IGNORECASE)  # no \b: "@herex" cut to "@here…" pings
_SPECIAL = re.compile(r"<([!@#])")
_JOINER = "\u2060"  # WORD JOINER: invisible, and breaks Slack's mention syntax


def slack_escape(value: object) -> str:
    """Text for mrkdwn: `& < >` escaped (so `<!channel>`, `<@U1>`, `<#C1>` show literally) and `@here` defused."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@" + _JOINER + m.group(1), text)


_SPAN_MARKS = str.maketrans({"*": "\u2217", "_": "\u02cd", "~": "\u223c", "`": "\u02cb"})


def slack_inline(value: object) -> str:
    """`slack_escape` for a value placed inside `*bold*`, `_italic_` or `` `code` ``: look-alike characters stand in
    for the mrkdwn span marks, so the value cannot end the span around it early."""
    return slack_escape(value).translate(_SPAN_MARKS)


def slack_plain(value: object) -> str:
    """Text for plain_text fields and table cells: no entities, but mention and broadcast syntax defused."""
    text = "" if value is None else str(value)
    text = _SPECIAL.sub(lambda m: "<" + _JOINER + m.group(1), text)
    return _BROADCAST.sub(lambda m: "@" + _JOINER + m.group(1), text)


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, "…" where it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
