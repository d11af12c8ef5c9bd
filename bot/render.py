"""Render an `Answer` as plain text (CLI and the Slack fallback) and as the JSON contract of `gpubot ask --json`.

Jinja renders the text; Python builds structures. Every figure line carries a numbered source, and the sources
footer says how old each source is.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bot import citations
from bot.citations import public_source
from bot.render_train import text_lines as table_lines
from bot.render_work import TEXT_WORK_ROWS_BESIDE_MLPERF, brief_work, work_line
from handlers.common import also_in, date_label, money, place
from handlers.display import json_offer, json_tco, title_line, total_twin, twin, unit
from handlers.freshness import offer_label
from handlers.i18n import t
from handlers.models import Answer, Offer, Source, Tco
from handlers.offer_notes import where_and_what
from handlers.ranking import MAX_TOP
from handlers.suspect import suspect_text
from handlers.terms import pricing_text
from knowledge.catalog.identity import model_name


def dated(source: Source | Offer, lang: str = "en") -> str:
    """ "as of 2026-04", or "date unknown, bundled 2026-12-01" where the upstream date is unknown."""
    return f"{_label(date_label(source), lang)} {source.as_of}"


def _once_per_link(lang: str):
    """`public_source` for the short answer, each link printed once: a later source behind the same link (another
    cloud's file of the SkyPilot catalog) names itself without repeating it."""
    seen: set[str] = set()

    def cite(source: str) -> str:
        words = public_source(source, lang)
        links = [w for w in words.split() if w.startswith(("http://", "https://"))]
        if links and all(link in seen for link in links):
            for link in links:
                words = words.replace(f" {link}", "")
        seen.update(links)
        return words

    return cite


def _label(key: str, lang: str) -> str:
    return t(f"render.{key}", lang)


def _cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with "…" and any bracket the cut left open closed again."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rstrip() + "…"
    return cut + ")" * max(0, cut.count("(") - cut.count(")"))


def num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def gpu_label(item: Offer) -> str:
    """ "B200 180GB", "H100 SXM5 80GB": the GPU's name (never a datasheet note) and its memory."""
    name = model_name(item.gpu_model) if item.gpu_model else item.gpu_variant or item.gpu
    if item.gpu_memory_gb and f"{item.gpu_memory_gb:g}GB" not in name.replace(" ", ""):
        name += f" {item.gpu_memory_gb:g}GB"
    return name


def offer_line(item: Offer, lang: str = "en", display: dict | None = None) -> str:
    """One offer on one line: who, what, where, per GPU-hour (a TPU slice: per chip-hour), per hour, the second
    currency (the display currency, `handlers.display`, or a vendor quote's USD twin), labels."""
    per_unit = unit(item, lang)
    per_gpu = f"{money(item.price_per_gpu_hour, item.currency)}{per_unit}"
    per_hour = f"{money(item.price_per_hour, item.currency)}{t('unit.per_hour', lang)}"
    second = twin(item, display)
    usd = f" ≈ {money(*second)}{per_unit}" if second else ""
    labels = [suspect_text(item.suspect, lang)] if item.suspect else []  # a price that looks wrong (issue 26)
    if item.vgpu:
        labels.append("vGPU")
    if item.via:
        labels.append(t("offer.via", lang, via=item.via))
    if item.kind == "article":
        labels.append(f"{_label('article', lang)}, {item.status}")
    labels += where_and_what(item, lang)
    label = f" [{'; '.join(labels)}]" if labels else ""
    region = "" if item.region == "article" else f" · {item.region}"
    if item.zone_label:  # a Local / Wavelength Zone is its own place, never shown as its parent region
        region = f" · {place(item, lang)}"
    note = f" · {also_in(item.other_regions, lang)}" if item.other_regions else ""
    note += offer_label(item, lang)  # "spot 12 min ago · in stock, read 12 min ago" (issue 28)
    provider = item.provider
    if lang == "zh":
        from handlers.brief import provider_label

        provider = provider_label(item.provider, lang)
    return (
        f"{provider} {item.size_label or item.instance_type} · {num(item.gpu_count)}x {gpu_label(item)}{region}"
        f" · {pricing_text(item, lang)}"
        f" · {per_gpu} ({per_hour}){usd}{label}{note}"
    )


def tco_order(answer: Answer) -> list[Tco]:
    """TCO options, the cheapest that can run the job first (`extra["tco_best"]`), then by total."""
    options = sorted([x for x in [answer.tco, *answer.tco_options] if x], key=lambda x: x.total)
    best = answer.extra.get("tco_best")
    return sorted(options, key=lambda x: x.pricing != best) if best else options


def tco_parts(
    tco: Tco, lang: str = "en", label: str | None = None, display: dict | None = None
) -> tuple[str, list[str], str]:
    """One TCO option as (head, the non-zero components, total): "TCO 720 h, spot", ["compute $1,834.75"], total.
    A component that costs nothing (no storage, no egress asked) is left out; under a display currency the total
    also says its other currency ("¥13,294.60 (≈ $1,834.75)")."""
    head = t("tco.head", lang, hours=tco.hours, pricing=label or t("pricing." + tco.pricing, lang))
    parts = [t("tco.part.compute", lang, v=money(tco.compute, tco.currency))]
    parts += [
        t(f"tco.part.{name}", lang, v=money(value, tco.currency))
        for name, value in (("storage", tco.storage), ("egress", tco.egress))
        if value
    ]
    other = total_twin(tco, display)
    return head, parts, money(tco.total, tco.currency) + (f" (≈ {money(*other)})" if other else "")


def tco_block(
    tco: Tco, lang: str = "en", assumptions: bool = True, label: str | None = None, display: dict | None = None
) -> str:
    """One TCO option: its breakdown and (unless `assumptions` is off) the assumptions behind it."""
    head, parts, total = tco_parts(tco, lang, label, display)
    lines = [
        f"{head}{t('colon', lang)}{' + '.join(parts)} = {total}"
        if len(parts) > 1
        else f"{head}{t('colon', lang)}{total}"
    ]
    if assumptions:
        lines += [f"  - {a}" for a in tco.assumptions]
    return "\n".join(lines)


def answer_sources(answer: Answer, verbose: bool = True) -> list[Source]:
    seen: dict[tuple[str, str], Source] = {}
    context = answer.context if verbose else []  # dated seed figures are details: shown with --verbose
    figures = [*answer.offers, *context, *(r.offer for r in answer.recommendations if r.offer)]
    for item in [
        *answer.sources,
        *(Source(source=o.source, as_of=o.as_of, as_of_known=o.as_of_known) for o in figures),
    ]:
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


def _mixed(answer: Answer) -> bool:
    """Some work rows measured, some estimated: each estimate says so (else the verdict does)."""
    return len({row["basis"] == "measured" for row in answer.extra.get("work") or []}) > 1


def _hidden(n: int, lang: str) -> str:
    return t("brief.hidden", lang, n=n) if n else ""


TEXT_OFFER_ROWS = MAX_TOP  # longer lists (every region of an instance type) are cut, saying how many more


def render_text(answer: Answer, verbose: bool = False) -> str:
    """The answer as plain text, in the question's language: the verdict, the options, at most one caveat, the
    pricing pages and the sources; `verbose` adds every pitfall, rule and detail (the JSON always has them)."""
    answer = _shown(answer, verbose)
    found = answer_sources(answer, verbose)
    text = _environment().get_template("answer.txt.j2").render(**_template_values(answer, verbose, found))
    return _laid_out(text, answer)


def _shown(answer: Answer, verbose: bool) -> Answer:
    """What the text shows: the short answer's rows (unless `verbose`), sources in words, at most
    `TEXT_OFFER_ROWS` offers (the rest counted in `more`)."""
    from handlers import brief

    if not verbose:
        listed = brief.brief_offers(answer)
        if len(answer.recommendations) > brief.BRIEF_RECOMMENDATIONS:
            answer = answer.model_copy(
                update={"recommendations": answer.recommendations[: brief.BRIEF_RECOMMENDATIONS]}
            )
        if len(listed) < len(answer.offers):
            hidden = len(answer.offers) - len(listed)
            answer = answer.model_copy(update={"offers": listed, "more": answer.more + hidden})
        if answer.extra.get("work"):  # five rows, the benchmark configuration behind --verbose
            answer = brief_work(answer, beside_mlperf=TEXT_WORK_ROWS_BESIDE_MLPERF)
        answer = citations.public_answer(answer)  # sources in words; --verbose keeps the internal ids
    if len(answer.offers) > TEXT_OFFER_ROWS:
        answer = answer.model_copy(
            update={
                "offers": answer.offers[:TEXT_OFFER_ROWS],
                "more": answer.more + len(answer.offers) - TEXT_OFFER_ROWS,
            }
        )
    return answer


def _template_values(answer: Answer, verbose: bool, found: list) -> dict[str, Any]:
    """What `answer.txt.j2` reads: the answer, its labels in the question's language and the line formatters."""
    from handlers import brief

    lang = answer.query.language
    index = {(s.source, s.as_of): n for n, s in enumerate(found, start=1)}
    shown = brief.view(answer)
    display = answer.extra.get("display_currency")  # "in CNY": both currencies (handlers.display)
    cite = (lambda source: source) if verbose else _once_per_link(lang)  # ids: --verbose
    cite_pitfall = (lambda p: p.source) if verbose else (lambda p: citations.cite_pitfall(p.id, p.source, lang))
    return dict(
        a=answer,
        verbose=verbose,
        caveat=shown["caveat"],
        pages=shown["pages"],
        hidden=_hidden(shown["hidden"] + int(answer.extra.get("work_hidden") or 0), lang) if not verbose else "",
        work_more=t("work.more_rows", lang, n=answer.extra.get("work_more") or 0),
        details=answer.extra.get("details") or [],
        caveat_label=t("brief.caveat", lang),
        caveat_source=_cut(cite_pitfall(shown["caveat"]), 130) if shown["caveat"] else "",
        cite=cite,
        cite_pitfall=cite_pitfall,
        severity=lambda s: brief.severity_label(s, lang),
        colon=t("colon", lang),
        provider=lambda p: brief.provider_label(p, lang),
        pages_label=t("brief.pages", lang),
        details_label=t("brief.details", lang),
        sources=found,
        offer_line=lambda o: offer_line(o, lang, display),
        source_no=lambda o: index.get((o.source, o.as_of), "?"),
        tcos=tco_order(answer),
        tco_block=lambda x, full=True: tco_block(
            x, lang, full, (answer.extra.get("tco_labels") or {}).get(x.pricing), display
        ),
        rules_label=_label("rules", lang),
        suggestions_label=_label("suggestions", lang),
        sources_label=t("sources", lang),
        more_label=t("render.more_capped", lang, cap=MAX_TOP)
        if len(answer.offers) >= MAX_TOP
        else _label("more", lang),  # "top 20" says how to see more, unless the list is at the cap
        as_of_label=_label("as_of", lang),
        dated=lambda s: dated(s, lang),
        work_line=lambda r, d: work_line(
            r, d, lang, lambda s, a: index.get((s, a), "?"), full=verbose, mark=_mixed(answer), display=display
        ),
        table_lines=table_lines(answer, lambda s, a: index.get((s, a), "?"), short=not verbose),  # bot/render_train.py
    )


def _laid_out(text: str, answer: Answer) -> str:
    """The rendered lines without runs of blank lines, with what preferences filtered and the title's figures in
    the other currency right under the title."""
    out: list[str] = []
    for line in (line.rstrip() for line in text.splitlines()):  # collapse runs of blank lines left by empty sections
        if line or (out and out[-1]):
            out.append(line)
    if notes := answer.extra.get("settings_notes"):  # what preferences (flags, channel settings) filtered
        out.insert(1 if out else 0, "(" + "; ".join(notes) + ")")
    if converted := title_line(answer, answer.extra.get("display_currency")):  # the title's figures, other currency
        out.insert(1 if out else 0, converted)
    return "\n".join(out).strip() + "\n"


def answer_json(answer: Answer, verbose: bool = False) -> dict[str, Any]:
    """The JSON contract of `gpubot ask --json` (documented in README): every field, whatever `text` shows."""
    from handlers import brief

    data = answer.model_dump(mode="json")
    display = answer.extra.get("display_currency")
    data["offers"] = [json_offer(o, d, display) for o, d in zip(answer.offers, data["offers"], strict=True)]
    data["context"] = [json_offer(o, d, display) for o, d in zip(answer.context, data["context"], strict=True)]
    for rec, item in zip(answer.recommendations, data["recommendations"], strict=True):
        if rec.offer is not None:
            item["offer"] = json_offer(rec.offer, item["offer"], display)
    if answer.tco is not None:
        data["tco"] = json_tco(answer.tco, data["tco"], display)
    data["tco_options"] = [
        json_tco(x, d, display) for x, d in zip(answer.tco_options, data["tco_options"], strict=True)
    ]
    extra = {**data["extra"], **({"title_display": line} if (line := title_line(answer, display)) else {})}
    return {
        "query": data["query"],
        "offers": data["offers"],
        "text": render_text(answer, verbose),
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
        "pricing_pages": brief.pricing_pages(brief.shown_offers(answer)),
        **extra,
    }
