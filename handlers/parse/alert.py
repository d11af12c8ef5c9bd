"""An alert's words: "H100 spot below 2.50" / "H100竞价低于每卡每小时2美元时提醒我" / "H100 on runpod in stock".

`parse_alert(text, vocab)` is pure: it finds the threshold (a number after "below", "under", "at most", "<",
"低于", "跌破" ...; USD per GPU-hour unless a currency is named: `$`, `USD`, `美元` or `¥`, `CNY`, `元`, `人民币`) and
parses the rest with the question parser (`handlers.parse`), so an alert watches exactly what the same question
would rank: GPU, count, pricing model (on-demand unless one is named), providers, regions. vGPU slices count only
when the text says so ("vgpu", "fractional", "slice", "分片"). A text without a GPU or a threshold is refused
with a message that shows how to write one. `is_alert_text` tells a Chinese reminder sentence from a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from handlers.i18n import scoped
from handlers.language import has_chinese
from handlers.models import Query
from handlers.parse.budget import MAX_HOURLY  # one bound for an hourly price said, budget or alert
from knowledge.errors import UserError

__all__ = ["MAX_THRESHOLD", "MIN_THRESHOLD", "AlertParseError", "ParsedAlert", "is_alert_text", "parse_alert"]

phrase = scoped("alerts")

_CUR = r"(?P<pre>US\$|\$|¥|￥|USD|CNY|RMB)?\s*"
_NUM = r"(?P<num>\d+(?:[.,]\d+)?(?:[eE][+-]?\d+)?)"  # 2e1 is 20 (exponent read right, never dropped)
MIN_THRESHOLD, MAX_THRESHOLD = 0.0001, MAX_HOURLY  # per GPU-hour, in the alert's currency: outside is a typo
_UNIT = r"\s*(?P<post>美元|美金|人民币|元|块|usd|dollars?|cny|rmb|yuan)?"
_EN = re.compile(
    r"\b(?:below|under|less than|at most|drops? (?:below|under|to)|falls? (?:below|under|to)|"
    r"<=?|≤)\s*(?:(?:a|an|one)\s+)?" + _CUR + _NUM + _UNIT,
    re.IGNORECASE,
)
_ZH = re.compile(
    r"(?:低于|少于|小于|不高于|不超过|跌破|降到|降至|跌到|跌至)\s*"
    r"(?:每(?:张|块)?(?:卡|GPU|gpu)\s*每?\s*(?:小时|时)|每\s*GPU\s*小时|每卡时)?\s*" + _CUR + _NUM + _UNIT
)
_NOISE = re.compile(
    r"(?:时|的时候)?(?:请)?(?:提醒我|通知我|提醒|告诉我)|per\s+gpu[- ]?(?:hour|hr|h)\b|"
    r"/\s*gpu[- ]?h(?:our)?\b|\b(?:alert me|notify me|tell me)\b(?:\s+when)?|"
    r"每(?:张|块)?(?:卡|GPU)\s*每?\s*(?:小时|时)",
    re.IGNORECASE,
)
_STOCK = re.compile(r"\b(?:back\s+)?in[- ]stock\b|\bavailable\s+again\b|有货|补货|到货", re.IGNORECASE)
_VGPU = re.compile(r"vgpu|fractional|slice|partial gpu|分片|切片", re.IGNORECASE)
_CNY = {"¥", "￥", "CNY", "RMB", "人民币", "元", "块", "cny", "rmb", "yuan"}
_ZH_ALERT = re.compile(r"(?:提醒|通知).{0,6}$|^(?:提醒我|通知我)")


class AlertParseError(UserError, ValueError):
    """The text is not an alert that can be watched; the message says what is missing, with an example."""


@dataclass(frozen=True, slots=True)
class ParsedAlert:
    query: Query
    amount: float
    currency: str  # USD or CNY
    allow_vgpu: bool
    stock: str | None = None  # "in_stock": a stock alert ("H100 on runpod in stock"), no price threshold
    named_currency: bool = False  # the text names its currency ("$", "¥", "人民币"); else a preference may set it


def _is_cjk(text: str) -> bool:
    return has_chinese(text)


def is_alert_text(text: str) -> bool:
    """A Chinese sentence that asks to be reminded of a price ("…低于…时提醒我")."""
    return bool(_ZH_ALERT.search(text.strip())) and bool(_ZH.search(text))


def parse_alert(text: str, vocab) -> ParsedAlert:
    """The query and threshold in an alert text; `AlertParseError` when it has no GPU or no threshold."""
    from handlers.parse import parse

    lang = "zh" if _is_cjk(text) else "en"
    match = _ZH.search(text) or _EN.search(text)
    if match is None and (stock := _STOCK.search(text)):
        return _stock_alert(text, text[: stock.start()] + " " + text[stock.end() :], lang, vocab)
    if match is None:
        raise AlertParseError(phrase("no_threshold", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    amount = float(match.group("num").replace(",", "."))
    if not (MIN_THRESHOLD <= amount <= MAX_THRESHOLD):  # 1e309 is inf, 1e-320 tiny: refused, never misread
        raise AlertParseError(phrase("threshold_range", lang, text=text[:200], most=f"{MAX_THRESHOLD:,.0f}"))
    marks = {m for m in (match.group("pre"), match.group("post")) if m}
    currency = "CNY" if marks & _CNY or any(m.lower() in _CNY for m in marks) else "USD"
    rest = _NOISE.sub(" ", text[: match.start()] + " " + text[match.end() :])
    query = parse(rest, vocab).model_copy(update={"text": text, "language": lang})
    if not query.gpus:
        raise AlertParseError(phrase("no_gpu", lang, text=text[:200]) + "\n" + phrase("usage", lang))
    if len(query.gpus) > 1:
        raise AlertParseError(phrase("several_gpus", lang, gpus=", ".join(query.gpus)))
    if excluded := [*query.exclude_providers, *query.exclude_pricing, *query.exclude_region_names, *query.exclude_gpus]:
        # an alert watches what it names; "except aws" cannot be stored: said, never silently dropped
        raise AlertParseError(phrase("no_exclusions", lang, what=", ".join(excluded)) + "\n" + phrase("usage", lang))
    return ParsedAlert(query, amount, currency, bool(_VGPU.search(text)), named_currency=bool(marks))


def _stock_alert(text: str, rest: str, lang: str, vocab) -> ParsedAlert:
    from handlers.parse import parse

    query = parse(_NOISE.sub(" ", rest), vocab).model_copy(update={"text": text, "language": lang})
    if len(query.gpus) != 1:
        key = "no_gpu" if not query.gpus else "several_gpus"
        raise AlertParseError(phrase(key, lang, text=text[:200], gpus=", ".join(query.gpus)))
    return ParsedAlert(query, 0.0, "USD", bool(_VGPU.search(text)), "in_stock")
