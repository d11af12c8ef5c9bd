"""What makes an answer short and usable: distinct options, the budget cap, pricing-page links, the one caveat.

Handlers call `distinct` (one line per provider + instance type at its best region, "also in N regions") and
`apply_budget` (a cap said in the question filters the offers, and the answer says how many it removed). Renderers
call `view` to pick the one caveat that changes the decision and the pricing pages of the offers shown; everything
else (pitfalls about other GPUs or clouds, rules, `extra["details"]`) is shown only on request (`--verbose`, the
Slack "Why" button) and is always in the JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from handlers.common import money
from handlers.i18n import t
from handlers.models import Answer, Budget, Offer, Pitfall, Query


def _get(item: dict | Offer, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)


def asks_regions(query: Query) -> bool:
    """A question about regions (or about one instance type) lists every region, not one line per instance type."""
    return "regions_asked" in query.flags or len(query.instance_types) == 1


def distinct(items: Sequence[dict | Offer]) -> list[tuple[dict | Offer, int]]:
    """(best item, how many other regions offer it) per provider + instance type, in the items' (price) order."""
    first: dict[tuple[str, str], int] = {}
    regions: dict[tuple[str, str], set[str]] = {}
    out: list[list] = []
    for item in items:
        key = (_get(item, "provider"), _get(item, "instance_type"))
        regions.setdefault(key, set()).add(_get(item, "region"))
        if key not in first:
            first[key] = len(out)
            out.append([item, key])
    return [(item, len(regions[key]) - 1) for item, key in out]


# --- budgets ------------------------------------------------------------------------------------------------------


def budget_label(budget: Budget, lang: str) -> str:
    """ "$2.00/GPU-h", "¥15.00/GPU-h", "$10.00/h", "$5,000.00" """
    amount = money(budget.amount, budget.currency)
    unit = {"gpu_hour": t("unit.per_gpu_hour", lang), "instance_hour": t("unit.per_hour", lang)}.get(budget.per, "")
    return amount + unit


def budget_cap(query: Query, fx: Mapping[str, Any]) -> tuple[str, float] | None:
    """(the offers' USD column, the cap) of the question's hourly budget; None without one (a total budget filters
    nothing here: TCO and recommend use it). `Budget.usd(kb.fx())` is the one conversion."""
    budget = query.budget
    if budget is None or budget.per == "total":
        return None
    key = "price_per_gpu_hour_usd" if budget.per == "gpu_hour" else "price_per_hour_usd"
    return key, budget.usd(fx) + 1e-9


def budget_note(query: Query, removed: int, total: int) -> str:
    """The note saying the question's cap and how many of `total` offers it removed."""
    assert query.budget is not None
    return t("brief.budget", query.language, cap=budget_label(query.budget, query.language), removed=removed,
             total=total)  # fmt: skip


def apply_budget(rows: list, query: Query, fx: Mapping[str, Any]) -> tuple[list, str | None]:
    """Rows (offers, cheapest first) within the question's hourly cap, and the note saying the cap and how many
    offers it removed (`budget_cap`)."""
    cap = budget_cap(query, fx)
    if cap is None:
        return rows, None
    kept = [r for r in rows if _get(r, cap[0]) <= cap[1]]
    return kept, budget_note(query, len(rows) - len(kept), len(rows))


BRIEF_RECOMMENDATIONS = 3  # a short answer's picks (--verbose / "Why": all of them)
PER_PRICING_ROWS = 2  # a short price answer: the cheapest regions of each pricing model


def brief_offers(answer: Answer) -> list[Offer]:
    """The offers a short answer lists: for an instance type's prices (every region, every pricing model), the
    cheapest regions of each pricing model; otherwise all of them (handlers already keep them short)."""
    if answer.query.intent != "price" or not answer.query.instance_types:
        return list(answer.offers)
    kept: dict[tuple[str, str], int] = {}
    out = []
    for item in answer.offers:  # cheapest first within (instance type, pricing)
        key = (item.instance_type, item.pricing)
        kept[key] = kept.get(key, 0) + 1
        if kept[key] <= PER_PRICING_ROWS:
            out.append(item)
    return out


# --- the view renderers show --------------------------------------------------------------------------------------


def _families(names: Iterable[str]) -> set[str]:
    return {n.split()[0].upper() for n in names if n}


def concerns(pitfall: Pitfall, offers: Sequence[Offer], query: Query) -> bool:
    """A pitfall is about this answer when each dimension it is tagged with (GPUs, providers, pricing models)
    meets the GPUs, clouds and pricing models of the offers shown (or asked for), and a title that names GPUs names
    one of the answer's."""
    tags = pitfall.tags or {}
    gpus = _families([*query.gpus, *(o.gpu for o in offers)])
    providers = set(query.providers) | {o.provider for o in offers}
    pricings = {query.pricing} | {o.pricing for o in offers}
    checks = (
        (_families(tags.get("gpus", ())), gpus),
        (set(tags.get("providers", ())), providers),
        (set(tags.get("pricing", ())), pricings - {None}),
    )
    if not any(tagged for tagged, _ in checks):
        return False  # an untagged pitfall is general advice: behind the button
    named = {
        g
        for g in _families(tags.get("gpus", ()))
        if re.search(rf"(?<![A-Za-z0-9]){re.escape(g)}(?![A-Za-z0-9])", pitfall.title.upper())
    }
    if named and not named & gpus:
        return False  # its title is about other GPUs ("The A100 has no FP8" on an H100 answer)
    return all(not tagged or tagged & have for tagged, have in checks)


def shown_offers(answer: Answer) -> list[Offer]:
    return [*answer.offers, *(r.offer for r in answer.recommendations if r.offer)]


def caveat(answer: Answer) -> Pitfall | None:
    """The one pitfall that changes the decision: the most severe one about the offers shown (none for a pitfalls
    question: its pitfalls are the answer's lines)."""
    if answer.query.intent == "pitfalls":
        return None
    offers = shown_offers(answer)
    relevant = [p for p in answer.pitfalls if concerns(p, offers, answer.query)]
    order = {"high": 0, "medium": 1, "low": 2}
    relevant.sort(key=lambda p: order.get(p.severity, 3))
    return relevant[0] if relevant else None


@cache
def _zh_names() -> dict[str, str]:
    import yaml

    from knowledge.facts.pricing_pages import PRICING_PAGES_CSV

    data = yaml.safe_load((PRICING_PAGES_CSV.parent / "providers.yaml").read_text(encoding="utf-8")) or {}
    return {p["id"]: p["name_zh"] for p in data.get("providers", []) if p.get("name_zh")}


def provider_label(provider: str, lang: str) -> str:
    """How an answer names a provider: its id in English ("aws"), its Chinese name in Chinese ("亚马逊云科技")."""
    return _zh_names().get(provider, provider) if lang == "zh" else provider


def severity_label(severity: str, lang: str) -> str:
    return t(f"severity.{severity}", lang) if severity in ("high", "medium", "low") else severity


def pricing_pages(offers: Iterable[Offer]) -> list[dict[str, str]]:
    """The pricing page of each provider among the offers, in order of first appearance."""
    from knowledge.facts.pricing_pages import pricing_page

    seen: dict[str, dict[str, str]] = {}
    for item in offers:
        page = pricing_page(item.provider)
        if page and item.provider not in seen:
            seen[item.provider] = page
    return list(seen.values())


def hidden_count(answer: Answer, shown: Pitfall | None) -> int:
    """How many pitfalls, rules and details the short answer leaves behind the button."""
    details = answer.extra.get("details") or []
    more_picks = max(0, len(answer.recommendations) - BRIEF_RECOMMENDATIONS)
    pitfalls = 0 if answer.query.intent == "pitfalls" else len([p for p in answer.pitfalls if p is not shown])
    return pitfalls + len(answer.rules) + len(details) + more_picks


def view(answer: Answer) -> dict[str, Any]:
    """What the short answer adds beside its own fields: the caveat, the pricing pages and what is hidden."""
    shown = caveat(answer)
    return {"caveat": shown, "pages": pricing_pages(shown_offers(answer)), "hidden": hidden_count(answer, shown)}
