"""spec <gpu | instance type> [precision]: datasheet figures with their source, dense vs sparse, seed errors fixed."""

from __future__ import annotations

import contextlib
import json
import re

from handlers.common import name_notes, scan_text
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.models import Answer, Offer, Query, Source
from handlers.parse.keywords import keywords_said, same_question
from knowledge.catalog.availability import orderable
from knowledge.catalog.identity import model_name
from knowledge.facts.question_facts import query_facts
from knowledge.kb.reader import KB, GpuRef

PRECISIONS = {  # asked precision -> (gpu_specs column, label)
    "fp64": ("fp64_tflops", "FP64"),
    "fp32": ("fp32_tflops", "FP32"),
    "tf32": ("tf32_tflops_dense", "TF32"),
    "bf16": ("bf16_tflops_dense", "BF16"),
    "fp16": ("fp16_tflops_dense", "FP16"),
    "fp8": ("fp8_tflops_dense", "FP8"),
    "int8": ("int8_tops_dense", "INT8"),
}
_SPARSE_VENDORS = ("A100", "H100", "H200", "L4", "L40", "L40S", "B200", "GB200", "A10", "A30", "A40", "RTX 6000 Ada")


MAX_INSTANCES = 12  # "which GPU is in NCv3?" lists the family's sizes; more are told as a count


def natural(name: str) -> list:
    """Sort key reading numbers as numbers: NC6s_v3 before NC12s_v3 before NC24rs_v3."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


def handle(query: Query, kb: KB) -> Answer:
    """spec <gpu | instance type> [fp8|fp32|...]: datasheet figures (dense), with source; seed errors corrected"""
    lang = query.language
    notes, suggestions = name_notes(query)
    errata = match_errata(query, kb)
    specs, lines, found, sources = [], [], [], []
    shown = sorted(query.instance_types, key=natural)[:MAX_INSTANCES]  # a family: every size, smallest first
    for instance_type in shown:
        row, spec_rows = instance_specs(kb, instance_type)
        if row:
            found.append(instance_type)
            source = Source(source=row["source"], as_of=row["as_of"] or "", as_of_known=bool(row["as_of_known"]))
            sources += [source] if source not in sources else []
            model = model_name(row["gpu_model"]) if row["gpu_model"] else row["gpu"]
            facts = dict(instance=instance_type, provider=row["provider"], count=row["gpu_count"], model=model)
            per = row["gpu_memory_gb"]
            key = "spec.instance" if per else "spec.instance_no_memory"
            lines.append(t(key, lang, **facts, total=row["gpu_count"] * (per or 0), per=per or 0))
            if not spec_rows:  # a catalog row whose GPU the datasheet table lacks is still an answer
                lines.append(t("spec.no_datasheet", lang, model=model))
            specs += [s for s in spec_rows if s not in specs]
    for name in query.gpus[:3]:
        specs += [s for s in spec_rows_for(kb, GpuRef.parse(name)) if s not in specs]
    asked = [p for p in query.precisions if p in PRECISIONS]
    lines += precision_lines(specs, asked, query.gpu_count, lang)
    if not asked:
        lines += [row_line(s, lang) for s in specs[:6]]
    if len(query.instance_types) > len(shown):
        lines.append(t("spec.more_instances", lang, n=len(query.instance_types) - len(shown)))
    lines += errata_lines(errata, lang)
    from knowledge.facts.rules import evaluate  # the rules load only for an answer that cites them

    facts = {**query_facts(query), "erratum_ids": [e["id"] for e in errata]}
    what = ", ".join([*shown, *query.gpus[:3]]) or ", ".join(e["id"] for e in errata)
    if not specs and not errata and not found:
        return Answer(
            query=query,
            title=t("spec.which", lang),
            notes=notes,
            suggestions=suggestions,
            rules=rule_hits(evaluate(facts, lang, groups=("spec",))),
        )
    return Answer(
        query=query,
        title=t("spec.title", lang, what=what),
        specs=specs,
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        sources=sources,
        rules=rule_hits(evaluate(facts, lang, groups=("spec",))),
        extra={"errata": errata_json(errata, lang)},
    )


def is_fact_question(query: Query, kb: KB) -> bool:
    """A question about a datasheet or instance fact rather than a price (for questions parsed as `price`):
    fact words ("bandwidth", "显存", "FP32") or a strong match with a seed erratum, and no price words."""
    if "price_words" in query.flags:
        return False
    return "fact_words" in query.flags or any(score >= 8 for score, _, _ in _scores(query, kb))


def with_errata(answer: Answer, query: Query, kb: KB) -> Answer:
    """Another handler's answer with the corrections of the seed errata the question clearly touches (the
    erratum's own question, two topic keywords, or a figure being checked), and their rule."""
    strong = {
        row["id"]
        for score, topical, row in _scores(query, kb)
        if score >= 10 or topical >= 2 or topical and "figure" in query.flags
    }
    errata = [e for e in match_errata(query, kb) if e["id"] in strong]
    if not errata:
        return answer
    from knowledge.facts.rules import evaluate  # the rules load only for an answer that cites them

    facts = {**query_facts(query), "erratum_ids": [e["id"] for e in errata]}
    hits = [h for h in rule_hits(evaluate(facts, query.language, groups=("spec",))) if h.id == "spec.seed-erratum"]

    near, far = split_errata(errata, [], query.language, answer.offers, query)
    extra = {**answer.extra, "errata": errata_json(errata, query.language)}
    if far:
        extra["details"] = [*(answer.extra.get("details") or []), *far]
    return answer.model_copy(update={"lines": [*answer.lines, *near], "rules": [*answer.rules, *hits], "extra": extra})


def whole(row: dict) -> bool:
    """A rentable whole-GPU offer: not a vGPU slice or fraction, not a GPU-only price without its host VM, and
    orderable at its pricing model (`knowledge.catalog.availability`)."""
    return not row["vgpu"] and row["gpu_count"] >= 1 and "GPU only" not in row["instance_type"] and orderable(row)


def cheapest_checked(query: Query, kb: KB) -> Answer:
    """cheapest <gpu> [xN] [spot|on-demand|reserved] [on provider] [in region]: cheapest offers per GPU-hour"""
    from handlers import cheapest  # the cheapest handler's answer, plus corrections when a seed error is asked about

    return with_errata(cheapest.handle(query, kb), query, kb)


def price_checked(query: Query, kb: KB) -> Answer:
    """price <instance type | gpu> [spot|on-demand|reserved] [region]: every known price of an instance type"""
    from handlers import price  # the price handler's answer, plus corrections when a seed error is asked about

    # the intent is final here (handlers/parse/reroute.py `settle`): fact and break-even questions never arrive
    return with_errata(price.handle(query, kb), query, kb)


def spec_rows_for(kb: KB, ref: GpuRef) -> list[dict]:
    """Datasheet rows of a GPU family (or one memory variant of it), as stored in gpu_specs."""
    sql = "SELECT * FROM gpu_specs WHERE family = ?"
    params: list = [ref.family]
    if ref.memory_gb:
        sql += " AND ABS(memory_gb - ?) < 0.6"
        params.append(ref.memory_gb)
    return kb.rows(sql + " ORDER BY memory_gb, model", params)


def instance_specs(kb: KB, instance_type: str) -> tuple[dict | None, list[dict]]:
    """(one catalog row of the instance type, datasheet rows of its GPU model)."""
    rows = kb.offers(instance_types=[instance_type], kinds=("catalog", "pricing"), limit=1)
    if not rows:
        return None, []
    row = rows[0]
    specs = kb.rows("SELECT * FROM gpu_specs WHERE model = ?", [row["gpu_model"]]) if row["gpu_model"] else []
    return row, specs or spec_rows_for(kb, GpuRef(row["gpu"], row["gpu_memory_gb"]))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:,g}"


def row_line(spec: dict, lang: str) -> str:
    if spec.get("nvlink_gen"):
        bridge = t("spec.bridge", lang) if "pcie" in (spec.get("form_factor") or "").lower() else ""
        nvlink = t("spec.nvlink", lang, gen=spec["nvlink_gen"], bw=spec["nvlink_bandwidth_gbps"] or 0, bridge=bridge)
    else:
        nvlink = t("spec.no_nvlink", lang)
    return t(
        "spec.row",
        lang,
        model=spec["model"],
        memory=spec["memory_gb"] or 0,
        mtype=spec["memory_type"] or "",
        bandwidth=_fmt(spec["memory_bandwidth_gbps"]),
        fp64=_fmt(spec["fp64_tflops"]),
        fp32=_fmt(spec["fp32_tflops"]),
        tf32=_fmt(spec["tf32_tflops_dense"]),
        bf16=_fmt(spec["bf16_tflops_dense"]),
        fp16=_fmt(spec["fp16_tflops_dense"]),
        fp8=_fmt(spec["fp8_tflops_dense"]),
        int8=_fmt(spec["int8_tops_dense"]),
        nvlink=nvlink,
        tdp=_fmt(spec["tdp_w"]),
    )


def precision_lines(specs: list[dict], asked: list[str], count: float | None, lang: str) -> list[str]:
    """One line per (precision, result), models with the same result grouped."""
    grouped: dict[tuple[str, str, str], list[str]] = {}  # (precision, phrase key, figure or evidence): models
    for precision in asked:
        column, label = PRECISIONS[precision]
        for spec in specs:
            value = spec.get(column)
            if value is not None:
                dense = column.endswith("_dense")
                sparse = dense and spec.get("vendor") == "NVIDIA" and spec.get("family") in _SPARSE_VENDORS
                key = ("spec.p.yes", f"{value}") if sparse else ("spec.p.plain", f"{value}")
            else:
                said = re.search(rf"\bno {label}\b[^.;,]*", spec.get("source") or "", re.IGNORECASE)
                key = ("spec.p.no", said.group(0)) if said else ("spec.p.unknown", "")
            grouped.setdefault((label, *key), []).append(spec["model"])
            if count and value is not None and column == "fp32_tflops":
                grouped.setdefault((label, "spec.total", f"{value}"), []).append(spec["model"])
    lines = []
    for (label, phrase, detail), models in grouped.items():
        names = ", ".join(models)
        if phrase == "spec.total" and count:  # totals are only grouped for a count
            lines.append(t(phrase, lang, count=count, model=names, fp32=float(detail), total=count * float(detail)))
        elif phrase in ("spec.p.yes", "spec.p.plain"):
            lines.append(t(phrase, lang, model=names, precision=label, value=float(detail), sparse=2 * float(detail)))
        else:
            lines.append(t(phrase, lang, model=names, precision=label, evidence=detail))
    return lines


# --- seed errata ----------------------------------------------------------------------------------------------------


def _entity(kb: KB, word: str, instances: set[str]) -> bool:
    """A keyword that only names a GPU, provider or instance (family), not what the erratum is about."""
    low = word.lower()
    return (
        low in kb.gpu_names
        or low in kb.provider_names
        or low in kb.instance_types
        or any(i == low or i.startswith(low + ".") or i.startswith(low) and low[-1:].isdigit() for i in instances)
    )


def match_errata(query: Query, kb: KB, limit: int = 3) -> list[dict]:
    """Errata rows the question touches, best first.

    Score: 3 per keyword about the erratum's topic found in the text, 1 per keyword that only names a GPU,
    provider or instance, 3 per instance type (asked or named in the text), 1 per GPU family and provider asked;
    the very question the erratum poses adds 10. A score of 4 is needed, with a topic keyword (in spec questions
    naming the subject is enough), and only rows within 2 points of the best are kept.
    """
    scored = []
    for score, topical, row in _scores(query, kb):
        if score >= 4 and (topical or query.intent == "spec" or score >= 10):
            scored.append((score, -(row["top10"] or 99), row))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    best = scored[0][0] if scored else 0
    return [row for score, _, row in scored if score >= best - 2][:limit]


def _errata(kb: KB) -> list[tuple[dict, list[str], set[str], set[str], set[str]]]:
    """Errata rows with their JSON columns decoded, once per knowledge base."""
    return kb.memo(
        "spec.errata",
        lambda: [
            (
                row,
                json.loads(row["keywords"] or "[]"),
                {i.lower() for i in json.loads(row["instance_types"] or "[]")},
                {g.lower() for g in json.loads(row["gpus"] or "[]")},
                set(json.loads(row["providers"] or "[]")),
            )
            for row in kb.rows("SELECT * FROM errata")
        ],
    )


def _keywords(kb: KB) -> tuple[str, ...]:
    """Every distinct errata keyword and instance type, once per knowledge base (each is looked for once per text)."""
    return kb.memo(
        "spec.errata_keywords",
        lambda: tuple(sorted({k for _, keywords, instances, _, _ in _errata(kb) for k in (*keywords, *instances)})),
    )


_SCORES_CACHE_SIZE = 256


def _scores(query: Query, kb: KB) -> list[tuple[int, int, dict]]:
    """(score, topical keywords, erratum row) of every erratum a keyword of which occurs in the question.

    An answer asks for these two or three times (is it a fact question, which errata are strong, which match), so
    the result is kept per knowledge base for the last few questions; each distinct keyword is looked for once.
    """
    text = scan_text(query)
    key = (text, tuple(query.gpus), tuple(query.instance_types), tuple(query.providers))
    memo: dict = kb.memo("spec.errata_scores", dict)
    found = memo.get(key)
    if found is not None:
        return found
    present = keywords_said(text, _keywords(kb))
    families = {GpuRef.parse(g).family.lower() for g in query.gpus}
    asked_instances = {i.lower() for i in query.instance_types}
    out = []
    for row, keywords, instances, gpu_set, provider_set in _errata(kb):
        hits = [k for k in keywords if k in present]
        if not hits:
            continue
        topical = sum(1 for k in hits if not _entity(kb, k, instances))
        inst = sum(1 for i in instances if any(a == i or a.endswith("_" + i) for a in asked_instances) or i in present)
        gpus = len(families & gpu_set)
        providers = len(set(query.providers) & provider_set)
        score = 3 * topical + (len(hits) - topical) + 3 * min(inst, 2) + gpus + providers
        if same_question(text, row["question_en"], row["question_zh"]):
            score += 10
        out.append((score, topical, row))
    if len(memo) >= _SCORES_CACHE_SIZE:
        with contextlib.suppress(StopIteration, RuntimeError):  # another thread may be at it too
            memo.pop(next(iter(memo)), None)
    memo[key] = out
    return out


def errata_lines(errata: list[dict], lang: str) -> list[str]:
    return [
        t(
            "spec.erratum",
            lang,
            id=e["id"],
            seeds="/".join(json.loads(e["seed"])),
            text=e["correct_zh"] if lang == "zh" else e["correct_en"],
            sources="; ".join(json.loads(e["sources"])),
        )
        for e in errata
    ]


def errata_json(errata: list[dict], lang: str) -> list[dict]:
    return [
        {
            "id": e["id"],
            "severity": e["severity"],
            "correct": e["correct_zh"] if lang == "zh" else e["correct_en"],
            "sources": json.loads(e["sources"]),
        }
        for e in errata
    ]


def split_errata(
    errata: list[dict], lines: list[str], lang: str, offers: list[Offer], query: Query
) -> tuple[list[str], list[str]]:
    """(lines of corrections about the GPUs and clouds compared, lines of the others: shown on request)."""
    texts = errata_lines(errata, lang)
    gpus = {g.split()[0].lower() for g in query.gpus} | {o.gpu.lower() for o in offers}
    providers = set(query.providers) | {o.provider for o in offers}
    near: list[str] = []
    far: list[str] = []
    for erratum, text in zip(errata, texts, strict=True):
        tagged_gpus = {g.lower() for g in json.loads(erratum.get("gpus") or "[]")}
        tagged_providers = set(json.loads(erratum.get("providers") or "[]"))
        about = (not tagged_gpus or tagged_gpus & gpus) and (not tagged_providers or tagged_providers & providers)
        (near if about else far).append(text)
    return near, far
