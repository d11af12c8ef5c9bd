"""Phrases (en/zh) of the recommend, compare, spec and tco handlers, and the rule hits they all return.

Their wording lives in the one table (`knowledge/data/phrases.json`, read by `handlers.i18n`).
"""

from __future__ import annotations

import json

from handlers.models import RuleHit


def rule_hits(fired: list) -> list[RuleHit]:
    """`RuleHit`s for fired rules (already explained in the question's language), each id once, in order."""
    seen: dict[str, RuleHit] = {}
    for item in fired:
        seen.setdefault(item.id, RuleHit(id=item.id, explain=item.explain))
    return list(seen.values())


def provider_name(kb: object, provider: str, lang: str) -> str:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return (row.get("name_zh") if lang == "zh" else row.get("name_en")) or provider


def provider_notes(kb: object, provider: str, topic: str) -> list[dict]:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return [n for n in json.loads(row.get("notes") or "[]") if n.get("topic") == topic]


def provider_costs(kb: object, provider: str) -> dict[str, dict]:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return {c["item"]: c for c in json.loads(row.get("costs") or "[]")}
