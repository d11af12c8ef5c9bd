"""work: the cost of the work, dollars per million output tokens, from measured LLM inference benchmarks.

Pure over (Query, KB): the ranking comes from `knowledge.work.rank` (benchmark tokens/s x catalog prices). The
`work` rows are `Answer.extra["work"]` (the JSON contract), their benchmark details `extra["work_details"]` (same
order); `bot/render_work.py` renders both as text and as a Slack table.
"""

from __future__ import annotations

from handlers.i18n import t
from handlers.models import Answer, Query, Source
from knowledge import work
from knowledge.benchmarks import ATTRIBUTION, SOURCE, SOURCE_DATE, models

STEP_LABELS = {
    "max_throughput": {"en": "max throughput", "zh": "最大吞吐"},
    "synchronous": {"en": "one request at a time (TTFT/TPOT)", "zh": "单请求同步（含首token延迟/每token延迟）"},
    "single_stream": {"en": "llama.cpp single stream", "zh": "llama.cpp 单流"},
}
_TEXT = {
    "title": {
        "en": "{model} ({workload}, {step}, {pricing}): cheapest per 1M output tokens is {provider} "
        "{instance} at ${usd:.4f} ({tps:,.1f} tok/s at ${price:.2f}/h)",
        "zh": "{model}（{workload}，{step}，{pricing}）：每百万输出token成本最低的是 {provider} {instance}，"
        "${usd:.4f}（{tps:,.1f} token/s，每小时${price:.2f}）",
    },
    "estimate_title": {
        "en": "Estimate for a {size:g}B model ({workload}, {step}, {pricing}): cheapest per 1M output "
        "tokens is {provider} {instance} at about ${usd:.4f} (estimate, not measured)",
        "zh": "{size:g}B模型的估算（{workload}，{step}，{pricing}）：每百万输出token成本最低约为 "
        "{provider} {instance}，${usd:.4f}（估算，非实测）",
    },
    "gpu_estimate_title": {
        "en": "Estimate for {model} on {gpus} ({workload}, {step}, {pricing}): not measured; "
        "cheapest per 1M output tokens is about ${usd:.4f} on {provider} {instance}",
        "zh": "{model}在{gpus}上的估算（{workload}，{step}，{pricing}）：未实测；每百万输出token"
        "成本最低约为 {provider} {instance}，${usd:.4f}",
    },
    "gpu_estimate": {
        "en": "Estimates from datasheet ratios: {model} was not measured on this GPU; each row scales "
        "its measured single-GPU throughput on the GPU with the nearest memory bandwidth by the "
        "bandwidth ratio (basis on each row). Measured on: {where}.",
        "zh": "按数据手册比例估算：{model}未在该GPU上实测；每行以显存带宽最接近的GPU上的单卡实测吞吐，"
        "按带宽比例折算（每行注明依据）。实测机型：{where}。",
    },
    "none": {
        "en": "No priced measurement of {model} ({workload}, {step}, {pricing}) matches this question.",
        "zh": "没有符合条件的{model}实测数据（{workload}，{step}，{pricing}）。",
    },
    "measured_on": {"en": "{model} is measured on: {where}.", "zh": "{model}的实测机型：{where}。"},
    "measured_gpus": {
        "en": "GPUs with a priced measurement of {model}: {gpus}.",
        "zh": "{model}有实测且有价格的GPU：{gpus}。",
    },
    "which": {
        "en": "Which model? Measured: {models}. For example: `cost per million tokens for Llama 3.1 8B`.",
        "zh": "请指明模型。已实测：{models}。例如：`Llama 3.1 8B 每百万token成本`。",
    },
    "unknown_model": {"en": "'{text}' is not a benchmarked model.", "zh": "“{text}”不在实测模型中。"},
    "did_you_mean": {"en": "Did you mean {candidates}?", "zh": "您是不是指 {candidates}？"},
    "read_as": {
        "en": "A {size:g}B model: measured on {model} ({params:g}B).",
        "zh": "{size:g}B模型：按实测的{model}（{params:g}B）计算。",
    },
    "default_model": {
        "en": "No model named: showing {model}, the most widely measured.",
        "zh": "未指明模型：显示实测最多的{model}。",
    },
    "estimate": {
        "en": "Estimates: no model of this size was measured; each instance's nearest measured model size is "
        "scaled by the parameter ratio (basis on each row). Not a measurement.",
        "zh": "估算：没有这一规模的实测模型；按每个机型上最接近的实测模型，以参数量比例折算（每行注明依据），"
        "并非实测。",
    },
    "formula": {
        "en": "$ per 1M output tokens = price per hour / (output tokens/s x 3600) x 10^6; price: the instance "
        "type's cheapest region where it can be ordered at this pricing, tokens/s: the benchmark.",
        "zh": "每百万输出token成本 = 每小时价格 /（输出token每秒 x 3600）x 10^6；"
        "价格取该机型可按此方式购买的最便宜地区，token/s取自基准测试。",
    },
    "under_used": {
        "en": "{n} instance type(s) ran the model on fewer GPUs than they have (gpus_used < gpu_count): "
        "a right-sized deployment may cost less per token.",
        "zh": "{n}个机型上模型只用了部分GPU（gpus_used < gpu_count）：按需选型的部署每token成本可能更低。",
    },
    "single": {
        "en": "llama.cpp single stream: the cost of a box serving one user at a time, not serving throughput; "
        "not comparable with vLLM rows.",
        "zh": "llama.cpp单流：一台机器一次只服务一个用户的成本，不是服务吞吐，不可与vLLM结果混排。",
    },
    "unpriced": {"en": "Measured but not priced ({pricing}): {where}.", "zh": "有实测但无{pricing}价格：{where}。"},
    "not_single": {
        "en": "{model} has no llama.cpp measurement; showing vLLM serving.",
        "zh": "{model}没有llama.cpp实测；显示vLLM服务结果。",
    },
    "training": {
        "en": "Cost per training run is estimated from datasheet throughput: no measured training benchmark "
        "exists yet (measured cost per token covers inference only).",
        "zh": "训练每次运行的成本按数据手册吞吐估算：尚无实测训练基准（实测的每token成本仅覆盖推理）。",
    },
    "serving": {
        "en": "Measured cost of serving {model} (vLLM, chat-256-128 at max throughput, {pricing}; Spare Cores "
        "sc-inspector-data, CC BY-SA 4.0): {items}.",
        "zh": "{model}推理的实测成本（vLLM，chat-256-128最大吞吐，{pricing}；Spare Cores sc-inspector-data，"
        "CC BY-SA 4.0）：{items}。",
    },
    "serving_item": {
        "en": "{what} ${usd:.4f} per 1M output tokens ({provider} {instance}, {tps:,.0f} tok/s at ${price:.2f}/h)",
        "zh": "{what} 每百万输出token ${usd:.4f}（{provider} {instance}，{tps:,.0f} token/s，每小时${price:.2f}）",
    },
    "serving_none": {
        "en": "No measured cost per token for {what}; `cost per million tokens for {what}` gives a "
        "labelled estimate or what is measured.",
        "zh": "{what}没有实测的每token成本；可问“{what} 每百万token成本”查看标注的估算或已实测的机型。",
    },
    "two_sources": {
        "en": "GCP: {n} row(s) where SkyPilot's catalog and Google's billing catalog differ by more than "
        "5 % are priced with the trusted figure (source on each row; the other one in "
        "`other_prices`), e.g. {instance} {region}: {reason}.",
        "zh": "GCP：{n}行的SkyPilot目录价与Google计费目录相差超过5%，按可信的价格计算（每行注明来源，"
        "另一价格见`other_prices`），例如 {instance} {region}：{reason}。",
    },
    "not_orderable": {
        "en": "{n} instance type(s) left out: they cannot be ordered {pricing} ({items}).",
        "zh": "已排除{n}个无法以{pricing}方式购买的机型（{items}）。",
    },
    "config": {
        "en": "Configuration matters: framework version, dtype and max_num_seqs are on each row.",
        "zh": "配置影响很大：每行注明框架版本、数据类型和max_num_seqs。",
    },
}


def _t(key: str, lang: str, **values: object) -> str:
    return _TEXT[key][lang].format(**values)


def handle(query: Query, kb) -> Answer:
    """work <model> [rag|long context] [batch|interactive] [spot]: $ per 1M output tokens, measured benchmarks

    e.g. `cost per million tokens for Llama 3.1 8B`, `$/token for a 70B model`, `Llama 3.1 8B 每百万token成本`."""
    lang = query.language
    workload = query.bench_workload or "chat-256-128"
    step = query.bench_step or "max_throughput"
    pricing = query.pricing or "on_demand"
    notes: list[str] = []
    suggestions: list[str] = []
    for issue in query.issues:
        if issue.kind == "model":
            notes.append(
                _t("unknown_model", lang, text=issue.text)
                + (" " + _t("did_you_mean", lang, candidates=", ".join(issue.candidates)) if issue.candidates else "")
            )
            suggestions += issue.candidates
    model = work.entry(query.model)
    size = query.model_size_b if query.model_size_b and 0.01 <= query.model_size_b <= 2000 else None
    if model is None and size:
        nearest, same = work.nearest_model(size, "llama_bench" if step == "single_stream" else "vllm_serving")
        if same:
            model = nearest
            notes.append(_t("read_as", lang, size=size, model=nearest.name, params=nearest.params_b))
    if model is None and not size:
        if suggestions or query.model_size_b:  # an unknown name, or a size far outside anything measured
            measured = ", ".join(m.name for m in models())
            title = notes[0] if notes else _t("unknown_model", lang, text=f"{query.model_size_b:g}B")
            return Answer(
                query=query,
                title=title,
                notes=[_t("which", lang, models=measured)],
                suggestions=suggestions,
                sources=[Source(source=SOURCE, as_of=SOURCE_DATE)],
                extra={"work": [], "work_details": []},
            )
        model = work.entry("Llama-3.1-8B")
        notes.append(_t("default_model", lang, model=model.name))
    if model is not None:
        wanted = "llama_bench" if step == "single_stream" else "vllm_serving"
        if model.benchmark == "llama_bench":
            step = "single_stream"
        elif wanted != model.benchmark:
            model = work.sibling(model, wanted) or model
            if model.benchmark != wanted:
                notes.append(_t("not_single", lang, model=model.name))
                step = "max_throughput"
    found = work.rank(
        kb,
        model=model,
        size_b=size,
        workload=workload,
        step=step,
        pricing=pricing,
        providers=query.providers,
        regions=query.regions,
        gpus=query.gpus,
        instance_types=query.instance_types,
    )
    shown = workload if step != "single_stream" else work.SINGLE_STREAM_WORKLOAD
    labels = {"workload": shown, "step": STEP_LABELS[step][lang], "pricing": t(f"pricing.{pricing}", lang)}
    name = model.name if model else f"{size:g}B"
    by_datasheet = False
    if not found.rows and query.gpus and model is not None and not query.instance_types:
        estimated = work.rank_by_datasheet(
            kb,
            model=model,
            gpus=query.gpus,
            workload=workload,
            step=step,
            pricing=pricing,
            providers=query.providers,
            regions=query.regions,
        )
        if estimated.rows:
            found.rows, found.details, by_datasheet = estimated.rows, estimated.details, True
    if not found.rows:
        lines = [_t("measured_on", lang, model=name, where=", ".join(found.measured_on) or "—")]
        if query.gpus and model is not None:
            priced = work.rank(kb, model=model, workload=workload, step=step, pricing=pricing)
            lines.append(
                _t("measured_gpus", lang, model=name, gpus=", ".join(sorted({r["gpu"] for r in priced.rows})) or "—")
            )
        if excluded_note := _not_orderable(found.excluded, labels["pricing"], lang):
            notes.append(excluded_note)
        return Answer(
            query=query,
            title=_t("none", lang, model=name, **labels),
            lines=lines,
            notes=[*notes, ATTRIBUTION],
            suggestions=suggestions,
            sources=[Source(source=SOURCE, as_of=SOURCE_DATE)],
            extra={"work": [], "work_details": [], "excluded": found.excluded},
        )
    best = found.rows[0]
    values = {
        "provider": best["provider"],
        "instance": best["instance_type"],
        "usd": best["usd_per_million_tokens"],
        "tps": best["tokens_per_s"],
        "price": best["price_per_hour_usd"],
        **labels,
    }
    if by_datasheet:
        title = _t("gpu_estimate_title", lang, model=model.name, gpus=", ".join(query.gpus), **values)
        notes.append(_t("gpu_estimate", lang, model=model.name, where=", ".join(found.measured_on)))
    elif model is None:
        title = _t("estimate_title", lang, size=size, **values)
        notes.append(_t("estimate", lang))
    else:
        title = _t("title", lang, model=model.name, **values)
        if model.note:
            notes.append(f"{model.name}: {model.note}.")
    notes.append(_t("formula", lang))
    under = sum(1 for r in found.rows if (r["gpus_used"] or 0) < r["gpu_count"] - 1e-6)
    if under:
        notes.append(_t("under_used", lang, n=under))
    notes.append(_t("single", lang) if step == "single_stream" else _t("config", lang))
    if two := [r for r in found.rows if r.get("other_prices")]:
        notes.append(
            _t(
                "two_sources",
                lang,
                n=len(two),
                instance=two[0]["instance_type"],
                region=two[0]["region"],
                reason=two[0]["price_trust_reason"],
            )
        )
    if excluded_note := _not_orderable(found.excluded, labels["pricing"], lang):
        notes.append(excluded_note)
    if found.unpriced:
        notes.append(_t("unpriced", lang, pricing=labels["pricing"], where=", ".join(found.unpriced)))
    notes.append(ATTRIBUTION)
    sources = [Source(source=SOURCE, as_of=SOURCE_DATE)]
    for row in found.rows:
        source = Source(source=row["source"], as_of=row["as_of"])
        if source not in sources:
            sources.append(source)
    return Answer(
        query=query,
        title=title,
        notes=notes,
        suggestions=suggestions,
        sources=sources,
        extra={"work": found.rows, "work_details": found.details, "excluded": found.excluded},
    )


def _not_orderable(excluded: list[dict], pricing: str, lang: str) -> str | None:
    """How many measured instance types were left out because they cannot be ordered at this pricing, and why."""
    if not excluded:
        return None
    items = "; ".join(f"{', '.join(e['instance_types'])}: {e['reason']}" for e in excluded)
    return _t("not_orderable", lang, n=sum(e["count"] for e in excluded), pricing=pricing, items=items)


def serving_lines(kb, query: Query, *, gpus: list[str] | None = None, pricing: str | None = None) -> list[str]:
    """For recommend and compare: measured $ per 1M output tokens of the GPUs/instances asked when the question is
    about serving (and says so); the training path says its cost per run is a datasheet estimate."""
    lang = query.language
    if query.workload in ("training", "fine_tuning"):
        return [_t("training", lang)]
    if query.workload != "inference" and not query.model:
        return []
    gpus = list(gpus if gpus is not None else query.gpus)
    found = work.cost_per_token(
        kb,
        model=query.model,
        model_size_b=query.model_size_b,
        gpus=gpus,
        instance_types=query.instance_types,
        pricing=pricing or query.pricing,
    )
    if found is None:
        what = query.model or (f"{query.model_size_b:g}B" if query.model_size_b else " / ".join(gpus) or "?")
        return [_t("serving_none", lang, what=what)]
    best: dict[str, dict] = {}
    for row in found["rows"]:  # cheapest first: keep the first row per GPU (or per instance type asked)
        best.setdefault(row["instance_type"] if query.instance_types else row["gpu"], row)
    items = "; ".join(
        _t(
            "serving_item",
            lang,
            what=what,
            usd=r["usd_per_million_tokens"],
            provider=r["provider"],
            instance=r["instance_type"],
            tps=r["tokens_per_s"],
            price=r["price_per_hour_usd"],
        )
        for what, r in best.items()
    )
    asked = query.instance_types or gpus
    missing = [a for a in asked if a not in best and a.split()[0] not in best]
    if missing:
        items += "; " + ", ".join(missing) + (": 未实测" if lang == "zh" else ": not measured")
    return [
        _t(
            "serving",
            lang,
            model=found["model"],
            pricing=t(f"pricing.{pricing or query.pricing or 'on_demand'}", lang),
            items=items,
        )
    ]
