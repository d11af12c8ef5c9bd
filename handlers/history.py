"""history <gpu> [spot|on-demand] [on provider] [in region]: how the lowest price per GPU-hour moved, per snapshot.

`summarize(query, points)` is pure: it turns series points (`knowledge.history_series.Point`) into an `Answer`
whose title and lines say, per GPU, provider and pricing model, "A100 spot on AWS: $0.51 -> $0.31 per GPU-hour,
-40% since 2026-11-01", in the question's language. `handle(query, kb, reader)` reads the series through the
injected `knowledge.history_reader.HistoryReader` (never writes: the edge records baselines) and calls it. The
points travel in `Answer.extra["history"]` (the JSON of `gpubot history --json`), and `Answer.extra["headline"]` is
the one-line summary used beside a chart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from handlers.common import money, name_notes, pricing_label
from handlers.models import Answer, Query, Source

if TYPE_CHECKING:
    from knowledge.history_reader import HistoryReader

__all__ = ["PHRASES", "handle", "headline", "history_points", "phrase", "summarize"]

MAX_SUGGESTIONS = 5
PROVIDER_NAMES = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "Alibaba Cloud", "tencent": "Tencent Cloud"}
PROVIDER_NAMES_ZH = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "阿里云", "tencent": "腾讯云"}

PHRASES: dict[str, dict[str, str]] = {
    "moved": {
        "en": "{gpu} {pricing} on {provider}: {old} -> {new} per GPU-hour, {pct} since {since}",
        "zh": "{provider} 上 {gpu} {pricing}：每 GPU 小时 {old} -> {new}，自 {since} 以来 {pct}",
    },
    "one": {
        "en": "{gpu} {pricing} on {provider}: {new} per GPU-hour ({instance}, {region}); only one snapshot "
        "so far ({since})",
        "zh": "{provider} 上 {gpu} {pricing}：每 GPU 小时 {new}（{instance}，{region}）；目前只有一个快照（{since}）",
    },
    "same": {
        "en": "{gpu} {pricing} on {provider}: {new} per GPU-hour, unchanged since {since}",
        "zh": "{provider} 上 {gpu} {pricing}：每 GPU 小时 {new}，自 {since} 以来未变",
    },
    "usd": {"en": " (≈ {old} -> {new})", "zh": "（≈ {old} -> {new}）"},
    "detail": {
        "en": "  {n} snapshots; now cheapest: {instance} in {region}; median {median} over {offers} offers",
        "zh": "  共 {n} 个快照；当前最便宜：{instance}（{region}）；{offers} 个报价的中位数 {median}",
    },
    "detail.one": {"en": "  median {median} over {offers} offers", "zh": "  {offers} 个报价的中位数 {median}"},
    "title": {
        "en": "{gpu} price history: lowest price per GPU-hour per snapshot",
        "zh": "{gpu} 价格走势：每个快照中每 GPU 小时的最低价",
    },
    "title.one": {
        "en": "{gpu}: only one price snapshot so far ({since}); the current spread is shown",
        "zh": "{gpu}：目前只有一个价格快照（{since}），显示当前各地域的价格分布",
    },
    "which_gpu": {
        "en": "Which GPU? For example: “A100 spot price history on aws”.",
        "zh": "哪款 GPU？例如：“A100 竞价 价格走势 aws”。",
    },
    "no_history": {
        "en": "No price history yet: `gpubot prices refresh` records the first snapshot.",
        "zh": "还没有价格历史：运行 `gpubot prices refresh` 记录第一个快照。",
    },
    "unknown_gpu": {"en": "No price history for a GPU called “{gpu}”.", "zh": "没有名为“{gpu}”的 GPU 的价格历史。"},
    "no_data": {"en": "No price history for {what}.", "zh": "没有 {what} 的价格历史。"},
    "available": {"en": "Recorded for {gpu}: {where}.", "zh": "{gpu} 有记录的：{where}。"},
    "families": {"en": "GPUs with price history: {names}.", "zh": "有价格历史的 GPU：{names}。"},
    "did_you_mean": {"en": "Did you mean {names}?", "zh": "您是不是指 {names}？"},
    "providers": {
        "en": "No snapshots for {missing}; providers with price history: {names}.",
        "zh": "{missing} 没有快照；有价格历史的云厂商：{names}。",
    },
    "one_snapshot": {
        "en": "Only one snapshot so far: the next `gpubot prices refresh` adds a point; the chart shows the "
        "spread across regions instead.",
        "zh": "目前只有一个快照：下次 `gpubot prices refresh` 后才会有走势；图表改为显示各地域的价格分布。",
    },
    "how": {
        "en": "Each point: the lowest price per GPU-hour over that snapshot's offers of {gpu}{variants}.",
        "zh": "每个点：该快照中 {gpu}{variants} 所有报价里每 GPU 小时的最低价。",
    },
    "variants": {"en": " ({names})", "zh": "（{names}）"},
    "zones": {"en": "A region's spot price is the lowest over its zones.", "zh": "竞价价格取地域内各可用区的最低价。"},
    "gpu_only": {
        "en": "{n} GPU-only figures (host VM price unknown) left out.",
        "zh": "已排除 {n} 个仅含 GPU 的价格（不含主机价格）。",
    },
    "currency": {
        "en": "{provider} prices are in {currency}, converted to USD at the catalog's fixed rate.",
        "zh": "{provider} 的价格以 {currency} 计，按目录的固定汇率换算为美元。",
    },
    "since": {"en": "Snapshots since {since}.", "zh": "自 {since} 起的快照。"},
    "then": {
        "en": "; then {new} from another source ({n} snapshots since {since})",
        "zh": "；之后另一来源为 {new}（自 {since} 起 {n} 个快照）",
    },
    "source_changed": {
        "en": "{gpu} {pricing} on {provider}: the source changes on {when} (bundled weekly history "
        "to {before}, recorded snapshots from then); the two are not spliced, compare within "
        "one source.",
        "zh": "{provider} 上 {gpu} {pricing}：数据来源在 {when} 更换（{before} 前为内置的每周历史，"
        "之后为记录的快照）；两者未拼接，请在同一来源内比较。",
    },
}


def phrase(key: str, lang: str = "en", **values: object) -> str:
    """A history phrase in `lang` (English when missing), formatted with `values`."""
    table = PHRASES[key]
    return (table.get(lang) or table["en"]).format(**values)


def _provider(provider: str, lang: str) -> str:
    return (PROVIDER_NAMES_ZH if lang == "zh" else PROVIDER_NAMES).get(provider, provider)


def _pct(old: float, new: float) -> str:
    return f"{(new - old) / old * 100:+.0f}%" if abs((new - old) / old) >= 0.005 else f"{(new - old) / old * 100:+.1f}%"


def _date(point) -> str:
    return point.taken_at.date().isoformat()


def _groups(points: Sequence) -> dict[tuple[str, str, str], list]:
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    for p in points:
        groups[p.key].append(p)
    return groups


def _line(key: tuple[str, str, str], items: list, lang: str) -> str:
    cut = [n for n, p in enumerate(items) if n and getattr(p, "source_changed", False)]
    if cut:  # never one move across two sources: the earlier source's move, then the newer source's figure
        earlier = items[(cut[-2] if len(cut) > 1 else 0) : cut[-1]]
        return _line(key, earlier, lang) + phrase(
            "then",
            lang,
            new=money(items[-1].min_price_per_gpu_hour),
            since=_date(items[cut[-1]]),
            n=len(items) - cut[-1],
        )
    gpu, provider, pricing = key
    first, last = items[0], items[-1]
    names = dict(gpu=gpu, pricing=pricing_label(pricing, lang), provider=_provider(provider, lang))
    native = last.currency != "USD" and first.min_price_native and last.min_price_native
    if len(items) == 1:
        new = money(last.min_price_native, last.currency) if native else money(last.min_price_per_gpu_hour)
        return phrase(
            "one",
            lang,
            **names,
            new=new,
            instance=last.cheapest_instance_type,
            region=last.cheapest_region,
            since=_date(last),
        )
    if native:
        old, new = money(first.min_price_native, first.currency), money(last.min_price_native, last.currency)
    else:
        old, new = money(first.min_price_per_gpu_hour), money(last.min_price_per_gpu_hour)
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
        text += phrase("usd", lang, old=money(first.min_price_per_gpu_hour), new=money(last.min_price_per_gpu_hour))
    return text


def headline(points: Sequence, lang: str = "en", limit: int = 280) -> str:
    """One line for beside a chart: the one series' summary, or the biggest movers' compact summaries."""
    groups = _groups(points)
    if not groups:
        return ""
    if len(groups) == 1:
        key, items = next(iter(groups.items()))
        return _line(key, items, lang)

    def moved(items: list) -> float:
        return abs(items[-1].min_price_per_gpu_hour / items[0].min_price_per_gpu_hour - 1)

    ordered = sorted(groups.items(), key=lambda kv: (-moved(kv[1]), kv[0]))
    parts = []
    for (gpu, provider, pricing), items in ordered:
        first, last = items[0], items[-1]
        label = f"{gpu} {pricing_label(pricing, lang)} {_provider(provider, lang)}"
        if len(items) == 1:
            parts.append(f"{label} {money(last.min_price_per_gpu_hour)}")
        elif first.min_price_per_gpu_hour == last.min_price_per_gpu_hour:
            same = "（未变）" if lang == "zh" else " (unchanged)"
            parts.append(f"{label} {money(last.min_price_per_gpu_hour)}{same}")
        else:
            parts.append(
                f"{label} {money(first.min_price_per_gpu_hour)} -> {money(last.min_price_per_gpu_hour)} "
                f"({_pct(first.min_price_per_gpu_hour, last.min_price_per_gpu_hour)})"
            )
    since = min(_date(p) for p in points)
    prefix = f"自 {since} 起每 GPU 小时最低价：" if lang == "zh" else f"Lowest per GPU-hour since {since}: "
    text = prefix + "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 1].rsplit(";", 1)[0] + " …"


def summarize(query: Query, points: Sequence, *, since: str | None = None, families: Iterable[str] = ()) -> Answer:
    """The history as an `Answer` (pure). `families`: GPUs that have history, offered when nothing matched."""
    lang = query.language
    notes, suggestions = name_notes(query)
    gpu_label = " / ".join(query.gpus) or "GPU"
    if not points:
        return _no_data(query, notes, suggestions, families, since)
    groups = _groups(points)
    single = all(len(items) == 1 for items in groups.values())
    gpus = sorted({p.gpu for p in points}, key=lambda g: query.gpus.index(g) if g in query.gpus else 99)
    if len(groups) == 1:
        title = _line(*next(iter(groups.items())), lang)
    elif single:
        title = phrase("title.one", lang, gpu=" / ".join(gpus), since=max(_date(p) for p in points))
    else:
        title = phrase("title", lang, gpu=" / ".join(gpus) or gpu_label)
    lines = []
    for key, items in groups.items():
        if len(groups) > 1:
            lines.append(f"• {_line(key, items, lang)}")
        last = items[-1]
        median = (
            money(last.median_price_native, last.currency)
            if last.currency != "USD" and last.median_price_native
            else money(last.median_price_per_gpu_hour)
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
                    region=last.cheapest_region,
                    median=median,
                    offers=last.offers,
                )
            )
    for gpu in gpus:
        variants = sorted({a for p in points if p.gpu == gpu for a in p.accelerators})
        shown = phrase("variants", lang, names=", ".join(variants)) if variants != [gpu] else ""
        notes.append(phrase("how", lang, gpu=gpu, variants=shown))
    if any(p.pricing == "spot" for p in points):
        notes.append(phrase("zones", lang))
    if single:
        notes.append(phrase("one_snapshot", lang))
    excluded = max((p.excluded_gpu_only for p in points), default=0)
    if excluded:
        notes.append(phrase("gpu_only", lang, n=excluded))
    for provider, currency in sorted({(p.provider, p.currency) for p in points if p.currency != "USD"}):
        notes.append(phrase("currency", lang, provider=_provider(provider, lang), currency=currency))
    if since:
        notes.append(phrase("since", lang, since=since))
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
    return Answer(
        query=query,
        title=title,
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        sources=list(sources.values()),
        extra={"history": [p.as_json() for p in points], "headline": headline(points, lang)},
    )


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
    the bundled weekly history from `kb`. The edge records missing baselines first (`knowledge.baselines`).
    Unknown GPU names become notes, not errors.
    """
    from knowledge.history_reader import state_reader
    from knowledge.history_series import UnknownGpu, history_families, series

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
    if points:
        return points, notes, []
    recorded = reader.providers()
    missing = [p for p in query.providers if p not in recorded]
    if missing and recorded:
        notes.append(phrase("providers", query.language, missing=", ".join(missing), names=", ".join(recorded)))
    families = history_families(query.providers or None, reader=reader) or history_families(reader=reader)
    return points, notes, list(dict.fromkeys([*close, *families]))


def handle(query: Query, kb: Any = None, reader: HistoryReader | None = None) -> Answer:
    """history <gpu> [spot|on-demand] [on provider] [in region]: how the lowest price per GPU-hour moved"""
    points, notes, families = history_points(query, kb, reader=reader)
    answer = summarize(query, points, families=families)
    if notes:
        answer = answer.model_copy(update={"notes": [*notes, *answer.notes]})
    return answer
