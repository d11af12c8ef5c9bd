"""digest [gpu] [provider] [spot|on-demand]: what changed in GPU prices since the previous snapshot.

`summarize(digest, lang)` is pure: it turns computed changes (`knowledge.history.snapshots.Digest`) into an
`Answer` with a
short summary per GPU family, provider and pricing model first ("H100 spot on AWS: 6 regions cheaper, median
-12%"), then the biggest moves. `handle(query, kb, reader)` reads the changes through the injected
`knowledge.history.reader.HistoryReader` (never writes: the edge records baselines) and calls it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from handlers.common import money, pricing_label
from handlers.display import both, for_query, rate_note
from handlers.i18n import scoped, t
from handlers.models import PRICINGS, Answer, Query, Source
from knowledge.history.models import Change, Digest
from knowledge.kb.reader import KB, GpuRef

if TYPE_CHECKING:
    from knowledge.history.reader import HistoryReader

MAX_GROUPS = 12
MAX_MOVES = 10
PROVIDER_NAMES = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "Alibaba Cloud", "tencent": "Tencent Cloud"}
PROVIDER_NAMES_ZH = {"aws": "AWS", "gcp": "GCP", "azure": "Azure", "alibaba": "阿里云", "tencent": "腾讯云"}


phrase = scoped("digest")


def _pricing(pricing: str, lang: str) -> str:
    return pricing_label(pricing, lang) if pricing in PRICINGS else pricing


def _provider(provider: str, lang: str) -> str:
    return (PROVIDER_NAMES_ZH if lang == "zh" else PROVIDER_NAMES).get(provider, provider)


def _pct(value: float) -> str:
    return f"{value:+.1f}%"


def _plural(n: int, word: str, lang: str) -> str:
    return word if lang == "zh" or n == 1 else word + "s"


def _since(digest: Digest) -> str:
    olds = [p.old.taken_at for p in digest.providers if p.old is not None]
    if digest.since:
        return digest.since[:10]
    return min(olds).date().isoformat() if olds else "—"


def _group_line(key: tuple[str, str, str], items: dict[str, list[Change]], lang: str) -> str:
    gpu, provider, pricing = key
    parts = []
    down = [c for c in items["changed"] if (c.change_pct or 0) < 0]
    up = [c for c in items["changed"] if (c.change_pct or 0) > 0]
    for word, moved in (("cheaper", down), ("dearer", up)):
        if moved:
            regions = len({c.region for c in moved})
            offers = phrase("offers_in", lang, n=len(moved)) if len(moved) > regions else ""
            parts.append(
                phrase(
                    word,
                    lang,
                    n=regions,
                    regions=_plural(regions, "region", lang),
                    offers=offers,
                    pct=_pct(statistics.median(c.change_pct or 0.0 for c in moved)),
                )
            )
    if items["added"]:
        n = len(items["added"])
        parts.append(phrase("added", lang, n=n, offers=_plural(n, "offer", lang)))
    if items["removed"]:
        parts.append(phrase("removed", lang, n=len(items["removed"])))
    separator = "，" if lang == "zh" else ", "
    return phrase(
        "group",
        lang,
        gpu=gpu,
        pricing=_pricing(pricing, lang),
        provider=_provider(provider, lang),
        parts=separator.join(parts),
    )


def _move_prices(change: Change, lang: str, display: dict | None = None) -> tuple[str, str]:
    """(old, new) per instance-hour as quoted: a vendor's own currency, else USD ("$20.00 → $18.00/h"); with a
    display currency each figure in both, with its unit ("$20.00/h (≈ ¥144.92/h) → $18.00/h (≈ ¥130.43/h)")."""
    per_hour = t("unit.per_hour", lang)
    old_unit = per_hour if display else ""  # one currency: the unit once, after the new price
    if change.currency != "USD" and change.old_native and change.new_native:
        old, new = money(change.old_native, change.currency), money(change.new_native, change.currency)
        return old + old_unit, new + per_hour
    return both(change.old or 0.0, display, old_unit), both(change.new or 0.0, display, per_hour)


def _move_line(change: Change, lang: str, display: dict | None = None) -> str:
    old, new = _move_prices(change, lang, display)
    return phrase(
        "move",
        lang,
        provider=_provider(change.provider, lang),
        instance=change.instance_type,
        region=change.region,
        pricing=_pricing(change.pricing, lang),
        old=old,
        new=new,
        pct=_pct(change.change_pct or 0.0),
    )


def _move_view(change: Change, lang: str, display: dict | None = None) -> dict:
    """One of the biggest moves, for a layout: what moved (GPU, pricing, provider), where, and the line."""
    return {
        "what": f"{change.gpu} {_pricing(change.pricing, lang)} · {_provider(change.provider, lang)}",
        "where": f"{change.instance_type} · {change.region}",
        "prices": _move_prices(change, lang, display),
        "pct": change.change_pct or 0.0,
        "line": _move_line(change, lang, display),
    }


def _headline(digest: Digest, moves: list[Change], since: str, lang: str) -> str:
    """ "GPU prices since 2026-11-30: 14 cheaper, 3 dearer; biggest: L4 spot on AWS -27.0%" """
    cheaper = sum(1 for c in digest.changed if (c.change_pct or 0) < 0)
    dearer = sum(1 for c in digest.changed if (c.change_pct or 0) > 0)
    counts = [phrase(k, lang, n=n) for k, n in (("head.cheaper", cheaper), ("head.dearer", dearer)) if n]
    if digest.added:
        counts.append(phrase("head.added", lang, n=len(digest.added)))
    if digest.removed:
        counts.append(phrase("head.removed", lang, n=len(digest.removed)))
    text = phrase("head", lang, since=since, counts=("，" if lang == "zh" else ", ").join(counts))
    if moves:
        top = moves[0]
        what = phrase(
            "head.what", lang, gpu=top.gpu, pricing=_pricing(top.pricing, lang), provider=_provider(top.provider, lang)
        )
        text += phrase("head.biggest", lang, what=what, pct=_pct(top.change_pct or 0.0))
    return text


def _datasets(digest: Digest, all_providers: bool = False) -> list[dict]:
    """The price lists the digest compared, newest snapshot of each provider: provider, source and date."""
    return [
        {"provider": p.provider, "source": p.new.source, "date": p.new.taken_at.date().isoformat()}
        for p in digest.providers
        if p.new is not None and (all_providers or p.changes)
    ]


def matches_gpus(gpus: Iterable[str]):
    """A predicate over changes: True for the named GPU families ("A100" covers its variants; "A100 80GB" one)."""
    refs = [GpuRef.parse(g) for g in gpus]
    if not refs:
        return lambda change: True

    def keep(change: Change) -> bool:
        for ref in refs:
            if change.gpu.lower() == ref.family.lower() and (
                ref.memory_gb is None or (change.gpu_memory_gb and abs(change.gpu_memory_gb - ref.memory_gb) < 0.6)
            ):
                return True
        return False

    return keep


_Groups = list[tuple[tuple[str, str, str], dict[str, list[Change]]]]  # ((gpu, provider, pricing), changes by kind)


def summarize(
    digest: Digest,
    query: Query | None = None,
    *,
    lang: str | None = None,
    top: int = MAX_MOVES,
    no_changes_one_line: bool = False,
    display: dict | None = None,
) -> Answer:
    """The digest as an `Answer`: per-family summary lines, then the biggest moves, in the query's language;
    `display`: the display currency every USD price is also shown in (`handlers.display`)."""
    query = query or Query(intent="digest", language=lang or "en")
    lang = lang or query.language
    since = _since(digest)
    if (quiet := _quiet(digest, query, lang, since, no_changes_one_line)) is not None:
        return quiet
    ordered = _grouped(digest)
    moves = sorted(digest.changed, key=lambda c: (-abs(c.change_pct or 0.0), c.key))[:top]
    lines = [f"• {_group_line(key, items, lang)}" for key, items in ordered[:MAX_GROUPS]]
    if len(ordered) > MAX_GROUPS:
        lines.append(phrase("more_groups", lang, n=len(ordered) - MAX_GROUPS))
    if moves:
        lines.append("")
        lines.append(phrase("moves", lang))
        lines += [f"  {n}. {_move_line(c, lang, display)}" for n, c in enumerate(moves, start=1)]
    lines += _stock_lines(digest.stock, lang, top)
    notes = [*_filtered(digest, lang), _threshold(digest, lang)]
    if display and moves:  # the rate, once, with its source and date (the pipeline's note when asked there)
        notes.append(rate_note(display, lang))
    return Answer(
        query=query,
        title=phrase("title", lang, since=since),
        lines=lines,
        notes=notes,
        sources=_sources(digest),
        extra={"digest": _view(digest, ordered, moves, since, lang, display)},
    )


def _quiet(digest: Digest, query: Query, lang: str, since: str, one_line: bool) -> Answer | None:
    """The answer when there is nothing to list: no history, a single snapshot, or no change above the threshold
    (`one_line`: just that line); None when there are changes."""
    if not digest.providers:
        return Answer(query=query, title=phrase("title.no_history", lang), extra={"digest": {"state": "no_history"}})
    if all(p.old is None for p in digest.providers):
        state = {"state": "one_snapshot", "datasets": _datasets(digest, all_providers=True)}
        return Answer(query=query, title=phrase("title.one_snapshot", lang, since=since), extra={"digest": state})
    if digest:
        return None
    title = phrase("no_changes_line" if one_line else "title.none", lang, since=since)
    notes = _filtered(digest, lang) + ([] if one_line else [_threshold(digest, lang)])
    empty = {"headline": title, "changes": 0, "added": 0, "removed": 0, "datasets": _datasets(digest)}
    return Answer(query=query, title=title, notes=notes, extra={"digest": empty})


def _filtered(digest: Digest, lang: str) -> list[str]:
    """The GPU families the digest was narrowed to, if any."""
    return [phrase("filtered", lang, what=", ".join(digest.gpus))] if digest.gpus else []


def _threshold(digest: Digest, lang: str) -> str:
    """The smallest move listed, and how many smaller ones were left out."""
    small = sum(p.changes.below_threshold for p in digest.providers)
    return phrase("threshold", lang, t=digest.threshold_pct, small=small)


def _sources(digest: Digest) -> list[Source]:
    """The newest snapshot's source of each provider with changes."""
    return [Source(source=p.new.source, as_of=p.new.taken_at.date().isoformat()) for p in digest.providers if p.changes]


def _grouped(digest: Digest) -> _Groups:
    """The changes per (GPU, provider, pricing), by kind (changed, added, removed), the most changes first."""
    groups: dict[tuple[str, str, str], dict[str, list[Change]]] = defaultdict(
        lambda: {"changed": [], "added": [], "removed": []}
    )
    for kind, changes in (("changed", digest.changed), ("added", digest.added), ("removed", digest.removed)):
        for change in changes:
            groups[(change.gpu, change.provider, change.pricing)][kind].append(change)
    return sorted(groups.items(), key=lambda kv: (-sum(len(v) for v in kv[1].values()), kv[0]))


def _view(
    digest: Digest, ordered: _Groups, moves: list[Change], since: str, lang: str, display: dict | None
) -> dict[str, Any]:
    """The digest's JSON (`extra["digest"]`): headline, every group's line and counts, the moves, the datasets."""
    return {
        "headline": _headline(digest, moves, since, lang),
        "group_lines": [_group_line(key, items, lang) for key, items in ordered],
        "moves": [_move_view(c, lang, display) for c in moves],
        "datasets": _datasets(digest),
        "changes": len(digest.changed),
        "added": len(digest.added),
        "removed": len(digest.removed),
        "stock": len(digest.stock),
        "groups": [
            {"gpu": k[0], "provider": k[1], "pricing": k[2], **{kind: len(v) for kind, v in items.items()}}
            for k, items in ordered
        ],
    }


def _prices_of_now(kb: KB | None):
    """A change counts when ask could rank its offer (`knowledge.catalog.current`): a price move of an offer that
    cannot be ordered at its pricing model is not news. Without a knowledge base every change counts."""
    if kb is None:
        return lambda change: True
    from knowledge.catalog import current

    blocked: dict[str, frozenset] = {}

    def keep(change: Change) -> bool:
        if change.provider not in blocked:
            blocked[change.provider] = current.not_orderable(kb.current(), change.provider)
        return current.counts(change, blocked[change.provider])

    return keep


def _stock_lines(changes: list[Change], lang: str, top: int) -> list[str]:
    """ "Stock changes:" and one line per offer whose stock a live source saw change (issue 28)."""
    if not changes:
        return []
    from handlers.i18n import t

    lines = ["", phrase("stock", lang)]
    seen: dict[tuple, Change] = {}
    for change in changes:  # stock is the offer's, not a pricing model's: one line per offer
        seen.setdefault(
            (change.provider, change.instance_type, change.region, change.old_stock, change.new_stock), change
        )
    for change in list(seen.values())[:top]:
        old, new = (t(f"live.stock.{s}", lang) for s in (change.old_stock, change.new_stock))
        lines.append(
            "  • "
            + phrase(
                "stock_line",
                lang,
                provider=_provider(change.provider, lang),
                instance=change.instance_type,
                region=change.region,
                old=old,
                new=new,
            )
        )
    return lines


def handle(query: Query, kb: KB | None = None, reader: HistoryReader | None = None) -> Answer:
    """digest [gpu] [provider] [spot|on-demand]: GPU price changes since the previous snapshot"""
    from knowledge.history.diff import diff_since
    from knowledge.history.reader import state_reader

    digest = diff_since(reader or state_reader(), provider_names=query.providers or None)
    keep_gpu = matches_gpus(query.gpus)
    now = _prices_of_now(kb)
    digest = digest.filtered(lambda c: keep_gpu(c) and (query.pricing is None or c.pricing == query.pricing) and now(c))
    if query.gpus:
        digest = Digest(digest.providers, digest.threshold_pct, digest.since, tuple(query.gpus))
    return summarize(digest, query, display=for_query(query, kb) if kb is not None else None)
