"""checklist PLAN: a procurement checklist for a plan, from the pitfalls that apply, with the figures that matter."""

from __future__ import annotations

import json

from handlers import cheapest
from handlers.common import money, scan_text
from handlers.i18n import scoped
from handlers.i18n_rules import provider_name
from handlers.models import Answer, Query
from handlers.pitfalls import to_model
from knowledge.facts import pitfalls as store
from knowledge.kb.reader import KB

ALWAYS_TOPICS = {"quota", "driver", "egress", "billing"}


_p = scoped("checklist")


def handle(query: Query, kb: KB) -> Answer:
    """checklist PLAN: what to verify before buying, e.g. `checklist 8x A100 spot on aws`"""
    lang = query.language
    plan = cheapest.handle(query.model_copy(update={"top_n": 1}), kb) if query.gpus else None
    best = plan.offers[0] if plan and plan.offers else None
    lines: list[str] = []
    providers = list(dict.fromkeys([*query.providers, *([best.provider] if best else [])]))
    found = store.search(
        kb,
        " ".join(filter(None, [scan_text(query), query.topic])),
        gpus=query.gpus,
        providers=providers,
        pricing=query.pricing,
        topics=ALWAYS_TOPICS,
        limit=10,
    )
    for scored in found:
        text = scored.row["checklist_zh" if lang == "zh" else "checklist_en"]
        lines.append(f"☐ {text} [{scored.row['id']}]")
    lines += _figures(kb, query, best, providers, lang)
    return Answer(
        query=query,
        title=_p("title", lang, plan=f": {' '.join(filter(None, [_plan_text(query)]))}" if _plan_text(query) else ""),
        offers=[best] if best else [],
        lines=lines,
        extra={"checklist": [to_model(s.row, lang).model_dump() | {"item": s.row[f"checklist_{lang}"]} for s in found]},
        notes=plan.notes if plan else [],
        sources=plan.sources if plan else [],
    )


def _plan_text(query: Query) -> str:
    parts = []
    if query.gpu_count:
        parts.append(f"{query.gpu_count:g}x")
    parts += query.gpus
    if query.pricing:
        parts.append(query.pricing)
    parts += query.providers
    return " ".join(parts)


def _figures(kb: KB, query: Query, best, providers: list[str], lang: str) -> list[str]:
    """The figures that matter for this plan: interruption risk, break-even, hidden-cost prices."""
    lines = []
    if best and best.pricing == "spot":
        risk = kb.spot_risk(best.instance_type, best.region)
        if risk:
            r = risk[0]
            lines.append(
                _p(
                    "spot_risk",
                    lang,
                    itype=best.instance_type,
                    region=best.region,
                    bucket=r["bucket"],
                    source=r["source"],
                    as_of=r["as_of"],
                )
            )
        else:  # no figure where the cloud publishes none (issue 26)
            cloud = provider_name(kb, best.provider, lang)
            lines.append(_p("spot_risk_unknown", lang, itype=best.instance_type, region=best.region, cloud=cloud))
    if best and best.provider == "aws":
        terms = {t["term"]: t["price_per_hour"] for t in kb.price_terms(best.instance_type, best.region)}
        reserved, on_demand = terms.get("yrTerm1Standard.noUpfront"), terms.get("ondemand")
        if reserved and on_demand:
            lines.append(
                _p(
                    "break_even",
                    lang,
                    itype=best.instance_type,
                    region=best.region,
                    pct=100 * reserved / on_demand,
                    reserved=money(reserved),
                    on_demand=money(on_demand),
                )
            )
    for pid in providers:
        row = kb.providers.get(pid) or {}
        for cost in json.loads(row.get("costs") or "[]"):
            unit = {"per_gb": "/GB", "per_gb_month": "/GB-month", "per_hour": "/h"}[cost["unit"]]
            lines.append(
                _p(
                    "cost",
                    lang,
                    provider=row.get("name_zh" if lang == "zh" else "name_en") or pid,
                    item=cost["item"],
                    value=f"{money(cost['value'], cost['currency'])}{unit}",
                    status=cost["status"],
                    source=cost["source"],
                )
            )
    return lines
