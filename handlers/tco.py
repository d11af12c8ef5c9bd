"""tco <instance type | gpu> [xN] [hours] [pricing] [storage, egress GB] [CNY]: compute + storage + egress.

Also the two one-figure cost questions: how often a spot type is interrupted, and the break-even utilisation
of a reservation.
"""

from __future__ import annotations

import math
import re

from handlers import brief
from handlers.common import money, name_notes, offer, place, pricing_label
from handlers.i18n_rules import provider_costs, provider_name, rule_hits, t
from handlers.models import PRICINGS, Answer, Query, Source, Tco
from handlers.spec import errata_json, errata_lines, match_errata, whole
from knowledge import rules as R
from knowledge.kb import KB, GpuRef

DEFAULT_HOURS = R.HOURS_PER_MONTH
TERMS = {"reserved_1y": ("yrTerm1Standard.noUpfront", 1), "reserved_3y": ("yrTerm3Standard.noUpfront", 3)}
SEED_RESERVED_DISCOUNT = 0.40  # low end of the seeds' 40-60% (S0 §三.1), used only where the data has no rate


def handle(query: Query, kb: KB) -> Answer:
    """tco <instance type | gpu> [xN] [hours] [pricing] [storage/egress GB] [CNY]: cost breakdown, break-even"""
    facts = R.query_facts(query)
    if _no_interruptions(query):  # "the job cannot be interrupted": a constraint, not a question about interruptions
        facts["topic"] = None
    if facts["topic"] == "interruption":
        return interruptions(query, kb, facts)
    if facts["topic"] == "break_even":
        return break_even_answer(query, kb, facts)
    lang = query.language
    notes, suggestions = name_notes(query)
    subjects = _subjects(query, kb)
    if not subjects:
        key = "tco.none" if query.instance_types or query.gpus else "tco.which"
        what = ", ".join(query.instance_types or query.gpus)
        return Answer(query=query, title=t(key, lang, what=what), notes=notes, suggestions=suggestions)
    hours = query.duration_hours or _budget_hours(query) or DEFAULT_HOURS
    fx = kb.fx()
    options, lines = [], []
    first = None
    no_spot = _no_interruptions(query)
    for index, cands in enumerate(subjects):
        base = (cands["on_demand"] or next(c for c in cands.values() if c))[0]
        currency = query.currency or base["currency"]
        local = facts if index == 0 else {}
        for pricing in PRICINGS:
            picked = _best_option(kb, query, cands, pricing, hours, currency, fx, local)
            if picked:
                options.append(picked)
                if index == 0 and first is None and pricing == (query.pricing or "on_demand"):
                    first = picked[1]
        be = break_even(kb, base["instance_type"], base["region"], "reserved_1y")
        if be:
            lines.append(_break_even_line(be, lang))
        if index == 0:
            facts.update(saving_facts(kb, base["instance_type"], base["region"], lang))
            facts.update(_break_even_facts(be) if be else {})
    if not options:
        what = ", ".join(query.instance_types or query.gpus)
        return Answer(query=query, title=t("tco.none", lang, what=what), notes=notes, suggestions=suggestions)
    first = first or options[0][1]
    ranked = sorted(options, key=lambda item: item[1].total)
    eligible = [item for item in ranked if _fits(item[1], query, no_spot)] or ranked
    label, best = eligible[0]
    if no_spot:
        lines.append(t("tco.no_spot", lang))
    if query.duration_hours and any(not _fits(o, query, False) for _, o in ranked):
        lines.append(t("tco.term_too_long", lang, hours=hours))
    budget_line = _budget_line(query, best, fx)
    if budget_line:
        notes.insert(0, budget_line)
    errata = match_errata(query, kb)
    facts["erratum_ids"] = [e["id"] for e in errata]
    fired = R.evaluate(facts, lang, groups=("cost", "spot", "spec"))
    what = ", ".join(query.instance_types[:3]) or " / ".join(query.gpus)
    if query.gpu_count and not query.instance_types:
        what = f"{query.gpu_count:g}x {what}"
    if query.machines:  # "2 nodes of 8 H100": 2x 8x H100
        what = f"{query.machines}x {what}"
    return Answer(
        query=query,
        title=t("verdict.tco", lang, what=what, hours=hours, option=label, total=money(best.total, best.currency)),
        tco=first,  # the pricing asked for (on-demand when none): the JSON contract's "tco"
        tco_options=[o for _, o in ranked if o is not first],
        lines=lines,
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=_sources(subjects),
        extra={
            "errata": errata_json(errata, lang),
            "tco_best": best.pricing,
            "tco_labels": {o.pricing: lab for lab, o in ranked},
            **({"details": errata_lines(errata, lang)} if errata else {}),
        },
    )


MAX_CANDIDATES = 12  # cheapest regions (or instance types) of each pricing model priced in full per question
_NO_INTERRUPTIONS = re.compile(
    r"(can ?not|can't|cannot|must not|mustn't|never) be interrupted|no interruptions?|"
    r"uninterrupt|without interruption|不能中断|不可中断|不能被中断|不允许中断|不能停"
)


def _no_interruptions(query: Query) -> bool:
    return bool(_NO_INTERRUPTIONS.search((query.text or "")[:2000].lower()))


def _fits(option: Tco, query: Query, no_spot: bool) -> bool:
    """Can this option run the job: spot only where the job tolerates interruption, reserved only where the job
    lasts the term (a shorter job would pay for the rest of the term)."""
    if option.pricing == "spot":
        return not no_spot
    if option.pricing in TERMS and query.duration_hours:
        return query.duration_hours >= TERMS[option.pricing][1] * R.HOURS_PER_YEAR - 1e-6
    return True


def _budget_hours(query: Query) -> float | None:
    return query.budget.hours if query.budget and query.budget.per == "total" else None


def _budget_line(query: Query, best: Tco, fx: dict) -> str | None:
    """A total budget ("$5,000 for the month"): does the cheapest option fit, and by how much."""
    budget = query.budget
    if budget is None or budget.per != "total":
        return None
    cap = _convert(budget.amount, budget.currency, best.currency, fx)
    key = "tco.budget_ok" if best.total <= cap + 1e-9 else "tco.budget_over"
    return t(
        key,
        query.language,
        cap=money(cap, best.currency),
        total=money(best.total, best.currency),
        diff=money(abs(cap - best.total), best.currency),
    )


def _best_option(
    kb: KB, query: Query, cands: dict[str, list[dict]], pricing: str, hours: float, currency: str, fx: dict, facts: dict
) -> tuple[str, Tco] | None:
    """The lowest total of one pricing model over every region, zone (a region's row is its cheapest zone) and
    instance type that can run the job, with the label naming where."""
    lang = query.language
    on_demand = {(r["instance_type"], r["region"]): r for r in cands["on_demand"]}
    rows = cands[pricing][:MAX_CANDIDATES] or ([None] if pricing in TERMS and cands["on_demand"] else [])
    best = None
    for row in rows:
        od = on_demand.get((row["instance_type"], row["region"])) if row else cands["on_demand"][0]
        src = row or od
        trial: dict = dict(facts) if facts else {}
        option = _option(
            kb, query, {"on_demand": od, pricing: row}, pricing, _instances(query, src), hours, currency, fx, trial
        )
        if option and (best is None or option.total < best[1].total):
            where = place(offer(src), lang)
            label = t(
                "tco.label",
                lang,
                instance=src["instance_type"],
                pricing=pricing_label(pricing, lang),
                where=where,
                provider=brief.provider_label(src["provider"], lang),
            )
            best = (label, option, trial)
    if best is None:
        return None
    if facts:
        facts.update(best[2])
    return best[0], best[1]


def _instances(query: Query, row: dict) -> int:
    """Instances needed: the GPUs asked (per machine, times the machines asked) over the GPUs per instance."""
    per_machine = max(1, math.ceil(query.gpu_count / row["gpu_count"] - 1e-9)) if query.gpu_count else 1
    return per_machine * (query.machines or 1)


def price_or_tco(query: Query, kb: KB) -> Answer:
    """price <instance type | gpu> [spot|on-demand|reserved] [region]: every known price of an instance type"""
    from handlers import price, spec

    topic = R.query_facts(query)["topic"]
    if topic and query.instance_types:  # "how often is X interrupted", "break-even utilisation of X"
        return handle(query, kb)
    if (query.instance_types or query.gpus) and spec.is_fact_question(query, kb):
        return spec.handle(query.model_copy(update={"intent": "spec"}), kb)
    return spec.with_errata(price.handle(query, kb), query, kb)


def _subjects(query: Query, kb: KB) -> list[dict[str, list[dict]]]:
    """Per instance type asked (or the GPU asked): its offers per pricing model, every region, cheapest first."""
    filters = dict(providers=query.providers, regions=query.regions)
    subjects = []
    if query.instance_types:
        for instance_type in query.instance_types[:3]:
            cands = {p: kb.offers(instance_types=[instance_type], pricing=p, **filters) for p in PRICINGS}
            if any(cands.values()):
                subjects.append(cands)
    elif query.gpus:
        refs = [GpuRef.parse(g) for g in query.gpus]
        for count in (query.gpu_count, None):  # no instance of that size: several smaller ones
            cands = {
                p: [r for r in kb.offers(gpus=refs, pricing=p, gpu_count=count, **filters) if whole(r)]
                for p in PRICINGS
            }
            if any(cands.values()):
                subjects.append(cands)
                break
    return subjects


def _convert(amount: float, src: str, dst: str, fx: dict) -> float:
    if src == dst:
        return amount
    return amount * fx["cny_per_usd"] if dst == "CNY" else amount * fx["usd_per_cny"]


def _rate(row: dict, currency: str, fx: dict) -> float:
    """An offer's hourly price in `currency`: the vendor's own figure, its catalog USD twin, or converted."""
    if currency == row["currency"]:
        return row["price_per_hour"]
    if currency == "USD":
        return row["price_per_hour_usd"]
    return _convert(row["price_per_hour_usd"], "USD", currency, fx)


def _option(
    kb: KB, query: Query, rows: dict, pricing: str, instances: int, hours: float, currency: str, fx: dict, facts: dict
) -> Tco | None:
    lang = query.language
    row = rows.get(pricing)
    od = rows.get("on_demand")
    seed = (
        row is None
        and pricing in TERMS
        and od is not None
        and (query.pricing == pricing or query.pricing is None and facts.get("long_project"))
    )
    if row is None and not seed:
        return None
    src = row or od
    rate = _rate(src, currency, fx)
    if seed:
        rate *= 1 - SEED_RESERVED_DISCOUNT
        facts.update(
            seed_discount_used=True,
            seed_discount_subject=src["instance_type"],
            seed_discount_pct=SEED_RESERVED_DISCOUNT * 100,
        )
    converted = currency != src["currency"]
    assumptions = [
        t(
            "tco.a.instance",
            lang,
            instance=src["instance_type"],
            provider=provider_name(kb, src["provider"], lang),
            region=src["region"],
            instances=instances,
            count=src["gpu_count"],
            gpu=src["gpu_model"] or src["gpu"],
            pricing=pricing_label(pricing, lang),
            rate=money(rate, currency),
            source=src["source"],
            as_of=src["as_of"],
        ),
        t("tco.a.hours", lang, hours=hours, default="" if query.duration_hours else t("tco.a.default", lang)),
    ]
    billed = hours
    if seed:
        assumptions.append(t("tco.a.seed", lang))
    if pricing in TERMS:
        years = TERMS[pricing][1]
        term = years * R.HOURS_PER_YEAR
        if query.duration_hours:
            billed = math.ceil(hours / term - 1e-9) * term
            assumptions.append(
                t(
                    "tco.a.term",
                    lang,
                    years=years,
                    billed=billed,
                    monthly=money(rate * instances * R.HOURS_PER_MONTH, currency),
                )
            )
        else:
            assumptions.append(t("tco.a.month", lang, years=years, term=term))
    compute = rate * instances * billed
    if pricing == "spot" and od:
        od_rate = _rate(od, currency, fx)
        estimate, spot = spot_estimate(kb, src, od_rate, rate, hours, instances, lang)
        if estimate:
            compute = estimate.spot_cost
            assumptions.append(
                t(
                    "tco.a.spot",
                    lang,
                    interruptions=estimate.interruptions,
                    lost=estimate.lost_hours,
                    ckpt=estimate.checkpoint_hours,
                    wall=estimate.wall_hours,
                )
            )
            if facts is not None and "spot_bucket" not in facts:
                facts.update(spot)
        else:
            assumptions.append(t("tco.a.spot_list", lang))
    storage, egress = _hidden(kb, query, src["provider"], hours, currency, fx, assumptions, facts)
    if converted or storage[1] or egress[1]:
        facts.update(
            currency_converted=True,
            fx_rate_text=f"1 USD = {fx['cny_per_usd']} CNY",
            fx_source=fx["source"],
            fx_as_of=fx["as_of"],
        )
        assumptions.append(
            t("tco.a.fx", lang, rate=f"1 USD = {fx['cny_per_usd']} CNY", source=fx["source"], as_of=fx["as_of"])
        )
    return Tco(
        hours=hours,
        pricing=pricing,
        compute=compute,
        storage=storage[0],
        egress=egress[0],
        total=compute + storage[0] + egress[0],
        currency=currency,
        assumptions=assumptions,
    )


def _hidden(
    kb: KB, query: Query, provider: str, hours: float, currency: str, fx: dict, assumptions: list[str], facts: dict
) -> tuple[tuple[float, bool], tuple[float, bool]]:
    """(storage cost, converted?), (egress cost, converted?) from the provider's costs in providers.yaml."""
    lang = query.language
    costs = provider_costs(kb, provider)
    name = provider_name(kb, provider, lang)
    months = hours / R.HOURS_PER_MONTH
    storage = egress = (0.0, False)
    if query.storage_gb:
        item = costs.get("storage_per_gb_month")
        if item:
            rate = _convert(item["value"], item["currency"], currency, fx)
            status = t(f"tco.status.{item['status']}", lang)
            storage = (
                R.tco(0, 0, storage_gb=query.storage_gb, storage_per_gb_month=rate, months=months).storage,
                item["currency"] != currency,
            )
            assumptions.append(
                t(
                    "tco.a.storage",
                    lang,
                    gb=query.storage_gb,
                    rate=money(rate, currency),
                    months=months,
                    service=item["service"],
                    status=status,
                    source=item["source"],
                )
            )
            facts.update(
                months=months,
                storage_rate_text=f"{money(rate, currency)}/GB-month",
                storage_cost_text=money(storage[0], currency),
                storage_rate_status=status,
            )
        else:
            assumptions.append(t("tco.a.storage_none", lang, gb=query.storage_gb, provider=name))
    if query.egress_gb:
        item = costs.get("egress_per_gb") or costs.get("cross_region_per_gb")
        if item:
            rate = _convert(item["value"], item["currency"], currency, fx)
            status = t(f"tco.status.{item['status']}", lang)
            if item["item"] == "cross_region_per_gb":
                status += "; " + t("tco.a.egress_proxy", lang, provider=name)
            egress = (R.tco(0, 0, egress_gb=query.egress_gb, egress_per_gb=rate).egress, item["currency"] != currency)
            assumptions.append(
                t(
                    "tco.a.egress",
                    lang,
                    gb=query.egress_gb,
                    rate=money(rate, currency),
                    service=item["service"],
                    status=status,
                    source=item["source"],
                )
            )
            facts.update(
                egress_rate_text=f"{money(rate, currency)}/GB",
                egress_cost_text=money(egress[0], currency),
                egress_rate_status=status,
            )
        else:
            assumptions.append(t("tco.a.egress_none", lang, gb=query.egress_gb, provider=name))
    return storage, egress


def spot_estimate(
    kb: KB, row: dict, on_demand_rate: float, spot_rate: float, hours: float, instances: int, lang: str
) -> tuple[R.SpotEstimate | None, dict]:
    """Expected spot cost at the newest interruption bucket of the offer's type and region, and its rule facts."""
    risks = kb.spot_risk(row["instance_type"], row["region"])
    if not risks:
        return None, {}
    newest = risks[0]
    params = R.rule("spot.risk").then.params
    rate = R.interruptions_per_month(newest["bucket"], params)
    estimate = R.spot_expected_cost(
        on_demand_rate,
        spot_rate,
        hours,
        rate,
        instances=instances,
        checkpoint_interval_hours=params["checkpoint_interval_hours"],
        checkpoint_minutes=params["checkpoint_minutes"],
        restart_minutes=params["restart_minutes"],
    )
    facts = {
        "spot_bucket": newest["bucket"],
        "spot_source": newest["source"],
        "spot_as_of": newest["as_of"],
        "spot_subject": f"{row['instance_type']} {row['region']}",
        "interruptions_per_month": rate,
        "spot_list_saving_pct": estimate.list_saving * 100,
        "spot_effective_saving_pct": estimate.effective_saving * 100,
        "spot_job_hours": hours,
        "spot_instances": instances,
    }
    older = next((r for r in risks[1:] if r["as_of"] < newest["as_of"] and r["bucket"] != newest["bucket"]), None)
    if older:
        facts.update(
            spot_bucket_older=older["bucket"], spot_older_source=older["source"], spot_older_as_of=older["as_of"]
        )
    return estimate, facts


def break_even(
    kb: KB, instance_type: str, region: str, pricing: str = "reserved_1y", term: str | None = None
) -> dict | None:
    """Reserved rate / on-demand rate for one instance type and region, from the pricing data (AWS, GCP)."""
    terms = {r["term"]: r for r in kb.price_terms(instance_type, region)}
    reserved = terms.get(term or TERMS[pricing][0]) or terms.get(pricing)
    on_demand = terms.get("ondemand")
    if on_demand is None:
        rows = kb.offers(instance_types=[instance_type], regions=[region], pricing="on_demand", limit=1)
        on_demand = {**rows[0], "price_per_hour": rows[0]["price_per_hour_usd"]} if rows else None
    if not reserved or not on_demand:
        return None
    ratio = R.break_even_utilisation(reserved["price_per_hour"], on_demand["price_per_hour"])
    return {
        "instance_type": instance_type,
        "region": region,
        "term": reserved["term"],
        "reserved_rate": reserved["price_per_hour"],
        "on_demand_rate": on_demand["price_per_hour"],
        "utilisation_pct": ratio * 100,
        "source": reserved["source"],
        "as_of": reserved["as_of"],
    }


def saving_facts(kb: KB, instance_type: str, region: str, lang: str) -> dict:
    """What reserving and spot save on one instance type and region, in the data, for the cost rules' texts."""
    subject = f"{instance_type} {region}"
    found = next(((p, be) for p in TERMS if (be := break_even(kb, instance_type, region, p))), None)
    facts = {
        "reserved_saving_text": t(
            "save.reserved",
            lang,
            term=pricing_label(found[0], lang),
            subject=subject,
            pct=100 - found[1]["utilisation_pct"],
            source=found[1]["source"],
            as_of=found[1]["as_of"],
        )
        if found
        else t("save.no_reserved", lang, subject=subject)
    }
    od, spot = (
        kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1) for p in ("on_demand", "spot")
    )
    if od and spot:
        pct = 100 * (1 - spot[0]["price_per_hour_usd"] / od[0]["price_per_hour_usd"])
        facts["spot_saving_text"] = t(
            "save.spot", lang, subject=subject, pct=pct, source=spot[0]["source"], as_of=spot[0]["as_of"]
        )
    else:
        facts["spot_saving_text"] = t("save.no_spot", lang, subject=subject)
    return facts


def _break_even_facts(be: dict) -> dict:
    return {
        "break_even_pct": be["utilisation_pct"],
        "reserved_rate_text": _exact(be["reserved_rate"]),
        "on_demand_rate_text": _exact(be["on_demand_rate"]),
        "rate_source": be["source"],
        "rate_as_of": be["as_of"],
        "break_even_subject": f"{be['instance_type']}, {be['region']}, {be['term']}",
    }


def _exact(value: float) -> str:
    """A rate with every digit the source gave (break-even figures are checked against them)."""
    return f"${value:.8g}"


_PER_MONTH = re.compile(r"a month|per month|/\s*mo(nth)?\b|monthly|每月|每个月|一个月")


def _break_even_verdict(query: Query, be: dict, term: str, instance_type: str, region: str) -> str:
    """Line one: where the reservation starts to pay, and which option is cheaper for the usage asked about."""
    lang = query.language
    pct = be["utilisation_pct"]
    head = t(
        "verdict.be",
        lang,
        term=term,
        instance=instance_type,
        region=region,
        pct=pct,
        hours=pct / 100 * R.HOURS_PER_MONTH,
    )
    if pct >= 100:
        return head + t("verdict.be_never", lang)
    hours = query.duration_hours
    if not hours:
        return head
    monthly = hours if _PER_MONTH.search((query.text or "").lower()) or hours <= R.HOURS_PER_MONTH else None
    used = (
        (monthly / R.HOURS_PER_MONTH)
        if monthly
        else hours / (TERMS[query.pricing if query.pricing in TERMS else "reserved_1y"][1] * R.HOURS_PER_YEAR)
    )
    used = min(used, 1.0)
    reserved_month = be["reserved_rate"] * R.HOURS_PER_MONTH
    od_month = be["on_demand_rate"] * R.HOURS_PER_MONTH * used
    cheaper = "verdict.be_reserved" if used * 100 > pct else "verdict.be_on_demand"
    return head + t(cheaper, lang, used=used * 100, reserved=money(reserved_month), on_demand=money(od_month))


def _break_even_line(be: dict, lang: str) -> str:
    verdict = t("tco.be.above" if be["utilisation_pct"] < 100 else "tco.be.never", lang)
    return t(
        "tco.break_even",
        lang,
        subject=f"{be['instance_type']} {be['region']} {be['term']}",
        reserved=_exact(be["reserved_rate"]),
        on_demand=_exact(be["on_demand_rate"]),
        pct=be["utilisation_pct"],
        source=be["source"],
        as_of=be["as_of"],
        verdict=verdict,
    )


def _sources(subjects: list) -> list[Source]:
    seen: dict[tuple[str, str], Source] = {}
    for cands in subjects:
        for rows in cands.values():
            for row in rows[:MAX_CANDIDATES]:
                seen.setdefault((row["source"], row["as_of"]), Source(source=row["source"], as_of=row["as_of"]))
    return list(seen.values())


def interruptions(query: Query, kb: KB, facts: dict) -> Answer:
    """How often spot instances of a type are interrupted: the newest bucket per region, with its date."""
    lang = query.language
    if not query.instance_types:
        return Answer(query=query, title=t("tco.int.which", lang), rules=rule_hits(R.evaluate(facts, lang)))
    instance_type = query.instance_types[0]
    where = f" ({', '.join(query.regions)})" if query.regions else ""
    rows = [r for region in (query.regions or [None]) for r in kb.spot_risk(instance_type, region)]
    newest: dict[str, dict] = {}
    for row in rows:  # newest first
        newest.setdefault(row["region"], row)
    lines, data = [], []
    for region, row in list(newest.items())[:8]:
        lines.append(
            t(
                "tco.int.line",
                lang,
                region=region,
                bucket=row["bucket"],
                source=row["source"],
                as_of=row["as_of"],
                savings=row["savings_pct"],
            )
        )
        older = [r for r in rows if r["region"] == region and r is not row]
        for old in older:
            lines.append(
                t("tco.int.older", lang, region=region, bucket=old["bucket"], source=old["source"], as_of=old["as_of"])
            )
        data.append(
            {
                "region": region,
                "bucket": row["bucket"],
                "as_of": row["as_of"],
                "source": row["source"],
                "savings_pct": row["savings_pct"],
                "older": [{k: o[k] for k in ("bucket", "as_of", "source")} for o in older],
            }
        )
    if len(newest) > 8:
        lines.append(t("tco.int.more", lang, n=len(newest) - 8))
    if not newest:
        lines.append(t("tco.int.none", lang, instance=instance_type, where=where))
    elif len(newest) == 1:
        region = next(iter(newest))
        od, spot = (
            kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1)
            for p in ("on_demand", "spot")
        )
        facts.update(saving_facts(kb, instance_type, region, lang))
        if od and spot:
            facts.update(
                spot_estimate(
                    kb,
                    spot[0],
                    od[0]["price_per_hour_usd"],
                    spot[0]["price_per_hour_usd"],
                    query.duration_hours or DEFAULT_HOURS,
                    1,
                    lang,
                )[1]
            )
    return Answer(
        query=query,
        title=t("tco.int.title", lang, instance=instance_type, where=where),
        lines=lines,
        rules=rule_hits(R.evaluate(facts, lang)),
        extra={"spot_risk": data},
        sources=[Source(source=d["source"], as_of=d["as_of"]) for d in data[:1]],
    )


def break_even_answer(query: Query, kb: KB, facts: dict) -> Answer:
    """Break-even utilisation of a reservation: reserved rate / on-demand rate, every term of that length."""
    lang = query.language
    if not query.instance_types:
        return Answer(query=query, title=t("tco.be.which", lang), rules=rule_hits(R.evaluate(facts, lang)))
    instance_type = query.instance_types[0]
    three = re.search(r"3[- ]?(year|yr)|three[- ]year|3年|三年", (query.text or "").lower())
    pricing = query.pricing if query.pricing in TERMS else "reserved_3y" if three else "reserved_1y"
    rows = kb.offers(instance_types=[instance_type], regions=query.regions, pricing="on_demand")
    region = (
        query.regions[0]
        if query.regions
        else ("us-east-1" if any(r["region"] == "us-east-1" for r in rows) else rows[0]["region"] if rows else "")
    )
    term_label = pricing_label(pricing, lang)
    title = t("tco.be.title", lang, term=term_label, instance=instance_type, region=region)
    main = break_even(kb, instance_type, region, pricing)
    prefix = "yrTerm1" if pricing == "reserved_1y" else "yrTerm3"
    terms = kb.price_terms(instance_type, region)
    others = [
        break_even(kb, instance_type, region, pricing, r["term"])
        for r in terms
        if r["term"].startswith(prefix) and (not main or r["term"] != main["term"])
    ]
    lines = [_break_even_line(main, lang)] if main else []
    if main:
        title = _break_even_verdict(query, main, term_label, instance_type, region)
    if any(others):
        lines.append(
            t(
                "tco.be.others",
                lang,
                terms=", ".join(
                    f"{be['term']} {_exact(be['reserved_rate'])}/h = {be['utilisation_pct']:.1f}%"
                    for be in others
                    if be
                ),
            )
        )
    if not main:
        available = ", ".join(sorted({r["term"] for r in terms})) or "-"
        lines.insert(
            0,
            t(
                "tco.be.none",
                lang,
                provider=rows[0]["provider"] if rows else "",
                term=term_label,
                instance=instance_type,
                region=region,
                available=available,
            ),
        )
    else:
        facts.update(_break_even_facts(main))
    if region:
        facts.update(saving_facts(kb, instance_type, region, lang))
    return Answer(
        query=query,
        title=title,
        lines=lines,
        rules=rule_hits(R.evaluate(facts, lang)),
        extra={"break_even": main},
        sources=[Source(source=main["source"], as_of=main["as_of"])] if main else [],
    )
