"""The question parser's lexicon: reviewed data in `data/lexicon/*.json`, read with stdlib `json`, once, on first use.

- `intents.json`: phrases that cue an intent (`phrases()` gives them as the field "cue"), other cues, non-cues;
- `fields.json`: phrases that set a field of the query (pricing, workload, priority, currency, topic);
- `words.json`: words never taken for a name (`not_names()`), stopwords (`stopwords()`);
- `numbers.json`: English number words, Chinese digits and units (`numbers()`).

Each file says what it holds under "about". A file is checked against its sections when read (`load`): a missing
or unknown section is an error, so no data sits there unread. The phrases are only read when a vocabulary is built
(`knowledge.kb.vocabulary`); a question answered with a cached vocabulary reads only the small word and number files.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from knowledge.errors import GpubotError

LEXICON_DIR = Path(__file__).resolve().parent / "data" / "lexicon"
# file -> its sections (besides "about"), in the order they are read
FILES: dict[str, tuple[str, ...]] = {
    "intents.json": ("intents", "cues", "not_cues"),
    "fields.json": ("pricing", "workload", "priority", "currency", "topic"),
    "words.json": ("not_names", "stopwords"),
    "numbers.json": ("en", "zh_digits", "zh_units"),
}
NOT_A_CUE = "none"  # the field of a phrase that only keeps a shorter cue from matching ("比如" is not "比")


class LexiconError(GpubotError, ValueError):
    """A lexicon file is missing, not JSON, or does not have its sections."""


@cache
def load(name: str) -> dict[str, Any]:
    """The sections of one lexicon file (checked: exactly the sections `FILES` names, plus "about")."""
    path = LEXICON_DIR / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LexiconError(f"lexicon file {path} is unreadable: {exc}") from exc
    expected = {"about", *FILES[name]}
    if not isinstance(data, dict) or set(data) != expected:
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise LexiconError(f"lexicon file {path} has sections {found}, expected {sorted(expected)}")
    return data


def _phrases_of(entry: dict[str, list[str]]) -> tuple[str, ...]:
    return (*entry.get("en", ()), *entry.get("zh", ()))


def phrases() -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(field, value, phrases) for every keyword: intent cues first ("cue"), then the query fields.

    Order matters only within a field (the first workload, priority or currency named wins): the files keep it."""
    cues = load("intents.json")
    table: list[tuple[str, str, tuple[str, ...]]] = []
    for section in ("intents", "cues"):
        table += [("cue", value, _phrases_of(entry)) for value, entry in cues[section].items()]
    table.append((NOT_A_CUE, NOT_A_CUE, _phrases_of(cues["not_cues"])))
    fields = load("fields.json")
    for field in FILES["fields.json"]:
        table += [(field, value, _phrases_of(entry)) for value, entry in fields[field].items()]
    return tuple(table)


def not_names() -> frozenset[str]:
    return frozenset(load("words.json")["not_names"])


def stopwords() -> frozenset[str]:
    return frozenset(load("words.json")["stopwords"])


def numbers() -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """(English number words, Chinese digits, Chinese units) -> their values."""
    data = load("numbers.json")
    return data["en"], data["zh_digits"], data["zh_units"]
