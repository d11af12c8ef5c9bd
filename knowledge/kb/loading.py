"""Catalogs into rows: each source parsed (or an import's own parse reused) and converted into offers and raw
catalog rows, and the terms AWS's and GCP's offers yield. What a build computes per provider (`knowledge.kb.build`
for every source, `knowledge.kb.incremental` for an import's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from knowledge.catalog.offers import Conversion, Currency, convert
from knowledge.catalog.reader import Catalog
from knowledge.catalog.sources import CatalogSource
from knowledge.facts import pricing
from knowledge.kb.parts import Loaded


@dataclass(frozen=True, slots=True)
class Converted:
    """A catalog an import has just converted (`convert`'s result) and the terms it was converted under: the build
    reuses the result only for a source with the same terms (100k rows: about a second)."""

    hosts_text: str | None
    currency: Currency
    source: str
    as_of: str
    as_of_known: bool
    result: Conversion

    def fits(self, src: CatalogSource) -> bool:
        return (
            self.hosts_text == src.hosts_text
            and self.currency == src.currency_info()
            and self.source == src.source
            and self.as_of == src.as_of
            and self.as_of_known == src.as_of_known
        )


Parsed = dict[str, tuple[str, Catalog] | tuple[str, Catalog, Converted]]  # see `load_catalogs`


def catalog_notes(provider: str, catalog: Catalog, result: Conversion) -> list[dict]:
    """What an import summary and `gpubot kb stats` report about one catalog, one row per finding."""
    notes = [
        {"provider": provider, "kind": "unrecognised", "text": name, "rows": n}
        for name, n in sorted(result.unrecognised.items())
    ]
    notes += [{"provider": provider, "kind": "identity", "text": text, "rows": None} for text in result.notes]
    if catalog.zero_spot:
        notes.append(
            {
                "provider": provider,
                "kind": "zero_spot",
                "rows": catalog.zero_spot,
                "text": f"{catalog.zero_spot} rows with SpotPrice 0: no spot offer",
            }
        )
    if catalog.no_region:
        notes.append(
            {
                "provider": provider,
                "kind": "no_region",
                "rows": catalog.no_region,
                "text": f"{catalog.no_region} rows without a region: kept under region 'unknown'",
            }
        )
    return notes


def load_catalogs(
    sources: list[CatalogSource],
    notes: list[dict] | None = None,
    parsed: Parsed | None = None,
    catalogs: dict[str, Catalog] | None = None,
) -> tuple[list[dict], list[dict], list[str]]:
    """(offers, raw rows, skipped notes) for all catalogs; raises CatalogError on the first bad file.

    `notes`, when given, collects each catalog's findings (`catalog_notes`). `parsed`: catalogs this process has
    just validated, {provider: (text, catalog[, converted])}, used where a source has that text (and, for the
    conversion, the same terms: `Converted.fits`). `catalogs`, when given, collects each provider's catalog (the
    live AWS reserved terms are read from it: `live_aws_terms`)."""
    offers: list[dict] = []
    raw: list[dict] = []
    skipped: list[str] = []
    for src in sources:
        known = (parsed or {}).get(src.provider)
        converted: Converted | None = None
        if known is not None and src.text is not None and known[0] == src.text:
            catalog, hosts = known[1], src.read_hosts()  # an import's file, parsed once (100k rows: seconds)
            converted = known[2] if len(known) > 2 else None
        else:
            catalog, hosts = src.read()
        if catalogs is not None:
            catalogs[src.provider] = catalog
        if converted is not None and converted.fits(src):
            result = converted.result  # and converted once: the import's own conversion, same file, same terms
        else:
            result = convert(
                src.provider,
                catalog,
                hosts=hosts.hosts if hosts else (),
                currency=src.currency_info(),
                source=src.source,
                as_of=src.as_of,
                as_of_known=src.as_of_known,
            )
        offers += result.offers
        if notes is not None:
            notes += catalog_notes(src.provider, catalog, result)
        skipped += [f"{src.provider} {src.path.name} {s}" for s in result.skipped]
        raw += _raw_rows(src.provider, (catalog, hosts) if hosts else (catalog,))
    return offers, raw, skipped


def _raw_rows(provider: str, files: tuple[Catalog, ...]) -> list[dict]:
    """The rows of a catalog (and its hosts file) as read, for the `catalog_rows` table."""
    raw: list[dict] = []
    for cat in files:
        file = Path(cat.path).name
        for row in (*cat.rows, *cat.hosts):
            raw.append(
                {
                    "provider": provider,
                    "file": file,
                    "line": row.line,
                    "instance_type": row.instance_type,
                    "accelerator": row.accelerator,
                    "accelerator_count": row.accelerator_count,
                    "vcpus": row.vcpus,
                    "memory_gib": row.memory_gib,
                    "gpu_info": row.gpu_info,
                    "price": row.price,
                    "spot_price": row.spot_price,
                    "region": row.region,
                    "zone": row.zone,
                    "generation": row.generation,
                    "arch": row.arch,
                }
            )
    return raw


def live_aws_terms(catalog: Catalog | None) -> dict[tuple[str, str], pricing.LiveTerms]:
    """(instance type, region) -> the reserved terms (and the on-demand price) a live source wrote into the AWS
    catalog (`Reserved`, `ReservedSource`, `ReservedFetchedAt`; `knowledge.catalog.fetchers.live_rows`)."""
    from knowledge.catalog.reader import parse_reserved_cell

    out: dict[tuple[str, str], pricing.LiveTerms] = {}
    for row in catalog.rows if catalog is not None else ():
        fetched_at = row.live_value("ReservedFetchedAt")
        key = (row.instance_type, row.region)
        if not fetched_at or key in out:
            continue  # every zone row of a region carries the same terms
        price_at = row.live_value("PriceFetchedAt")
        on_demand = (row.price, row.live_value("PriceSource"), price_at) if price_at and row.price else None
        out[key] = pricing.LiveTerms(
            parse_reserved_cell(row.live_value("Reserved")), row.live_value("ReservedSource"), fetched_at, on_demand
        )
    return out


def _gpu_info(offers: list[dict], provider: str) -> dict[str, dict]:
    keys = (
        "accelerator",
        "gpu",
        "gpu_model",
        "gpu_kind",
        "gpu_memory_gb",
        "gpu_count",
        "accelerator_count",
        "vgpu",
        "vcpus",
        "memory_gib",
        "gpu_variant",
        "gpu_form_factor",
        "gpu_vendor",
    )
    return {o["instance_type"]: {k: o[k] for k in keys} for o in offers if o["provider"] == provider}


def aws_part(offers: list[dict], catalog: Catalog | None, pricing_dir: Path) -> tuple[list, list, list]:
    """(reserved offers, price terms, spot-risk rows) AWS's offers yield."""
    live_terms = live_aws_terms(catalog)  # a live source's reserved terms replace the file's
    aws_offers, terms, risks = pricing.aws_terms(_gpu_info(offers, "aws"), pricing_dir, live_terms)
    risks += pricing.spot_advisor(
        {o["instance_type"] for o in offers if o["provider"] == "aws"} | {r["instance_type"] for r in risks},
        pricing_dir,
    )
    return aws_offers, terms, risks


def gcp_part(offers: list[dict], pricing_dir: Path) -> tuple[list, list]:
    """(committed-use offers, price terms) GCP's offers yield."""
    return pricing.gcp_terms(_gpu_info(offers, "gcp"), pricing_dir)


def load(sources: list[CatalogSource], parsed: Parsed | None, catalogs: dict[str, Catalog]) -> list[Loaded]:
    """Each source loaded on its own (`load_catalogs`), in order."""
    loaded = []
    for src in sources:
        notes: list[dict] = []
        offers, raw, skipped = load_catalogs([src], notes, parsed, catalogs)
        loaded.append(Loaded(src.provider, offers, raw, skipped, notes))
    return loaded


def settle(offers: list[dict]) -> None:
    """Figures from dated price files and seeds: dated and recognised unless they say otherwise."""
    for offer in offers:
        offer.setdefault("as_of_known", True)
        offer.setdefault("gpu_recognised", True)
