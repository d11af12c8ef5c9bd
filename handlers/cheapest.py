"""cheapest <gpu> [xN] [spot|on-demand|reserved] [on provider] [in region]: the cheapest offers per GPU-hour."""

from __future__ import annotations

from collections.abc import Sequence

from handlers import brief, nearest, ranking
from handlers.asked_filters import filters_phrase
from handlers.common import money, name_notes, offer, place, pricing_label, sources
from handlers.display import both, for_query, unit
from handlers.freshness import answer_notes
from handlers.i18n import MESSAGES, t
from handlers.models import Answer, Offer, Query
from handlers.offer_notes import excluded_note
from handlers.suspect import suspect_text
from handlers.terms import pricing_text
from handlers.unplaced import unplaced_note
from knowledge.kb import ranks
from knowledge.kb.reader import KB, GpuRef, OfferFilters, gpu_refs

DEFAULT_TOP = 5


def handle(query: Query, kb: KB) -> Answer:
    """cheapest <gpu> [xN] [spot|on-demand|reserved] [on provider] [in region]: cheapest offers per GPU-hour"""
    lang = query.language
    pricing = query.pricing or "on_demand"
    notes, suggestions = name_notes(query)
    if not query.gpus and not query.min_gpu_memory_gb and not _any_gpu(query):
        return Answer(query=query, title=t("cheapest.which_gpu", lang), notes=notes, suggestions=suggestions)
    refs = gpu_refs(query.gpus, query.gpu_variants)  # "cheapest H100 PCIe": only that form factor
    what = _what(query, refs)
    top = ranking.top(query, DEFAULT_TOP)  # "top 200": at most ranking.MAX_TOP lines
    asked = _asked(kb, query, refs, pricing, notes)
    cap = brief.budget_cap(query, kb.fx())
    count, ranked, catalog_lines = _ranked(kb, query, asked, cap, top)
    details = _count_notes(kb, query, pricing, count, (asked, cap), notes)
    orderable: OfferFilters = {**asked, "orderable": True}
    items, context = _with_articles(kb, query, refs, pricing, ranked, (orderable, cap), notes, details)
    if not items:
        notes[:0] = [t("cheapest.none", lang, what=what, pricing=pricing_label(pricing, lang)),
                     *nearest.alternatives(kb, query, refs, pricing)]  # fmt: skip
    # every region when the question is about regions, else one line per provider + instance type (best region),
    # and (per GPU-hour) one line per group of sizes (handlers.ranking)
    lines = [[item] for item in items] if ranking.per_instance(query) else ranking.groups(items)
    if catalog_lines is not None:  # only the first lines were read: the catalog's counted in SQL, articles one each
        available = catalog_lines + sum(isinstance(item, Offer) for item in items)
    else:
        available = len(lines)
    shown_rows = ranks.full_rows(kb, [m[0]["rid"] for m in lines[:top] if isinstance(m[0], dict)])
    shown = [ranking.line(_line_offer(m[0], shown_rows), m) for m in lines[:top]]
    if said := ranking.top_facts(query, len(shown), available):  # "top 200": what the cap and the data allow
        key = "cheapest.top_capped" if available > len(shown) else "cheapest.top_all"
        notes.insert(0, t(key, lang, **said))
    notes += _shown_notes(query, shown, count)
    return Answer(
        query=query,
        title=_verdict(kb, query, what, pricing, shown),
        offers=shown,
        context=context,
        notes=notes,
        suggestions=suggestions,
        sources=sources(shown),
        more=max(0, available - top),
        extra={
            "excluded": count.excluded,
            **({"details": details} if details else {}),
            **({"top": said} if said else {}),
        },
    )


def _what(query: Query, refs: list[GpuRef]) -> str:
    """What the question asks the cheapest of: "2x 8x H100", ">= 80 GB", "GPU", "... per instance"."""
    lang = query.language
    what = " / ".join(map(str, refs)) or (
        f">= {query.min_gpu_memory_gb:g} GB" if query.min_gpu_memory_gb else t("kind.gpu", lang)
    )
    if query.gpu_count:
        what = f"{query.gpu_count:g}x {what}"
    if query.machines and query.machines > 1:  # "2 nodes of 8 H100": two machines of that
        what = f"{query.machines}x {what}"
    if ranking.per_instance(query):  # "per hour for the whole instance": rank per instance-hour
        what += t("ranking.per_instance", lang)
    return what


def _asked(kb: KB, query: Query, refs: list[GpuRef], pricing: str, notes: list[str]) -> OfferFilters:
    """The offer filters of the question; a GPU count no offer has is dropped (saying so)."""
    filters: OfferFilters = {
        "gpus": refs,
        "pricing": pricing,
        "providers": query.providers,
        "regions": query.regions,
        "min_memory_gb": query.min_gpu_memory_gb,
    }
    asked: OfferFilters = {**filters, "gpu_count": query.gpu_count}
    if query.gpu_count and not kb.offers(**asked, limit=1):
        asked = filters
        if kb.offers(**filters, limit=1):
            notes.append(t("cheapest.count_fallback", query.language, count=query.gpu_count))
    if not query.gpus:
        asked = {**asked, "gpu_kind": "gpu"}
    return asked


def _ranked(
    kb: KB, query: Query, asked: OfferFilters, cap: tuple[str, float] | None, top: int
) -> tuple[ranks.Tally, list[dict], int | None]:
    """The Tally and the catalog rows to rank, and how many catalog lines there are when only the first `top`
    lines' rows were read (`ranks.lines`: a family per GPU-hour, no cap, region or exclusion), else None (every
    row read). kb: narrowed by the question's exclusions (handlers.constraints)."""
    whole_instance, every_region = ranking.per_instance(query), brief.asks_regions(query)
    if not (cap or whole_instance or every_region) and (summary := ranks.lines(kb, asked, max(top, 1))):
        return summary
    count, ranked = ranks.ranking(kb, asked, cap, per_instance_hour=whole_instance, every_region=every_region)
    return count, ranked, None


def _count_notes(
    kb: KB,
    query: Query,
    pricing: str,
    count: ranks.Tally,
    ranking_of: tuple[OfferFilters, tuple[str, float] | None],
    notes: list[str],
) -> list[str]:
    """Notes on what the ranking left out and the budget (added to `notes`); the details shown on request."""
    lang = query.language
    asked, cap = ranking_of
    # Offers that cannot be ordered at this pricing model are left out, counted by reason
    # (knowledge.catalog.availability).
    if note := excluded_note(count.excluded, pricing, lang):
        notes.append(note)
    if note := unplaced_note(kb, query, pricing):  # rows of the asked cloud under names not placed (issue 26)
        notes.append(note)
    details: list[str] = []
    if count.gpu_only:  # a GPU-only figure (host VM price unknown) is not what a user pays
        details.append(t("cheapest.gpu_only_excluded", lang, count=count.gpu_only))
    if cap:
        notes.insert(0, brief.budget_note(query, count.whole - count.within, count.whole))
        if count.whole and not count.within:  # nothing within the cap: say what the cheapest costs
            cheapest = ranks.first(kb, {**asked, "orderable": True}, stock_last=False)
            notes.insert(1, t("brief.budget_cheapest", lang, offer=offer_phrase(kb, offer(cheapest or {}), lang)))
    return details


def _shown_notes(query: Query, shown: list[Offer], count: ranks.Tally) -> list[str]:
    """Notes on the lines shown: vGPU slices, out-of-stock offers ranked last, freshness."""
    lang = query.language
    notes = []
    if any(o.vgpu for o in shown):
        notes.append(t("cheapest.vgpu", lang))
    if count.out_of_stock:
        notes.append(t("cheapest.out_of_stock_last", lang, count=count.out_of_stock))
    return notes + answer_notes(shown, lang)  # mixed freshness tiers, live sources silent for a day


def _any_gpu(query: Query) -> bool:
    """ "cheapest GPU in asia under $0.5/GPU-h": no GPU named, but the question narrows what it wants."""
    narrowed = (query.regions, query.providers, query.pricing, query.budget, query.gpu_count, query.exclude_gpus)
    return query.any_gpu or any(narrowed)


def machines_line(query: Query, item: Offer, display: dict | None = None) -> str:
    """ "; 2 machines: $XX.XX/h" for a question about several machines, else ""; with a display currency also in
    it ("$30.40/h (≈ ¥220.28/h)"), a vendor's own currency kept."""
    if not query.machines or query.machines < 2:
        return ""
    per_hour = t("unit.per_hour", query.language)
    if display and item.currency != display["currency"]:
        total = both(item.price_per_hour_usd * query.machines, display, per_hour)
    else:
        total = f"{money(item.price_per_hour * query.machines, item.currency)}{per_hour}"
    return t("cheapest.machines", query.language, n=query.machines, total=total)


def _verdict(kb: KB, query: Query, what: str, pricing: str, shown: list[Offer]) -> str:
    """Line one: what to rent, where, at what price."""
    lang = query.language
    label = pricing_label(pricing, lang)
    asked = t("cheapest.what", lang, what=what, pricing=label, filters=filters_phrase(query, lang))
    if not shown and query.budget and query.budget.per != "total":  # the cap is said once, after the colon
        asked = t("cheapest.what", lang, what=what, pricing=label, filters=filters_phrase(query, lang, budget=False))
        return t("verdict.none_within", lang, asked=asked, cap=brief.budget_label(query.budget, lang))
    if not shown and query.regions:  # "cheapest A100 spot in Osaka": say there is none there (alternatives below)
        where = ", ".join(query.region_names) or ", ".join(query.regions[:4]) + (" …" if len(query.regions) > 4 else "")
        return t("cheapest.none_in", lang, what=what, pricing=pricing_label(pricing, lang), where=where)
    if not shown:
        return t("cheapest.title", lang, what=what, pricing=pricing_label(pricing, lang))
    best = shown[0]
    machines = machines_line(query, best, for_query(query, kb))
    return t("verdict.cheapest", lang, asked=asked, offer=offer_phrase(kb, best, lang)) + machines


def offer_phrase(kb: KB, item: Offer, lang: str) -> str:
    """ "aws p4d.24xlarge in us-east-1 (use1-az1) at $0.3082/GPU-h ($2.47/h)" """
    where = place(item, lang) + (f" ({pricing_text(item, lang)})" if item.term else "")
    provider = brief.provider_label(item.provider, lang)
    price = f"{money(item.price_per_gpu_hour, item.currency)}{unit(item, lang)}"  # a TPU slice: per chip-hour
    hourly = f"{money(item.price_per_hour, item.currency)}{t('unit.per_hour', lang)}"
    usd = f", ≈ {money(item.price_per_gpu_hour_usd)}{unit(item, lang)}" if item.currency != "USD" else ""
    text = t(
        "verdict.offer",
        lang,
        provider=provider,
        instance=item.instance_type,
        where=where,
        price=price,
        hourly=hourly,
        usd=usd,
        vgpu=" [vGPU]" if item.vgpu else "",
    )
    return text + (f" [{suspect_text(item.suspect, lang)}]" if item.suspect else "")  # never unmarked (issue 26)


def _line_offer(item: dict | Offer, rows: dict[int, dict]) -> Offer:
    """The Offer of a ranking line's head: an article figure, or the full row of a catalog head."""
    if isinstance(item, Offer):
        return item
    return offer(rows[item["rid"]]).model_copy(update={"other_regions": item["other_regions"]})


def _with_articles(
    kb: KB,
    query: Query,
    refs: list[GpuRef],
    pricing: str,
    ranked: list[dict],
    ranking_of: tuple[OfferFilters, tuple[str, float] | None],
    notes: list[str],
    details: list[str],
) -> tuple[list[dict | Offer], list[Offer]]:
    """The ranked items: the catalog's (`ranked`: `knowledge.kb.ranks.ranking` of `ranking_of`, its filters and cap)
    with seed-article figures ranked only for providers without a catalog that were asked for (or when nothing else
    is known); other article figures are shown as dated context beside the catalog's best price."""
    whole_instance, every_region = ranking.per_instance(query), brief.asks_regions(query)
    articles = [
        offer(r)
        for r in kb.offers(gpus=refs, pricing=pricing, providers=query.providers, kinds=("article",))
        if r.get("servable") and (not query.gpu_count or abs(r["gpu_count"] - query.gpu_count) < 1e-6)
    ]
    if not articles or not refs or query.regions:  # an article figure has no region: not for a region question
        return [*ranked], []
    catalog_providers = {pid for pid, row in kb.providers.items() if row.get("has_catalog")}
    asked = set(query.providers)
    rank_articles = [a for a in articles if a.provider not in catalog_providers and (a.provider in asked or not ranked)]
    for provider in sorted({a.provider for a in rank_articles}):
        notes.append(t("cheapest.article_only", query.language, provider=_provider_name(kb, provider, query.language)))
    context = [a for a in articles if a not in rank_articles]
    picked: list[dict | Offer] = sorted(rank_articles, key=_rank_key)  # ranked as the catalog's rows are
    if whole_instance:
        picked = ranking.by_instance_hour(picked)
    merged: list[dict | Offer] = sorted([*ranked, *_per_instance_type(picked, every_region)], key=_rank_key)
    if whole_instance:
        merged = ranking.by_instance_hour(merged)
    lang = query.language
    for item in context:
        if row := ranks.first(kb, {**ranking_of[0], "providers": [item.provider]}, ranking_of[1]):
            cheapest = offer(row)
            details.append(
                t(  # dated context: shown on request (--verbose, "Why")
                    "cheapest.article_context",
                    lang,
                    as_of=item.as_of,
                    provider=_provider_name(kb, item.provider, lang),
                    status=t(f"cheapest.status.{item.status}", lang)
                    if f"cheapest.status.{item.status}" in MESSAGES
                    else item.status,
                    subject=item.instance_type,
                    price=_per_gpu(item),
                    best=f"{_per_gpu(cheapest)} ({cheapest.instance_type}, {cheapest.region})",
                )
            )
    return merged, context


def _per_instance_type(items: Sequence[dict | Offer], every_region: bool) -> list[Offer]:
    """Article figures as ranking lines: one per provider + instance type (or every one), with their other regions."""
    picked = [(item, 0) for item in items] if every_region else brief.distinct(items)
    return [_as_offer(item).model_copy(update={"other_regions": n}) for item, n in picked]


def _as_offer(item: dict | Offer) -> Offer:
    return item if isinstance(item, Offer) else offer(item)


def _rank_key(item: dict | Offer) -> tuple:
    if isinstance(item, dict):  # a catalog row, ordered like the knowledge base orders its query
        out = item.get("stock") == "out_of_stock"
        return (out, item["price_per_gpu_hour_usd"], item["provider"], item["instance_type"], item["region"])
    return (item.stock == "out_of_stock", item.price_per_gpu_hour_usd, item.provider, item.instance_type, item.region)


def _per_gpu(item: Offer) -> str:
    return f"{money(item.price_per_gpu_hour, item.currency)}{unit(item)}"


def _provider_name(kb: KB, provider: str, lang: str) -> str:
    row = kb.providers.get(provider) or {}
    return (row.get("name_zh") if lang == "zh" else row.get("name_en")) or provider
