"""Suffixes catalogs add to accelerator names, read from `knowledge/data/name_suffixes.csv` (reviewed, one source
per row): offer words that do not change the GPU (`_BAREMETAL`, `_LOW_RAM`, `_HIGH_PERF`) and edition words that
say which edition of a family it is (`-WK` Workstation, a trailing `S` Server Edition of an RTX PRO 6000).

`strip` removes them from a name's words before the identity ladder compares the rest with family names;
`trailing` reads a one-letter suffix glued to the name (`RTXPRO6000S`) only when the name is not itself a family
(`L40S` is). Form-factor words (`PCIe`, `SXM5`, `NVL`) and memory words (`80GB`) stay with `identity.parse_name`.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from knowledge.facts.reference import Row, load_rows
from knowledge.paths import DATA_DIR


class Suffix(Row):
    words: str  # lower case, space separated ("low ram")
    position: Literal["word", "trailing"]
    kind: Literal["offer", "edition"]
    form_factor: str = ""
    families: str = ""  # "|"-separated families an edition suffix applies to (empty: any)
    meaning: str
    source: str


@cache
def suffixes() -> tuple[Suffix, ...]:
    return tuple(load_rows(Suffix, DATA_DIR / "name_suffixes.csv"))


@cache
def _word_suffixes() -> tuple[tuple[tuple[str, ...], Suffix], ...]:
    rows = [(tuple(s.words.split()), s) for s in suffixes() if s.position == "word"]
    return tuple(sorted(rows, key=lambda item: -len(item[0])))  # longest first: "server edition" before "server"


def strip(words: list[str]) -> tuple[list[str], Suffix | None]:
    """(the words without suffix words after the first one, the edition suffix found if any)."""
    kept: list[str] = []
    edition: Suffix | None = None
    i = 0
    while i < len(words):
        hit = next(((seq, s) for seq, s in _word_suffixes() if kept and tuple(words[i : i + len(seq)]) == seq), None)
        if hit is None:
            kept.append(words[i])
            i += 1
            continue
        seq, suffix = hit
        edition = edition or (suffix if suffix.kind == "edition" else None)
        i += len(seq)
    return kept, edition


def applies(suffix: Suffix | None, family: str) -> bool:
    return suffix is not None and (not suffix.families or family in suffix.families.split("|"))


def trailing(key: str, keys: dict[str, str]) -> tuple[str, Suffix] | None:
    """(family, suffix) for a name key that is no family but is one with a glued one-letter suffix removed."""
    if key in keys:
        return None
    for suffix in suffixes():
        if suffix.position == "trailing" and key.endswith(suffix.words) and len(key) > len(suffix.words) + 1:
            family = keys.get(key[: -len(suffix.words)])
            if family and applies(suffix, family):
                return family, suffix
    return None
