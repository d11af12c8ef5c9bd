"""When a question's filters leave no offer: say so, and give the nearest real alternative (never a figure from
elsewhere passed off as the answer).

`alternatives(kb, query, refs, pricing)` tries, in order: the other pricing models in the regions asked for ("no A100
spot in Osaka; on-demand there: ..."), then the smallest region group around them that has the pricing asked for
("nearest: japan ..."). Each is one dated line naming the offer, its region and its price.
"""

from __future__ import annotations

from typing import Any

from handlers.common import money, offer
from handlers.display import unit
from handlers.i18n import t
from handlers.models import PRICINGS, Query


def _groups(kb: Any) -> dict[str, tuple[str, ...]]:
    from knowledge.catalog.regions import load_groups

    def build() -> dict[str, tuple[str, ...]]:
        regions = [
            r["region"] for r in kb.rows("SELECT DISTINCT region FROM offers WHERE kind IN ('catalog','pricing')")
        ]
        return load_groups(regions)[0]

    return kb.memo("handlers.nearest.groups", build) if hasattr(kb, "memo") else build()


def _line(key: str, lang: str, row: dict, **values: Any) -> str:
    item = offer(row)
    price = f"{money(item.price_per_gpu_hour, item.currency)}{unit(item, lang)}"
    return t(key, lang, provider=item.provider, instance=item.instance_type, region=item.region, price=price,
             pricing=t(f"pricing.{item.pricing}", lang), as_of=item.as_of, **values)  # fmt: skip


def alternatives(kb: Any, query: Query, refs: list, pricing: str) -> list[str]:
    """Lines naming the nearest real offers when the regions asked for have none at `pricing`."""
    if not query.regions:
        return []
    lang = query.language
    asked = dict(gpus=refs, providers=query.providers, min_memory_gb=query.min_gpu_memory_gb, orderable=True)
    out = []
    for other in PRICINGS:
        rows = [] if other == pricing else kb.offers(**asked, regions=query.regions, pricing=other, limit=1)
        if rows:
            out.append(_line("nearest.other_pricing", lang, rows[0]))
            break
    wanted = set(query.regions)
    around = sorted(
        ((name, ids) for name, ids in _groups(kb).items() if wanted & set(ids) and not set(ids) <= wanted),
        key=lambda item: len(item[1]),
    )
    for name, ids in around:
        rows = kb.offers(**asked, regions=ids, pricing=pricing, limit=1)
        if rows:
            out.append(_line("nearest.region", lang, rows[0], group=name))
            break
    return out
