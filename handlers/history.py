"""history <gpu> [spot|on-demand] [on provider] [in region]: how the lowest price per GPU-hour moved, per snapshot.

`summarize(query, points)` is pure: it turns series points (`knowledge.history.series.Point`) into an `Answer`
whose title and lines say, per GPU, provider and pricing model, "A100 spot on AWS: $0.51 -> $0.31 per GPU-hour,
-40% since 2026-11-01", in the question's language. `handle(query, kb, reader)` reads the series through the
injected `knowledge.history.reader.HistoryReader` (never writes: the edge records baselines) and calls it. The
points travel in `Answer.extra["history"]` (the JSON of `gpubot history --json`), and `Answer.extra["headline"]` is
the one-line summary used beside a chart.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from handlers.common import money, name_notes, pricing_label
from handlers.display import both, for_query
from handlers.i18n import scoped, t
from handlers.models import Answer, Query, Source
from handlers.suspect import suspect_text

if TYPE_CHECKING:
    from knowledge.history.reader import HistoryReader

__all__ = ["handle", "headline", "history_points", "phrase", "summarize"]

MAX_SUGGESTIONS = 5
PROVIDER_NAMES = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "Alibaba Cloud", "tencent": "Tencent Cloud"}
PROVIDER_NAMES_ZH = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "阿里云", "tencent": "腾讯云"}


phrase = scoped("history")


def _provider(provider: str, lang: str) -> str:
    return (PROVIDER_NAMES_ZH if lang == "zh" else PROVIDER_NAMES).get(provider, provider)


def _pct(old: float, new: float) -> str:
    return f"{(new - old) / old * 100:+.0f}%" if abs((new - old) / old) >= 0.005 else f"{(new - old) / old * 100:+.1f}%"


def _where(point, lang: str) -> str:
    """The cheapest offer's place: its region, or a Local / Wavelength Zone named as its own place (as ask does)."""
    from knowledge.catalog.zones import label

    zone = getattr(point, "cheapest_zone", None)
    where = label(zone, lang) if zone else None
    if not where:
        return point.cheapest_region
    return t("zone.local", lang, zone=zone, label=where, region=point.cheapest_region)


def _date(point) -> str:
    return point.taken_at.date().isoformat()


def _groups(points: Sequence) -> dict[tuple[str, str, str], list]:
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    for p in points:
        groups[p.key].append(p)
    return groups


def _line(key: tuple[str, str, str], items: list, lang: str, display: dict | None = None) -> str:
    """One series in words, USD figures also in the display currency; a suspect first or last minimum carries its
    mark (issue 26)."""
    text = _moves(key, items, lang, display)
    ends = items[:1] + items[1:][-1:]
    marks = [
        t("suspect.at", lang, date=_date(p), mark=suspect_text(json.loads(p.suspect), lang))
        for p in ends
        if getattr(p, "suspect", None)
    ]
    return text + (f" [{t('word.sep', lang).join(marks)}]" if marks else "")


def _moves(key: tuple[str, str, str], items: list, lang: str, display: dict | None = None) -> str:
    cut = [n for n, p in enumerate(items) if n and getattr(p, "source_changed", False)]
    if cut:  # never one move across two sources: the earlier source's move, then the newer source's figure
        earlier = items[(cut[-2] if len(cut) > 1 else 0) : cut[-1]]
        return _moves(key, earlier, lang, display) + phrase(
            "then",
            lang,
            new=both(items[-1].min_price_per_gpu_hour, display),
            since=_date(items[cut[-1]]),
            n=len(items) - cut[-1],
        )
    gpu, provider, pricing = key
    first, last = items[0], items[-1]
    names = dict(gpu=gpu, pricing=pricing_label(pricing, lang), provider=_provider(provider, lang))
    native = last.currency != "USD" and first.min_price_native and last.min_price_native
    if len(items) == 1:
        new = money(last.min_price_native, last.currency) if native else both(last.min_price_per_gpu_hour, display)
        return phrase(
            "one",
            lang,
            **names,
            new=new,
            instance=last.cheapest_instance_type,
            region=_where(last, lang),
            since=_date(last),
        )
    if native:
        old, new = money(first.min_price_native, first.currency), money(last.min_price_native, last.currency)
    else:
        old, new = both(first.min_price_per_gpu_hour, display), both(last.min_price_per_gpu_hour, display)
    if first.min_price_per_gpu_hour == last.min_price_per_gpu_hour:
        return phrase("same", lang, **names, new=new, since=_date(first))
    text = phrase(
        "moved",
        lang,
        **names,
        old=old,
        new=new,
        since=_date(first),
        pct=_pct(first.min_price_per_gpu_hour, last.min_price_per_gpu_hour),
    )
    if native:
        text += phrase(
            "usd", lang, old=both(first.min_price_per_gpu_hour, display), new=both(last.min_price_per_gpu_hour, display)
        )
    return text


def headline(points: Sequence, lang: str = "en", limit: int = 280, display: dict | None = None) -> str:
    """One line for beside a chart: the one series' summary, or the biggest movers' compact summaries."""
    groups = _groups(points)
    if not groups:
        return ""
    if len(groups) == 1:
        key, items = next(iter(groups.items()))
        return _line(key, items, lang, display)

    def moved(items: list) -> float:
        return abs(items[-1].min_price_per_gpu_hour / items[0].min_price_per_gpu_hour - 1)

    ordered = sorted(groups.items(), key=lambda kv: (-moved(kv[1]), kv[0]))
    parts = []
    for (gpu, provider, pricing), items in ordered:
        first, last = items[0], items[-1]
        label = f"{gpu} {pricing_label(pricing, lang)} {_provider(provider, lang)}"
        if len(items) == 1:
            parts.append(f"{label} {both(last.min_price_per_gpu_hour, display)}")
        elif first.min_price_per_gpu_hour == last.min_price_per_gpu_hour:
            same = "（未变）" if lang == "zh" else " (unchanged)"
            parts.append(f"{label} {both(last.min_price_per_gpu_hour, display)}{same}")
        else:
            parts.append(
                f"{label} {both(first.min_price_per_gpu_hour, display)} -> "
                f"{both(last.min_price_per_gpu_hour, display)} "
                f"({_pct(first.min_price_per_gpu_hour, last.min_price_per_gpu_hour)})"
            )
    since = min(_date(p) for p in points)
    prefix = f"自 {since} 起每 GPU 小时最低价：" if lang == "zh" else f"Lowest per GPU-hour since {since}: "
    text = prefix + "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1].rsplit(";", 1)[0] + " …"


def summarize(
    query: Query,
    points: Sequence,
    *,
    since: str | None = None,
    families: Iterable[str] = (),
    display: dict | None = None,
) -> Answer:
    """The history as an `Answer` (pure). `families`: GPUs that have history, offered when nothing matched;
    `display`: the display currency every USD figure is also shown in (`handlers.display`)."""
    lang = query.language
    notes, suggestions = name_notes(query)
    if not points:
        return _no_data(query, notes, suggestions, families, since)
    groups = _groups(points)
    single = all(len(items) == 1 for items in groups.values())
    gpus = sorted({p.gpu for p in points}, key=lambda g: query.gpus.index(g) if g in query.gpus else 99)
    if len(groups) == 1:
        title = _line(*next(iter(groups.items())), lang, display)
    elif single:
        title = phrase("title.one", lang, gpu=" / ".join(gpus), since=max(_date(p) for p in points))
    else:
        title = phrase("title", lang, gpu=" / ".join(gpus) or " / ".join(query.gpus) or "GPU")
    notes += _notes(points, gpus, single, since, lang) + _source_changes(points, lang)
    return Answer(
        query=query,
        title=title,
        lines=_series_lines(groups, lang, display),
        notes=notes,
        suggestions=suggestions,
        sources=_sources(points),
        extra={"history": [p.as_json() for p in points], "headline": headline(points, lang, display=display)},
    )


def _series_lines(groups: dict[tuple[str, str, str], list], lang: str, display: dict | None) -> list[str]:
    """Per series (GPU, provider, pricing): its line when there are several, then its latest median and offers."""
    lines = []
    for key, items in groups.items():
        if len(groups) > 1:
            lines.append(f"• {_line(key, items, lang, display)}")
        last = items[-1]
        median = (
            money(last.median_price_native, last.currency)
            if last.currency != "USD" and last.median_price_native
            else both(last.median_price_per_gpu_hour, display)
        )
        if len(items) == 1:
            lines.append(phrase("detail.one", lang, median=median, offers=last.offers))
        else:
            lines.append(
                phrase(
                    "detail",
                    lang,
                    n=len(items),
                    instance=last.cheapest_instance_type,
                    region=_where(last, lang),
                    median=median,
                    offers=last.offers,
                )
            )
    return lines


def _notes(points: Sequence, gpus: list[str], single: bool, since: str | None, lang: str) -> list[str]:
    """How each GPU's series is made (its variants), spot zones, a single snapshot, GPU-only offers left out, prices
    kept in another currency, and the start date asked."""
    notes = []
    for gpu in gpus:
        variants = sorted({a for p in points if p.gpu == gpu for a in p.accelerators})
        shown = phrase("variants", lang, names=", ".join(variants)) if variants != [gpu] else ""
        notes.append(phrase("how", lang, gpu=gpu, variants=shown))
    if any(p.pricing == "spot" for p in points):
        notes.append(phrase("zones", lang))
    if single:
        notes.append(phrase("one_snapshot", lang))
    if excluded := max((p.excluded_gpu_only for p in points), default=0):
        notes.append(phrase("gpu_only", lang, n=excluded))
    for provider, currency in sorted({(p.provider, p.currency) for p in points if p.currency != "USD"}):
        notes.append(phrase("currency", lang, provider=_provider(provider, lang), currency=currency))
    if since:
        notes.append(phrase("since", lang, since=since))
    return notes


def _source_changes(points: Sequence, lang: str) -> list[str]:
    """A note per point of a series whose price source changed since the point before."""
    notes = []
    for key, items in _groups(points).items():
        for before, p in zip(items, items[1:], strict=False):
            if getattr(p, "source_changed", False):
                notes.append(
                    phrase(
                        "source_changed",
                        lang,
                        provider=_provider(key[1], lang),
                        when=_date(p),
                        before=_date(before),
                        gpu=key[0],
                        pricing=pricing_label(key[2], lang),
                    )
                )
    return notes


def _sources(points: Sequence) -> list[Source]:
    """A source per snapshot's source and date; the weekly bundled history one per series, with its span."""
    sources: dict[tuple[str, str], Source] = {}
    bundled: dict[str, list] = defaultdict(list)  # weekly bundled history: one source line per series, not per week
    for p in points:
        if getattr(p, "snapshot_id", 0) is None:
            bundled[p.series].append(p)
        else:
            sources.setdefault((p.source, _date(p)), Source(source=p.source, as_of=_date(p)))
    for items in bundled.values():
        items.sort(key=lambda p: p.taken_at)
        count = len({p.taken_at for p in items})
        sources[(items[-1].series, "")] = Source(
            source=f"{items[-1].source.split(' (')[0]}: Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml, "
            f"{count} snapshots {_date(items[0])} to {_date(items[-1])} (Apache-2.0)",
            as_of=_date(items[-1]),
        )
    return list(sources.values())


def _no_data(
    query: Query, notes: list[str], suggestions: list[str], families: Iterable[str], since: str | None
) -> Answer:
    lang = query.language
    families = list(families)
    if not query.gpus:
        title = phrase("which_gpu", lang) if families else phrase("no_history", lang)
    else:
        what = " / ".join(query.gpus)
        if query.pricing:
            what += " " + pricing_label(query.pricing, lang)
        if query.providers:
            what += (" @ " if lang == "zh" else " on ") + ", ".join(_provider(p, lang) for p in query.providers)
        if query.regions:
            what += (" @ " if lang == "zh" else " in ") + ", ".join(query.regions)
        title = phrase("no_data", lang, what=what)
        if since:
            notes.append(phrase("since", lang, since=since))
    if families:
        shown = sorted(families[:20], key=families.index)
        notes.append(phrase("families", lang, names=", ".join(shown) + (" …" if len(families) > 20 else "")))
        suggestions += [f for f in families if f not in suggestions and f not in query.gpus]
    return Answer(
        query=query,
        title=title,
        notes=notes,
        suggestions=suggestions[:MAX_SUGGESTIONS],
        extra={"history": [], "headline": title},
    )


def history_points(
    query: Query, kb: Any = None, *, since: str | None = None, reader: HistoryReader | None = None
) -> tuple[list, list[str], list[str]]:
    """(points, notes, families) for a query: every GPU it names, its providers, regions and pricing model.

    Reads only: the recorded snapshots through `reader` (injected by the edge; the state database's when None),
    the bundled weekly history from `kb`. The edge records missing baselines first (`knowledge.history.baselines`).
    Unknown GPU names become notes, not errors.
    """
    from knowledge.history.reader import state_reader
    from knowledge.history.series import UnknownGpu, history_families, series

    reader = reader or state_reader()
    points: list = []
    notes: list[str] = []
    close: list[str] = []
    for gpu in query.gpus:
        try:
            points += series(
                gpu,
                provider=query.providers or None,
                region=query.regions or None,
                pricing=query.pricing,
                since=since,
                kb=kb,
                reader=reader,
            )
        except UnknownGpu as exc:
            if len(query.gpus) > 1:
                notes.append(phrase("unknown_gpu", query.language, gpu=gpu))
            if exc.suggestions:
                notes.append(phrase("did_you_mean", query.language, names=", ".join(exc.suggestions)))
                close += exc.suggestions
    points = [p for p in points if _kept(p, query)]  # "except gcp": handlers.constraints
    if points:
        return points, notes, []
    recorded = reader.providers()
    missing = [p for p in query.providers if p not in recorded]
    if missing and recorded:
        notes.append(phrase("providers", query.language, missing=", ".join(missing), names=", ".join(recorded)))
    families = history_families(query.providers or None, reader=reader) or history_families(reader=reader)
    return points, notes, list(dict.fromkeys([*close, *families]))


def _kept(point: Any, query: Query) -> bool:
    """A history point outside what the question excluded (its provider, pricing model, cheapest region)."""
    get = point.get if isinstance(point, dict) else lambda key, default=None: getattr(point, key, default)
    cheapest = get("cheapest") or {}
    region = cheapest.get("region") if isinstance(cheapest, dict) else None
    return not (
        get("provider") in query.exclude_providers
        or get("pricing") in query.exclude_pricing
        or (region and region in query.exclude_regions)
    )


def handle(query: Query, kb: Any = None, reader: HistoryReader | None = None) -> Answer:
    """history <gpu> [spot|on-demand] [on provider] [in region]: how the lowest price per GPU-hour moved"""
    points, notes, families = history_points(query, kb, reader=reader)
    answer = summarize(query, points, families=families, display=for_query(query, kb) if kb is not None else None)
    if notes:
        answer = answer.model_copy(update={"notes": [*notes, *answer.notes]})
    return answer
