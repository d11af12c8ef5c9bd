"""Budgets said in a question: "under $2/GPU-h", "at most 15 CNY per GPU hour", "每卡每小时不超过3美元",
"budget $10/hour", "$5,000 for the month"; and a budget said alone, as a setting or `--budget` ("2 USD/GPU-hour").

`find(low)` returns the `Budget` and the span it was read from (the parser masks that span, so "$2/GPU-h" is not
also read as a GPU count), or the words of a figure too large to be a budget. A cap needs a money word ($, USD,
美元, 元 ...) and either a limit word ("under", "at most", "budget", "不超过", "预算", "以内") or a per-unit
("/GPU-h", "每小时"). The unit decides what it caps, in a question and in a setting alike:

    per GPU-hour      "/GPU-h", "per GPU hour", "每卡每小时", "每GPU小时", "卡时"
    per instance-hour "/hour", "per hour", "an hour", "每小时", "/h" (without a GPU word)
    total             "for the month", "total", "in total", "总共", "一个月", or no unit on a "budget" figure
A figure with a limit word and no unit caps per GPU-hour ("cheapest A100 under $2").

`read(text)` is the same grammar for a budget said alone (`/gpu set budget ...`, `gpubot ask --budget ...`): the
whole text is the budget, a currency is optional (USD), no unit means per GPU-hour, and a total is refused (a
setting caps an hourly price). Exponents are read as written ("$2e1/h" is $20 an hour); a figure beyond
`MAX_HOURLY` an hour (`MAX_TOTAL` in total) is refused, never read as another number.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import NamedTuple

from handlers.models import Budget
from knowledge.errors import UserError

__all__ = ["MAX_HOURLY", "MAX_TOTAL", "BudgetError", "Found", "find", "read"]

MAX_HOURLY = 100_000.0  # an hourly cap above this (in its currency) is a typo: the dearest machine is ~$100/h
MAX_TOTAL = 1e9  # a total budget above this is not one anyone means

_MONEY_BEFORE = r"(?P<pre>us\$|\$|usd\s*|¥|cny\s*|rmb\s*|￥)"
_MONEY_AFTER = r"(?P<post>usd|us dollars?|dollars?|bucks|cny|rmb|yuan|美元|美金|刀|元|块钱?|人民币)"
_AMOUNT = r"(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*(?P<k>k\b|千|万)?"  # 2e1 is 20
_LIMIT_EN = (
    r"(?:under|below|less than|at most|no more than|not more than|up to|max(?:imum)?(?: of)?|cap(?:ped)? at|"
    r"within|budget(?:ed)?(?: of| is| at|:)?|<=|≤|<|cheaper than|not above|not over)"
)
_LIMIT_ZH = r"(?:不超过|不高于|不多于|低于|少于|最多|至多|预算(?:是|为|有|在)?|控制在|以内|以下|之内)"
_GPU_UNIT = (
    r"(?:/\s*gpu[- ]?(?:h|hr|hour)s?\b|(?:per|a|an|each|/)\s*gpu[- ]?(?:hours?|hrs?|h)\b|/gpu\b|per gpu\b|"
    r"每卡每小时|每张卡每小时|每卡每时|每gpu每小时|每gpu小时|每个gpu每小时|/卡/小时|/卡/时|/卡时|每卡时|卡时|/卡)"
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
_ZH = re.compile(  # "不超过3美元", "预算每小时20元" (the unit between the limit and the figure)
    rf"(?P<limit>{_LIMIT_ZH})\s*(?:{_GPU_UNIT}|{_HOUR_UNIT})?\s*{_FIGURE}"
    rf"(?:\s*(?P<after>以内|以下|之内))?"
)
# a figure with no limit word before it: "$2/GPU-h or less", "3美元每卡每小时以内", "$5,000 for the month"
# (a bare "$3.26/h" is a figure being checked, not a cap)
_OR_LESS = r"(?:or less|or under|or below|max\b|at most|以内|以下|之内)"
_BARE = re.compile(rf"{_FIGURE}\s*(?=(?:{_GPU_UNIT}|{_HOUR_UNIT})\s*{_OR_LESS}|{_TOTAL_UNIT})")
_CNY = {"¥", "￥", "cny", "rmb", "yuan", "元", "块", "块钱", "人民币"}
_PERIOD_HOURS = {"month": 730.0, "week": 168.0, "year": 8760.0}
_WINDOW = 24  # characters either side of the figure searched for its unit


class BudgetError(UserError, ValueError):
    """A budget said alone (a setting, `--budget`) that cannot be read; the message shows how to write one."""

    def __init__(self, message: str, suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.suggestions = suggestions


class Found(NamedTuple):
    """What `find` read: the budget and its span, or (`too_big`) the words of a figure too large to be one."""

    budget: Budget | None = None
    span: tuple[int, int] | None = None
    too_big: str | None = None


def _amount(m: re.Match) -> float:
    value = float(m["n"].replace(",", ""))
    return value * {"k": 1000.0, "千": 1000.0, "万": 10000.0}.get((m["k"] or "").strip(), 1.0)


def _currency(m: re.Match) -> str:
    words = {(m["pre"] or "").strip(), (m["post"] or "").strip()}
    return "CNY" if words & _CNY else "USD"


def _in_range(amount: float, per: str) -> bool:
    return math.isfinite(amount) and amount <= (MAX_TOTAL if per == "total" else MAX_HOURLY)


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


def find(low: str) -> Found:
    """The first budget in the lower-cased question and the span it was read from (or the figure too large)."""
    matches = [m for pattern in (_EN, _ZH, _BARE) for m in pattern.finditer(low) if m["pre"] or m["post"]]
    if not matches:
        return Found()
    m = min(matches, key=lambda item: item.start())
    limit = m.groupdict().get("limit") or ""
    per, hours, end = _unit(low, m.start("n"), m.end(), limit)
    amount = _amount(m)
    if not _in_range(amount, per):  # "under $1e999/h": refused, never read as $1
        return Found(span=(m.start(), end), too_big=low[m.start() : end].strip())
    if amount <= 0:
        return Found()
    budget = Budget(amount=amount, currency=_currency(m), per=per, hours=hours, text=low[m.start() : end].strip())
    return Found(budget, (m.start(), end))


# a budget said alone: "2 USD/GPU-hour", "$3/GPU-h", "¥20/h", "15 CNY", "2" (a figure with no limit word)
_ALONE = re.compile(
    rf"\s*(?P<unit0>{_GPU_UNIT}|{_HOUR_UNIT})?\s*{_FIGURE}\s*(?P<unit>{_GPU_UNIT}|{_HOUR_UNIT})?\s*(?:{_OR_LESS})?\s*"
)
_OTHER_MONEY = re.compile(r"\s*\$?\s*\d[\d.,]*(?:e[+-]?\d+)?\s*(?P<word>[a-z]{3})(?:/|\s|$).*")  # "2 EUR/GPU-hour"
_FILLER = re.compile(rf"(?:{_LIMIT_EN}|{_LIMIT_ZH}|{_GPU_UNIT}|{_HOUR_UNIT}|{_OR_LESS}|[\s,.;:，。：；])*")
EXAMPLE = "write it like `2 USD/GPU-hour`, `$20/hour` or `15 CNY/GPU-hour`"


def read(text: str) -> Budget:
    """The budget said alone in `text` (a setting or `--budget`); `BudgetError` when it cannot be one."""
    said = unicodedata.normalize("NFKC", str(text)).strip()
    low = said.lower()
    found = find(low)  # "under $1/hour", "预算每小时20元", "每卡时不超过3美元"
    if found.too_big is None and found.budget is None and (m := _ALONE.fullmatch(low)):
        unit = m["unit"] or m["unit0"] or ""
        per = "instance_hour" if unit and not re.fullmatch(_GPU_UNIT, unit) else "gpu_hour"
        amount = _amount(m)
        if not amount > 0:
            raise BudgetError(f"the budget {said!r} is not a positive price: {EXAMPLE}")
        if not _in_range(amount, per):
            found = Found(too_big=said)
        else:
            found = Found(Budget(amount=amount, currency=_currency(m), per=per, text=said), (0, len(low)))
    if found.too_big is not None:
        raise BudgetError(f"the budget {said!r} is out of range: at most {MAX_HOURLY:,.0f} an hour")
    budget, span = found.budget, found.span
    if budget is not None and budget.per == "total":
        raise BudgetError(f"the budget {said!r} is a total: a setting caps an hourly price; {EXAMPLE}")
    if budget is None or span is None or not _FILLER.fullmatch(low[: span[0]] + " " + low[span[1] :]):
        other = _OTHER_MONEY.fullmatch(low)
        if other and other["word"] not in {"usd", "cny", "rmb", "per", "for"}:
            raise BudgetError(f"unknown currency {other['word'].upper()!r} in the budget: USD or CNY", ("USD", "CNY"))
        raise BudgetError(f"cannot read the budget {said!r}: {EXAMPLE}")
    return budget.model_copy(update={"text": said, "hours": None})
