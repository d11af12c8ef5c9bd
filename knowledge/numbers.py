"""Numbers read from files and settings: ASCII decimals only, finite, within what a price can be.

`float()` reads far more than a price: `1_5` (15), `１２.5` (full-width digits), `١٢` (Arabic-Indic digits),
`inf`, `nan`, `1e400`. A price file or a budget holds none of those; `decimal()` refuses them. `finite()` makes a
JSON document safe: a derived value that overflowed (or is NaN) becomes null, never `Infinity`/`NaN`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from knowledge.errors import UserError

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?", re.ASCII)
MAX_VALUE = 1e9  # no price, count or size in a catalog comes near this
_NOT_FINITE = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)


class NotFiniteError(UserError, ValueError):
    """An infinity, a NaN, or a number too large to be a price."""


def decimal(text: str) -> float:
    """`text` as a finite float if it is an ASCII decimal number (optionally with an exponent), else ValueError."""
    text = str(text).strip()
    if _NOT_FINITE.fullmatch(text):
        raise NotFiniteError(f"{text!r} is not a finite number")
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"{text!r} is not a decimal number")
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_VALUE:
        raise NotFiniteError(f"{text!r} is not a finite number of at most {MAX_VALUE:g}")
    return value


def finite(data: Any) -> Any:
    """`data` with every non-finite float replaced by None (dicts, lists and tuples, recursively)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [finite(value) for value in data]
    return data
