"""tco <instance type | gpu> [xN] [hours] [pricing] [storage, egress GB] [CNY]: compute + storage + egress.

Also the two one-figure cost questions: how often a spot type is interrupted, and the break-even utilisation
of a reservation.
"""

from __future__ import annotations

import math
import re

from handlers.common import money, name_notes, pricing_label
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
    hours = query.duration_hours or DEFAULT_HOURS
    fx = kb.fx()
    options, lines = [], []
    for index, (rows, instances) in enumerate(subjects):
        base = rows["on_demand"] or next(r for r in rows.values() if r)
        currency = query.currency or base["currency"]
        local = facts if index == 0 else {}
        label = f"{base['instance_type']} ({base['region']})"
        for pricing in PRICINGS:
            option = _option(kb, query, rows, pricing, instances, hours, currency, fx, local)
            if option:
                options.append((label, option))
        be = break_even(kb, base["instance_type"], base["region"], "reserved_1y")
        if be:
            lines.append(_break_even_line(be, lang))
        if index == 0:
            facts.update(saving_facts(kb, base["instance_type"], base["region"], lang))
            facts.update(_break_even_facts(be) if be else {})
    asked = query.pricing or "on_demand"
    first = next((o for _, o in options if o.pricing == asked), options[0][1])
    ranked = sorted(options, key=lambda item: item[1].total)
    label, best = ranked[0]
    lines.append(t("tco.best", lang, option=f"{label} {pricing_label(best.pricing, lang)}",
                   total=money(best.total, best.currency)))
    errata = match_errata(query, kb)
    facts["erratum_ids"] = [e["id"] for e in errata]
    fired = R.evaluate(facts, lang, groups=("cost", "spot", "spec"))
    what = ", ".join(query.instance_types[:3]) or " / ".join(query.gpus)
    return Answer(
        query=query,
        title=t("tco.title", lang, what=what, hours=hours),
        tco=first,
        tco_options=[o for _, o in ranked if o is not first],
        lines=lines + errata_lines(errata, lang),
        notes=notes,
        suggestions=suggestions,
        rules=rule_hits(fired),
        sources=_sources(subjects),
        extra={"errata": errata_json(errata, lang)},
    )


def price_or_tco(query: Query, kb: KB) -> Answer:
    """price <instance type | gpu> [spot|on-demand|reserved] [region]: every known price of an instance type"""
    from handlers import price, spec

    topic = R.query_facts(query)["topic"]
    if topic and query.instance_types:  # "how often is X interrupted", "break-even utilisation of X"
        return handle(query, kb)
    if (query.instance_types or query.gpus) and spec.is_fact_question(query, kb):
        return spec.handle(query.model_copy(update={"intent": "spec"}), kb)
    return spec.with_errata(price.handle(query, kb), query, kb)


def _subjects(query: Query, kb: KB) -> list[tuple[dict[str, dict | None], int]]:
    """Per instance type asked (or the cheapest instance of the GPU asked): its offer per pricing, and instances."""
    picks = []
    filters = dict(providers=query.providers, regions=query.regions)
    if query.instance_types:
        for instance_type in query.instance_types[:3]:
            rows = kb.offers(instance_types=[instance_type], pricing="on_demand", **filters) or kb.offers(
                instance_types=[instance_type], **filters)
            if rows:
                picks.append(rows[0])
    elif query.gpus:
        refs = [GpuRef.parse(g) for g in query.gpus]
        for pricing in dict.fromkeys([query.pricing or "on_demand", "on_demand"]):  # no such term: on-demand
            for count in (query.gpu_count, None):  # no instance of that size: several smaller ones
                picks = picks or [r for r in kb.offers(gpus=refs, pricing=pricing, gpu_count=count, **filters)
                                  if whole(r)][:1]
    subjects = []
    for pick in picks:
        rows = {p: next(iter(kb.offers(instance_types=[pick["instance_type"]], regions=[pick["region"]],
                                       providers=[pick["provider"]], pricing=p, limit=1)), None) for p in PRICINGS}
        instances = math.ceil(query.gpu_count / pick["gpu_count"]) if query.gpu_count else 1
        subjects.append((rows, max(1, instances)))
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


def _option(kb: KB, query: Query, rows: dict, pricing: str, instances: int, hours: float, currency: str, fx: dict,
            facts: dict) -> Tco | None:
    lang = query.language
    row = rows.get(pricing)
    od = rows.get("on_demand")
    seed = row is None and pricing in TERMS and od is not None and (query.pricing == pricing or query.pricing is None
                                                                        and facts.get("long_project"))
    if row is None and not seed:
        return None
    src = row or od
    rate = _rate(src, currency, fx)
    if seed:
        rate *= 1 - SEED_RESERVED_DISCOUNT
        facts.update(seed_discount_used=True, seed_discount_subject=src["instance_type"],
                     seed_discount_pct=SEED_RESERVED_DISCOUNT * 100)
    converted = currency != src["currency"]
    assumptions = [
        t("tco.a.instance", lang, instance=src["instance_type"], provider=provider_name(kb, src["provider"], lang),
          region=src["region"], instances=instances, count=src["gpu_count"], gpu=src["gpu_model"] or src["gpu"],
          pricing=pricing_label(pricing, lang), rate=money(rate, currency), source=src["source"], as_of=src["as_of"]),
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
            assumptions.append(t("tco.a.term", lang, years=years, billed=billed,
                                 monthly=money(rate * instances * R.HOURS_PER_MONTH, currency)))
        else:
            assumptions.append(t("tco.a.month", lang, years=years, term=term))
    compute = rate * instances * billed
    if pricing == "spot" and od:
        od_rate = _rate(od, currency, fx)
        estimate, spot = spot_estimate(kb, src, od_rate, rate, hours, instances, lang)
        if estimate:
            compute = estimate.spot_cost
            assumptions.append(t("tco.a.spot", lang, interruptions=estimate.interruptions, lost=estimate.lost_hours,
                                 ckpt=estimate.checkpoint_hours, wall=estimate.wall_hours))
            if facts is not None and "spot_bucket" not in facts:
                facts.update(spot)
        else:
            assumptions.append(t("tco.a.spot_list", lang))
    storage, egress = _hidden(kb, query, src["provider"], hours, currency, fx, assumptions, facts)
    if converted or storage[1] or egress[1]:
        facts.update(currency_converted=True, fx_rate_text=f"1 USD = {fx['cny_per_usd']} CNY", fx_source=fx["source"],
                     fx_as_of=fx["as_of"])
        assumptions.append(t("tco.a.fx", lang, rate=f"1 USD = {fx['cny_per_usd']} CNY", source=fx["source"],
                             as_of=fx["as_of"]))
    return Tco(hours=hours, pricing=pricing, compute=compute, storage=storage[0], egress=egress[0],
               total=compute + storage[0] + egress[0], currency=currency, assumptions=assumptions)


def _hidden(kb: KB, query: Query, provider: str, hours: float, currency: str, fx: dict, assumptions: list[str],
            facts: dict) -> tuple[tuple[float, bool], tuple[float, bool]]:
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
            storage = (R.tco(0, 0, storage_gb=query.storage_gb, storage_per_gb_month=rate, months=months).storage,
                       item["currency"] != currency)
            assumptions.append(t("tco.a.storage", lang, gb=query.storage_gb, rate=money(rate, currency), months=months,
                                 service=item["service"], status=status, source=item["source"]))
            facts.update(months=months, storage_rate_text=f"{money(rate, currency)}/GB-month",
                         storage_cost_text=money(storage[0], currency), storage_rate_status=status)
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
            assumptions.append(t("tco.a.egress", lang, gb=query.egress_gb, rate=money(rate, currency),
                                 service=item["service"], status=status, source=item["source"]))
            facts.update(egress_rate_text=f"{money(rate, currency)}/GB", egress_cost_text=money(egress[0], currency),
                         egress_rate_status=status)
        else:
            assumptions.append(t("tco.a.egress_none", lang, gb=query.egress_gb, provider=name))
    return storage, egress


def spot_estimate(kb: KB, row: dict, on_demand_rate: float, spot_rate: float, hours: float, instances: int,
                  lang: str) -> tuple[R.SpotEstimate | None, dict]:
    """Expected spot cost at the newest interruption bucket of the offer's type and region, and its rule facts."""
    risks = kb.spot_risk(row["instance_type"], row["region"])
    if not risks:
        return None, {}
    newest = risks[0]
    params = R.rule("spot.risk").then.params
    rate = R.interruptions_per_month(newest["bucket"], params)
    estimate = R.spot_expected_cost(
        on_demand_rate, spot_rate, hours, rate, instances=instances,
        checkpoint_interval_hours=params["checkpoint_interval_hours"], checkpoint_minutes=params["checkpoint_minutes"],
        restart_minutes=params["restart_minutes"])
    facts = {"spot_bucket": newest["bucket"], "spot_source": newest["source"], "spot_as_of": newest["as_of"],
             "spot_subject": f"{row['instance_type']} {row['region']}", "interruptions_per_month": rate,
             "spot_list_saving_pct": estimate.list_saving * 100,
             "spot_effective_saving_pct": estimate.effective_saving * 100, "spot_job_hours": hours,
             "spot_instances": instances}
    older = next((r for r in risks[1:] if r["as_of"] < newest["as_of"] and r["bucket"] != newest["bucket"]), None)
    if older:
        facts.update(spot_bucket_older=older["bucket"], spot_older_source=older["source"],
                     spot_older_as_of=older["as_of"])
    return estimate, facts


def break_even(kb: KB, instance_type: str, region: str, pricing: str = "reserved_1y",
               term: str | None = None) -> dict | None:
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
    return {"instance_type": instance_type, "region": region, "term": reserved["term"],
            "reserved_rate": reserved["price_per_hour"], "on_demand_rate": on_demand["price_per_hour"],
            "utilisation_pct": ratio * 100, "source": reserved["source"], "as_of": reserved["as_of"]}


def saving_facts(kb: KB, instance_type: str, region: str, lang: str) -> dict:
    """What reserving and spot save on one instance type and region, in the data, for the cost rules' texts."""
    subject = f"{instance_type} {region}"
    found = next(((p, be) for p in TERMS if (be := break_even(kb, instance_type, region, p))), None)
    facts = {"reserved_saving_text": t("save.reserved", lang, term=pricing_label(found[0], lang), subject=subject,
                                       pct=100 - found[1]["utilisation_pct"], source=found[1]["source"],
                                       as_of=found[1]["as_of"])
             if found else t("save.no_reserved", lang, subject=subject)}
    od, spot = (kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1)
                for p in ("on_demand", "spot"))
    if od and spot:
        pct = 100 * (1 - spot[0]["price_per_hour_usd"] / od[0]["price_per_hour_usd"])
        facts["spot_saving_text"] = t("save.spot", lang, subject=subject, pct=pct, source=spot[0]["source"],
                                      as_of=spot[0]["as_of"])
    else:
        facts["spot_saving_text"] = t("save.no_spot", lang, subject=subject)
    return facts


def _break_even_facts(be: dict) -> dict:
    return {"break_even_pct": be["utilisation_pct"], "reserved_rate_text": _exact(be["reserved_rate"]),
            "on_demand_rate_text": _exact(be["on_demand_rate"]), "rate_source": be["source"], "rate_as_of": be["as_of"],
            "break_even_subject": f"{be['instance_type']}, {be['region']}, {be['term']}"}


def _exact(value: float) -> str:
    """A rate with every digit the source gave (break-even figures are checked against them)."""
    return f"${value:.8g}"


def _break_even_line(be: dict, lang: str) -> str:
    verdict = t("tco.be.above" if be["utilisation_pct"] < 100 else "tco.be.never", lang)
    return t("tco.break_even", lang, subject=f"{be['instance_type']} {be['region']} {be['term']}",
             reserved=_exact(be["reserved_rate"]), on_demand=_exact(be["on_demand_rate"]), pct=be["utilisation_pct"],
             source=be["source"], as_of=be["as_of"], verdict=verdict)


def _sources(subjects: list) -> list[Source]:
    seen: dict[tuple[str, str], Source] = {}
    for rows, _ in subjects:
        for row in rows.values():
            if row:
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
        lines.append(t("tco.int.line", lang, region=region, bucket=row["bucket"], source=row["source"],
                       as_of=row["as_of"], savings=row["savings_pct"]))
        older = [r for r in rows if r["region"] == region and r is not row]
        for old in older:
            lines.append(t("tco.int.older", lang, region=region, bucket=old["bucket"], source=old["source"],
                           as_of=old["as_of"]))
        data.append({"region": region, "bucket": row["bucket"], "as_of": row["as_of"], "source": row["source"],
                     "savings_pct": row["savings_pct"], "older": [{k: o[k] for k in ("bucket", "as_of", "source")}
                                                                  for o in older]})
    if len(newest) > 8:
        lines.append(t("tco.int.more", lang, n=len(newest) - 8))
    if not newest:
        lines.append(t("tco.int.none", lang, instance=instance_type, where=where))
    elif len(newest) == 1:
        region = next(iter(newest))
        od, spot = (kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1)
                    for p in ("on_demand", "spot"))
        facts.update(saving_facts(kb, instance_type, region, lang))
        if od and spot:
            facts.update(spot_estimate(kb, spot[0], od[0]["price_per_hour_usd"], spot[0]["price_per_hour_usd"],
                                       query.duration_hours or DEFAULT_HOURS, 1, lang)[1])
    return Answer(query=query, title=t("tco.int.title", lang, instance=instance_type, where=where), lines=lines,
                  rules=rule_hits(R.evaluate(facts, lang)), extra={"spot_risk": data},
                  sources=[Source(source=d["source"], as_of=d["as_of"]) for d in data[:1]])


def break_even_answer(query: Query, kb: KB, facts: dict) -> Answer:
    """Break-even utilisation of a reservation: reserved rate / on-demand rate, every term of that length."""
    lang = query.language
    if not query.instance_types:
        return Answer(query=query, title=t("tco.be.which", lang), rules=rule_hits(R.evaluate(facts, lang)))
    instance_type = query.instance_types[0]
    three = re.search(r"3[- ]?(year|yr)|three[- ]year|3年|三年", (query.text or "").lower())
    pricing = query.pricing if query.pricing in TERMS else "reserved_3y" if three else "reserved_1y"
    rows = kb.offers(instance_types=[instance_type], regions=query.regions, pricing="on_demand")
    region = query.regions[0] if query.regions else ("us-east-1" if any(r["region"] == "us-east-1" for r in rows)
                                                     else rows[0]["region"] if rows else "")
    term_label = pricing_label(pricing, lang)
    title = t("tco.be.title", lang, term=term_label, instance=instance_type, region=region)
    main = break_even(kb, instance_type, region, pricing)
    prefix = "yrTerm1" if pricing == "reserved_1y" else "yrTerm3"
    terms = kb.price_terms(instance_type, region)
    others = [break_even(kb, instance_type, region, pricing, r["term"]) for r in terms
              if r["term"].startswith(prefix) and (not main or r["term"] != main["term"])]
    lines = [_break_even_line(main, lang)] if main else []
    if any(others):
        lines.append(t("tco.be.others", lang, terms=", ".join(
            f"{be['term']} {_exact(be['reserved_rate'])}/h = {be['utilisation_pct']:.1f}%" for be in others if be)))
    if not main:
        available = ", ".join(sorted({r["term"] for r in terms})) or "-"
        lines.insert(0, t("tco.be.none", lang, provider=rows[0]["provider"] if rows else "", term=term_label,
                          instance=instance_type, region=region, available=available))
    else:
        facts.update(_break_even_facts(main))
    if region:
        facts.update(saving_facts(kb, instance_type, region, lang))
    return Answer(query=query, title=title, lines=lines, rules=rule_hits(R.evaluate(facts, lang)),
                  extra={"break_even": main},
                  sources=[Source(source=main["source"], as_of=main["as_of"])] if main else [])
