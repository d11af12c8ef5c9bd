"""The TCO cost model: what one pricing model of an offer costs for a job (compute, spot interruptions, storage,
egress, currency), and the cheapest option of each pricing model over the offers asked about.

`handlers.tco` builds the answer from these; `handlers.spot_choice` and `handlers.recommend` price with them too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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


@dataclass(frozen=True)
class _Priced:
    """An option's offer (`src`) and its hourly rate in `currency`, for `instances` instances over `hours`."""

    src: dict
    rate: float
    instances: int
    hours: float
    currency: str


def _option(
    kb: KB, query: Query, rows: dict, pricing: str, instances: int, hours: float, currency: str, fx: dict, facts: dict
) -> Tco | None:
    """What `pricing` at one place (`rows`: its offers by pricing model) costs for the job; a reserved term the
    place has no rate for is seeded from on demand (asked for, or a long project); None when there is no price."""
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
    priced = _Priced(src, rate, instances, hours, currency)
    assumptions = [
        _instance_line(kb, query, priced, pricing),
        t("tco.a.hours", lang, hours=hours, default="" if query.duration_hours else t("tco.a.default", lang)),
    ]
    if seed:
        assumptions.append(t("tco.a.seed", lang))
    compute = rate * instances * _billed_hours(query, priced, pricing, assumptions)
    expected = (
        _spot_cost(kb, query, priced, _rate(od, currency, fx), assumptions, facts) if pricing == "spot" and od else None
    )
    compute = compute if expected is None else expected  # spot: with the interruptions expected, where known
    storage, egress = _hidden(kb, query, src["provider"], hours, currency, fx, assumptions, facts)
    if currency != src["currency"] or storage[1] or egress[1]:
        _converted(query, fx, assumptions, facts)
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


def _instance_line(kb: KB, query: Query, priced: _Priced, pricing: str) -> str:
    """The assumption naming the offer priced: instance, place, size, pricing model, rate and its source."""
    lang, src = query.language, priced.src
    return t(
        "tco.a.instance",
        lang,
        instance=src["instance_type"],
        provider=provider_name(kb, src["provider"], lang),
        region=src["region"],
        instances=priced.instances,
        count=src["gpu_count"],
        gpu=model_name(src["gpu_model"]) if src["gpu_model"] else src["gpu"],
        pricing=pricing_label(pricing, lang),
        rate=money(priced.rate, priced.currency),
        source=src["source"],
        as_of=as_of_text(src, lang),
    )


def _billed_hours(query: Query, priced: _Priced, pricing: str, assumptions: list[str]) -> float:
    """The hours billed: a reserved term bills whole terms for a job of a stated length (the assumption says so)."""
    if pricing not in TERMS:
        return priced.hours
    lang, years = query.language, TERMS[pricing][1]
    term = years * R.HOURS_PER_YEAR
    if not query.duration_hours:
        assumptions.append(t("tco.a.month", lang, years=years, term=term))
        return priced.hours
    billed = math.ceil(priced.hours / term - 1e-9) * term
    monthly = money(priced.rate * priced.instances * R.HOURS_PER_MONTH, priced.currency)
    assumptions.append(t("tco.a.term", lang, years=years, billed=billed, monthly=monthly))
    return billed


def _spot_cost(
    kb: KB, query: Query, priced: _Priced, od_rate: float, assumptions: list[str], facts: dict
) -> float | None:
    """The expected spot cost with interruptions (None: no interruption data, the list price stands); the spot
    rule facts are added once."""
    lang = query.language
    estimate, spot = spot_estimate(kb, priced.src, od_rate, priced.rate, priced.hours, priced.instances, lang)
    if not estimate:
        assumptions.append(t("tco.a.spot_list", lang))
        return None
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
    return estimate.spot_cost


def _converted(query: Query, fx: dict, assumptions: list[str], facts: dict) -> None:
    """A figure was converted between currencies: the rule facts, and (without a display currency, whose own
    note says it) the rate used with its source."""
    rate = f"1 USD = {fx['cny_per_usd']} CNY"
    facts.update(currency_converted=True, fx_rate_text=rate, fx_source=fx["source"], fx_as_of=fx["as_of"])
    if not display_of(query, fx):  # with a display currency its one rate note says this (handlers.display)
        assumptions.append(t("tco.a.fx", query.language, rate=rate, source=fx["source"], as_of=fx["as_of"]))


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
        if item := costs.get("storage_per_gb_month"):
            storage, line, said = _storage(lang, query.storage_gb, item, months, currency, fx)
            assumptions.append(line)
            facts.update(said)
        else:
            assumptions.append(t("tco.a.storage_none", lang, gb=query.storage_gb, provider=name))
    if query.egress_gb:
        if item := costs.get("egress_per_gb") or costs.get("cross_region_per_gb"):
            egress, line, said = _egress(lang, query.egress_gb, item, name, currency, fx)
            assumptions.append(line)
            facts.update(said)
        else:
            assumptions.append(t("tco.a.egress_none", lang, gb=query.egress_gb, provider=name))
    return storage, egress


def _storage(
    lang: str, gb: float, item: dict, months: float, currency: str, fx: dict
) -> tuple[tuple[float, bool], str, dict]:
    """(cost, converted?), the assumption and the rule facts of storing `gb` for `months` at the provider's rate
    `item`."""
    rate = convert(item["value"], item["currency"], currency, fx)
    status = t(f"tco.status.{item['status']}", lang)
    cost = R.tco(0, 0, storage_gb=gb, storage_per_gb_month=rate, months=months).storage
    line = t(
        "tco.a.storage",
        lang,
        gb=gb,
        rate=money(rate, currency),
        months=months,
        service=item["service"],
        status=status,
        source=item["source"],
    )
    facts = {
        "months": months,
        "storage_rate_text": f"{money(rate, currency)}/GB-month",
        "storage_cost_text": money(cost, currency),
        "storage_rate_status": status,
    }
    return (cost, item["currency"] != currency), line, facts


def _egress(
    lang: str, gb: float, item: dict, name: str, currency: str, fx: dict
) -> tuple[tuple[float, bool], str, dict]:
    """(cost, converted?), the assumption and the rule facts of sending `gb` out at the provider's rate `item` (a
    cross-region rate stands in for egress, and says so, naming provider `name`)."""
    rate = convert(item["value"], item["currency"], currency, fx)
    status = t(f"tco.status.{item['status']}", lang)
    if item["item"] == "cross_region_per_gb":
        status += "; " + t("tco.a.egress_proxy", lang, provider=name)
    cost = R.tco(0, 0, egress_gb=gb, egress_per_gb=rate).egress
    line = t(
        "tco.a.egress",
        lang,
        gb=gb,
        rate=money(rate, currency),
        service=item["service"],
        status=status,
        source=item["source"],
    )
    facts = {
        "egress_rate_text": f"{money(rate, currency)}/GB",
        "egress_cost_text": money(cost, currency),
        "egress_rate_status": status,
    }
    return (cost, item["currency"] != currency), line, facts


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
