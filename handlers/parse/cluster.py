"""Machine count vs GPUs per machine: "2 nodes of 8 H100", "4 machines with 8x A100", "2台8卡H100", "3 x p4d.24xlarge".

`find(low)` reads the machine count said before a per-machine GPU count (the parser masks it, so "8 H100" is still
read as the GPUs per machine); `machines_of_instance(query)` reads "3 x p4d.24xlarge" (three instances, not three
GPUs) once the instance type is known.
"""

from __future__ import annotations

import re

from handlers.models import Query

_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "一": 1,
    "二": 2,
    "两": 2,
    "俩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
_EN = re.compile(
    r"(?<![\w.])(?P<m>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)\s*(?:x\s*)?"
    r"(?:nodes?|machines?|servers?|instances?|boxes|hosts?|vms?)\s*(?:of|with|each with|each having|,)?"
    r"\s*(?=\d{1,2}\s*(?:x|×)?\s*[a-z]|\d{1,2}\s*(?:gpus?|cards?))"
)
_ZH = re.compile(
    r"(?P<m>\d{1,3}|[一二两俩三四五六七八九十])\s*"
    r"(?:台|个节点|个机器|台机器|台服务器|个实例|节点)\s*(?:，|,)?\s*"
    r"(?=(?:\d{1,2}|[一二两三四五六七八九十])\s*(?:卡|张|块|x|×))"
)


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() else _WORDS.get(text)


def find(low: str) -> tuple[int | None, tuple[int, int] | None]:
    """(machines, span to mask) for "N nodes of M <gpu>"; (None, None) when the question says no machine count."""
    for pattern in (_EN, _ZH):
        m = pattern.search(low)
        if m:
            n = _number(m["m"])
            if n and n > 0:
                return n, m.span()
    return None, None


def machines_of_instance(query: Query, low: str) -> Query:
    """ "3 x p4d.24xlarge", "3台p4d.24xlarge": three instances of the type (not three GPUs); `low` is the question's
    lower-case text (read here, by the parser, once)."""
    if not query.instance_types or query.machines:
        return query
    for instance in query.instance_types:
        name = re.escape(instance.lower())
        m = re.search(rf"(?<![\w.])(\d{{1,3}}|{'|'.join(_WORDS)})\s*(?:x|×|\*|台|个)\s*{name}", low)
        n = _number(m.group(1)) if m else None
        if n and n > 0 and (query.gpu_count is None or query.gpu_count == n):
            return query.model_copy(update={"machines": n, "gpu_count": None})
    return query
