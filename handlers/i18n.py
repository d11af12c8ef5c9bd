"""Reply phrases in English and Chinese; a question gets its answer in the language it was asked in."""

from __future__ import annotations

MESSAGES: dict[str, dict[str, str]] = {
    "cheapest.title": {
        "en": "Cheapest {what} ({pricing}), per GPU-hour",
        "zh": "{what}（{pricing}）最便宜的报价，按每GPU小时计",
    },
    "cheapest.none": {
        "en": "No {pricing} offers for {what} match these filters.",
        "zh": "没有符合条件的{what}{pricing}报价。",
    },
    "cheapest.count_fallback": {
        "en": "No instance has exactly {count:g} GPUs; showing all sizes.",
        "zh": "没有正好{count:g}卡的实例，以下列出所有规格。",
    },
    "cheapest.article_context": {
        "en": "Seed-article figure ({status}, not a list price), {as_of}: {provider} {subject} {price}; catalog best: "
        "{best}.",
        "zh": "种子文章中的数字（{status}，非官方目录价，{as_of}）：{provider} {subject} {price}；目录最低：{best}。",
    },
    "cheapest.article_only": {
        "en": "{provider} has no price catalog: its figures come from the seed articles and are labelled as such.",
        "zh": "{provider}没有价格目录：其数字来自种子文章，已标注。",
    },
    "cheapest.which_gpu": {
        "en": "Which GPU? For example: `cheapest A100 spot`, `cheapest 8x H100 on aws`.",
        "zh": "请指明GPU型号，例如：`最便宜的A100竞价实例`、`aws上最便宜的8卡H100`。",
    },
    "cheapest.vgpu": {
        "en": "vGPU slices are priced per whole GPU-hour so they compare fairly; they are not whole GPUs.",
        "zh": "vGPU分片已折算为整卡每小时价格以便公平比较；它们不是整张物理GPU。",
    },
    "cheapest.gpu_only_excluded": {
        "en": "{count} GCP figures without a host-VM price (GPU only, not what you pay) are not ranked; "
        "`price of` an instance lists them.",
        "zh": "{count}条GCP报价缺少宿主虚拟机价格（仅GPU，并非实付价），未参与排名。",
    },
    "price.title": {"en": "Prices of {what}", "zh": "{what}的价格"},
    "price.none": {
        "en": "No {pricing} price for {what}{where} in the knowledge base.",
        "zh": "知识库中没有{what}{where}的{pricing}价格。",
    },
    "price.no_term": {
        "en": "{provider} publishes no {pricing} term for {what}{where}; available: {available}.",
        "zh": "{provider}没有为{what}{where}提供{pricing}价格；可用的有：{available}。",
    },
    "price.other_terms": {
        "en": "Other terms ({region}, {as_of}): {terms}",
        "zh": "其他条款（{region}，{as_of}）：{terms}",
    },
    "price.which": {
        "en": "Which instance type or GPU? For example: `price of p4d.24xlarge`, `g5.xlarge 一小时多少钱`.",
        "zh": "请指明实例规格或GPU，例如：`p4d.24xlarge 多少钱`、`A100 价格`。",
    },
    "names.unknown": {"en": "I don't know the {kind} '{text}'.", "zh": "我不认识{kind}“{text}”。"},
    "names.ambiguous": {"en": "'{text}' could mean several {kind}s.", "zh": "“{text}”可能指多个{kind}。"},
    "names.did_you_mean": {"en": "Did you mean {candidates}?", "zh": "您是不是指 {candidates}？"},
    "help.title": {"en": "What gpubot can answer", "zh": "gpubot 能回答的问题"},
    "help.not_understood": {
        "en": "I didn't understand that. Here is what I can answer:",
        "zh": "没看懂这个问题。我可以回答这些：",
    },
    "error.internal": {
        "en": "Sorry, something went wrong while answering. The error was logged.",
        "zh": "抱歉，回答时出错了，错误已记录。",
    },
    "error.kb": {
        "en": "The knowledge base is unavailable ({detail}). An operator can rebuild it with `gpubot kb build`.",
        "zh": "知识库不可用（{detail}）。管理员可运行 `gpubot kb build` 重建。",
    },
    "coming": {
        "en": "'{intent}' questions are not answered yet.",
        "zh": "暂不支持“{intent}”类问题。",
    },
    "word.or": {"en": " or ", "zh": " 或 "},
    "word.in": {"en": " in ", "zh": " 在"},
    "kind.gpu": {"en": "GPU", "zh": "GPU"},
    "kind.provider": {"en": "provider", "zh": "云厂商"},
    "kind.region": {"en": "region", "zh": "地域"},
    "kind.instance_type": {"en": "instance type", "zh": "实例规格"},
    "pricing.on_demand": {"en": "on-demand", "zh": "按需"},
    "pricing.spot": {"en": "spot", "zh": "竞价"},
    "pricing.reserved_1y": {"en": "1-year reserved", "zh": "1年预留"},
    "pricing.reserved_3y": {"en": "3-year reserved", "zh": "3年预留"},
    "sources": {"en": "Sources", "zh": "来源"},
    # --- short answers: the verdict first (handlers.brief) ---
    "cheapest.what": {"en": "Cheapest {what} {pricing}", "zh": "最便宜的{what}（{pricing}）"},
    "verdict.cheapest": {"en": "{asked}: {offer}", "zh": "{asked}：{offer}"},
    "verdict.offer": {
        "en": "{provider} {instance} in {where} at {price} ({hourly}{usd}){vgpu}",
        "zh": "{provider} {instance}，{where}，{price}（{hourly}{usd}）{vgpu}",
    },
    "zone.local": {"en": "{zone} {label} of {region}", "zh": "{region}下的{zone} {label}"},
    "zone": {"en": "{region} ({zone})", "zh": "{region}（{zone}）"},
    "unit.per_gpu_hour": {"en": "/GPU-h", "zh": "/GPU·小时"},
    "unit.per_hour": {"en": "/h", "zh": "/小时"},
    "unit.hours": {"en": "{hours:g} h", "zh": "{hours:g}小时"},
    "brief.also_in": {"en": "+{n} regions", "zh": "另有{n}个地域"},
    "brief.budget": {
        "en": "Budget: at most {cap}; {removed} of {total} offers above it hidden.",
        "zh": "预算：不超过{cap}；已隐藏{removed}/{total}条超出预算的报价。",
    },
    "verdict.none_within": {"en": "{asked}: no offer within {cap}", "zh": "{asked}：没有不超过{cap}的报价"},
    "brief.budget_cheapest": {"en": "The cheapest above it: {offer}.", "zh": "超出预算的最低报价：{offer}。"},
    "brief.caveat": {"en": "Caveat", "zh": "注意"},
    "brief.pages": {"en": "Pricing pages", "zh": "官方价格页"},
    "brief.hidden": {
        "en": '(+{n} notes: --verbose, or "Why" in Slack)',
        "zh": "（另有{n}条说明：加 --verbose，或在Slack中点“原因”）",
    },
    "tco.block": {
        "en": "TCO {hours:,.0f} h, {pricing}: compute {compute} + storage {storage} + egress {egress} = {total}",
        "zh": "总成本（{hours:,.0f}小时，{pricing}）：计算 {compute} + 存储 {storage} + 出网流量 {egress} = {total}",
    },
    "severity.high": {"en": "high", "zh": "高"},
    "severity.medium": {"en": "medium", "zh": "中"},
    "severity.low": {"en": "low", "zh": "低"},
    "colon": {"en": ": ", "zh": "："},
    "verdict.cmp": {
        "en": "{what} ({pricing}): {winner} is cheaper, {price}/GPU-h vs {other_price}/GPU-h for {other} ({pct:.0f}% less)",  # noqa: E501
        "zh": "{what}（{pricing}）：{winner}更便宜，{price}/GPU·小时，{other}为{other_price}/GPU·小时（低{pct:.0f}%）",
    },
    "verdict.cmp_ppf": {
        "en": "; per BF16/FP16 PFLOPS-hour {name} is {pct:.0f}% cheaper",
        "zh": "；按每BF16/FP16 PFLOPS·小时计，{name}便宜{pct:.0f}%",
    },
    "verdict.cmp_only": {
        "en": "{what} ({pricing}): only {name} has an offer, {price}/GPU-h (none for {missing})",
        "zh": "{what}（{pricing}）：只有{name}有报价，{price}/GPU·小时（{missing}无报价）",
    },
    "verdict.price": {"en": "{what}: {parts}", "zh": "{what}：{parts}"},
    "verdict.price_part": {
        "en": "{pricing} from {price}{unit} in {where}",
        "zh": "{pricing}最低{price}{unit}（{where}）",
    },
    "word.sep": {"en": "; ", "zh": "；"},
    "word.list": {"en": ", ", "zh": "，"},
    "verdict.tco": {
        "en": "Cheapest way to run {what} for {hours:,.0f} h: {option}, {total} in total",
        "zh": "{what}运行{hours:,.0f}小时最便宜的方案：{option}，总计{total}",
    },
    "tco.label": {
        "en": "{provider} {instance} {pricing} in {where}",
        "zh": "{provider} {instance}（{pricing}，{where}）",
    },
    "tco.no_spot": {
        "en": "Spot is not counted as an option: the job must not be interrupted.",
        "zh": "任务不能中断，因此未把竞价实例计为可选方案。",
    },
    "tco.term_too_long": {
        "en": "Reserved terms longer than the job ({hours:,.0f} h) are paid in full and are not counted as the cheapest.",  # noqa: E501
        "zh": "预留期限长于任务时长（{hours:,.0f}小时）需全额付费，未计为最便宜方案。",
    },
    "tco.budget_ok": {
        "en": "Budget {cap}: the cheapest option ({total}) fits, {diff} to spare.",
        "zh": "预算{cap}：最便宜的方案（{total}）在预算内，还剩{diff}。",
    },
    "tco.budget_over": {
        "en": "Budget {cap}: even the cheapest option ({total}) is {diff} over it.",
        "zh": "预算{cap}：即使最便宜的方案（{total}）也超出{diff}。",
    },
    "verdict.spot": {
        "en": "Spot, if the job can resume from checkpoints: {what} for {hours:,.0f} h costs {spot} on spot ({spot_where}) "  # noqa: E501
        "vs {od} on-demand ({od_where}), {pct:.0f}% less with the interruption risk priced in",
        "zh": "选竞价（前提是任务能从检查点恢复）：{what}运行{hours:,.0f}小时，竞价{spot}（{spot_where}），"
        "按需{od}（{od_where}），计入中断风险后便宜{pct:.0f}%",
    },
    "verdict.spot_od": {
        "en": "On-demand: {what} for {hours:,.0f} h costs {od} on-demand ({od_where}) vs {spot} on spot ({spot_where})",
        "zh": "选按需：{what}运行{hours:,.0f}小时，按需{od}（{od_where}），竞价{spot}（{spot_where}）",
    },
    "verdict.spot_only": {
        "en": "{what} for {hours:,.0f} h: only {option} is offered, {total}",
        "zh": "{what}运行{hours:,.0f}小时：只有{option}，{total}",
    },
    "spot.risk_line": {
        "en": "Interruption risk: {subject} is in the {bucket} monthly-interruption bucket ({source}, {as_of}): "
        "about {n:.2f} interruptions over this job, each costing a restart and the work since the last "
        "checkpoint.",
        "zh": "中断风险：{subject}的月中断率区间为{bucket}（{source}，{as_of}）：本任务期间预计约{n:.2f}次中断，"
        "每次损失一次重启和上次检查点之后的工作。",
    },
    "spot.no_risk_data": {
        "en": "Interruption risk of {option}: no published interruption data; spot capacity can be reclaimed at any time.",  # noqa: E501
        "zh": "{option}的中断风险：没有公开的中断数据；竞价容量随时可能被回收。",
    },
    "spot.default_gpu": {
        "en": 'No GPU named: priced for {count:g}x {gpu}; name one, e.g. "spot or on-demand for 8x A100 for 3 days".',
        "zh": "未指明GPU：按{count:g}卡{gpu}计算；可指明，例如“8卡A100跑3天用竞价还是按需”。",
    },
    "help.off_topic": {
        "en": "I answer GPU cloud questions, for example:",
        "zh": "我只回答GPU云相关的问题，例如：",
    },
    "verdict.be": {
        "en": "{term} {instance} ({region}) pays off above {pct:.1f}% utilisation (about {hours:,.0f} h a month)",
        "zh": "{instance}（{region}）{term}在利用率高于{pct:.1f}%（约每月{hours:,.0f}小时）时更划算",
    },
    "verdict.be_never": {"en": "; it never pays off here", "zh": "；此处预留永远不划算"},
    "verdict.be_reserved": {
        "en": "; at your {used:.0f}% the reservation is cheaper: {reserved} a month vs {on_demand} on-demand",
        "zh": "；按您的{used:.0f}%利用率，预留更便宜：每月{reserved}，按需{on_demand}",
    },
    "verdict.be_on_demand": {
        "en": "; at your {used:.0f}% on-demand is cheaper: {on_demand} a month vs {reserved} reserved",
        "zh": "；按您的{used:.0f}%利用率，按需更便宜：每月{on_demand}，预留{reserved}",
    },
    "word.dash": {"en": " — ", "zh": "——"},
    "rec.pick": {
        "en": "Pick {gpu} x{n:g}: {instances} x {provider} {instance} {pricing} in {region} ({hourly}/h)",
        "zh": "推荐{gpu} x{n:g}：{instances}台{provider} {instance}（{pricing}，{region}，每小时{hourly}）",
    },
    "rec.why_run": {
        "en": "lowest estimated cost of the run: {cost} (about {hours:,.0f} h on {gpus:g} GPUs)",
        "zh": "估算训练总成本最低：{cost}（{gpus:g}张卡约{hours:,.0f}小时）",
    },
    "rec.why_price": {"en": "the cheapest per hour that fits", "zh": "满足要求且每小时最便宜"},
    "rec.why_throughput": {"en": "the highest throughput", "zh": "吞吐最高"},
    "rec.why_fp64_price": {"en": "the lowest price per FP64 TFLOPS", "zh": "每FP64 TFLOPS价格最低"},
    "rec.run": {
        "en": "run estimate: {gpu_hours:,.0f} GPU-h, about {hours:,.0f} h on {gpus:g} GPUs = {cost}",
        "zh": "训练估算：{gpu_hours:,.0f} GPU·小时，{gpus:g}张卡约{hours:,.0f}小时 = {cost}",
    },
    "rec.run_basis": {
        "en": "Ranked by the estimated cost of the run: 6 x {params:g}B parameters x {tokens:,.0f}B tokens{said} "
        "FLOPs (Kaplan et al. 2020) at {mfu:.0f}% of each GPU's datasheet dense BF16/FP16 peak (assumed "
        "utilisation), times the option's price per GPU-hour.",
        "zh": "按估算的训练总成本排序：6 x {params:g}B参数 x {tokens:,.0f}B token{said}次浮点运算（Kaplan等，2020），"
        "按每张卡数据手册稠密BF16/FP16峰值的{mfu:.0f}%（假设的利用率）计算，再乘以该方案每GPU小时价格。",
    },
    "rec.run_default_tokens": {
        "en": ' (20 tokens per parameter, Hoffmann et al. 2022; say e.g. "on 2T tokens")',
        "zh": "（每个参数20个token，Hoffmann等，2022；可写明如“2T tokens”）",
    },
    "rec.none_within": {"en": "No option for {what} within {cap}", "zh": "没有不超过{cap}的{what}方案"},
    "rec.budget_cap": {
        "en": "Budget: only options within {cap} are recommended.",
        "zh": "预算：只推荐不超过{cap}的方案。",
    },
    "rec.budget_run_ok": {
        "en": "Budget {cap}: the run ({cost}) fits.",
        "zh": "预算{cap}：训练成本（{cost}）在预算内。",
    },
    "rec.budget_run_over": {
        "en": "Budget {cap}: even the cheapest run ({cost}) is over it; a smaller model or fewer tokens fit better.",
        "zh": "预算{cap}：即使最便宜的方案（{cost}）也超出预算；可考虑更小的模型或更少的token。",
    },
    "rec.budget_hours": {
        "en": "Budget {cap}: buys about {hours:,.0f} h of the pick.",
        "zh": "预算{cap}：约可使用推荐方案{hours:,.0f}小时。",
    },
    "rec.budget_ok": {
        "en": "Budget {cap}: {hours:,.0f} h of the pick cost {cost}, within it.",
        "zh": "预算{cap}：推荐方案{hours:,.0f}小时花费{cost}，在预算内。",
    },
    "rec.budget_over": {
        "en": "Budget {cap}: {hours:,.0f} h of the pick cost {cost}, over it.",
        "zh": "预算{cap}：推荐方案{hours:,.0f}小时花费{cost}，超出预算。",
    },
    # help in Chinese: one line per intent (English help is each handler's docstring)
    "help.cheapest": {"zh": "最便宜 <GPU> [N卡] [竞价|按需|预留] [云厂商] [地域]：按每GPU小时排序的最低报价"},
    "help.price": {"zh": "<实例规格|GPU> 多少钱 [竞价|按需|预留] [地域]：一个实例规格的全部已知价格"},
    "help.recommend": {"zh": "推荐 <用途> [模型大小] [预算|性能|生态|合规]：排好序的GPU方案和决策依据"},
    "help.compare": {"zh": "<GPU|实例|云厂商> 对比 <…> [计费方式]：规格并列、每GPU小时价格和每PFLOPS·小时价格"},
    "help.spec": {"zh": "<GPU|实例规格> 参数 [FP8|FP32|…]：数据手册数字（稠密值）及来源，纠正种子文章的错误"},
    "help.tco": {
        "zh": "<实例规格|GPU> [N卡] [时长] [计费方式] [存储/出网流量] 总成本：成本拆分、盈亏平衡、竞价还是按需"
    },
    "help.pitfalls": {"zh": "<主题|GPU|云厂商|计费方式> 有哪些坑：隐藏成本和陷阱，例如“aws竞价实例有哪些坑”"},
    "help.checklist": {"zh": "检查清单 <方案>：采购前要核对的事项，例如“8卡A100 aws竞价 检查清单”"},
    "help.digest": {"zh": "价格变动 [GPU] [云厂商] [竞价|按需]：与上一次快照相比的GPU价格变化"},
    "help.history": {"zh": "<GPU> 价格走势 [竞价|按需] [云厂商] [地域]：每GPU小时最低价的历史变化"},
    "help.help": {"zh": "帮助：本列表"},
    "help.work": {
        "zh": "<模型> 每百万token成本 [检索增强|长上下文] [批量|交互] [竞价]：按实测基准计算的每百万输出token价格"
    },
    "offer.via": {"en": "via {via}", "zh": "实际运行于{via}"},
    "cmp.col.memory": {"en": "memory", "zh": "显存"},
    "cmp.col.bandwidth": {"en": "bandwidth", "zh": "带宽"},
    "cmp.col.FP32": {"en": "FP32", "zh": "FP32"},
    "cmp.col.BF16 dense": {"en": "BF16 dense", "zh": "BF16稠密"},
    "cmp.col.FP64": {"en": "FP64", "zh": "FP64"},
    "cmp.budget": {"en": "Budget: only offers within {cap} are compared.", "zh": "预算：只比较不超过{cap}的报价。"},
    "cmp.try": {"en": "For example: {items}", "zh": "例如：{items}"},
    "cmp.vs": {"en": " vs ", "zh": " 对比 "},
    "cmp.try_providers": {"en": "{a} vs {b} for {gpu}", "zh": "{a} 对比 {b} 的{gpu}"},
    "brief.details": {"en": "Details", "zh": "详细说明"},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The phrase `key` in `lang` (English when missing), formatted with `values`."""
    phrases = MESSAGES[key]
    return (phrases.get(lang) or phrases["en"]).format(**values)
