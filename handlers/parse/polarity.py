"""Extractor 6: which names the question rules out ("cheapest H100 except gcp", "A100 on aws but not spot", "不要竞价").

Runs after the names were found. The words of `knowledge/data/lexicon/polarity.json` are read over the masked text
(names and keywords already blanked, so "no more than $2" is a budget, never a "no"), in order with the names:

- an `exclude` word ("except", "not", "不要", "除了") opens a scope; every name after it is ruled out until a
  `scope_end` ("but", "，", "但") or, once the scope has taken a name, a `restart` ("in", "on", "的");
- an `after` word ("以外的", "之外") closes a 除了 scope, or on its own rules out the name just before it.

A name ruled out leaves the wanted lists (providers, regions, pricings, GPUs) for `State.excluded`; an instance
type or model in a scope cannot be excluded and is said back (`excluded["unapplied"]`).
"""

from __future__ import annotations

import re
from functools import cache

from handlers.parse.state import State
from knowledge import lexicon

KINDS = ("providers", "pricing", "regions", "gpus")  # what can be ruled out
_RESERVED = ("reserved_1y", "reserved_3y")


@cache
def _pattern() -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation of every polarity phrase, longest first, and phrase (spaces folded) -> its kind."""
    kind_of: dict[str, str] = {}
    for kind, phrases in lexicon.polarity().items():
        for phrase in phrases:
            kind_of.setdefault(_fold(phrase), kind)
    parts = []
    for phrase in sorted(kind_of, key=len, reverse=True):
        body = r"[\s\-]+".join(map(re.escape, phrase.split()))
        parts.append(rf"(?<![a-z0-9]){body}(?![a-z0-9])" if phrase[0].isascii() and phrase[0].isalnum() else body)
    return re.compile("|".join(parts)), kind_of


def _fold(text: str) -> str:
    return " ".join(text.replace("-", " ").split())


def _mentions(st: State) -> list[tuple[int, str, list[str]]]:
    """(position, kind, values) of every name a scope can take, in the order the text names them."""
    found: dict[tuple[int, str], list[str]] = {}
    for (listname, value), (pos, _) in st.positions.items():
        if listname in ("providers", "regions", "gpus", "instance_types"):
            found.setdefault((pos, listname), []).append(value)
    for pos, value in st.pricing_at:
        found.setdefault((pos, "pricing"), []).append(value)
    return sorted((pos, kind, values) for (pos, kind), values in found.items())


def find_exclusions(st: State) -> None:
    """Move every name inside an exclusion's scope from the wanted lists to `st.excluded`."""
    pattern, kind_of = _pattern()
    events: list[tuple[int, int, str, list[str]]] = [
        (m.start(), 0, kind_of[_fold(m.group())], []) for m in pattern.finditer(st.low)
    ]
    events += [(pos, 1, "name:" + kind, values) for pos, kind, values in _mentions(st)]
    ruled_out: list[tuple[int, str, list[str]]] = []
    active, taken = False, 0
    clause: list[tuple[int, str, list[str]]] = []
    for pos, _, kind, values in sorted(events):
        if kind == "exclude":
            active, taken = True, 0
        elif kind == "scope_end":
            active, clause = False, []
        elif kind == "restart" and taken:
            active = False
        elif kind == "after":
            if not active and clause:
                ruled_out.append(clause[-1])  # "aws以外的H100"
            active = False
        elif kind.startswith("name:"):
            mention = (pos, kind[5:], values)
            clause.append(mention)
            if active:
                ruled_out.append(mention)
                taken += 1
    for pos, kind, values in ruled_out:
        _rule_out(st, pos, kind, values)


def _rule_out(st: State, pos: int, kind: str, values: list[str]) -> None:
    if kind == "instance_types":
        st.excluded.setdefault("unapplied", []).append(st.text[pos:].split()[0] if st.text[pos:].split() else "")
        return
    listname = "pricings" if kind == "pricing" else kind
    wanted = getattr(st, listname)
    for value in values:
        while value in wanted:
            wanted.remove(value)
        st.positions.pop((listname, value), None)
        out = list(_RESERVED) if value == "reserved" else [value]
        bucket = st.excluded.setdefault(kind, [])
        bucket += [v for v in out if v not in bucket]
    if kind == "regions":
        st.mentions["regions"] = max(0, st.mentions.get("regions", 1) - 1)
        st.excluded.setdefault("region_names", []).append(st.said.pop(pos, "") or ", ".join(values))
    elif kind == "providers" or kind == "gpus":
        st.mentions[kind] = max(0, st.mentions.get(kind, 1) - 1)
