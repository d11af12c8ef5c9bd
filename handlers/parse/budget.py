"""Budgets said in a question: "under $2/GPU-h", "at most 15 CNY per GPU hour", "每卡每小时不超过3美元",
"budget $10/hour", "$5,000 for the month".

`find(low)` returns the `Budget` and the span it was read from (the parser masks that span, so "$2/GPU-h" is not
also read as a GPU count). A cap needs a money word ($, USD, 美元, 元 ...) and either a limit word ("under", "at
most", "budget", "不超过", "预算", "以内") or a per-unit ("/GPU-h", "每小时"). The unit decides what it caps:

    per GPU-hour      "/GPU-h", "per GPU hour", "每卡每小时", "每GPU小时", "卡时"
    per instance-hour "/hour", "per hour", "an hour", "每小时", "/h" (without a GPU word)
    total             "for the month", "total", "in total", "总共", "一个月", or no unit on a "budget" figure
A figure with a limit word and no unit caps per GPU-hour ("cheapest A100 under $2").
"""

from __future__ import annotations

import re

from handlers.models import Budget

_MONEY_BEFORE = r"(?P<pre>us\$|\$|usd\s*|¥|cny\s*|rmb\s*|￥)"
_MONEY_AFTER = r"(?P<post>usd|us dollars?|dollars?|bucks|cny|rmb|yuan|美元|美金|刀|元|块钱?|人民币)"
_AMOUNT = r"(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<k>k\b|千|万)?"
_LIMIT_EN = (
    r"(?:under|below|less than|at most|no more than|not more than|up to|max(?:imum)?(?: of)?|cap(?:ped)? at|"
    r"within|budget(?:ed)?(?: of| is| at|:)?|<=|≤|<|cheaper than|not above|not over)"
)
_LIMIT_ZH = r"(?:不超过|不高于|不多于|低于|少于|最多|至多|预算(?:是|为|有|在)?|控制在|以内|以下|之内)"
_GPU_UNIT = (
    r"(?:/\s*gpu[- ]?(?:h|hr|hour)s?\b|(?:per|a|an|each|/)\s*gpu[- ]?(?:hours?|hrs?|h)\b|/gpu\b|per gpu\b|"
    r"每卡每小时|每张卡每小时|每卡每时|每gpu每小时|每gpu小时|每个gpu每小时|/卡/小时|/卡/时|/卡时|卡时|/卡)"
)
_HOUR_UNIT = r"(?:/\s*(?:h|hr|hour)s?\b|(?:per|an|a|each)\s*(?:hour|hr)\b|hourly|每小时|一小时|/小时|每时)"
_TOTAL_UNIT = (
    r"(?:(?:for|in|over) (?:the|a|one) (?P<per>month|week|year|project|job|run)|(?:a|per) (?P<per2>month)|"
    r"/\s*mo(?:nth)?\b|monthly|in total|total|overall|每月|一个月|一月|总共|总计|总预算|共)"
)

_FIGURE = rf"{_MONEY_BEFORE}?\s*{_AMOUNT}\s*{_MONEY_AFTER}?"  # money only with a currency on one side (`find`)
_EN = re.compile(
    rf"(?P<limit>{_LIMIT_EN})\s*(?:about|around|roughly|~)?\s*"
    rf"{_FIGURE}"
)
_ZH = re.compile(
    rf"(?P<limit>{_LIMIT_ZH})\s*{_FIGURE}"
    rf"(?:\s*(?P<after>以内|以下|之内))?"
)
# a figure with no limit word before it: "$2/GPU-h or less", "3美元每卡每小时以内", "$5,000 for the month"
# (a bare "$3.26/h" is a figure being checked, not a cap)
_OR_LESS = r"(?:or less|or under|or below|max\b|at most|以内|以下|之内)"
_BARE = re.compile(rf"{_FIGURE}\s*(?=(?:{_GPU_UNIT}|{_HOUR_UNIT})\s*{_OR_LESS}|{_TOTAL_UNIT})")
_CNY = {"¥", "￥", "cny", "rmb", "yuan", "元", "块", "块钱", "人民币"}
_PERIOD_HOURS = {"month": 730.0, "week": 168.0, "year": 8760.0}
_WINDOW = 24  # characters either side of the figure searched for its unit


def _amount(m: re.Match) -> float:
    value = float(m["n"].replace(",", ""))
    return value * {"k": 1000.0, "千": 1000.0, "万": 10000.0}.get((m["k"] or "").strip(), 1.0)


def _currency(m: re.Match) -> str:
    words = {(m["pre"] or "").strip(), (m["post"] or "").strip()}
    return "CNY" if words & _CNY else "USD"


def _unit(low: str, start: int, end: int, limit: str) -> tuple[str, float | None, int]:
    """(per, period hours, end of the unit) from the words around the figure."""
    after = low[end : end + _WINDOW]
    before = low[max(0, start - _WINDOW) : start]
    for text, offset in ((after, end), (before, None)):
        gpu = re.search(_GPU_UNIT, text)
        hour = re.search(_HOUR_UNIT, text)
        total = re.search(_TOTAL_UNIT, text)
        found = [
            (m.start(), kind, m)
            for kind, m in (("gpu_hour", gpu), ("instance_hour", hour), ("total", total))
            if m and (offset is None or m.start() <= 3)
        ]
        if found:
            _, kind, m = min(found, key=lambda item: item[0])
            if kind == "instance_hour" and gpu and re.search(r"gpu|卡", text[max(0, m.start() - 6) : m.end() + 6]):
                kind, m = "gpu_hour", gpu
            period = None
            if kind == "total":
                word = m.groupdict().get("per") or m.groupdict().get("per2") or ("month" if "月" in m.group() else "")
                period = _PERIOD_HOURS.get(word)
            if kind == "total" or offset is None:  # "一个月" stays for the duration parser
                return kind, period, end
            return kind, period, offset + m.end()
    if re.search(r"budget|预算", limit):
        return "total", None, end
    return "gpu_hour", None, end


def find(low: str) -> tuple[Budget | None, tuple[int, int] | None]:
    """The first budget in the lower-cased question, and the span it was read from."""
    matches = [m for pattern in (_EN, _ZH, _BARE) for m in pattern.finditer(low) if m["pre"] or m["post"]]
    if not matches:
        return None, None
    m = min(matches, key=lambda item: item.start())
    limit = m.groupdict().get("limit") or ""
    per, hours, end = _unit(low, m.start("n"), m.end(), limit)
    amount = _amount(m)
    if amount <= 0:
        return None, None
    budget = Budget(amount=amount, currency=_currency(m), per=per, hours=hours, text=low[m.start() : end].strip())
    return budget, (m.start(), end)
