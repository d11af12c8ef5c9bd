"""compare <gpu | instance | provider> vs <...> [pricing]: specs side by side, price per GPU-hour and PFLOPS-hour."""

from __future__ import annotations

from handlers.common import money, name_notes, offer, pricing_label, sources
from handlers.i18n_rules import provider_name, rule_hits, t
from handlers.models import Answer, Offer, Query
from handlers.spec import errata_json, errata_lines, instance_specs, match_errata, row_line, spec_rows_for, whole
from knowledge import rules as R
from knowledge.kb import KB, GpuRef

PROVIDER_FAMILIES = ("H100", "A100", "L4")  # compared when providers are named without a GPU
MAX_SUBJECTS = 3


def handle(query: Query, kb: KB) -> Answer:
    """compare <gpu|instance|provider> vs <...> [pricing]: specs, price per GPU-hour, price per dense PFLOPS-hour"""
    lang = query.language
    notes, suggestions = name_notes(query)
    subjects = _subjects(query, kb)
    errata = match_errata(query, kb)
    facts = {**R.query_facts(query), "erratum_ids": [e["id"] for e in errata]}
    if len(subjects) < 2 and not errata:
        return Answer(query=query, title=t("cmp.which", lang), notes=notes, suggestions=suggestions,
                      rules=rule_hits(R.evaluate(facts, lang, groups=("spec",))))
    pricings = [query.pricing] if query.pricing else ["on_demand", "spot", "reserved_1y"]
    specs, lines, shown = [], [], []
    ratios = []
    for name, rows, filters in subjects:
        main = _main_spec(kb, rows, {"providers": query.providers, "regions": query.regions, **filters})
        specs += [r for r in rows if r not in specs]
        if main:
            lines.append(row_line(main, lang))
        tflops, precision = _throughput(main)
        if tflops:
            facts["throughput_precision"] = "BF16/FP16"
        for pricing in pricings:
            best = _cheapest(kb, query, filters, pricing)
            if best is None:
                lines.append(t("cmp.no_price", lang, name=name, pricing=pricing_label(pricing, lang)))
                continue
            ppf = t("cmp.ppf", lang, value=money(best.price_per_gpu_hour_usd / (tflops / 1000)), precision=precision) \
                if tflops else ""
            lines.append(t("cmp.price", lang, name=name, pricing=pricing_label(pricing, lang),
                           price=money(best.price_per_gpu_hour_usd), provider=provider_name(kb, best.provider, lang),
                           instance=best.instance_type, region=best.region, ppf=ppf))
            if pricing == pricings[0]:
                shown.append(best)
        ratios.append((name, main))
    lines += _ratio_lines(ratios, lang) + errata_lines(errata, lang)
    from handlers.work import serving_lines  # measured $ per 1M tokens when serving is compared (#15)

    lines += serving_lines(kb, query)
    fired = R.evaluate(facts, lang, groups=("cost", "spec"))
    return Answer(
        query=query,
        title=t("cmp.title", lang, what=" vs ".join(s[0] for s in subjects) or ", ".join(e["id"] for e in errata)),
        offers=shown,
        specs=specs,
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=sources(shown),
        extra={"errata": errata_json(errata, lang)},
    )


def _subjects(query: Query, kb: KB) -> list[tuple[str, list[dict], dict]]:
    """(name, datasheet rows, offer filters) for each GPU, instance type or provider compared."""
    subjects = []
    for instance_type in query.instance_types[:MAX_SUBJECTS]:
        row, rows = instance_specs(kb, instance_type)
        if row:
            subjects.append((instance_type, rows, {"instance_types": [instance_type]}))
    if len(query.providers) >= 2 and len(query.gpus) <= 1:
        families = query.gpus or list(PROVIDER_FAMILIES)
        for provider in query.providers[:MAX_SUBJECTS]:
            for family in families:
                ref = GpuRef.parse(family)
                subjects.append((f"{provider_name(kb, provider, query.language)} {ref}", spec_rows_for(kb, ref),
                                 {"gpus": [ref], "providers": [provider]}))
        return subjects
    for name in query.gpus[:MAX_SUBJECTS]:
        ref = GpuRef.parse(name)
        subjects.append((str(ref), spec_rows_for(kb, ref), {"gpus": [ref]}))
    return subjects


def _cheapest(kb: KB, query: Query, filters: dict, pricing: str) -> Offer | None:
    merged = {"providers": query.providers, "regions": query.regions, **filters}
    for row in kb.offers(pricing=pricing, **merged):
        if whole(row):
            return offer(row)
    return None


def _main_spec(kb: KB, rows: list[dict], filters: dict) -> dict | None:
    """The datasheet row of the model the cheapest on-demand offer uses (else the first row)."""
    if not rows:
        return None
    cheapest = [r for r in kb.offers(pricing="on_demand", **filters) if whole(r) and r["gpu_model"]][:1]
    model = cheapest[0]["gpu_model"] if cheapest else None
    return next((r for r in rows if r["model"] == model), rows[0])


def _throughput(spec: dict | None) -> tuple[float, str]:
    if not spec:
        return 0.0, ""
    if spec.get("bf16_tflops_dense"):
        return spec["bf16_tflops_dense"], "BF16"
    return (spec.get("fp16_tflops_dense") or 0.0), "FP16"


def _ratio_lines(pairs: list[tuple[str, dict | None]], lang: str) -> list[str]:
    """How the first subject compares with each other one, datasheet column by column."""
    columns = (("memory_gb", "memory"), ("memory_bandwidth_gbps", "bandwidth"), ("fp32_tflops", "FP32"),
               ("bf16_tflops_dense", "BF16 dense"), ("fp64_tflops", "FP64"))
    lines = []
    (first_name, first), rest = pairs[0] if pairs else ("", None), pairs[1:]
    for name, other in rest:
        if not first or not other:
            continue
        items = [f"{label} {first[c] / other[c]:.2f}x" for c, label in columns if first.get(c) and other.get(c)]
        if items:
            lines.append(t("cmp.ratio", lang, a=first_name, b=name, items=", ".join(items)))
    return lines
