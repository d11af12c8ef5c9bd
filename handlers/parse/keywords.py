"""The knowledge base's keywords a question says, and whether it is a given question word for word: the errata
search's reading of the words (`handlers.spec.match_errata` passes the keywords; the words stay read here).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable


def keywords_said(text: str, keywords: Iterable[str]) -> set[str]:
    """The `keywords` that occur in the question (whole words; ASCII tokens may be split by spaces or hyphens)."""
    low = text.lower()
    return {k for k in keywords if _found(k, low)}


def same_question(text: str, *questions: str) -> bool:
    """The question is one of `questions`, ignoring case, width and the closing punctuation."""
    return _plain(text) in {_plain(q) for q in questions if q}


@functools.lru_cache(maxsize=8192)
def _tokens(word: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z]+|[0-9]+|[^a-z0-9\s]", word.lower()))


@functools.lru_cache(maxsize=8192)
def _pattern(word: str) -> re.Pattern:
    """A keyword as a pattern: ASCII tokens may be split by spaces or hyphens ("80GB" = "80 GB"), whole words only."""
    low = word.lower()
    if not low.isascii():
        return re.compile(re.escape(low))
    tokens = _tokens(low)
    return re.compile(r"(?<![a-z0-9])" + r"[\s-]*".join(re.escape(tok) for tok in tokens) + r"(?![a-z0-9])")


def _found(word: str, text: str) -> bool:
    """Whether a keyword occurs in the (lower-cased) text; a cheap substring test first, the pattern only then."""
    low = word.lower()
    if not low.isascii():
        return low in text
    return all(token in text for token in _tokens(low)) and bool(_pattern(low).search(text))


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().strip(" ?!.。")
