"""cheapest <gpu> [xN] [spot|on-demand|reserved] [on provider] [in region]: the cheapest offers per GPU-hour."""

from __future__ import annotations

from collections.abc import Sequence

from handlers import brief, nearest, ranking
from handlers.asked_filters import filters_phrase
from handlers.common import money, name_notes, offer, place, pricing_label, sources
from handlers.display import both, for_query, unit
from handlers.freshness import answer_notes, out_of_stock_last
from handlers.i18n import MESSAGES, t
from handlers.models import Answer, Offer, Query
from handlers.offer_notes import excluded_note
from handlers.suspect import suspect_text
from handlers.terms import pricing_text
from handlers.unplaced import unplaced_note
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
    what = " / ".join(map(str, refs)) or (
        f">= {query.min_gpu_memory_gb:g} GB" if query.min_gpu_memory_gb else t("kind.gpu", lang)
    )
    if query.gpu_count:
        what = f"{query.gpu_count:g}x {what}"
    if query.machines and query.machines > 1:  # "2 nodes of 8 H100": two machines of that
        what = f"{query.machines}x {what}"
    whole_instance = ranking.per_instance(query)  # "per hour for the whole instance": rank per instance-hour
    if whole_instance:
        what += t("ranking.per_instance", lang)
    top = ranking.top(query, DEFAULT_TOP)  # "top 200": at most ranking.MAX_TOP lines
    filters: OfferFilters = {
        "gpus": refs,
        "pricing": pricing,
        "providers": query.providers,
        "regions": query.regions,
        "min_memory_gb": query.min_gpu_memory_gb,
    }
    counted: OfferFilters = {**filters, "gpu_count": query.gpu_count}
    rows = kb.offers(**counted)
    if not rows and query.gpu_count:
        rows = kb.offers(**filters)
        if rows:
            notes.append(t("cheapest.count_fallback", lang, count=query.gpu_count))
    if not query.gpus:
        rows = [r for r in rows if kb.gpu_kinds.get(r["gpu"]) == "gpu"]
    # Offers that cannot be ordered at this pricing model are left out, counted by reason
    # (knowledge.catalog.availability).
    rows, excluded = kb.split_orderable(rows, **filters)
    if note := excluded_note(excluded, pricing, lang):
        notes.append(note)
    if note := unplaced_note(kb, query, pricing):  # rows of the asked cloud under names not placed (issue 26)
        notes.append(note)
    whole = [r for r in rows if "GPU only" not in r["instance_type"]]
    details: list[str] = []
    if len(whole) < len(rows):  # a GPU-only figure (host VM price unknown) is not what a user pays
        details.append(t("cheapest.gpu_only_excluded", lang, count=len(rows) - len(whole)))
    before = whole
    whole, budget_note = brief.apply_budget(whole, query, kb.fx())
    if budget_note:
        notes.insert(0, budget_note)
        if before and not whole:  # nothing within the cap: say what the cheapest costs
            notes.insert(1, t("brief.budget_cheapest", lang, offer=offer_phrase(kb, offer(before[0]), lang)))
    whole, out_of_stock = out_of_stock_last(whole)  # known out of stock: after the rest (issue 28)
    ranked, context = _with_articles(kb, query, refs, pricing, whole, notes, details)
    if not ranked:
        notes[:0] = [t("cheapest.none", lang, what=what, pricing=pricing_label(pricing, lang)),
                     *nearest.alternatives(kb, query, refs, pricing)]  # fmt: skip
    # every region when the question is about regions, else one line per provider + instance type (best region)
    if whole_instance:
        ranked = ranking.by_instance_hour(ranked)
    picked = [(item, 0) for item in ranked] if brief.asks_regions(query) else brief.distinct(ranked)
    options = [_as_offer(item).model_copy(update={"other_regions": n}) for item, n in picked]
    options = options if whole_instance else ranking.collapse(options)  # per instance-hour, sizes differ
    shown = options[:top]
    if said := ranking.top_facts(query, len(shown), len(options)):  # "top 200": what the cap and the data allow
        key = "cheapest.top_capped" if len(options) > len(shown) else "cheapest.top_all"
        notes.insert(0, t(key, lang, **said))
    if any(o.vgpu for o in shown):
        notes.append(t("cheapest.vgpu", lang))
    if out_of_stock:
        notes.append(t("cheapest.out_of_stock_last", lang, count=out_of_stock))
    notes += answer_notes(shown, lang)  # mixed freshness tiers, live sources silent for a day
    return Answer(
        query=query,
        title=_verdict(kb, query, what, pricing, shown),
        offers=shown,
        context=context,
        notes=notes,
        suggestions=suggestions,
        sources=sources(shown),
        more=max(0, len(options) - top),
        extra={"excluded": excluded, **({"details": details} if details else {}), **({"top": said} if said else {})},
    )


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


def _as_offer(item: dict | Offer) -> Offer:
    return item if isinstance(item, Offer) else offer(item)


def _with_articles(
    kb: KB, query: Query, refs: list[GpuRef], pricing: str, ranked: list[dict], notes: list[str], details: list[str]
) -> tuple[Sequence[dict | Offer], list[Offer]]:
    """Rank catalog offers (rows, cheapest first); seed-article figures rank only for providers without a catalog
    that were asked for (or when nothing else is known), and are otherwise shown as dated context beside the
    catalog's best price."""
    articles = [
        offer(r)
        for r in kb.offers(gpus=refs, pricing=pricing, providers=query.providers, kinds=("article",))
        if r.get("servable") and (not query.gpu_count or abs(r["gpu_count"] - query.gpu_count) < 1e-6)
    ]
    if not articles or not refs or query.regions:  # an article figure has no region: not for a region question
        return ranked, []
    catalog_providers = {pid for pid, row in kb.providers.items() if row.get("has_catalog")}
    asked = set(query.providers)
    rank_articles = [a for a in articles if a.provider not in catalog_providers and (a.provider in asked or not ranked)]
    for provider in sorted({a.provider for a in rank_articles}):
        notes.append(t("cheapest.article_only", query.language, provider=_provider_name(kb, provider, query.language)))
    context = [a for a in articles if a not in rank_articles]
    pool: list[dict | Offer] = [*ranked, *rank_articles]
    merged = sorted(pool, key=_rank_key)
    best = {o["provider"]: o for o in reversed(ranked)}
    lang = query.language
    for item in context:
        if row := best.get(item.provider):
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
