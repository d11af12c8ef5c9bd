"""pitfalls [anything]: what bites before you sign, ranked by relevance, each with its source."""

from __future__ import annotations

from collections.abc import Sequence

from handlers.common import name_notes, scan_text
from handlers.i18n import scoped
from handlers.models import Answer, Offer, Pitfall, Query
from knowledge.facts import pitfalls as store
from knowledge.kb.reader import KB

DEFAULT_TOP = 5
ALL_NAMED = 50  # a named cloud, GPU or pricing model: all of its pitfalls
SEVERITY = {"high": 0, "medium": 1, "low": 2}
SUGGESTED_TOPICS = {
    "en": ["spot", "reserved", "egress", "vGPU", "driver", "Kubernetes", "compliance", "quota"],
    "zh": ["竞价实例", "预留实例", "出网流量", "vGPU", "驱动", "Kubernetes", "合规", "配额"],
}


_p = scoped("pitfalls")


def to_model(row: dict, lang: str) -> Pitfall:
    return Pitfall(
        id=row["id"],
        title=row["title_zh"] if lang == "zh" else row["title_en"],
        body=row["body_zh"] if lang == "zh" else row["body_en"],
        severity=row["severity"],
        tags={key: list(value) for key, value in row["tags"].items() if key != "all_clouds"},
        all_clouds=bool(row["tags"].get("all_clouds")),
        source=row["source"],
    )


def relevant(kb: KB, query: Query, offers: Sequence[Offer] = (), limit: int = 3) -> list[Pitfall]:
    """The pitfalls that matter most for a question and the offers it recommends."""
    providers = list(dict.fromkeys([*query.providers, *(o.provider for o in offers)]))
    gpus = list(dict.fromkeys([*query.gpus, *(o.gpu for o in offers)]))
    pricing = query.pricing or (offers[0].pricing if offers else None)
    text = " ".join(filter(None, [scan_text(query), query.topic, *(["vgpu"] if any(o.vgpu for o in offers) else [])]))
    found = store.search(kb, text, gpus=gpus, providers=providers, pricing=pricing, limit=limit)
    return [to_model(s.row, query.language) for s in found]


def _about(row: dict, query: Query) -> bool:
    """A pitfall tagged with a cloud, GPU family or pricing model the question names."""
    tags = row.get("tags") or {}
    families = {g.split()[0].upper() for g in query.gpus}
    pricing = (query.pricing or "").split("_")[0]  # "reserved_1y" is tagged "reserved"
    return bool(
        set(tags.get("providers", ())) & set(query.providers)
        or {g.split()[0].upper() for g in tags.get("gpus", ())} & families
        or (pricing and any(str(p).startswith(pricing) for p in tags.get("pricing", ())))
    )


def _of_the_clouds(row: dict, query: Query) -> bool:
    """Not specific to another cloud than those named (a pitfall of every cloud, or of no cloud, is kept)."""
    tagged = set((row.get("tags") or {}).get("providers", ()))
    return not tagged or bool(tagged & set(query.providers))


def _worst(scored: store.Scored) -> int:
    return SEVERITY.get(scored.row["severity"], 3)


def handle(query: Query, kb: KB) -> Answer:
    """pitfalls [topic | gpu | provider | pricing]: hidden costs and traps, e.g. `pitfalls spot on aws`"""
    lang = query.language
    notes, suggestions = name_notes(query)
    text = " ".join(filter(None, [scan_text(query), query.topic]))
    named = bool(query.gpus or query.providers or query.pricing)
    found = store.search(
        kb,
        text,
        gpus=query.gpus,
        providers=query.providers,
        pricing=query.pricing,
        limit=query.top_n or (ALL_NAMED if named else DEFAULT_TOP),
    )
    if named and not query.top_n:  # "pitfalls alibaba": every pitfall about that cloud/GPU/pricing, worst first
        plain = not (query.topic or query.pricing)  # a cloud or GPU alone: worst first; else the most relevant
        clouds = plain and bool(query.providers)  # a cloud alone: its own, then every cloud's, never another's
        about = [s for s in found if _about(s.row, query) and (not clouds or _of_the_clouds(s.row, query))]
        about = about or ([] if clouds else found[:DEFAULT_TOP])
        found = sorted(about, key=_worst) if plain else about
        if clouds:  # then those of every cloud, worst first
            own = {s.row["id"] for s in found}
            found += sorted((store.Scored(r, 0.0) for r in store.every_cloud(kb) if r["id"] not in own), key=_worst)
    heading = f": {query.topic or ' '.join([*query.gpus, *query.providers])}".rstrip(": ")
    if not found:
        from rapidfuzz import process, utils

        words = store.keyword_vocabulary(kb)
        close = [
            m[0]
            for m in process.extract(
                query.topic or text, words, processor=utils.default_process, limit=4, score_cutoff=60
            )
        ]
        asked = query.topic or text
        notes.append(_p("none", lang, text=asked if len(asked) <= 200 else asked[:200] + "…"))
        suggestions += close or SUGGESTED_TOPICS[lang]
        return Answer(query=query, title=_p("title", lang, about=""), notes=notes, suggestions=suggestions)
    shown = [to_model(s.row, lang) for s in found]
    return Answer(
        query=query,
        title=_p("title", lang, about=heading if heading.strip(": ") else ""),
        pitfalls=shown,
        notes=notes,
        suggestions=suggestions,
    )
