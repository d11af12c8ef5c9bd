"""Phrases (en/zh) of the recommend, compare, spec and tco handlers, and the rule hits they all return.

Kept apart from `handlers.i18n` so the rules engine's wording can change without touching the shared phrases.
"""

from __future__ import annotations

import json

from handlers.models import RuleHit

MESSAGES: dict[str, dict[str, str]] = {
    "workload.training": {"en": "training", "zh": "训练"},
    "workload.fine_tuning": {"en": "fine-tuning", "zh": "微调"},
    "workload.inference": {"en": "inference", "zh": "推理"},
    "workload.hpc": {"en": "HPC", "zh": "HPC/科学计算"},
    "workload.rendering": {"en": "rendering", "zh": "渲染"},
    "workload.general": {"en": "general use", "zh": "通用计算"},
    "priority.cost": {"en": "on a budget", "zh": "预算优先"},
    "priority.performance": {"en": "performance first", "zh": "性能优先"},
    "priority.ecosystem": {"en": "ecosystem first", "zh": "生态优先"},
    "priority.compliance": {"en": "compliance first", "zh": "合规优先"},
    "rec.title": {"en": "Recommended GPUs for {what}", "zh": "{what}的GPU推荐"},
    "rec.cpu": {"en": "A CPU instance is enough for this workload", "zh": "这类任务用CPU实例即可"},
    "rec.fit": {
        "en": "{mem:g} GB per GPU: {needed} GPU(s) hold ~{required:,.0f} GB",
        "zh": "每卡{mem:g} GB：{needed}张可容纳约{required:,.0f} GB",
    },
    "rec.count": {"en": "{mem:g} GB per GPU, {needed} GPU(s)", "zh": "每卡{mem:g} GB，{needed}张"},
    "rec.offer": {
        "en": "cheapest fitting {pricing}: {instances}x {instance} ({provider}, {region}) = {hourly}/h",
        "zh": "最便宜的可用{pricing}方案：{instances}台 {instance}（{provider}，{region}）= 每小时{hourly}",
    },
    "rec.no_offer": {
        "en": "no {pricing} offer in the catalogs fits these filters",
        "zh": "目录中没有符合条件的{pricing}报价",
    },
    "rec.perf": {"en": "{tflops:,.0f} TFLOPS dense BF16/FP16 per GPU", "zh": "每卡稠密BF16/FP16 {tflops:,.0f} TFLOPS"},
    "rec.fp64": {"en": "FP64 {fp64:g} TFLOPS", "zh": "FP64 {fp64:g} TFLOPS"},
    "rec.ask": {
        "en": (
            "Tell me the workload (training, fine-tuning, inference, HPC, rendering) and the model size (e.g. 7B) "
            "for a sharper answer."
        ),
        "zh": "请说明任务类型（训练、微调、推理、HPC、渲染）和模型规模（如7B），以便给出更准确的建议。",
    },
    "rec.nvlink": {
        "en": "Multi-GPU options are limited to NVLink/NVSwitch (SXM) instances.",
        "zh": "多卡方案只考虑NVLink/NVSwitch（SXM）实例。",
    },
    "rec.vgpu": {
        "en": "vGPU slices and fractional GPUs are left out: they are not whole GPUs.",
        "zh": "已排除vGPU分片和非整卡实例：它们不是整张GPU。",
    },
    "rec.note": {"en": "{provider} ({topic}): {note} [{source}]", "zh": "{provider}（{topic}）：{note} [{source}]"},
    "rec.article_only": {
        "en": "{provider} has no price catalog; its only prices are seed-article figures (unverified).",
        "zh": "{provider}没有价格目录，唯一的价格是种子文章中的数字（未经核实）。",
    },
    "rank.agree": {"en": "the data agree.", "zh": "与数据一致。"},
    "rank.differ": {
        "en": "the data differ: among the providers both rank, the order is {kb} instead of {seed}.",
        "zh": "与数据不符：在双方都排名的厂商中，实际顺序为{kb}，而不是{seed}。",
    },
    "rank.none": {"en": "no prices to rank.", "zh": "没有可排序的价格。"},
    "tco.title": {"en": "Cost of {what} for {hours:,.0f} h", "zh": "{what}使用{hours:,.0f}小时的成本"},
    "tco.which": {
        "en": "Which instance type or GPU? For example: `tco p4d.24xlarge for 720 hours with 500 GB storage`.",
        "zh": "请指明实例规格或GPU，例如：`p4d.24xlarge 用720小时的总成本，含500GB存储`。",
    },
    "tco.none": {"en": "No price for {what} matches these filters.", "zh": "没有符合条件的{what}价格。"},
    "tco.a.instance": {
        "en": (
            "{instance} ({provider}, {region}): {instances} instance(s) x {count:g}x {gpu}; {pricing} {rate}/h ({s"
            "ource}, {as_of})"
        ),
        "zh": "{instance}（{provider}，{region}）：{instances}台 x {count:g}卡 {gpu}；{pricing}每小时{rate}（{source}，{as_of}）",  # noqa: E501
    },
    "tco.a.hours": {"en": "Duration {hours:,.0f} h{default}", "zh": "时长{hours:,.0f}小时{default}"},
    "tco.a.default": {"en": " (default: one month = 730 h)", "zh": "（默认：一个月=730小时）"},
    "tco.a.term": {
        "en": (
            "A {years}-year reservation is paid for its whole term, used or not: billed {billed:,.0f} h ({monthly}"
            " per month)"
        ),
        "zh": "{years}年预留无论是否使用都按整个期限付费：计费{billed:,.0f}小时（每月{monthly}）",
    },
    "tco.a.month": {
        "en": "One month of a {years}-year commitment (the commitment runs {term:,.0f} h)",
        "zh": "{years}年承诺中的一个月（承诺期共{term:,.0f}小时）",
    },
    "tco.a.seed": {
        "en": (
            "No reserved rate in the pricing data: on-demand minus the seeds' 40% (low end of 40-60%, S0 §三.1, uns"
            "ourced)"
        ),
        "zh": "定价数据中没有预留价：按需价减去种子文章的40%（40-60%的低端，S0 §三.1，无出处）",
    },
    "tco.a.spot": {
        "en": (
            "Spot expected cost: {interruptions:.2f} interruptions, {lost:.1f} h redone, {ckpt:.1f} h writing chec"
            "kpoints -> {wall:,.1f} h billed per instance"
        ),
        "zh": "竞价预期成本：预计中断{interruptions:.2f}次，重做{lost:.1f}小时，写检查点{ckpt:.1f}小时 -> 每台计费{wall:,.1f}小时",  # noqa: E501
    },
    "tco.a.spot_list": {
        "en": "Spot at list price: no interruption data for this type and region",
        "zh": "竞价按标价计：该规格和地域没有中断数据",
    },
    "tco.a.storage": {
        "en": "Storage {gb:,.0f} GB x {rate}/GB-month x {months:.2f} months ({service}; {status}; {source})",
        "zh": "存储{gb:,.0f} GB x 每GB·月{rate} x {months:.2f}个月（{service}；{status}；{source}）",
    },
    "tco.a.storage_none": {
        "en": "Storage {gb:,.0f} GB: no storage price for {provider} in the knowledge base; not included",
        "zh": "存储{gb:,.0f} GB：知识库中没有{provider}的存储价格，未计入",
    },
    "tco.a.egress": {
        "en": "Egress {gb:,.0f} GB x {rate}/GB ({service}; {status}; {source})",
        "zh": "数据传出{gb:,.0f} GB x 每GB {rate}（{service}；{status}；{source}）",
    },
    "tco.a.egress_proxy": {
        "en": (
            "no internet-egress rate for {provider} in the knowledge base, so its inter-region rate is used; inter"
            "net egress usually costs more"
        ),
        "zh": "知识库中没有{provider}的公网流出价，改用其跨地域传输价；公网流出通常更贵",
    },
    "tco.a.egress_none": {
        "en": "Egress {gb:,.0f} GB: no egress price for {provider} in the knowledge base; not included",
        "zh": "数据传出{gb:,.0f} GB：知识库中没有{provider}的流出价格，未计入",
    },
    "tco.a.fx": {"en": "Converted at {rate} ({source}, {as_of})", "zh": "按{rate}换算（{source}，{as_of}）"},
    "tco.status.unverified": {"en": "seed figure, unverified", "zh": "种子文章数字，未经核实"},
    "tco.status.ok": {"en": "verified", "zh": "已核实"},
    "tco.best": {
        "en": "Cheapest option for this job: {option} = {total}",
        "zh": "本任务最便宜的方案：{option} = {total}",
    },
    "tco.break_even": {
        "en": (
            "Break-even utilisation, {subject}: {reserved}/h / {on_demand}/h = {pct:.1f}% ({source}, {as_of}); {ve"
            "rdict}"
        ),
        "zh": "盈亏平衡利用率，{subject}：{reserved}/小时 / {on_demand}/小时 = {pct:.1f}%（{source}，{as_of}）；{verdict}",  # noqa: E501
    },
    "tco.be.above": {
        "en": "above that utilisation the reservation is cheaper, below it on-demand is",
        "zh": "利用率高于此值时预留更便宜，低于此值时按需更便宜",
    },
    "tco.be.never": {
        "en": "the reserved rate is not below on-demand: the reservation never pays off",
        "zh": "预留价不低于按需价：预留永远不划算",
    },
    "tco.be.title": {
        "en": "Break-even utilisation, {term}: {instance} in {region}",
        "zh": "{instance}（{region}）{term}的盈亏平衡利用率",
    },
    "tco.be.others": {"en": "Other terms of that length: {terms}", "zh": "同期限的其他条款：{terms}"},
    "tco.be.none": {
        "en": "{provider} publishes no {term} term for {instance} in {region}; terms available: {available}.",
        "zh": "{provider}没有为{region}的{instance}提供{term}条款；可用条款：{available}。",
    },
    "tco.be.which": {
        "en": (
            "Which instance type and region? For example: `break-even utilisation for a 1-year reservation of p4d."
            "24xlarge in us-east-1`."
        ),
        "zh": "请指明实例规格和地域，例如：`p4d.24xlarge 在 us-east-1 一年预留的盈亏平衡利用率`。",
    },
    "tco.int.title": {"en": "Spot interruptions of {instance}{where}", "zh": "{instance}{where}的竞价实例中断频率"},
    "tco.int.line": {
        "en": (
            "{region}: {bucket} of spot instances interrupted in the past month ({source}, {as_of}); spot saves {s"
            "avings}% vs on-demand"
        ),
        "zh": "{region}：过去一个月内有{bucket}的竞价实例被中断（{source}，{as_of}）；竞价比按需便宜{savings}%",
    },
    "tco.int.older": {
        "en": "Older figure for {region}: {bucket} ({source}, {as_of}); the newer one above is current.",
        "zh": "{region}的较旧数据：{bucket}（{source}，{as_of}）；以上面较新的数据为准。",
    },
    "tco.int.none": {
        "en": "No interruption data for {instance}{where}: AWS Spot Advisor covers AWS only.",
        "zh": "没有{instance}{where}的中断数据：AWS Spot Advisor只覆盖AWS。",
    },
    "tco.int.which": {
        "en": "Which instance type? For example: `how often is p5.48xlarge spot interrupted in us-east-1?`",
        "zh": "请指明实例规格，例如：`p5.48xlarge 在 us-east-1 的竞价实例多久中断一次？`",
    },
    "tco.int.more": {"en": "{n} more regions; name one for its detail.", "zh": "另有{n}个地域；指明地域可查看详情。"},
    "save.reserved": {
        "en": "the data: {term} for {subject} is {pct:.0f}% below on-demand ({source}, {as_of}).",
        "zh": "实际数据：{subject}的{term}比按需便宜{pct:.0f}%（{source}，{as_of}）。",
    },
    "save.no_reserved": {
        "en": "the data has no reserved rate for {subject} (only AWS and GCP publish them here).",
        "zh": "数据中没有{subject}的预留价（这里只有AWS和GCP公布预留价）。",
    },
    "save.spot": {
        "en": "the data: spot {subject} lists {pct:.0f}% below on-demand ({source}, {as_of}).",
        "zh": "实际数据：{subject}竞价标价比按需便宜{pct:.0f}%（{source}，{as_of}）。",
    },
    "save.no_spot": {"en": "the data has no spot price for {subject}.", "zh": "数据中没有{subject}的竞价价格。"},
    "spec.title": {"en": "Specs of {what}", "zh": "{what}的规格"},
    "spec.which": {
        "en": "Which GPU or instance type? For example: `A100 specs`, `how much memory does p4d.24xlarge have`.",
        "zh": "请指明GPU或实例规格，例如：`A100 参数`、`p4d.24xlarge 显存多大`。",
    },
    "spec.instance": {
        "en": "{instance} ({provider}): {count:g}x {model} = {total:,.0f} GB GPU memory ({per:g} GB each)",
        "zh": "{instance}（{provider}）：{count:g}卡 {model}，GPU显存共{total:,.0f} GB（每卡{per:g} GB）",
    },
    "spec.row": {
        "en": (
            "{model}: {memory:g} GB {mtype}, {bandwidth} GB/s; FP64 {fp64}, FP32 {fp32}, TF32 {tf32}, BF16 {bf16},"
            " FP16 {fp16}, FP8 {fp8} TFLOPS (tensor: dense), INT8 {int8} TOPS; {nvlink}; {tdp} W"
        ),
        "zh": (
            "{model}：{memory:g} GB {mtype}，{bandwidth} GB/s；FP64 {fp64}、FP32 {fp32}、TF32 {tf32}、BF16 {bf16}、FP16 {"  # noqa: E501
            "fp16}、FP8 {fp8} TFLOPS（Tensor为稠密值），INT8 {int8} TOPS；{nvlink}；{tdp} W"
        ),
    },
    "spec.nvlink": {
        "en": "NVLink {gen:g} ({bw:g} GB/s per GPU, bidirectional{bridge})",
        "zh": "NVLink {gen:g}（每卡双向{bw:g} GB/s{bridge}）",
    },
    "spec.bridge": {"en": "; PCIe card: only with the NVLink bridge", "zh": "；PCIe卡需NVLink桥接"},
    "spec.no_nvlink": {"en": "no NVLink", "zh": "无NVLink"},
    "spec.p.yes": {
        "en": "{model}: {precision} {value:,g} TFLOPS dense ({sparse:,g} with sparsity)",
        "zh": "{model}：{precision} 稠密{value:,g} TFLOPS（稀疏{sparse:,g}）",
    },
    "spec.p.plain": {"en": "{model}: {precision} {value:,g} TFLOPS", "zh": "{model}：{precision} {value:,g} TFLOPS"},
    "spec.p.no": {
        "en": "{model}: no {precision} support (datasheet: {evidence})",
        "zh": "{model}：不支持{precision}（数据手册：{evidence}）",
    },
    "spec.p.unknown": {
        "en": "{model}: {precision} not published in the datasheet row (empty is not zero)",
        "zh": "{model}：数据手册中未公布{precision}（空白不代表为零）",
    },
    "spec.erratum": {
        "en": "Correction ({id}, seed {seeds}): {text} Sources: {sources}",
        "zh": "更正（{id}，种子{seeds}）：{text} 来源：{sources}",
    },
    "spec.total": {
        "en": "{count:g}x {model}: FP32 {count:g} x {fp32:g} = {total:,.1f} TFLOPS",
        "zh": "{count:g}卡 {model}：FP32 {count:g} x {fp32:g} = {total:,.1f} TFLOPS",
    },
    "cmp.title": {"en": "{what} side by side", "zh": "{what}对比"},
    "cmp.which": {
        "en": "Compare what? Name two or three GPUs, instance types or providers, e.g. `A100 vs H100`.",
        "zh": "要对比什么？请给出两到三个GPU、实例规格或云厂商，例如：`A100 对比 H100`。",
    },
    "cmp.price": {
        "en": "{name}, {pricing}: {price}/GPU-h ({provider} {instance}, {region}){ppf}",
        "zh": "{name}，{pricing}：每GPU小时{price}（{provider} {instance}，{region}）{ppf}",
    },
    "cmp.ppf": {"en": " = {value}/PFLOPS-h ({precision} dense)", "zh": " = 每PFLOPS·小时{value}（{precision}稠密）"},
    "cmp.no_price": {"en": "{name}, {pricing}: no offer", "zh": "{name}，{pricing}：无报价"},
    "cmp.ratio": {"en": "{a} / {b}: {items}", "zh": "{a} / {b}：{items}"},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """A phrase of this table, else of the shared one (`handlers.i18n`)."""
    if key not in MESSAGES:
        from handlers import i18n

        return i18n.t(key, lang, **values)
    phrases = MESSAGES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)


def rule_hits(fired: list) -> list[RuleHit]:
    """`RuleHit`s for fired rules (already explained in the question's language), each id once, in order."""
    seen: dict[str, RuleHit] = {}
    for item in fired:
        seen.setdefault(item.id, RuleHit(id=item.id, explain=item.explain))
    return list(seen.values())


def provider_name(kb: object, provider: str, lang: str) -> str:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return (row.get("name_zh") if lang == "zh" else row.get("name_en")) or provider


def provider_notes(kb: object, provider: str, topic: str) -> list[dict]:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return [n for n in json.loads(row.get("notes") or "[]") if n.get("topic") == topic]


def provider_costs(kb: object, provider: str) -> dict[str, dict]:
    row = getattr(kb, "providers", {}).get(provider) or {}
    return {c["item"]: c for c in json.loads(row.get("costs") or "[]")}
