"""Extractor 2: numbers with their units and context words (model size, top N, GPU memory, storage, egress,
durations, GPU counts), by regex; and the number words of both languages (`zh_number`).

Each pattern of `_NUMERIC` runs only when the text holds one of its anchors, and is compiled the first time it
runs: a process that answers one question compiles only the few it needs.
"""

from __future__ import annotations

import re
from functools import cache

from handlers.parse.state import State
from knowledge import lexicon
from knowledge.kb.vocabulary import Vocabulary

_NUMBER_WORDS, _ZH_DIGITS, _ZH_UNITS = lexicon.numbers()
_ZH_NUM = "[" + re.escape("".join([*_ZH_DIGITS, *_ZH_UNITS])) + "]+"  # "十六", "两", "半"
_HOURS = {"hour": 1, "day": 24, "week": 168, "month": 730, "year": 8760}
_PER_UNIT = {"t": 1000, "tb": 1000, "tib": 1024, "p": 1e6, "pb": 1e6, "g": 1, "gb": 1, "gib": 1}  # -> GB


def zh_number(text: str) -> float | None:
    """Arabic or Chinese numerals -> a number ("16" -> 16, "十六" -> 16, "两" -> 2, "半" -> 0.5)."""
    try:
        return float(text)
    except ValueError:
        pass
    total, current = 0.0, 0.0
    for ch in text:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            total += (current or 1) * _ZH_UNITS[ch]
            current = 0
        else:
            return None
    return total + current


def number_word(word: str) -> float | None:
    """An English number word before a GPU name ("8 H100s", "a single A10G"); "a", "an", "half" alone are not."""
    return _NUMBER_WORDS.get(word) if word not in {"a", "an", "half"} else None


MAX_NUMBER = 1e12  # bigger is not a quantity anyone means (a 330-digit "duration" is infinity as a float)
MAX_DURATION_HOURS = 100 * 8760  # a century
MAX_GPU_COUNT = 4096
MAX_GPU_MEMORY_GB = 2048
TOO_BIG = ("out_of_range", 0.0)  # a number said with its unit but beyond these bounds: refused, never dropped


def _any_number(text: str) -> float | None:
    """The number as written (inf for a 330-digit one), or None when it is not a number."""
    return _NUMBER_WORDS.get(text) if text in _NUMBER_WORDS else zh_number(text.replace(" ", ""))


def _number(text: str) -> float | None:
    n = _any_number(text)
    return n if n is None or 0 <= n <= MAX_NUMBER else None  # never inf or nan (nan fails both comparisons)


def _duration(m: re.Match[str]) -> float | tuple[str, float] | None:
    n = _any_number(m["n"].strip())
    unit = m["unit"]
    if n is None or not n > 0:
        return None
    hours = _HOURS[_unit_kind(unit)]
    if hours == 1 and n == 1:
        return None  # "per hour", "一小时": the unit of a price, not a duration
    if hours == 8760 and n > 10 and float(n).is_integer() and 1900 <= n <= 2200:
        return None  # "2024年" is a date
    return n * hours if n * hours <= MAX_DURATION_HOURS else TOO_BIG


def _unit_kind(unit: str) -> str:
    unit = unit.strip()
    if unit in {"小时", "钟头"} or unit.startswith("h"):
        return "hour"
    if unit in {"天", "日"} or unit.startswith("d"):
        return "day"
    if unit in {"周", "星期", "个星期", "个礼拜", "礼拜"} or unit.startswith("w"):
        return "week"
    if unit in {"个月", "月"} or unit.startswith("mo"):
        return "month"
    return "year"


_UNIT = r"(?:gb|g|gib)(?![a-z0-9])"
_BIG_UNIT = r"(?P<unit>tb|t|gb|g|pb|tib|gib)(?![a-z0-9])"
_N = r"(?P<n>\d+(?:\.\d+)?(?:e[+-]?\d+)?)"  # "1e4 hours" is 10,000 hours
_AFTER_ID = r"(?<![a-z0-9.])"  # a number that does not continue a name or another number
_MEM_WORD = r"(?:vram|gpu memory|gpu ram|memory|mem|显存)(?![a-z])(?!\s*(?:bandwidth|带宽))"
_MORE = (
    r"(?:at least|min(?:imum)?|>=|≥|>|more than|over|above|no less than|greater than|"
    r"大于等于|大于|超过|至少|不少于|不低于|不小于|最少|高于|起码)"
)
_PLUS = r"(?:\+|or more|or above|plus|以上|及以上|或以上|起)"
_STORE = r"(?:storage|disk|disks|ssd|nvme|block storage|volume|存储|硬盘|磁盘|云盘|数据盘|存储空间)"
_EGRESS = (
    r"(?:egress|outbound traffic|outbound|data transfer out|data transfer|internet traffic|traffic|"
    r"出网流量|出网|公网流量|外网流量|出流量|下行流量|流量)"
)
_PER_MONTH = r"(?:/\s*(?:mo|month|月)|per month|a month|每月)"
_UNITS = r"(?P<unit>hours?|hrs?|h|小时|钟头|days?|天|weeks?|wks?|周|个?星期|个?礼拜|months?|mos?|个月|years?|yrs?|y|年)"
_NOT_TIMES = r"(?!\s*(?:faster|slower|cheaper|more|less|better|as|the|speed|perf|performance|price|cost|times|x?large))"
_ZH_SMALL = "[一二两三四五六七八九十]+"

_STORE_ANCHORS = ("stor", "disk", "ssd", "nvme", "volume", "存储", "硬盘", "磁盘", "云盘", "数据盘")
_EGRESS_ANCHORS = ("egress", "outbound", "transfer", "traffic", "流量", "出网")
_MEM_ANCHORS = ("vram", "mem", "显存")
_MORE_ANCHORS = ("least", "min", ">", "≥", "more", "over", "above", "less", "greater", "大于", "超过", "至少",
                 "不少于", "不低于", "不小于", "最少", "高于", "起码")  # fmt: skip
_PLUS_ANCHORS = ("+", "or more", "or above", "plus", "以上", "起")
_TIMES_ANCHORS = ("x", "×", "*")

# (field, anchors, pattern): a pattern runs only if the text contains one of its anchors (None: always), in this
# order (model sizes before counts, so "8x7b" is a model). Each match sets the field (see `_numeric_value`); the
# group "span", when a pattern has one, is all that the match consumes.
_NUMERIC: tuple[tuple[str, tuple[str, ...] | None, str], ...] = (
    ("model_moe", ("x",), rf"{_AFTER_ID}(?P<a>\d+)\s*x\s*{_N}\s*b(?![a-z0-9])"),
    ("model_size", ("b",),
     rf"{_AFTER_ID}{_N}\s?(?:b|bn|billion)(?![a-z0-9])(?:\s*(?:params|param|parameters?|参数|模型))?"),
    ("model_t", ("param", "参数", "trillion"),
     rf"{_AFTER_ID}{_N}\s?(?:t|trillion)\s*(?:params|param|parameters|参数)"),
    ("model_zh", ("亿",),
     rf"(?P<n>\d+(?:\.\d+)?|{_ZH_SMALL})?\s*(?P<unit>百亿|千亿|万亿|亿)(?:级|规模|级别)?(?:的)?"
     r"(?:参数量|参数|大模型|模型|params)"),
    ("top_n", ("top", "best", "first", "前"),
     rf"(?:\btop|\bbest|\bfirst|前)\s*(?P<span>(?P<n>\d{{1,3}}|{_ZH_SMALL}))(?:\s*(?:名|个|家|款|种))?(?![\d.x×])"),
    ("top_n", ("cheapest", "least", "lowest", "option", "offer", "choice", "result", "pick"),
     rf"{_AFTER_ID}(?P<span>(?P<n>\d{{1,3}}))\s+"
     r"(?:cheapest|least expensive|lowest|options|offers|choices|results|picks)"),
    ("top_n", ("最便宜",),
     rf"最便宜的?\s*(?P<span>(?P<n>\d{{1,3}}|{_ZH_SMALL})\s*(?:个|家|款|种))(?!\s*(?:gpu|卡|显卡|张|[a-z]+\d))"),
    ("storage_gb", _STORE_ANCHORS,
     rf"{_N}\s*{_BIG_UNIT}\s*(?:of\s+)?(?:ssd\s+|nvme\s+|local\s+|persistent\s+)?{_STORE}"),
    ("storage_gb", _STORE_ANCHORS, rf"{_STORE}\s*(?:of|:|：|需要|要|约|大概)?\s*{_N}\s*{_BIG_UNIT}"),
    ("egress_gb", _EGRESS_ANCHORS, rf"{_N}\s*{_BIG_UNIT}\s*{_PER_MONTH}?\s*(?:of\s+)?{_EGRESS}"),
    ("egress_gb", _EGRESS_ANCHORS,
     rf"{_EGRESS}\s*(?:of|:|：|约|大概|每月|per month)?\s*{_N}\s*{_BIG_UNIT}(?:\s*{_PER_MONTH})?"),
    ("min_memory", _MEM_ANCHORS, rf"{_MEM_WORD}\s*(?:of\s+|is\s+|:|：|{_MORE})?\s*{_N}\s*{_UNIT}(?:\s*{_PLUS})?"),
    ("min_memory", _MEM_ANCHORS, rf"{_N}\s*{_UNIT}\s*{_PLUS}?\s*(?:of\s+)?{_MEM_WORD}(?:\s*{_PLUS})?"),
    ("min_memory", _MORE_ANCHORS, rf"{_MORE}\s*{_N}\s*{_UNIT}(?:\s*(?:of\s+)?{_MEM_WORD})?"),
    ("min_memory", _PLUS_ANCHORS, rf"{_N}\s*{_UNIT}\s*{_PLUS}"),
    ("duration", None, rf"{_AFTER_ID}{_N}\s*-?\s*{_UNITS}(?![a-z0-9])"),
    ("duration", ("hour", "day", "week", "month", "year"),
     rf"{_AFTER_ID}(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|half a)[\s-]+"
     r"(?P<unit>hours?|days?|weeks?|months?|years?)(?![a-z0-9])"),
    ("duration", ("小时", "钟头", "天", "周", "星期", "礼拜", "个月", "年"),
     rf"(?P<n>{_ZH_NUM})\s*(?P<unit>小时|钟头|天|周|个?星期|个?礼拜|个月|年)"),
    ("duration", ("month", "/mo", "月"),
     r"(?:per month|a month|monthly|/month|/mo|每月|每个月|月均|月度|一个月)(?P<unit>)(?P<n>)"),
    ("duration", ("year", "annual", "/yr", "年"),
     r"(?:per year|a year|yearly|annually|annual|/year|/yr|每年|年度)(?P<unit>)(?P<n>)"),
    ("count", _TIMES_ANCHORS, rf"{_AFTER_ID}(?P<span>(?P<n>\d+)\s*[x×*])(?=\s*[a-z(]|\s*$){_NOT_TIMES}"),
    ("count", _TIMES_ANCHORS, r"(?:(?<=[\s(])|^|(?<=\d))(?P<span>[x×*]\s?(?P<n>\d{1,4}))(?![\d.a-z])(?<!86)"),
    ("count", ("gpu", "card", "accelerator", "device", "chip"),
     rf"{_AFTER_ID}(?P<n>\d+)\s*-?\s*(?:gpus?|cards?|graphics cards?|accelerators?|devices|chips)(?![a-z])"),
    ("count", ("张", "块", "卡", "片", "颗"),
     rf"(?P<n>\d{{1,4}}|{_ZH_NUM})\s*(?:张|块|卡|片|颗)(?!钱)(?:卡|显卡|gpu)?"),
    ("count", ("个",), rf"(?P<span>(?P<n>\d{{1,4}}|{_ZH_NUM})\s*个)\s*(?=gpu|卡|显卡|[a-z]+\d)"),
    ("currency_usd", ("$",), r"\$\s*\d|\d\s*\$|us\$"),
)  # fmt: skip


_KIND = {"duration": "duration", "count": "count", "min_memory": "memory"}  # pattern -> NumberIssue kind


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def find_numbers(st: State, vocab: Vocabulary) -> None:
    """Numbers with their units and context words: model size, top N, memory, storage, egress, durations, counts."""
    for name, anchors, source in _NUMERIC:
        if anchors is not None and not any(anchor in st.low for anchor in anchors):
            continue
        pattern = _compiled(source)
        for m in pattern.finditer(st.low):
            if not m.group().strip():
                continue
            value = _numeric_value(name, m)
            if value is None:
                continue
            target, number = value
            if target == "out_of_range":
                st.out_of_range.append((_KIND[name], st.text[m.start() : m.end()].strip()))  # as written
            elif target == "durations":
                st.durations.append(number)
            elif target == "currency":
                st.currency = st.currency or "USD"
            elif getattr(st, target) is None:
                setattr(st, target, int(number) if target == "top_n" else number)
                if target == "min_gpu_memory_gb" and m.group()[0].isdigit():
                    st.memory_at = m.start()  # "A100 80GB memory": may turn out to be the A100's memory
            span = m.span("span") if "span" in pattern.groupindex and m.group("span") else m.span()
            st.take(*span)


def _numeric_value(name: str, m: re.Match[str]) -> tuple[str, float] | None:
    if name == "currency_usd":
        return "currency", 1
    if name == "duration":
        if not m["n"]:
            return "durations", 730.0 if "月" in m.group() or "mo" in m.group() else 8760.0
        hours = _duration(m)
        return hours if isinstance(hours, tuple) else ("durations", hours) if hours else None
    if name == "model_zh":
        scale = {"亿": 0.1, "百亿": 10, "千亿": 100, "万亿": 1000}[m["unit"]]
        n = zh_number(m["n"]) if m["n"] else 1
        return ("model_size_b", n * scale) if n else None
    if name in _KIND and m["n"] and (big := _any_number(m["n"])) is not None and not big <= MAX_NUMBER:
        return TOO_BIG  # "5e400 GPUs", a 330-digit count
    n = _number(m["n"]) if m["n"] else None
    if n is None or n <= 0:
        return None
    if name == "model_moe":
        return ("model_size_b", float(m["a"]) * n) if float(m["a"]) * n <= MAX_NUMBER else None
    if name == "model_size":
        return ("model_size_b", n) if n <= 10000 else None
    if name == "model_t":
        return "model_size_b", n * 1000
    if name in {"storage_gb", "egress_gb"}:
        return name, n * _PER_UNIT.get(m["unit"].strip().lower(), 1)
    if name == "min_memory":
        return ("min_gpu_memory_gb", n) if 1 <= n <= MAX_GPU_MEMORY_GB else TOO_BIG if n > 1 else None
    if name == "top_n":
        return ("top_n", n) if 1 <= n <= 999 else None  # above handlers.ranking.MAX_TOP: capped, and said
    if name == "count":
        return ("gpu_count", n) if 0 < n <= MAX_GPU_COUNT else TOO_BIG
    return None
