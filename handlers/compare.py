"""compare <gpu | instance | provider> vs <...> [pricing]: specs side by side, price per GPU-hour and PFLOPS-hour."""

from __future__ import annotations

from dataclasses import dataclass, field

from handlers import brief
from handlers.common import money, name_notes, offer, pricing_label, sources
from handlers.display import unit
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.models import Answer, Offer, Query
from handlers.spec import (
    errata_json,
    errata_lines,
    instance_specs,
    match_errata,
    row_line,
    spec_rows_for,
    split_errata,
)
from knowledge.facts import rules as R
from knowledge.facts.question_facts import query_facts
from knowledge.kb import ranks
from knowledge.kb.reader import KB, GpuRef, OfferFilters

PROVIDER_FAMILIES = ("H100", "A100", "L4")  # compared when providers are named without a GPU
MAX_SUBJECTS = 3


@dataclass
class _Table:
    """What the comparison shows, filled subject by subject: specs, lines (datasheets, the first pricing's
    prices), the offers shown, each subject's (name, main spec) and (name, first offer, TFLOPS), and the other
    pricings' lines (shown on request)."""

    specs: list[dict] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    shown: list[Offer] = field(default_factory=list)
    ratios: list[tuple[str, dict | None]] = field(default_factory=list)
    firsts: list[tuple[str, Offer | None, float]] = field(default_factory=list)
    other_prices: list[str] = field(default_factory=list)


def handle(query: Query, kb: KB) -> Answer:
    """compare <gpu|instance|provider> vs <...> [pricing]: specs, price per GPU-hour, price per dense PFLOPS-hour"""
    lang = query.language
    notes, suggestions = name_notes(query)
    subjects = _subjects(query, kb)
    errata = match_errata(query, kb)
    facts = {**query_facts(query), "erratum_ids": [e["id"] for e in errata]}
    if len(subjects) < 2 and not errata:
        return Answer(
            query=query,
            title=t("cmp.which", lang),
            notes=notes,
            suggestions=suggestions,
            lines=[t("cmp.try", lang, items=t("word.list", lang).join(f"`{x}`" for x in comparisons(query)))],
            rules=rule_hits(R.evaluate(facts, lang, groups=("spec",))),
        )
    pricings = [query.pricing] if query.pricing else ["on_demand", "spot", "reserved_1y"]
    table = _Table()
    for name, rows, filters in subjects:
        _add_subject(
            kb,
            query,
            table,
            name,
            rows,
            {pricing: _cheapest(kb, query, filters, pricing) for pricing in pricings},
            facts,
        )
    lines = table.lines + _ratio_lines(table.ratios, lang) + errata_lines(errata, lang)
    from handlers.work import serving_lines  # measured $ per 1M tokens when serving is compared (#15)

    lines += serving_lines(kb, query)
    fired = R.evaluate(facts, lang, groups=("cost", "spec"))
    what = " vs ".join(s[0] for s in subjects) or ", ".join(e["id"] for e in errata)
    if query.budget and query.budget.per != "total":
        notes.insert(0, t("cmp.budget", lang, cap=brief.budget_label(query.budget, lang)))
    errata_shown, errata_other = split_errata(errata, lines, lang, table.shown, query)
    lines = [line for line in lines if line not in errata_other]
    details = table.other_prices + errata_other
    return Answer(
        query=query,
        title=winner_line(what, table.firsts, pricing_label(pricings[0], lang), lang)
        or t("cmp.title", lang, what=what),
        offers=table.shown,
        specs=table.specs,
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=sources(table.shown),
        extra={"errata": errata_json(errata, lang), **({"details": details} if details else {})},
    )


def _add_subject(
    kb: KB, query: Query, table: _Table, name: str, rows: list[dict], cheapest: dict[str, Offer | None], facts: dict
) -> None:
    """Add one subject to `table`: its datasheet (once per GPU), and its cheapest offer per pricing (`cheapest`,
    the first pricing's shown, the others' on request)."""
    lang = query.language
    first = next(iter(cheapest))
    main = _main_spec(rows, cheapest[first])
    table.specs += [r for r in rows if r not in table.specs]
    if main and row_line(main, lang) not in table.lines:  # the same GPU on two clouds: its datasheet once
        table.lines.append(row_line(main, lang))
    tflops, precision = _throughput(main)
    if tflops:
        facts["throughput_precision"] = "BF16/FP16"
    for pricing, best in cheapest.items():
        if pricing == first:
            table.firsts.append((name, best, tflops))
        if best is None:
            missing = t("cmp.no_price", lang, name=name, pricing=pricing_label(pricing, lang))
            (table.lines if pricing == first else table.other_prices).append(missing)
            continue
        line = _price_line(name, best, pricing, tflops, precision, lang)
        (table.lines if pricing == first else table.other_prices).append(line)  # other pricings: on request
        if pricing == first:
            table.shown.append(best)
    table.ratios.append((name, main))


def _price_line(name: str, best: Offer, pricing: str, tflops: float, precision: str, lang: str) -> str:
    """A subject's cheapest offer at one pricing: price per GPU-hour, where, and per dense PFLOPS-hour."""
    ppf = (
        t("cmp.ppf", lang, value=money(best.price_per_gpu_hour_usd / (tflops / 1000)), precision=precision)
        if tflops
        else ""
    )
    return t(
        "cmp.price",
        lang,
        name=name,
        pricing=pricing_label(pricing, lang),
        price=money(best.price_per_gpu_hour_usd),
        unit=unit(best, lang),  # a TPU: per chip-hour
        provider=brief.provider_label(best.provider, lang),
        instance=best.instance_type,
        region=best.region,
        ppf=ppf,
    )


PEERS = {
    "A100": ("H100", "L40S"),
    "H100": ("H200", "A100"),
    "H200": ("H100", "B200"),
    "B200": ("H200", "H100"),
    "L4": ("T4", "A10G"),
    "T4": ("L4", "A10"),
    "A10": ("L4", "A10G"),
    "A10G": ("L4", "A10"),
    "L40S": ("A100", "H100"),
    "V100": ("A100", "T4"),
}
DEFAULT_COMPARISONS = {"training": ("A100", "H100"), "fine_tuning": ("A100", "H100"), "inference": ("L4", "T4")}


def comparisons(query: Query) -> list[str]:
    """Comparisons to suggest, built from what the question named (one GPU, instance type, provider, workload)."""
    vs = t("cmp.vs", query.language)
    out = []
    for name in query.gpus[:1]:
        family = GpuRef.parse(name).family
        out += [f"{name}{vs}{peer}" for peer in PEERS.get(family, ("H100", "A100")) if peer != family]
    for instance in query.instance_types[:1]:
        out.append(f"{instance}{vs}{'p5.48xlarge' if instance != 'p5.48xlarge' else 'p4d.24xlarge'}")
    for provider in query.providers[:1]:
        other = "gcp" if provider != "gcp" else "aws"
        out.append(t("cmp.try_providers", query.language, a=provider, b=other, gpu=(query.gpus or ["H100"])[0]))
    if not out:
        a, b = DEFAULT_COMPARISONS.get(query.workload or "", ("A100", "H100"))
        out = [f"{a}{vs}{b}", f"L4{vs}T4", t("cmp.try_providers", query.language, a="aws", b="gcp", gpu="H100")]
    return list(dict.fromkeys(out))[:3]


def winner_line(what: str, firsts: list[tuple[str, Offer | None, float]], pricing: str, lang: str) -> str | None:
    """Line one of a comparison: the winner per GPU-hour and by how much (and per PFLOPS-hour when that differs)."""
    priced = sorted([(b.price_per_gpu_hour_usd, n, b, f) for n, b, f in firsts if b], key=lambda x: x[0])
    if not priced:
        return None
    if len(priced) == 1:
        missing = ", ".join(n for n, b, _ in firsts if b is None)
        return t(
            "verdict.cmp_only",
            lang,
            what=what,
            pricing=pricing,
            name=priced[0][1],
            price=money(priced[0][0]),
            unit=unit(priced[0][2], lang),
            missing=missing,
        )
    (p1, n1, b1, f1), (p2, n2, b2, f2) = priced[0], priced[1]
    line = t(
        "verdict.cmp",
        lang,
        what=what,
        pricing=pricing,
        winner=n1,
        price=money(p1),
        unit=unit(b1, lang),
        other=n2,
        other_price=money(p2),
        other_unit=unit(b2, lang),
        pct=100 * (1 - p1 / p2) if p2 else 0.0,
    )
    if f1 and f2 and p2 / f2 < p1 / f1:  # the dearer one does more per dollar at datasheet peak
        line += t("verdict.cmp_ppf", lang, name=n2, pct=100 * (1 - (p2 / f2) / (p1 / f1)))
    return line


def _subjects(query: Query, kb: KB) -> list[tuple[str, list[dict], OfferFilters]]:
    """(name, datasheet rows, offer filters) for each GPU, instance type or provider compared."""
    subjects: list[tuple[str, list[dict], OfferFilters]] = []
    for instance_type in query.instance_types[:MAX_SUBJECTS]:
        row, rows = instance_specs(kb, instance_type)
        if row:
            subjects.append((instance_type, rows, {"instance_types": [instance_type]}))
    if len(query.providers) >= 2 and len(query.gpus) <= 1:
        families = query.gpus or list(PROVIDER_FAMILIES)
        for provider in query.providers[:MAX_SUBJECTS]:
            for family in families:
                ref = GpuRef.parse(family)
                subjects.append(
                    (
                        f"{brief.provider_label(provider, query.language)} {ref}",
                        spec_rows_for(kb, ref),
                        {"gpus": [ref], "providers": [provider]},
                    )
                )
        return subjects
    for name in query.gpus[:MAX_SUBJECTS]:
        ref = GpuRef.parse(name)
        subjects.append((str(ref), spec_rows_for(kb, ref), {"gpus": [ref]}))
    return subjects


def _cheapest(kb: KB, query: Query, filters: OfferFilters, pricing: str) -> Offer | None:
    """The cheapest whole offer of one subject, within the question's hourly budget when it says one."""
    merged: OfferFilters = {"providers": query.providers, "regions": query.regions, **filters, "pricing": pricing}
    cap = brief.budget_cap(query, kb.fx())  # `spec.whole` in SQL: whole GPUs, orderable, host priced
    row = ranks.first(kb, {**merged, "orderable": True}, cap, stock_last=False, whole_gpus=True)
    return offer(row) if row else None


def _main_spec(rows: list[dict], shown: Offer | None) -> dict | None:
    """The datasheet row of the GPU the offer shown uses: its model, else a model of its memory, else the first."""
    if not rows:
        return None
    if shown is None:
        return rows[0]
    return (
        next((r for r in rows if shown.gpu_model and r["model"] == shown.gpu_model), None)
        or next((r for r in rows if shown.gpu_memory_gb and r["memory_gb"] == shown.gpu_memory_gb), None)
        or rows[0]
    )


def _throughput(spec: dict | None) -> tuple[float, str]:
    if not spec:
        return 0.0, ""
    if spec.get("bf16_tflops_dense"):
        return spec["bf16_tflops_dense"], "BF16"
    return (spec.get("fp16_tflops_dense") or 0.0), "FP16"


def _ratio_lines(pairs: list[tuple[str, dict | None]], lang: str) -> list[str]:
    """How the first subject compares with each other one, datasheet column by column."""
    columns = (
        ("memory_gb", "memory"),
        ("memory_bandwidth_gbps", "bandwidth"),
        ("fp32_tflops", "FP32"),
        ("bf16_tflops_dense", "BF16 dense"),
        ("fp64_tflops", "FP64"),
    )
    lines = []
    (first_name, first), rest = pairs[0] if pairs else ("", None), pairs[1:]
    for name, other in rest:
        if not first or not other:
            continue
        items = [
            f"{t('cmp.col.' + label, lang)} {first[c] / other[c]:.2f}x"
            for c, label in columns
            if first.get(c) and other.get(c)
        ]
        if items:
            lines.append(t("cmp.ratio", lang, a=first_name, b=name, items=t("word.list", lang).join(items)))
    return lines
