"""Known catalog errors corrected at build time: the `fix` rows of `catalog_quirks.csv`.

A quirk row without `fix` names a figure that is not a price (skipped by `knowledge.catalog.offers`). A row with `fix`
corrects offers after conversion, with its reason and source kept for `gpubot kb stats`:

- `gpu_count=N`: the instance carries N GPUs, not what the catalog says; per-GPU prices are recomputed;
- `swap_prices` (applied while converting, `knowledge.catalog.offers`): on-demand and spot were swapped upstream;
- `no_spot_if_equal`: a spot price equal to the on-demand price of the same instance and region is the catalog
  repeating the on-demand price where no spot offer exists: the spot offer is dropped.

`instance_type` and `accelerator` are glob patterns; empty matches everything.
"""

from __future__ import annotations

import fnmatch
import re

from knowledge.facts.reference import CatalogQuirk, catalog_quirks

_GPU_COUNT = re.compile(r"^gpu_count=(\d+(?:\.\d+)?)$")
FIXES = ("gpu_count=N", "no_spot_if_equal", "swap_prices")


def _matches(quirk: CatalogQuirk, offer: dict) -> bool:
    return (
        quirk.provider == offer["provider"]
        and (not quirk.instance_type or fnmatch.fnmatchcase(offer["instance_type"], quirk.instance_type))
        and (not quirk.accelerator or fnmatch.fnmatchcase(offer.get("accelerator") or "", quirk.accelerator))
    )


def fixes() -> list[CatalogQuirk]:
    found = [q for q in catalog_quirks() if q.fix and q.fix != "swap_prices"]  # swaps happen at conversion
    for quirk in found:
        if not (_GPU_COUNT.match(quirk.fix or "") or quirk.fix == "no_spot_if_equal"):
            raise ValueError(f"catalog_quirks.csv: unknown fix {quirk.fix!r} (one of {', '.join(FIXES)})")
    return found


def correct(offers: list[dict]) -> tuple[list[dict], list[dict]]:
    """(corrected offers, one record per quirk applied: provider, instance_type, fix, reason, source, offers)."""
    applied: list[dict] = []
    providers = {o["provider"] for o in offers}
    for quirk in fixes():
        hits = 0
        if quirk.provider not in providers:
            pass  # none of its offers here (a build that checks only an import's offers: `knowledge.kb.incremental`)
        elif match := _GPU_COUNT.match(quirk.fix or ""):
            gpus = float(match.group(1))
            for offer in offers:
                if offer.get("kind") != "article" and _matches(quirk, offer) and offer["gpu_count"] != gpus:
                    offer["gpu_count"] = gpus
                    offer["accelerator_count"] = gpus
                    offer["price_per_gpu_hour"] = offer["price_per_hour"] / gpus
                    offer["price_per_gpu_hour_usd"] = offer["price_per_hour_usd"] / gpus
                    offer["note"] = "; ".join(filter(None, [offer.get("note"), f"corrected: {quirk.reason}"]))
                    hits += 1
        else:  # no_spot_if_equal
            on_demand = {
                (o["provider"], o["instance_type"], o["region"]): o["price_per_hour_usd"]
                for o in offers
                if o["pricing"] == "on_demand" and o.get("kind") == "catalog"
            }
            kept = []
            for offer in offers:
                key = (offer["provider"], offer["instance_type"], offer["region"])
                if (
                    offer["pricing"] == "spot"
                    and offer.get("kind") == "catalog"
                    and _matches(quirk, offer)
                    and key in on_demand
                    and abs(on_demand[key] - offer["price_per_hour_usd"]) < 1e-9
                ):
                    hits += 1
                    continue
                kept.append(offer)
            offers = kept
        applied.append(
            {
                "provider": quirk.provider,
                "instance_type": quirk.instance_type or "*",
                "accelerator": quirk.accelerator or "*",
                "fix": quirk.fix,
                "reason": quirk.reason,
                "source": quirk.source,
                "offers": hits,
            }
        )
    return offers, applied


def skip_rules() -> list[dict]:
    """The quirk rows that skip a figure (placeholders, data errors), for `kb stats`."""
    return [
        {
            "provider": q.provider,
            "instance_type": q.instance_type or "*",
            "accelerator": q.accelerator or "*",
            "price": q.price,
            "fix": "skip",
            "reason": q.reason,
            "source": q.source,
        }
        for q in catalog_quirks()
        if not q.fix or q.fix == "swap_prices"
    ]
