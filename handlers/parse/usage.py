"""How much a machine is used: "at 50% utilisation", "12 hours a day", "weekdays 9-5", "使用率50%", "每天8小时".

`find(low)` returns a `Usage` (the share of the hours it runs, with what was said) and the spans it was read from;
the parser masks them, so "12 hours a day" is never also a 12-hour job. The duration ("for a year", "三个月") stays
the parser's (`numbers`) and is added to the `Usage` by `entry.parse`.

    utilisation  "at 50% utilisation", "80% usage", "50% of the time", "使用率50%", "利用率 80%"
    per_day      "12 hours a day", "12h/day", "每天8小时", "一天12个小时"    -> hours / 24
    per_week     "40 hours a week", "每周40小时"                         -> hours / 168
    per_month    "200 hours a month", "200 h/month", "每月200小时"        -> hours / 730
    schedule     "weekdays 9-5", "9 to 5 on weekdays", "business hours", "工作日9点到18点", "朝九晚五"
    always       "24/7", "around the clock", "always on", "7x24", "全天候"   -> 100 %, as said
"""

from __future__ import annotations

import re

from handlers.models import Usage
from handlers.parse.numbers import zh_number

_NUM = r"(?P<n>\d+(?:\.\d+)?|[零一二三四五六七八九十两半]+)"
_PCT = r"(?P<p>\d{1,3}(?:\.\d+)?)\s*(?:%|percent|per cent)"
_UTIL = r"(?:utili[sz]ation|utili[sz]ed|usage|util|load|duty cycle|busy|of the time)"
_PER = {"day": 24.0, "weekday": 24.0, "week": 168.0, "month": 730.0}
_ZH_PER = {"天": 24.0, "日": 24.0, "周": 168.0, "星期": 168.0, "月": 730.0}
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("utilisation", re.compile(rf"(?:at\s+)?(?:an?\s+)?{_PCT}\s*(?:average\s+)?{_UTIL}")),
    ("utilisation", re.compile(rf"{_UTIL}\s*(?:of|at|is|=|:|around|about)?\s*(?:about\s+)?{_PCT}")),
    ("utilisation", re.compile(rf"(?:使用率|利用率|占用率|使用时间)\s*(?:为|是|在|约|大约)?\s*{_PCT}")),
    ("utilisation", re.compile(rf"{_PCT}\s*的?(?:使用率|利用率|占用率|时间)")),
    (
        "schedule",
        re.compile(
            r"(?:(?:on\s+)?(?:weekdays?|business days|work ?days|mon(?:day)?\s*(?:-|to)\s*fri(?:day)?),?\s*(?:from\s+)?"
            r"(?P<a>\d{1,2})\s*(?:am)?\s*(?:-|–|to)\s*(?P<b>\d{1,2})\s*(?:pm)?"
            r"|(?P<a2>\d{1,2})\s*(?:am)?\s*(?:-|–|to)\s*(?P<b2>\d{1,2})\s*(?:pm)?,?\s*(?:on\s+)?(?:weekdays|mon(?:day)?"
            r"\s*(?:-|to)\s*fri(?:day)?|business days|work ?days))"
        ),
    ),  # fmt: skip
    (
        "schedule",
        re.compile(r"工作日\s*(?:的)?\s*(?P<a3>\d{1,2})\s*(?:点|时)?\s*(?:-|到|至|~)\s*(?P<b3>\d{1,2})\s*(?:点|时)?"),
    ),
    ("office", re.compile(r"business hours|office hours|working hours|9 to 5|nine to five|朝九晚五|工作时间")),
    ("always", re.compile(r"24\s*/\s*7|24x7|7\s*[x×]\s*24|around the clock|round the clock|always on|全天候|不间断")),
    (
        "per",
        re.compile(
            rf"{_NUM}\s*(?:hours?|hrs?|h)\s*(?:a|per|each|every|/|an?)\s*(?P<per>weekday|day|week|month)(?![a-z])"
        ),
    ),  # fmt: skip
    (
        "per",
        re.compile(
            rf"(?:每|一)(?:个)?(?P<zper>天|日|周|星期|月)\s*(?:用|运行|跑|使用|开)?\s*{_NUM}\s*(?:个)?(?:小时|钟头|h)"
        ),
    ),
)


def _schedule_share(m: re.Match[str]) -> float | None:
    found = m.groupdict()
    start = found.get("a") or found.get("a2") or found.get("a3")
    end = found.get("b") or found.get("b2") or found.get("b3")
    if start is None or end is None:
        return None
    a, b = int(start), int(end)
    b = b + 12 if b <= a else b  # "9-5": 9 am to 5 pm
    return (b - a) * 5 / 168 if 0 < b - a <= 24 else None


def _share(kind: str, m: re.Match[str]) -> float | None:
    """The share of all hours the machine runs (0-1], or None when the figure is not one."""
    if kind == "utilisation":
        pct = float(m.group("p"))
        return pct / 100 if 0 < pct <= 100 else None
    if kind == "schedule":
        return _schedule_share(m)
    if kind == "office":
        return 40 / 168
    if kind == "always":
        return 1.0
    hours = zh_number(m.group("n"))
    per = _PER.get(m.groupdict().get("per") or "") or _ZH_PER.get(m.groupdict().get("zper") or "")
    if not hours or not per:
        return None
    if m.groupdict().get("per") == "weekday":
        return hours * 5 / 168 if hours <= 24 else None
    return hours / per if hours <= per else None


def find(low: str) -> tuple[Usage | None, list[tuple[int, int]]]:
    """The usage said in `low` (the first one found) and the spans to mask."""
    for kind, pattern in _PATTERNS:
        m = pattern.search(low)
        if m is None:
            continue
        share = _share(kind, m)
        if share is None:
            continue
        basis = "per_" + (m.groupdict().get("per") or "") if kind == "per" else kind
        if kind == "per" and not m.groupdict().get("per"):
            basis = {"天": "per_day", "日": "per_day", "周": "per_week", "星期": "per_week"}.get(m["zper"], "per_month")
        basis = {"per_weekday": "schedule", "office": "schedule"}.get(basis, basis)
        return Usage(utilisation=share, basis=basis, text=m.group().strip()), [m.span()]
    return None, []
