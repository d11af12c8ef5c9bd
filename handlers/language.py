"""The one language detector: a question is answered in Chinese when it holds a Chinese character, else English."""

from __future__ import annotations

import re

# CJK Unified Ideographs, Extension A and the compatibility block: every Chinese character a question may hold.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SCAN_CHARS = 2000  # a question longer than this is refused anyway; the scan stays bounded on hostile input


def has_chinese(text: str | None) -> bool:
    return bool(_CJK.search((text or "")[:SCAN_CHARS]))


def language_of(text: str | None) -> str:
    """ "zh" or "en": the language an answer to `text` is written in."""
    return "zh" if has_chinese(text) else "en"
