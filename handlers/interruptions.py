"""The one-figure answer "how often is a spot X interrupted": the newest interruption bucket per region, with
its date and the older ones, and what that costs a job (`handlers.tco_model.spot_estimate`)."""

from __future__ import annotations

from handlers.break_even import saving_facts
from handlers.i18n import t
from handlers.i18n_rules import rule_hits
from handlers.models import Answer, Query, Source
from handlers.tco_model import DEFAULT_HOURS, spot_estimate
from knowledge.facts import rules as R
from knowledge.kb.reader import KB

SHOWN_REGIONS = 8  # regions listed; the rest are counted


def interruptions(query: Query, kb: KB, facts: dict) -> Answer:
    """How often spot instances of a type are interrupted: the newest bucket per region, with its date."""
    lang = query.language
    if not query.instance_types:
        return Answer(query=query, title=t("tco.int.which", lang), rules=rule_hits(R.evaluate(facts, lang)))
    instance_type = query.instance_types[0]
    where = f" ({', '.join(query.regions)})" if query.regions else ""
    regions: list[str | None] = [*query.regions] or [None]
    rows = [r for region in regions for r in kb.spot_risk(instance_type, region)]
    newest: dict[str, dict] = {}
    for row in rows:  # newest first
        newest.setdefault(row["region"], row)
    lines, data = [], []
    for region, row in list(newest.items())[:SHOWN_REGIONS]:
        older = [r for r in rows if r["region"] == region and r is not row]
        lines += _region_lines(region, row, older, lang)
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
    if len(newest) > SHOWN_REGIONS:
        lines.append(t("tco.int.more", lang, n=len(newest) - SHOWN_REGIONS))
    if not newest:
        lines.append(t("tco.int.none", lang, instance=instance_type, where=where))
    elif len(newest) == 1:
        facts.update(_job_facts(kb, query, instance_type, next(iter(newest))))
    return Answer(
        query=query,
        title=t("tco.int.title", lang, instance=instance_type, where=where),
        lines=lines,
        rules=rule_hits(R.evaluate(facts, lang)),
        extra={"spot_risk": data},
        sources=[Source(source=d["source"], as_of=d["as_of"]) for d in data[:1]],
    )


def _region_lines(region: str, row: dict, older: list[dict], lang: str) -> list[str]:
    """A region's newest bucket (its source, date and spot saving), then each older one."""
    newest = t(
        "tco.int.line",
        lang,
        region=region,
        bucket=row["bucket"],
        source=row["source"],
        as_of=row["as_of"],
        savings=row["savings_pct"],
    )
    return [newest] + [
        t("tco.int.older", lang, region=region, bucket=old["bucket"], source=old["source"], as_of=old["as_of"])
        for old in older
    ]


def _job_facts(kb: KB, query: Query, instance_type: str, region: str) -> dict:
    """For the one region: the rule facts of reserving it, and what interruptions cost a job on its spot offer."""
    lang = query.language
    od, spot = (
        kb.offers(instance_types=[instance_type], regions=[region], pricing=p, limit=1) for p in ("on_demand", "spot")
    )
    facts = saving_facts(kb, instance_type, region, lang)
    if od and spot:
        od_rate, spot_rate = od[0]["price_per_hour_usd"], spot[0]["price_per_hour_usd"]
        hours = query.duration_hours or DEFAULT_HOURS
        facts.update(spot_estimate(kb, spot[0], od_rate, spot_rate, hours, 1, lang)[1])
    return facts
