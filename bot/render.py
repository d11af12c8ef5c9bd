"""Render an `Answer` as plain text (CLI and the Slack fallback) and as the JSON contract of `gpubot ask --json`.

Jinja renders the text; Python builds structures. Every figure line carries a numbered source, and the sources
footer says how old each source is.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bot.render_work import work_line
from handlers.common import money
from handlers.i18n import t
from handlers.models import Answer, Offer, Source, Tco
from handlers.offer_notes import where_and_what

LABELS = {
    "rules": {"en": "Rules applied", "zh": "应用的规则"},
    "suggestions": {"en": "Did you mean", "zh": "您是不是指"},
    "article": {"en": "seed article", "zh": "种子文章"},
    "more": {"en": "more (ask for more results, e.g. 'top 20')", "zh": "条未显示（可加“前20”查看更多）"},
    "as_of": {"en": "as of", "zh": "截至"},
    "date_unknown": {"en": "date unknown, bundled", "zh": "数据日期未知，打包于"},
}


def dated(source: Source | Offer, lang: str = "en") -> str:
    """ "as of 2026-04", or "date unknown, bundled 2026-12-01" where the upstream date is unknown."""
    return f"{_label('as_of' if source.as_of_known else 'date_unknown', lang)} {source.as_of}"


def _label(key: str, lang: str) -> str:
    return LABELS[key].get(lang) or LABELS[key]["en"]


def num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def gpu_label(item: Offer) -> str:
    name = item.gpu_model or item.gpu_variant or item.gpu
    if item.gpu_memory_gb and f"{item.gpu_memory_gb:g}GB" not in name.replace(" ", ""):
        name += f" {item.gpu_memory_gb:g}GB"
    return name


def offer_line(item: Offer, lang: str = "en") -> str:
    """One offer on one line: who, what, where, per GPU-hour, per hour, USD twin, labels."""
    per_gpu = f"{money(item.price_per_gpu_hour, item.currency)}/GPU-h"
    per_hour = f"{money(item.price_per_hour, item.currency)}/h"
    usd = f" ≈ {money(item.price_per_gpu_hour_usd)}/GPU-h" if item.currency != "USD" else ""
    labels = []
    if item.vgpu:
        labels.append("vGPU")
    if item.via:
        labels.append(f"via {item.via}")
    if item.kind == "article":
        labels.append(f"{_label('article', lang)}, {item.status}")
    labels += where_and_what(item, lang)
    label = f" [{'; '.join(labels)}]" if labels else ""
    region = "" if item.region == "article" else f" · {item.region}"
    if item.zone_label:  # a Local / Wavelength Zone is its own place, never shown as its parent region
        region = f" · {item.zone} {item.zone_label} of {item.region}"
    return (
        f"{item.provider} {item.instance_type} · {num(item.gpu_count)}x {gpu_label(item)}{region} · {t('pricing.' + item.pricing, lang)}"
        f" · {per_gpu} ({per_hour}){usd}{label}"
    )


def tco_block(tco: Tco) -> str:
    lines = [
        f"TCO {tco.hours:g} h, {tco.pricing}: compute {money(tco.compute, tco.currency)} + storage "
        f"{money(tco.storage, tco.currency)} + egress {money(tco.egress, tco.currency)} = {money(tco.total, tco.currency)}"
    ]
    lines += [f"  - {a}" for a in tco.assumptions]
    return "\n".join(lines)


def answer_sources(answer: Answer) -> list[Source]:
    seen: dict[tuple[str, str], Source] = {}
    figures = [*answer.offers, *answer.context, *(r.offer for r in answer.recommendations if r.offer)]
    for item in [*answer.sources, *(Source(source=o.source, as_of=o.as_of, as_of_known=o.as_of_known)
                                    for o in figures)]:
        seen.setdefault((item.source, item.as_of), item)
    return list(seen.values())


@cache
def _environment():  # jinja2 is imported only when text is rendered
    import jinja2

    from knowledge.paths import home

    cache = home() / "cache" / "templates"
    cache.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("bot", "templates"),
        bytecode_cache=jinja2.FileSystemBytecodeCache(str(cache)),  # compiled once, reused by every CLI run
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=False,  # templates ship with the package: no stat() per render
    )
    env.filters["num"] = num
    return env


TEXT_OFFER_ROWS = 40  # longer lists (every region of an instance type) are cut, saying how many more


def render_text(answer: Answer) -> str:
    """The answer as plain text, in the question's language."""
    lang = answer.query.language
    if len(answer.offers) > TEXT_OFFER_ROWS:
        answer = answer.model_copy(update={
            "offers": answer.offers[:TEXT_OFFER_ROWS],
            "more": answer.more + len(answer.offers) - TEXT_OFFER_ROWS,
        })
    found = answer_sources(answer)
    index = {(s.source, s.as_of): n for n, s in enumerate(found, start=1)}
    text = _environment().get_template("answer.txt.j2").render(
        a=answer,
        sources=found,
        offer_line=lambda o: offer_line(o, lang),
        source_no=lambda o: index.get((o.source, o.as_of), "?"),
        tco_block=tco_block,
        rules_label=_label("rules", lang),
        suggestions_label=_label("suggestions", lang),
        sources_label=t("sources", lang),
        more_label=_label("more", lang),
        as_of_label=_label("as_of", lang),
        dated=lambda s: dated(s, lang),
        work_line=lambda r, d: work_line(r, d, lang, lambda s, a: index.get((s, a), "?")),  # bot/render_work.py
    )
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines left by empty sections
        if line or (out and out[-1]):
            out.append(line)
    if notes := answer.extra.get("settings_notes"):  # what preferences (flags, channel settings) filtered
        out.insert(1 if out else 0, "(" + "; ".join(notes) + ")")
    return "\n".join(out).strip() + "\n"


def answer_json(answer: Answer) -> dict[str, Any]:
    """The JSON contract of `gpubot ask --json` (documented in README)."""
    data = answer.model_dump(mode="json")
    return {
        "query": data["query"],
        "offers": data["offers"],
        "text": render_text(answer),
        "title": data["title"],
        "context": data["context"],
        "notes": data["notes"],
        "suggestions": data["suggestions"],
        "sources": [s.model_dump() for s in answer_sources(answer)],
        "more": data["more"],
        "recommendations": data["recommendations"],
        "rules": data["rules"],
        "specs": data["specs"],
        "tco": data["tco"],
        "tco_options": data["tco_options"],
        "pitfalls": data["pitfalls"],
        **data["extra"],
    }
