"""Tables built from the seed-derived facts (providers, seed figures, errata, pitfalls).

The reviewed files are validated by the models in `knowledge.facts`; this module only shapes them into rows.
Seed-article prices become `article` offers: providers known only from the articles (Huawei, Inspur) rank with
them, labelled; for providers with real catalogs they are shown as dated context only. A figure the errata mark
as wrong is stored with its status and correction and never served as a price.
"""

from __future__ import annotations

import json

from knowledge.paths import DATA_DIR

# seed GPU subjects -> (family, memory) where the seed names the GPU precisely enough
_PRICE_STATUSES_SERVED = {"ok", "unverified", "needs_qualifier", "outdated", "self_contradiction"}


def _dump(value: object) -> object:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value


def tables(catalog_offers: list[dict]) -> dict[str, list[dict]]:
    """Rows for providers, fx, seed_figures, errata, pitfalls and article offers."""
    from knowledge import facts

    providers, fx = facts.load_providers(DATA_DIR / "providers.yaml")
    figures = facts.load_seed_figures(DATA_DIR / "seed_figures.csv")
    errata = facts.load_errata(DATA_DIR / "errata.yaml")
    pitfalls = facts.load_pitfalls(DATA_DIR / "pitfalls.yaml")

    known = {p.id for p in providers}
    provider_rows = [
        {**{k: _dump(v) for k, v in p.model_dump().items()}, "has_catalog": any(o["provider"] == p.id for o in catalog_offers)}
        for p in providers
    ]
    for extra in sorted({o["provider"] for o in catalog_offers} - known):
        provider_rows.append({"id": extra, "name_en": extra, "name_zh": extra, "aliases": json.dumps([extra]),
                              "kind": "cloud", "has_catalog": True})
    return {
        "providers": provider_rows,
        "fx": [fx.model_dump()],
        "seed_figures": [{k: _dump(v) for k, v in f.model_dump().items()} for f in figures],
        "errata": [{k: _dump(v) for k, v in e.model_dump().items()} for e in errata],
        "pitfalls": [{k: _dump(v) for k, v in p.model_dump().items()} for p in pitfalls],
        "article_offers": article_offers(figures, fx),
    }


def article_offers(figures: list, fx: object) -> list[dict]:
    """Seed price figures as labelled `article` offers (per GPU-hour where the seed says per GPU)."""
    rows = []
    for fig in figures:
        if fig.metric != "price" or not fig.provider or fig.unit != "per_hour" or not fig.pricing:
            continue
        family, memory = _gpu_of(fig.subject)
        if not family:
            continue
        count = _count_of(fig.subject, fig.quote_zh)
        usd_per_unit = 1.0 if fig.currency == "USD" else fx.usd_per_cny
        rows.append({
            "provider": fig.provider,
            "instance_type": fig.subject,
            "accelerator": family,
            "gpu": family,
            "gpu_model": None,
            "gpu_kind": "gpu",
            "gpu_memory_gb": memory,
            "gpu_count": count,
            "accelerator_count": count,
            "vcpus": None,
            "memory_gib": None,
            "region": "article",
            "zone": None,
            "pricing": fig.pricing,
            "price_per_hour": fig.value,
            "price_per_gpu_hour": fig.value / count,
            "currency": fig.currency or "USD",
            "price_per_hour_usd": fig.value * usd_per_unit,
            "price_per_gpu_hour_usd": fig.value * usd_per_unit / count,
            "vgpu": False,
            "kind": "article",
            "status": fig.status,
            "note": fig.correction or None,
            "source": f"seed article {fig.seed} ({fig.section}): {fig.quote_zh}",
            "as_of": fig.as_of or "undated",
            "line": None,
            "figure_id": fig.id,
            "servable": fig.status in _PRICE_STATUSES_SERVED and fig.status != "wrong",
        })
    return rows


def _gpu_of(subject: str) -> tuple[str | None, float | None]:
    import re

    from knowledge.reference import gpu_families

    text = subject.upper()
    for family in sorted(gpu_families(), key=lambda f: -len(f.name)):
        if family.kind == "gpu" and re.search(rf"(?<![A-Z0-9]){re.escape(family.name.upper())}(?![A-Z0-9])", text):
            memory = re.search(r"(\d+)\s*GB", text)
            return family.name, float(memory.group(1)) if memory else None
    return None, None


def _count_of(subject: str, quote: str) -> float:
    import re

    match = re.search(r"(\d+)\s*[x×]\s*[A-Z]", subject, re.IGNORECASE) or re.search(r"(\d+)\s*[x×]", quote)
    return float(match.group(1)) if match else 1.0
