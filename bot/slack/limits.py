"""Slack's limits, enforced in one place: `fit_blocks` keeps a message (50 blocks) or a view (100 blocks) within
them (3000 characters per section text, 150 per header, one table of <= 100 rows x 20 cells, 10 context elements,
25 buttons per actions block, unique action ids <= 255, button text <= 75, button value <= 2000); anything longer
degrades to "… N more" instead of failing."""

from __future__ import annotations

from bot.slack.escape import cut, slack_plain
from bot.slack.phrases import phrase

__all__ = ["LIMITS", "fit_blocks"]

LIMITS = {
    "blocks_message": 50,
    "blocks_view": 100,
    "section_text": 3000,
    "header_text": 150,
    "context_elements": 10,
    "context_text": 3000,
    "actions_elements": 25,
    "action_id": 255,
    "button_text": 75,
    "button_value": 2000,
    "table_rows": 100,
    "table_cells": 20,
    "fallback_text": 3500,
}


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _cell(text: str) -> dict:
    return {"type": "raw_text", "text": slack_plain(text) or "—"}


def fit_blocks(blocks: list[dict], *, surface: str = "message", lang: str = "en") -> list[dict]:
    """Blocks within Slack's limits: long texts cut, extra rows/elements folded into "… N more"."""
    out: list[dict] = []
    tables = 0
    for block in blocks:
        kind = block.get("type")
        if kind == "table":
            tables += 1
            if tables > 1:
                continue
            block = _fit_table(block, lang)
        elif kind == "section":
            block = _fit_text(block, "text", LIMITS["section_text"])
        elif kind == "header":
            block = _fit_text(block, "text", LIMITS["header_text"])
        elif kind == "context":
            block = _fit_context(block)
        elif kind == "actions":
            block = _fit_actions(block)
            if not block["elements"]:
                continue
        out.append(block)
    out = _unique_action_ids(out)
    limit = LIMITS["blocks_view" if surface == "view" else "blocks_message"]
    if len(out) <= limit:
        return out
    tail: list[dict] = []  # sources and buttons stay at the end
    while out and out[-1].get("type") in ("context", "actions") and len(tail) < 2:
        tail.insert(0, out.pop())
    keep = limit - len(tail) - 1
    dropped = len(out) - keep
    return [*out[:keep], _section(phrase("more_sections", lang, n=dropped)), *tail]


def _fit_text(block: dict, key: str, limit: int) -> dict:
    text = block.get(key) or {}
    if len(text.get("text", "")) <= limit:
        return block
    return {**block, key: {**text, "text": cut(text["text"], limit)}}


def _fit_table(block: dict, lang: str) -> dict:
    rows = [row[: LIMITS["table_cells"]] for row in block.get("rows", [])]
    if len(rows) > LIMITS["table_rows"]:
        hidden = len(rows) - LIMITS["table_rows"] + 1
        width = len(rows[0])
        rows = [
            *rows[: LIMITS["table_rows"] - 1],
            [_cell("…"), _cell(phrase("more", lang, n=hidden)), *[_cell("") for _ in range(width - 2)]],
        ]
    fitted = {**block, "rows": rows}
    if "column_settings" in block:
        fitted["column_settings"] = block["column_settings"][: LIMITS["table_cells"]]
    return fitted


def _fit_context(block: dict) -> dict:
    elements = [
        {**e, "text": cut(e["text"], LIMITS["context_text"])} if "text" in e else e for e in block.get("elements", [])
    ]
    limit = LIMITS["context_elements"]
    if len(elements) > limit:  # fold the rest into the last element
        rest = [e.get("text", "") for e in elements[limit - 1 :]]
        merged = " · ".join(rest)
        elements = [*elements[: limit - 1], {"type": "mrkdwn", "text": cut(merged, LIMITS["context_text"])}]
    return {**block, "elements": elements}


def _fit_actions(block: dict) -> dict:
    elements = []
    for element in block.get("elements", []):
        if element.get("type") == "button":
            if len(element.get("value", "")) > LIMITS["button_value"]:
                continue
            element = {
                **element,
                "text": {**element["text"], "text": cut(element["text"]["text"], LIMITS["button_text"])},
            }
        elements.append(element)
    return {**block, "elements": elements[: LIMITS["actions_elements"]]}


def _unique_action_ids(blocks: list[dict]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for block in blocks:
        if block.get("type") == "actions":
            elements = []
            for element in block["elements"]:
                aid = element.get("action_id")
                if aid is not None:
                    aid = aid[: LIMITS["action_id"]]
                    base, n = aid, 1
                    while aid in seen:
                        suffix = f"_{n}"
                        aid, n = base[: LIMITS["action_id"] - len(suffix)] + suffix, n + 1
                    seen.add(aid)
                    element = {**element, "action_id": aid}
                elements.append(element)
            block = {**block, "elements": elements}
        out.append(block)
    return out
