"""Reply phrases in English and Chinese: the one table (`knowledge/data/phrases.json`), read once at import.

A question gets its answer in the language it was asked in (`handlers.language`). Keys are `<area>.<phrase>`;
an area's module takes its own lookup with `scoped("area")`. A phrase missing in Chinese falls back to English.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache

from knowledge.paths import DATA_DIR

PHRASES_FILE = DATA_DIR / "phrases.json"


@cache
def phrases() -> dict[str, dict[str, str]]:
    """key -> {"en": template, "zh": template}"""
    return json.loads(PHRASES_FILE.read_text(encoding="utf-8"))["phrases"]


MESSAGES: dict[str, dict[str, str]] = phrases()  # ~0.5 ms to read


def t(key: str, lang: str = "en", /, **values: object) -> str:
    """The phrase `key` in `lang` (English when missing), formatted with `values`."""
    table = MESSAGES[key]
    return (table.get(lang) or table["en"]).format(**values)


def scoped(area: str) -> Callable[..., str]:
    """`phrase(key, lang="en", **values)` for the phrases of one area (`scoped("history")("title", "zh")`)."""
    prefix = f"{area}."

    def phrase(key: str, lang: str = "en", /, **values: object) -> str:
        return t(prefix + key, lang, **values)

    phrase.__doc__ = f"A `{area}` phrase in `lang` (English when missing), formatted with `values`."
    return phrase
