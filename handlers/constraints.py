"""What a question rules out, honoured by every intent: a narrowed knowledge base before the handler, one check after.

`narrowed(kb, query)` is the knowledge base as the question sees it: its `offers()` leave out the providers,
pricing models, regions and GPUs the question excluded (`Query.exclude_*`, read by `handlers/parse/polarity.py`),
so no handler needs to know about exclusions. `annotate(answer, kb)` then drops anything excluded that a handler
found another way (a raw SQL read, a seed-article figure) and states the exclusions as line two of the answer
("Excluding: GCP; spot"), with what could not be applied said plainly.
"""

from __future__ import annotations

from typing import Any

from handlers.common import issue_text
from handlers.i18n import t
from handlers.models import Answer, Offer, Query
from knowledge.kb.reader import GpuRef


def excludes(query: Query) -> bool:
    return bool(query.exclude_providers or query.exclude_pricing or query.exclude_regions or query.exclude_gpus)


def _get(item: dict | Offer, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def kept(item: dict | Offer, query: Query) -> bool:
    """Whether an offer (a row or an `Offer`) survives the question's exclusions."""
    if _get(item, "provider") in query.exclude_providers or _get(item, "pricing") in query.exclude_pricing:
        return False
    if _get(item, "region") in query.exclude_regions:
        return False
    for label in query.exclude_gpus:
        ref = GpuRef.parse(label)
        memory = _get(item, "gpu_memory_gb")
        if _get(item, "gpu") == ref.family and (not ref.memory_gb or (memory and abs(memory - ref.memory_gb) < 0.6)):
            return False
    return True


def kept_sql(query: Query) -> tuple[list[str], list]:
    """`kept` as SQL conditions over the offers table, with their params."""
    where: list[str] = []
    params: list[Any] = []
    for column, values in (("provider", query.exclude_providers), ("pricing", query.exclude_pricing),
                           ("region", query.exclude_regions)):  # fmt: skip
        if values:
            where.append(f"{column} NOT IN ({','.join('?' * len(values))})")
            params += values
    for ref in map(GpuRef.parse, query.exclude_gpus):
        if ref.memory_gb:  # a row without a memory size is kept, as by `kept`
            where.append("NOT (gpu = ? AND COALESCE(gpu_memory_gb AND ABS(gpu_memory_gb - ?) < 0.6, 0))")
            params += [ref.family, ref.memory_gb]
        else:
            where.append("gpu != ?")
            params.append(ref.family)
    return where, params


class Narrowed:
    """A knowledge base whose offers leave out what `query` excluded; everything else is the knowledge base's own."""

    def __init__(self, kb: Any, query: Query):
        self._kb = kb
        self._query = query

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kb, name)

    def offers(self, *, limit: int | None = None, **filters: Any) -> list[dict]:
        rows = [row for row in self._kb.offers(**filters) if kept(row, self._query)]
        return rows[:limit] if limit else rows

    def offer_where(self, **filters: Any) -> tuple[list[str], list]:
        """The knowledge base's SQL conditions for `filters`, and the question's exclusions (`kept_sql`)."""
        where, params = self._kb.offer_where(**filters)
        more, more_params = kept_sql(self._query)
        return [*where, *more], [*params, *more_params]


def narrowed(kb: Any, query: Query) -> Any:
    return Narrowed(kb, query) if excludes(query) else kb


def annotate(answer: Answer, kb: Any) -> Answer:
    """The answer without anything excluded, and line two saying what was excluded (and what could not be)."""
    query = answer.query
    if not excludes(query) and not query.unapplied:
        return answer
    update: dict[str, Any] = {
        "offers": [o for o in answer.offers if kept(o, query)],
        "context": [o for o in answer.context if kept(o, query)],
        "recommendations": [r for r in answer.recommendations if r.offer is None or kept(r.offer, query)],
    }
    said = list(answer.extra.get("settings_notes") or [])
    line = excluding_line(query, kb)
    if line and line not in said:
        said.insert(0, line)
    if query.unapplied:
        said.append(t("constraints.unapplied", query.language, what=", ".join(query.unapplied)))
    update["extra"] = {**answer.extra, "settings_notes": said}
    return answer.model_copy(update=update)


def excluding_line(query: Query, kb: Any) -> str:
    """ "Excluding: GCP; spot; China" (已排除：…), or "" when nothing was excluded."""
    lang = query.language
    names = getattr(kb, "providers", {}) or {}

    def provider(pid: str) -> str:
        row = names.get(pid) or {}
        return (row.get("name_zh") if lang == "zh" else row.get("name_en")) or pid

    parts = [
        ", ".join(map(provider, query.exclude_providers)),
        ", ".join(t(f"pricing.{p}", lang) for p in query.exclude_pricing),
        ", ".join(query.exclude_region_names or query.exclude_regions),
        ", ".join(query.exclude_gpus),
    ]
    parts = [p for p in parts if p]
    return t("constraints.excluding", lang, what="; ".join(parts)) if parts else ""


_OFFER_INTENTS = frozenset({"cheapest", "price", "compare", "tco", "recommend", "work", "history"})


def unknown_names(query: Query, kb: Any) -> Answer | None:
    """The answer to a question about a cloud, region or GPU the knowledge base does not know, or with a number too
    large to use: it is named back with what is known and did-you-mean, never answered with offers from elsewhere
    or a default in its place. None when nothing is unknown."""
    lang = query.language
    if query.intent in _OFFER_INTENTS | {"spec"} and not (query.instance_types or query.gpus):
        for issue in query.issues:  # "price of g5xlarge": the instance type said back with did-you-mean
            if issue.kind == "instance_type":
                return Answer(query=query, title=issue_text(issue, lang), suggestions=issue.candidates)
    if query.intent not in _OFFER_INTENTS:
        return None
    if query.out_of_range:  # "for 3000 years", "5000x H100": refused, never priced with a default instead
        big = query.out_of_range[0]
        said = big.text if len(big.text) <= 40 else big.text[:37] + "…"
        why = t(f"numbers.max_{big.kind}", lang)
        return Answer(query=query, title=t("numbers.out_of_range", lang, what=said, why=why))
    for issue in query.issues:
        if issue.status != "unknown":
            continue
        hints = {"suggestions": issue.candidates} if issue.candidates else {}  # did-you-mean, shown once
        if issue.kind == "provider" and not query.providers:
            clouds = sorted(p for p, row in (getattr(kb, "providers", {}) or {}).items() if row.get("has_catalog"))
            title = t("names.no_provider", lang, name=issue.text, n=len(clouds), clouds=", ".join(clouds))
        elif issue.kind == "region" and not query.regions:
            title = t("names.no_region", lang, name=issue.text)
        elif issue.kind == "gpu" and not (query.gpus or query.instance_types or query.min_gpu_memory_gb):
            title = t("names.unknown", lang, kind=t("kind.gpu", lang), text=issue.text)
        else:
            continue
        return Answer(query=query, title=title, **hints)
    return None
