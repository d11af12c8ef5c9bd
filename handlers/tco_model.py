"""The TCO cost model: what one pricing model of an offer costs for a job (compute, spot interruptions, storage,
egress, currency), and the cheapest option of each pricing model over the offers asked about.

`handlers.tco` builds the answer from these; `handlers.spot_choice` and `handlers.recommend` price with them too.
"""

from __future__ import annotations

import math

from handlers import brief
from handlers.common import as_of_text, money, offer, place, pricing_label
from handlers.display import display_of
from handlers.i18n import t
from handlers.i18n_rules import provider_costs, provider_name
from handlers.models import PRICINGS, Query, Source, Tco
from knowledge.catalog.identity import model_name
from knowledge.facts import rules as R
from knowledge.kb import ranks
from knowledge.kb.reader import KB, GpuRef, OfferFilters
from knowledge.kb.schema import price_key

DEFAULT_HOURS = R.HOURS_PER_MONTH
TERMS = {"reserved_1y": ("yrTerm1Standard.noUpfront", 1), "reserved_3y": ("yrTerm3Standard.noUpfront", 3)}
SEED_RESERVED_DISCOUNT = 0.40  # low end of the seeds' 40-60% (S0 §三.1), used only where the data has no rate
MAX_CANDIDATES = 12  # cheapest regions (or instance types) of each pricing model priced in full per question


def subjects(query: Query, kb: KB) -> list[dict[str, list[dict]]]:
    """Per instance type asked (or the GPU asked): its offers per pricing model, every region, cheapest first."""
    providers, regions = query.providers, query.regions
    found: list[dict[str, list[dict]]] = []
    cands: dict[str, list[dict]]
    if query.instance_types:
        for instance_type in query.instance_types[:3]:
            cands = {
                p: kb.offers(instance_types=[instance_type], pricing=p, providers=providers, regions=regions)
                for p in PRICINGS
            }
            if any(cands.values()):
                found.append(cands)
    elif query.gpus:
        refs = [GpuRef.parse(g) for g in query.gpus]
        for count in (query.gpu_count, None):  # no instance of that size: several smaller ones
            cands = _whole_candidates(kb, {"gpus": refs, "gpu_count": count, "providers": providers,
                                           "regions": regions, "orderable": True})  # fmt: skip
            if any(cands.values()):
                found.append(cands)
                break
    return found


def _whole_candidates(kb: KB, filters: OfferFilters) -> dict[str, list[dict]]:
    """Per pricing model, the `spec.whole` offers `best_option` prices: the MAX_CANDIDATES cheapest, and on demand
    also every row of the places (instance type, region) of any pricing's candidates, which it looks up (in SQL:
    not every offer of the GPU)."""
    top: dict[str, list[dict]] = {
        p: ranks.cheapest(kb, {**filters, "pricing": p}, limit=MAX_CANDIDATES) for p in PRICINGS
    }
    places = list(dict.fromkeys((r["instance_type"], r["region"]) for rows in top.values() for r in rows))
    found = [*top["on_demand"], *ranks.whole_at(kb, {**filters, "pricing": "on_demand"}, places)]
    on_demand = {r["rank"]: r for r in found}  # each row once, in price order
    return {**top, "on_demand": sorted(on_demand.values(), key=lambda r: (*price_key(r), r["rank"]))}


def sources(asked: list) -> list[Source]:
    """The sources and dates of the offers priced (`subjects`), once each."""
    seen: dict[tuple[str, str], Source] = {}
    for cands in asked:
        for rows in cands.values():
            for row in rows[:MAX_CANDIDATES]:
                seen.setdefault(
                    (row["source"], row["as_of"]),
                    Source(source=row["source"], as_of=row["as_of"], as_of_known=bool(row.get("as_of_known", True))),
                )
    return list(seen.values())


def best_option(
    kb: KB, query: Query, cands: dict[str, list[dict]], pricing: str, hours: float, currency: str, fx: dict, facts: dict
) -> tuple[str, Tco] | None:
    """The lowest total of one pricing model over every region, zone (a region's row is its cheapest zone) and
    instance type that can run the job, with the label naming where."""
    lang = query.language
    on_demand = {(r["instance_type"], r["region"]): r for r in cands["on_demand"]}
    rows: list[dict | None] = [*cands[pricing][:MAX_CANDIDATES]] or (
        [None] if pricing in TERMS and cands["on_demand"] else []
    )
    best = None
    for row in rows:
        od = on_demand.get((row["instance_type"], row["region"])) if row else cands["on_demand"][0]
        src = row or od
        if src is None:  # never: without a row of its own, an option is priced from the on-demand one
            continue
        trial: dict = {**facts, "option_provider": src["provider"]} if facts else {}  # whose spot (interruptions)
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


def convert(amount: float, src: str, dst: str, fx: dict) -> float:
    if src == dst:
        return amount
    return amount * fx["cny_per_usd"] if dst == "CNY" else amount * fx["usd_per_cny"]


def _rate(row: dict, currency: str, fx: dict) -> float:
    """An offer's hourly price in `currency`: the vendor's own figure, its catalog USD twin, or converted."""
    if currency == row["currency"]:
        return row["price_per_hour"]
    if currency == "USD":
        return row["price_per_hour_usd"]
    return convert(row["price_per_hour_usd"], "USD", currency, fx)


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
    src = row or od
    if src is None or (row is None and not seed):
        return None
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
            gpu=model_name(src["gpu_model"]) if src["gpu_model"] else src["gpu"],
            pricing=pricing_label(pricing, lang),
            rate=money(rate, currency),
            source=src["source"],
            as_of=as_of_text(src, lang),
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
        if not display_of(query, fx):  # with a display currency its one rate note says this (handlers.display)
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
            rate = convert(item["value"], item["currency"], currency, fx)
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
            rate = convert(item["value"], item["currency"], currency, fx)
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
