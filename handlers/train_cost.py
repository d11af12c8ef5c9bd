"""train_cost: what a training run costs, from MLPerf Training v5.1 measured time-to-train x catalog prices.

Pure over (Query, KB): the ranking is `knowledge.facts.train_cost.rank`. The JSON contract: `extra["train_cost"]`
(measured rows, cheapest first), `extra["train_cost_estimates"]` (labelled estimates, never ranked with them),
`extra["train_cost_unpriced"]` (measured systems nobody rents by the hour here, or not at this pricing) and
`extra["train_benchmark"]` (what the benchmark trains, to which quality target). `bot/render_train.py` renders them.
"""

from __future__ import annotations

from handlers.i18n import scoped, t
from handlers.models import Answer, Query, Source
from knowledge.facts import train_cost
from knowledge.facts.mlperf import TRAINING_DATE, TRAINING_SOURCE, TRAINING_URL, training_benchmarks

phrase = scoped("train")


def _system(run: dict) -> str:
    """ "Nebius B200 n1 (8x B200-SXM-180GB), 1x8 B200", "Oracle BM.GPU.B200.8, 8x8 B200": submitter named once."""
    name = run["system_name"]
    if not name.lower().startswith(run["submitter"].lower()):
        name = f"{run['submitter']} {name}"
    return f"{name}, {run['nodes']}x{run['gpus_per_node']} {run['gpu']}"


def _name(bench, lang: str) -> str:
    return bench.name_zh if lang == "zh" else bench.name


def _which(query: Query, lang: str) -> Answer:
    """No benchmark named (or one MLPerf does not measure): the name said back, and what is measured."""
    asked = next((i for i in query.issues if i.kind == "model"), None)
    title = phrase("unknown", lang, text=asked.text) if asked else phrase("which", lang)
    lines = [
        phrase("benchmark_line", lang, id=b.benchmark, name=_name(b, lang), task=b.task_zh if lang == "zh" else b.task,
               target=b.quality_target)
        for b in training_benchmarks()
    ]  # fmt: skip
    return Answer(
        query=query,
        title=title,
        lines=lines,
        notes=[phrase("nothing_else", lang)],
        suggestions=[b.benchmark for b in training_benchmarks()],  # Slack: did-you-mean buttons (train_benchmark)
        sources=[Source(source=TRAINING_SOURCE, as_of=TRAINING_DATE)],
        extra={"train_cost": [], "train_cost_estimates": [], "train_cost_unpriced": [], "train_benchmark": None},
    )


def _unpriced(runs: list[dict], pricing: str, lang: str) -> list[dict]:
    out = []
    for run in runs:
        why = phrase("not_at_pricing", lang, pricing=pricing)
        if not run["instance_type"]:  # the reviewed mapping's reason (English data), said in the reader's language
            why = run["mapping_source"] if lang == "en" else phrase("unmapped", lang)
        out.append(
            {"system": _system(run), "minutes": run["minutes"], "reason": why, "results_url": run["results_url"]}
        )
    return out


def _filter_gpus(rows: list[dict], gpus: list[str]) -> list[dict]:
    wanted = {g.split()[0].upper() for g in gpus}
    return [r for r in rows if r["gpu"].upper() in wanted] if wanted else rows


def _notes(query: Query, bench, found: train_cost.TrainRanking, lang: str) -> list[str]:
    notes = [phrase("measures", lang, task=bench.task_zh if lang == "zh" else bench.task, target=bench.quality_target)]
    pretraining = bench.benchmark != "llama2_70b_lora"
    if query.workload == "fine_tuning" and pretraining:
        notes.append(phrase("not_fine_tuning", lang, name=bench.name))
    notes.append(phrase("formula", lang))
    if scaled := [r for r in found.rows if r["scaling_factor"]]:
        notes.append(phrase("scaling", lang, system=_system(scaled[0]), factor=scaled[0]["scaling_factor"]))
    if any(" or " in r["framework"] for r in found.rows + found.unpriced):  # Oracle's system JSON (data README)
        notes.append(phrase("framework_template", lang))
    if found.estimates:
        notes.append(phrase("estimates", lang))
    if found.no_datasheet:
        notes.append(phrase("no_datasheet", lang, gpus=", ".join(found.no_datasheet)))
    notes += [phrase("unknowns", lang), t("mlperf.label_training", lang), phrase("attribution", lang, url=TRAINING_URL)]
    return notes


def handle(query: Query, kb) -> Answer:
    """cost to train|fine-tune <model> [on <gpu>] [spot]: what a training run costs, MLPerf Training v5.1

    e.g. `cost to fine-tune Llama 2 70B with LoRA`, `how much to pretrain Llama 3.1 8B on B200`."""
    lang = query.language
    bench = next((b for b in training_benchmarks() if b.benchmark == query.train_benchmark), None)
    if bench is None:
        return _which(query, lang)
    pricing = query.pricing or "on_demand"
    label = t(f"pricing.{pricing}", lang)
    found = train_cost.rank(kb, bench.benchmark, pricing=pricing, regions=query.regions, providers=query.providers)
    all_measured = list(found.rows)
    found.rows, found.estimates = _filter_gpus(found.rows, query.gpus), _filter_gpus(found.estimates, query.gpus)
    lines: list[str] = []
    measured_gpus = sorted({r["gpu"] for r in all_measured} | {u["gpu"] for u in found.unpriced})
    asked = {g.split()[0].upper() for g in query.gpus}
    if found.rows:
        cheap, fast = found.rows[0], min(found.rows, key=lambda r: r["minutes"])
        title = phrase("title", lang, name=_name(bench, lang), pricing=label, cheap=_system(cheap),
                       cost=cheap["cost_usd"], minutes=cheap["minutes"], fast=_system(fast),
                       fast_minutes=fast["minutes"], fast_cost=fast["cost_usd"])  # fmt: skip
    elif asked and not asked & {g.upper() for g in measured_gpus}:  # "... on H100": MLPerf ran none there
        title = phrase("not_measured_on", lang, name=_name(bench, lang), gpus=", ".join(query.gpus),
                       measured=", ".join(measured_gpus))  # fmt: skip
    else:
        title = phrase("none", lang, name=_name(bench, lang), pricing=label)
    fastest = min(found.unpriced, key=lambda r: r["minutes"], default=None)
    if fastest and (not found.rows or fastest["minutes"] < min(r["minutes"] for r in found.rows)):
        lines.append(phrase("fastest_unpriced", lang, system=_system(fastest), minutes=fastest["minutes"]))
    sources = [Source(source=TRAINING_SOURCE, as_of=TRAINING_DATE)]
    for row in found.rows + found.estimates:
        if (source := Source(source=row["source"], as_of=row["as_of"])) not in sources:
            sources.append(source)
    return Answer(
        query=query,
        title=title,
        lines=lines,
        notes=_notes(query, bench, found, lang),
        sources=sources,
        extra={
            "train_cost": found.rows,
            "train_cost_estimates": found.estimates,
            "train_cost_unpriced": _unpriced(found.unpriced, label, lang),
            "train_benchmark": {
                "benchmark": bench.benchmark,
                "name": bench.name,
                "task": bench.task,
                "dataset": bench.dataset,
                "quality_target": bench.quality_target,
                "source": bench.source,
            },  # fmt: skip
            "label": t("mlperf.label_training", "en"),
        },
    )
