"""is spot safe [on a cloud] [for a job]: what is known of that cloud's spot interruptions (the Spot Advisor
buckets of `knowledge/data/pricing/`, or plainly that nothing is known), what bites (spot and checkpointing
pitfalls), and its cheapest spot offers as context. Reached through `tco` (topic `spot_risk`, set by the parser)."""

from __future__ import annotations

from handlers.common import name_notes, offer, sources
from handlers.i18n import scoped
from handlers.i18n_rules import provider_name
from handlers.models import Answer, Query, Source
from handlers.pitfalls import relevant
from knowledge.facts import rules as R
from knowledge.kb.reader import KB, gpu_refs

TOP = 5  # cheapest spot offers shown as context
_p = scoped("spot_risk")


def handle(query: Query, kb: KB) -> Answer:
    """is spot safe [on <cloud>] [for <duration>]: interruption data, pitfalls and the cheapest spot offers"""
    lang = query.language
    notes, suggestions = name_notes(query)
    rows = kb.offers(
        gpus=gpu_refs(query.gpus, query.gpu_variants),
        pricing="spot",
        providers=query.providers,
        regions=query.regions,
        orderable=True,
    )
    whole = [r for r in rows if not r.get("vgpu") and (query.gpus or kb.gpu_kinds.get(r["gpu"]) == "gpu")]
    offers = [offer(r) for r in whole[:TOP]]
    clouds = list(query.providers) or list(dict.fromkeys(o.provider for o in offers))
    clouds = clouds or [r["provider"] for r in kb.rows("SELECT DISTINCT provider FROM spot_risk ORDER BY provider")]
    known = {c: kb.spot_risk_buckets(c) for c in clouds}
    lines: list[str] = []
    data: list[dict] = []
    cited: list[Source] = []
    for cloud, buckets in known.items():
        name = provider_name(kb, cloud, lang)
        if not buckets:
            lines.append(_p("none", lang, cloud=name))
            data.append({"provider": cloud, "buckets": []})
            continue
        total = sum(b["n"] for b in buckets)
        spread = ", ".join(f"{b['bucket']}: {100 * b['n'] / total:.0f}%" for b in buckets)
        first = buckets[0]
        lines.append(
            _p("known", lang, cloud=name, n=total, spread=spread, source=first["source"], as_of=first["as_of"])
        )
        cited.append(Source(source=first["source"], as_of=first["as_of"]))
        data.append(
            {"provider": cloud, "buckets": [{k: b[k] for k in ("bucket", "n", "source", "as_of")} for b in buckets]}
        )
    if not offers:
        lines.append(_p("no_offers", lang, clouds=", ".join(provider_name(kb, c, lang) for c in clouds)))
    lines += _offer_risks(query, kb, offers, lang)
    answered = [c for c, b in known.items() if b]
    key = "title_known" if answered and len(answered) == len(known) else "title_some" if answered else "title_none"
    title = _p(key, lang, clouds=", ".join(provider_name(kb, c, lang) for c in clouds) or _p("any", lang))
    return Answer(
        query=query,
        title=title,
        lines=lines,
        offers=offers,
        pitfalls=relevant(kb, query, offers, limit=3),
        notes=notes,
        suggestions=suggestions,
        sources=[*cited, *sources(offers)],
        extra={"spot_risk": data},
    )


def _offer_risks(query: Query, kb: KB, offers: list, lang: str) -> list[str]:
    """Each context offer's own interruption bucket, where known; over the job's hours, the interruptions expected."""
    lines = []
    params = R.rule("spot.risk").then.params
    for item in offers:
        risks = kb.spot_risk(item.instance_type, item.region)
        if not risks:
            continue
        newest = risks[0]
        line = _p("offer", lang, instance=item.instance_type, region=item.region, bucket=newest["bucket"])
        if query.duration_hours:
            expected = R.interruptions_per_month(newest["bucket"], params) * query.duration_hours / R.HOURS_PER_MONTH
            line += _p("over_job", lang, hours=query.duration_hours, n=expected)
        lines.append(line)
    return lines
