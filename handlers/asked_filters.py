"""The filters a question applied, said back in the answer's first line: "with ≥80 GB, in Europe, on aws"."""

from __future__ import annotations

from handlers.brief import budget_label, provider_label
from handlers.i18n import t
from handlers.models import Query

MAX_REGION_IDS = 3  # region ids said back by name; more come from a group or country, said as asked


def filters_phrase(query: Query, lang: str, *, budget: bool = True) -> str:
    """ " with ≥80 GB, in Europe, on aws, within $3.00/GPU-h" (显存≥80 GB，欧洲，…), or "" with no filter.
    Memory is said only beside a named GPU (alone, it is already the "what" of the title)."""
    parts = []
    if query.min_gpu_memory_gb and (query.gpus or query.instance_types):
        parts.append(t("filters.memory", lang, gb=query.min_gpu_memory_gb))
    places = query.region_names or (query.regions if len(query.regions) <= MAX_REGION_IDS else [])
    if places:
        where = t("word.or", lang).join(places)
        said_with_in = lang == "en" and where.lower().startswith(("in ", "near "))  # "in the US" as said
        parts.append(where if said_with_in else t("filters.in", lang, where=where))
    if query.providers:
        names = [provider_label(p, lang) for p in query.providers]
        parts.append(t("filters.on", lang, providers=t("word.or", lang).join(names)))
    if budget and query.budget and query.budget.per != "total":
        parts.append(t("filters.within", lang, cap=budget_label(query.budget, lang)))
    return t("filters.joined", lang, parts=t("filters.sep", lang).join(parts)) if parts else ""
