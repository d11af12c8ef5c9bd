"""Tables built from the seed-derived facts (providers, seed figures, errata, pitfalls).

The reviewed files are validated by the models in `knowledge.facts.seed`; this module only shapes them into rows.
Seed-article prices become `article` offers: providers known only from the articles (Huawei, Inspur) rank with
them, labelled; for providers with real catalogs they are shown as dated context only. A figure the errata mark
as wrong is stored with its status and correction and never served as a price.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from knowledge.paths import DATA_DIR

if TYPE_CHECKING:
    from knowledge.facts.seed import FxRate

_PRICE_STATUSES_SERVED = {"ok", "unverified", "needs_qualifier", "outdated", "self_contradiction"}


def _dump(value: object) -> object:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | tuple | dict) else value


def tables(catalog_offers: list[dict]) -> dict[str, list[dict]]:
    """Rows for providers, fx, seed_figures, errata, pitfalls and article offers."""
    from knowledge.facts import seed as facts

    providers, fx = facts.load_providers(DATA_DIR / "providers.yaml")
    figures = facts.load_seed_figures(DATA_DIR / "seed_figures.csv")
    errata = facts.load_errata(DATA_DIR / "errata.yaml")
    pitfalls = facts.load_pitfalls(DATA_DIR / "pitfalls.yaml")

    with_catalog = {o["provider"] for o in catalog_offers if o["kind"] == "catalog"}
    return {
        "providers": provider_rows([_provider_base(p) for p in providers], with_catalog),
        "fx": [fx.model_dump()],
        "seed_figures": [{k: _dump(v) for k, v in f.model_dump().items()} for f in figures],
        "errata": [{k: _dump(v) for k, v in e.model_dump().items()} for e in errata],
        "pitfalls": [{k: _dump(v) for k, v in p.model_dump().items()} for p in pitfalls],
        "article_offers": article_offers(figures, fx),
    }


def _provider_base(provider) -> dict:
    return {k: _dump(v) for k, v in provider.model_dump().items()}


def provider_base() -> list[dict]:
    """providers.yaml's providers as rows, before `provider_rows` says which have a catalog."""
    from knowledge.facts import seed as facts

    return [_provider_base(p) for p in facts.load_providers(DATA_DIR / "providers.yaml")[0]]


def provider_rows(base: list[dict], with_catalog: set[str]) -> list[dict]:
    """The `providers` table: `base` (`provider_base`) with `has_catalog`, then a row for each provider that has a
    catalog but no entry in providers.yaml (an import under a new name)."""
    known = {row["id"] for row in base}
    rows = [{**row, "has_catalog": row["id"] in with_catalog} for row in base]
    for extra in sorted(with_catalog - known):
        rows.append(
            {
                "id": extra,
                "name_en": extra,
                "name_zh": extra,
                "aliases": json.dumps([extra]),
                "kind": "cloud",
                "has_catalog": True,
            }
        )
    return rows


def article_offers(figures: list, fx: FxRate) -> list[dict]:
    """Seed price figures as labelled `article` offers; `seed_price_subjects.csv` says which GPUs a subject is."""
    import csv

    with (DATA_DIR / "seed_price_subjects.csv").open(encoding="utf-8", newline="") as handle:
        subjects = {row["subject"]: row for row in csv.DictReader(handle)}
    rows = []
    for fig in figures:
        subject = subjects.get(fig.subject)
        if fig.metric != "price" or not fig.provider or subject is None:
            continue
        pricing = fig.pricing or subject["default_pricing"]
        if fig.unit not in ("per_hour", "per_gpu_hour") or not pricing:
            continue  # per-month figures are the seeds' unit errors (S0-04): never served as prices
        count = float(subject["gpu_count"])
        per_hour = fig.value * count if fig.unit == "per_gpu_hour" else fig.value
        usd_per_unit = 1.0 if fig.currency == "USD" else fx.usd_per_cny
        notes = [n for n in (subject["note"], fig.correction) if n]
        rows.append(
            {
                "provider": fig.provider,
                "instance_type": fig.subject,
                "accelerator": subject["gpu"],
                "gpu": subject["gpu"],
                "gpu_model": None,
                "gpu_kind": "gpu",
                "gpu_memory_gb": float(subject["gpu_memory_gb"]) if subject["gpu_memory_gb"] else None,
                "gpu_count": count,
                "accelerator_count": count,
                "vcpus": None,
                "memory_gib": None,
                "region": "article",
                "zone": None,
                "pricing": pricing,
                "price_per_hour": per_hour,
                "price_per_gpu_hour": per_hour / count,
                "currency": fig.currency or "USD",
                "price_per_hour_usd": per_hour * usd_per_unit,
                "price_per_gpu_hour_usd": per_hour * usd_per_unit / count,
                "vgpu": False,
                "kind": "article",
                "status": fig.status,
                "note": "; ".join(notes) or None,
                "source": f"seed article {fig.seed} §{fig.section}: {fig.quote_zh}",
                "as_of": fig.as_of or "undated",
                "line": None,
                "figure_id": fig.id,
                "servable": fig.status != "wrong",
            }
        )
    return rows
