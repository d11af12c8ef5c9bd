"""recommend <workload> [model size] [budget|performance|ecosystem|compliance]: ranked GPUs and the decision path."""

from __future__ import annotations

from dataclasses import dataclass

from handlers import brief, recommend_options, run_cost
from handlers.break_even import saving_facts, usage_verdict
from handlers.common import money, name_notes, offer, pricing_label, sources
from handlers.i18n import t
from handlers.i18n_rules import provider_name, provider_notes, rule_hits
from handlers.models import Answer, Query, Recommendation
from handlers.offer_notes import excluded_note
from handlers.spec import errata_json, errata_lines, match_errata
from handlers.tco_model import spot_estimate
from knowledge.facts import rules as R
from knowledge.facts.question_facts import query_facts
from knowledge.kb import ranks
from knowledge.kb.reader import KB, GpuRef

TOP = 5


@dataclass(frozen=True)
class _Plan:
    """The options weighed and how: their pricing model and scope, GPUs per variant (variant: (family, GB)),
    whether NVLink is required, the hourly cap, what ranks them, and whether by the cost of the whole run."""

    options: list[dict]
    counts: dict[tuple[str, float], int]
    pricing: str
    providers: list[str]
    regions: list[str]
    nvlink: bool
    cap: tuple[str, float] | None
    rank_by: str
    by_run: bool

    @property
    def top(self) -> dict | None:
        """The offer of the first option, if it has one."""
        return self.options[0]["offer"] if self.options and self.options[0]["offer"] else None


def handle(query: Query, kb: KB) -> Answer:
    """recommend <workload> [model size] [budget|performance|ecosystem|compliance]: ranked GPUs, decision path"""
    lang = query.language
    notes, suggestions = name_notes(query)
    facts = query_facts(query)
    fired = R.evaluate(facts, lang)
    hardware = R.first(fired, "hardware")
    if hardware and hardware.then.device == "cpu" and not query.gpus:
        return Answer(
            query=query,
            title=t("rec.cpu", lang),
            notes=notes,
            rules=rule_hits([f for f in fired if f.group == "hardware"]),
        )
    plan, fired = _plan(kb, query, fired, facts)
    if plan.cap and query.budget:  # a cap is only read from a budget
        notes.append(t("rec.budget_cap", lang, cap=brief.budget_label(query.budget, lang)))
    # offers of these GPUs that cannot be ordered at this pricing model were left out: say how many, and why
    gpus = [GpuRef(*v) for v in plan.counts]
    excluded = kb.excluded(gpus=gpus, pricing=plan.pricing, providers=plan.providers, regions=plan.regions)
    if note := excluded_note(excluded, plan.pricing, lang):
        notes.append(note)
    facts.update(_ranking_facts(kb, query, plan.options, plan.pricing, fired, lang))
    if top := plan.top:
        facts.update(_top_facts(kb, query, plan, top))
    errata = match_errata(query, kb)
    facts["erratum_ids"] = [e["id"] for e in errata]
    fired = R.evaluate(facts, lang)
    required = facts.get("required_gb")
    recs = [_recommendation(o, required, plan.pricing, lang, kb) for o in plan.options[: query.top_n or TOP]]
    return Answer(
        query=query,
        title=_title(kb, query, plan, recs),
        recommendations=recs,
        rules=rule_hits(fired),
        lines=_lines(kb, query, plan, fired, errata) + _serving(kb, query, plan, recs),
        notes=_notes(kb, query, plan, notes),
        suggestions=suggestions,
        sources=sources([r.offer for r in recs if r.offer]),
        extra={"errata": errata_json(errata, lang)},
    )


def _plan(kb: KB, query: Query, fired: list[R.Fired], facts: dict) -> tuple[_Plan, list[R.Fired]]:
    """The options ranked, and the rules fired once the memory need is known; adds to `facts` the pricing, the
    memory required and the GPUs needed."""
    lang = query.language
    facts["pricing"] = pricing = query.pricing or _advised(fired) or "on_demand"
    memory = R.first(fired, "memory", "bytes_per_param")
    if memory and query.model_size_b:
        params = memory.then.params
        facts["required_gb"] = R.memory_required_gb(query.model_size_b, params["bytes_per_param"], params["overhead"])
    fired = R.evaluate(facts, lang)  # the memory need can change the hardware class (large-model inference)
    variants = recommend_options.variants(kb, query, fired, facts)
    required = facts.get("required_gb")
    counts = {v: max(R.gpus_needed(required, v[1]) if required else 1, int(query.gpu_count or 1)) for v in variants}
    if counts and (required or query.gpu_count):
        largest = max(variants, key=lambda v: (v[1], -counts[v]))
        facts.update(
            gpus_needed=min(counts.values()), largest_gpu=f"{largest[0]} {largest[1]:g}GB", largest_gb=largest[1]
        )
    nvlink = any("nvlink" in f.then.require for f in R.evaluate(facts, lang, groups=("hardware", "interconnect")))
    providers, regions = recommend_options.scope(kb, query, fired, facts)
    cap = recommend_options.hourly_cap(query, kb)
    options = [recommend_options.option(kb, v, counts[v], pricing, providers, regions, nvlink, cap) for v in variants]
    rank = R.first(fired, "priority", "rank_by") or R.first(fired, "hardware", "rank_by")
    rank_by = (rank.then.rank_by if rank else None) or "price"
    by_run = _order(query, options, rank_by, max(counts.values(), default=1))
    return _Plan(options, counts, pricing, providers, regions, nvlink, cap, rank_by, by_run), fired


def _order(query: Query, options: list[dict], rank_by: str, most_gpus: int) -> bool:
    """Sort `options` best first: by `rank_by`, or (multi-GPU training, then True) by what the run costs, each
    option given its `run` estimate; what fits on one GPU is never ranked below a split across two."""
    by = recommend_options.rank_key(rank_by)
    one = any(o["needed"] == 1 and o["offer"] for o in options)  # what fits on one GPU is not split across two
    options.sort(key=lambda o: (one and o["needed"] > 1, *by(o)))
    if not run_cost.applies(query, most_gpus):
        return False
    for o in options:  # multi-GPU training: what the run costs, not the cluster's $/hour
        row = o["offer"]
        o["run"] = run_cost.estimate(query, o["tflops"], o["instances"], row["gpu_count"], o["hourly"]) if row else None
    options.sort(key=lambda o: (one and o["needed"] > 1, o["run"] is None, o["run"]["cost"] if o["run"] else 0.0))
    return True


def _top_facts(kb: KB, query: Query, plan: _Plan, top: dict) -> dict:
    """Facts of the first pick for the rules: what reserving it saves, and on spot what interruptions cost."""
    lang = query.language
    facts = saving_facts(kb, top["instance_type"], top["region"], lang)
    if plan.pricing != "spot":
        return facts
    od = kb.offers(instance_types=[top["instance_type"]], regions=[top["region"]], pricing="on_demand", limit=1)
    if od:
        hours = query.duration_hours or R.HOURS_PER_MONTH
        od_price, spot_price, instances = (
            od[0]["price_per_hour_usd"],
            top["price_per_hour_usd"],
            plan.options[0]["instances"],
        )
        facts.update(spot_estimate(kb, top, od_price, spot_price, hours, instances, lang)[1])
    return facts


def _lines(kb: KB, query: Query, plan: _Plan, fired: list[R.Fired], errata: list) -> list[str]:
    """The run's basis (multi-GPU training), the verdict on the usage asked, the providers' notes and the errata."""
    lang, top = query.language, plan.top
    lines = _provider_lines(kb, fired, plan.providers, lang) + errata_lines(errata, lang)
    if top and (said := usage_verdict(kb, query, top["instance_type"], top["region"])):
        lines.insert(0, said)  # "200 hours a month": on-demand or reserved for that usage
    if plan.by_run:
        n_tokens, tokens_said = run_cost.tokens(query)
        lines.insert(
            0,
            t(
                "rec.run_basis",
                lang,
                params=query.model_size_b,
                tokens=n_tokens / 1e9,
                said="" if tokens_said else t("rec.run_default_tokens", lang),
                mfu=run_cost.MFU * 100,
            ),
        )
    return lines


def _serving(kb: KB, query: Query, plan: _Plan, recs: list[Recommendation]) -> list[str]:
    """Measured $ per 1M tokens of the GPUs recommended for inference; training: estimated (#15)."""
    from handlers.work import serving_lines

    return serving_lines(kb, query, gpus=list(dict.fromkeys(r.gpu for r in recs)), pricing=plan.pricing)


def _notes(kb: KB, query: Query, plan: _Plan, notes: list[str]) -> list[str]:
    """`notes` with the total budget's verdict first, NVLink and vGPU advice, and a hint to say the workload."""
    lang = query.language
    if budget_line := _total_budget(query, plan.options, plan.pricing, kb):
        notes.insert(0, budget_line)
    if plan.nvlink and any(c > 1 for c in plan.counts.values()):
        notes.append(t("rec.nvlink", lang))
    notes.append(t("rec.vgpu", lang))
    if not query.workload and not query.gpus:
        notes.insert(0, t("rec.ask", lang))
    return notes


def _title(kb: KB, query: Query, plan: _Plan, recs: list[Recommendation]) -> str:
    """The verdict on the first pick; else that nothing fits the budget, or what was asked."""
    lang = query.language
    if recs and recs[0].offer:
        return _verdict(plan.options[0], recs[0], plan.pricing, plan.by_run, plan.rank_by, lang, kb)
    what = " ".join(
        x
        for x in (
            f"{query.model_size_b:g}B" if query.model_size_b else "",
            t(f"workload.{query.workload}", lang) if query.workload else "",
            t(f"priority.{query.priority}", lang) if query.priority else "",
        )
        if x
    )
    what = what or ", ".join(query.gpus) or "?"
    if plan.cap and query.budget:
        return t("rec.none_within", lang, what=what, cap=brief.budget_label(query.budget, lang))
    return t("rec.title", lang, what=what)


def _verdict(option: dict, rec: Recommendation, pricing: str, by_run: bool, rank_by: str, lang: str, kb: KB) -> str:
    """Line one: the pick and the one reason that decided it."""
    row = option["offer"]
    pick = t(
        "rec.pick",
        lang,
        gpu=rec.gpu,
        n=option["needed"],
        instances=option["instances"],
        instance=row["instance_type"],
        provider=brief.provider_label(row["provider"], lang),
        region=row["region"],
        pricing=pricing_label(pricing, lang),
        hourly=money(option["hourly"]),
    )
    if by_run and option.get("run"):
        run = option["run"]
        reason = t("rec.why_run", lang, cost=money(run["cost"]), hours=run["wall_hours"], gpus=run["gpus"])
    else:
        reason = t(f"rec.why_{rank_by}" if rank_by in ("throughput", "fp64_price") else "rec.why_price", lang)
    return f"{pick}{t('word.dash', lang)}{reason}"


def _total_budget(query: Query, options: list[dict], pricing: str, kb: KB) -> str | None:
    """A total budget ("$5,000 for the month"): how many hours the pick runs for it, or whether the run fits."""
    budget = query.budget
    if not budget or budget.per != "total" or not options or not options[0]["offer"]:
        return None
    cap = budget.usd(kb.fx())
    top = options[0]
    if top.get("run"):
        key = "rec.budget_run_ok" if top["run"]["cost"] <= cap else "rec.budget_run_over"
        return t(key, query.language, cap=money(cap), cost=money(top["run"]["cost"]))
    hours = query.duration_hours or budget.hours
    spend = top["hourly"] * hours if hours else None
    if spend is None:
        return t("rec.budget_hours", query.language, cap=money(cap), hours=cap / top["hourly"])
    key = "rec.budget_ok" if spend <= cap else "rec.budget_over"
    return t(key, query.language, cap=money(cap), cost=money(spend), hours=hours)


def _advised(fired: list[R.Fired]) -> str | None:
    """The pricing a priority rule advises (budget first: spot), when the question named none."""
    rule = R.first(fired, "priority", "pricing")
    return rule.then.pricing if rule else None


def _recommendation(option: dict, required: float | None, pricing: str, lang: str, kb: KB) -> Recommendation:
    parts = [
        t(
            "rec.fit" if required else "rec.count",
            lang,
            mem=option["memory"],
            needed=option["needed"],
            required=required or 0,
        )
    ]
    if option["tflops"]:
        parts.append(t("rec.perf", lang, tflops=option["tflops"]))
    if option["fp64"] and option["fp64"] >= 5:
        parts.append(t("rec.fp64", lang, fp64=option["fp64"]))
    row = option["offer"]
    if row:
        parts.append(
            t(
                "rec.offer",
                lang,
                pricing=pricing_label(pricing, lang),
                instances=option["instances"],
                instance=row["instance_type"],
                provider=provider_name(kb, row["provider"], lang),
                region=row["region"],
                hourly=money(option["hourly"]),
            )
        )
    else:
        parts.append(t("rec.no_offer", lang, pricing=pricing_label(pricing, lang)))
    if option.get("run"):
        run = option["run"]
        parts.append(
            t(
                "rec.run",
                lang,
                gpu_hours=run["gpu_hours"],
                hours=run["wall_hours"],
                gpus=run["gpus"],
                cost=money(run["cost"]),
            )
        )
    return Recommendation(
        gpu=f"{option['family']} {option['memory']:g}GB",
        gpu_memory_gb=option["memory"],
        gpu_count=option["needed"],
        offer=offer(row) if row else None,
        reason="; ".join(parts),
    )


def _ranking_facts(kb: KB, query: Query, options: list[dict], pricing: str, fired: list[R.Fired], lang: str) -> dict:
    """Provider rankings from the knowledge base, set against the seeds' ranking of a fired priority rule."""
    rule = R.first(fired, "priority", "seed_ranking")
    if not rule:
        return {}
    seed = list(rule.then.seed_ranking)
    facts = {
        "seed_ranking_text": " > ".join(provider_name(kb, p, lang) for p in seed),
        "rank_pricing": pricing_label(pricing, lang),
    }
    if rule.then.rank_by == "throughput":
        best: dict[str, float] = {}
        for row in kb.rows(
            "SELECT DISTINCT o.provider, o.gpu, s.t FROM offers o JOIN (SELECT family, "
            "MAX(COALESCE(bf16_tflops_dense, fp16_tflops_dense)) t FROM gpu_specs GROUP BY family) s "
            "ON s.family = o.gpu WHERE o.kind = 'catalog' AND o.vgpu = 0"
        ):
            best[row["provider"]] = max(best.get(row["provider"], 0), row["t"] or 0)
        order = sorted(best, key=lambda p: -best[p])
        ranked = sorted({(o["family"], o["tflops"]) for o in options}, key=lambda x: (-x[1], x[0]))  # ties: by name
        facts["perf_ranking"] = ", ".join(f"{f} {v:,g}" for f, v in ranked[:6])
    else:  # the top option's GPU; A100 (the seeds' own subject) when fewer than two ranked providers sell it
        asked = [GpuRef.parse(query.gpus[0]).family] if query.gpus else [o["family"] for o in options[:1]]
        for family in [*asked, "A100"]:
            cheapest = {
                r["provider"]: r for r in ranks.first_per_provider(kb, {"gpus": [GpuRef(family)], "pricing": pricing})
            }
            order = list(cheapest)
            if len(set(order) & set(seed)) >= 2:
                break
        facts["rank_gpu"] = family
        facts["kb_ranking"] = (
            ", ".join(f"{provider_name(kb, p, lang)} {money(cheapest[p]['price_per_gpu_hour_usd'])}" for p in order)
            or "-"
        )
    both_kb = [p for p in order if p in seed]
    both_seed = [p for p in seed if p in order]
    if not both_kb:
        facts["ranking_diff"] = t("rank.none", lang)
    elif both_kb == both_seed:
        facts["ranking_diff"] = t("rank.agree", lang)
    else:
        names = lambda ps: " > ".join(provider_name(kb, p, lang) for p in ps)  # noqa: E731
        facts["ranking_diff"] = t("rank.differ", lang, kb=names(both_kb), seed=names(both_seed))
    return facts


def _provider_lines(kb: KB, fired: list[R.Fired], providers: list[str], lang: str) -> list[str]:
    """Provider notes for the topic a fired priority rule asks for (ecosystem, compliance)."""
    rule = R.first(fired, "priority", "note_topic")
    topic = rule.then.note_topic if rule else None
    if not topic:
        return []
    lines = []
    for pid in providers or list(kb.providers):
        for note in provider_notes(kb, pid, topic):
            lines.append(
                t(
                    "rec.note",
                    lang,
                    provider=provider_name(kb, pid, lang),
                    topic=topic,
                    note=note["zh"] if lang == "zh" else note["en"],
                    source=note["source"],
                )
            )
        if topic == "compliance" and not (kb.providers.get(pid) or {}).get("has_catalog"):
            lines.append(t("rec.article_only", lang, provider=provider_name(kb, pid, lang)))
    return lines
