"""Turn validated catalog rows into offers: one per (instance type, region, pricing model).

What a user pays is what an offer shows:
- prices are per instance-hour; `price_per_gpu_hour` divides by the GPUs the instance carries, and vGPU slices
  (`A10*1/6`, `T4/8`, memory-only slices, AWS fractional L4) are scaled up to one whole GPU and labelled;
- a zone-priced catalog gives the region's lowest price over its zones (the zone is kept);
- attached accelerators without an instance type (GCP) are combined with their host VM from the same zone and
  pricing model (`host_vms.csv`); where no host applies the offer says plainly that it is GPU-only;
- placeholder and known-bad prices (`catalog_quirks.csv`) and implausibly low figures are skipped, with reasons;
  known catalog errors (RunPod's swapped L40S prices) are corrected, with the correction on the offer;
- every accelerator gets its canonical identity (`knowledge.catalog.identity`): `gpu` is the family, `gpu_variant`
  says which one ("H100 SXM 80GB"); a name that cannot be placed keeps its own name and is reported;
- an aggregator's offer (Prime Intellect, Shadeform) names the cloud it runs on (`via`);
- a catalog quoted in another currency (Alibaba and Tencent: CNY converted to USD at a fixed rate) is shown in
  the vendor's own currency, with the USD figure beside it for ranking.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from knowledge.catalog import tpus
from knowledge.catalog.identity import datasheet_sizes, identify, variant_label
from knowledge.catalog.memory import file_convention
from knowledge.catalog.reader import Catalog, CatalogRow
from knowledge.catalog.zones import zone_group
from knowledge.facts.reference import (
    AcceleratorMap,
    CatalogQuirk,
    UpstreamCloud,
    accelerator_map,
    catalog_quirks,
    host_rules,
    upstream_clouds,
)

MIN_USD_PER_GPU_HOUR = 0.02  # below this a "GPU offer" is a data error (e.g. a disk priced alone)
_SLICE = re.compile(r"^(?P<base>.*?)\s*(?:\*\s*(?P<num>\d+)\s*/\s*(?P<den>\d+)|/\s*(?P<den2>\d+)|\*\s*1)$")
_MIB = re.compile(r"'SizeInMiB':\s*(\d+)")
_GB = re.compile(r"(\d+(?:\.\d+)?)\s*GB\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Currency:
    """How a catalog's USD figures relate to the vendor's own currency."""

    code: str = "USD"
    usd_per_unit: float = 1.0
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Accelerator:
    gpu: str
    gpu_model: str | None
    memory_gb: float | None
    fraction: float  # share of one whole GPU that one "accelerator" of this row is
    kind: str
    variant: str = ""  # "H100 SXM 80GB": family, form factor and memory of the whole GPU
    form_factor: str | None = None
    vendor: str | None = None
    recognised: bool = True
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class Conversion:
    """The result of converting one catalog: offers, plus what was skipped, corrected or not recognised, and why."""

    offers: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unrecognised: dict[str, int] = field(default_factory=dict)  # accelerator name -> rows, kept under its own name
    notes: list[str] = field(default_factory=list)  # memory readings and conflicts, corrected quirks (distinct)


def _memory_from_info(gpu_info: str) -> float | None:
    if match := _MIB.search(gpu_info):
        return round(int(match.group(1)) / 1024, 1)
    if match := _GB.search(gpu_info):
        return float(match.group(1))
    return None


def describe_accelerator(provider: str, row: CatalogRow, convention: str | None = None) -> Accelerator:
    """Map a catalog accelerator to its canonical identity (`knowledge.catalog.identity`), memory and slice fraction;
    `convention`: how the row's file writes memory (`memory_convention`)."""
    name = row.accelerator
    fraction = 1.0
    if (match := _SLICE.match(name)) and match.group("base"):
        name = match.group("base")
        if match.group("den"):
            fraction = int(match.group("num")) / int(match.group("den"))
        elif match.group("den2"):
            fraction = 1 / int(match.group("den2"))
    mapping: AcceleratorMap | None = accelerator_map(provider, name, row.instance_type)
    ident = identify(provider, name, row.instance_type, row.gpu_info, row.accelerator_count, convention)
    whole_count = float(row.accelerator_count).is_integer()
    if mapping is None:  # recognised by its name, or kept under its own name
        memory = ident.memory_gb
        if memory is None and not _MIB.search(row.gpu_info):  # "G49 24GB": a phrase that says the memory
            memory = _memory_from_info(row.gpu_info)
        if fraction < 1 or not whole_count:
            memory = _memory_from_info(row.gpu_info) or (memory * fraction if memory else None)
        return Accelerator(
            ident.family,
            ident.model,
            memory,
            fraction,
            ident.kind,
            ident.variant,
            ident.form_factor,
            ident.vendor,
            ident.recognised,
            ident.notes,
        )
    info_memory = _memory_from_info(row.gpu_info)
    gpu, model, full, memory = mapping.gpu, mapping.gpu_model, mapping.full_memory_gb, mapping.memory_gb
    whole_memory = memory or full or info_memory
    if fraction < 1 or not whole_count:
        memory = info_memory or (memory * fraction if memory else None)
    elif full and info_memory and info_memory <= full / 2:
        fraction = info_memory / full  # a slice visible only by its memory
        memory = info_memory
    elif memory is None:
        memory = info_memory
    return Accelerator(
        gpu,
        model or None,
        memory,
        fraction,
        ident.kind,
        variant_label(gpu, ident.form_factor, whole_memory),
        ident.form_factor,
        ident.vendor,
    )


def memory_convention(provider: str, rows: Iterable[CatalogRow]) -> str | None:
    """How one catalog writes memory in `GpuInfo` (`knowledge.catalog.memory.file_convention`), from its rows."""
    distinct = {(r.accelerator, r.instance_type, r.gpu_info, r.accelerator_count) for r in rows if r.gpu_info}
    return file_convention(
        (gpu_info, count, datasheet_sizes(provider, name, instance_type))
        for name, instance_type, gpu_info, count in sorted(distinct)
    )


def _host_type(provider: str, accelerator: str, count: float) -> str | None:
    for rule in host_rules():
        if (
            rule.provider == provider
            and rule.accelerator == accelerator
            and (rule.accelerator_count == "*" or float(rule.accelerator_count) == count)
        ):
            return rule.host_instance_type
    return None


@cache
def _quirks_of(provider: str) -> tuple[CatalogQuirk, ...]:
    """The quirks that can match `provider`'s rows (`CatalogQuirk.matches` wants the same provider), in file order."""
    return tuple(q for q in catalog_quirks() if q.provider == provider)


def _quirk(provider: str, row: CatalogRow, price: float | None) -> str | None:
    for quirk in _quirks_of(provider):
        if (
            not quirk.fix
            and quirk.price is not None
            and quirk.matches(provider, row.instance_type, row.accelerator, price)
        ):
            return quirk.reason
    return None


def _corrected(provider: str, row: CatalogRow) -> tuple[float | None, float | None, str | None]:
    """(on-demand, spot, note) of a row after the known corrections of `catalog_quirks.csv` (swapped prices)."""
    for quirk in _quirks_of(provider):
        if (
            quirk.fix == "swap_prices"
            and row.price is not None
            and row.spot_price is not None
            and row.spot_price > row.price
            and quirk.matches(provider, row.instance_type, row.accelerator, row.price)
        ):
            return row.spot_price, row.price, f"on-demand and spot prices swapped back: {quirk.reason} ({quirk.source})"
    return row.price, row.spot_price, None


@cache
def _upstreams_of(provider: str) -> tuple[UpstreamCloud, ...]:
    """The upstream clouds of aggregator `provider`, longest prefix first (ties in file order)."""
    return tuple(sorted((u for u in upstream_clouds() if u.aggregator == provider), key=lambda u: -len(u.prefix)))


def _via(provider: str, instance_type: str) -> str | None:
    """The upstream cloud an aggregator's offer runs on, from the instance name's prefix (`lambdalabs_A100x8`)."""
    rows = _upstreams_of(provider)
    if not rows:
        return None
    low = instance_type.lower()
    for upstream in rows:
        if low.startswith(upstream.prefix + "_"):
            return upstream.name
    prefix = low.split("__")[0] if "__" in low else low.split("_")[0]
    return prefix or None


@dataclass(frozen=True, slots=True)
class _Origin:
    """What every offer of one conversion shares: its seller, its currency, and where and when it was read."""

    provider: str
    currency: Currency
    source: str
    as_of: str
    as_of_known: bool  # False where `as_of` is only the day the file was bundled or imported


def convert(
    provider: str,
    catalog: Catalog,
    *,
    hosts: tuple[CatalogRow, ...] = (),
    currency: Currency = Currency(),
    source: str,
    as_of: str,
    as_of_known: bool = True,
) -> Conversion:
    """Offers (dicts with the columns of the `offers` table) from one validated catalog (`as_of_known`: `_Origin`)."""
    origin = _Origin(provider, currency, source, as_of, as_of_known)
    result = Conversion()
    noted: dict[str, None] = {}
    host_index = {(h.instance_type, h.zone or h.region): h for h in (*catalog.hosts, *hosts)}
    best: dict[tuple, dict] = {}
    identities: dict[tuple, tuple[Accelerator, float, str | None, tuple[str, ...]]] = {}
    convention = memory_convention(provider, catalog.rows)
    if convention:
        noted.setdefault(f"{provider}: GpuInfo memory read as {convention} (the file's convention, from its rows)")
    for row in catalog.rows:
        key_acc = (row.accelerator, row.instance_type, row.gpu_info, row.accelerator_count)
        identity = identities.get(key_acc)
        if identity is None:
            identity = identities[key_acc] = _identity(provider, row, convention)
            noted.update(dict.fromkeys(f"{provider} {n}" for n in identity[0].notes))
        acc, gpus, via, identity_notes = identity
        if not acc.recognised:
            result.unrecognised[row.accelerator] = result.unrecognised.get(row.accelerator, 0) + 1
        on_demand, spot, fixed = _corrected(provider, row)
        if fixed:
            noted.setdefault(f"{provider} {row.accelerator}: {fixed}")
        instance_type, note, host = row.instance_type, None, None
        if not instance_type:
            instance_type, note, host = _with_host(provider, row, acc, host_index)
        notes = [*filter(None, (note, currency.note, fixed)), *identity_notes]
        for pricing, accelerator_price, host_price in (
            ("on_demand", on_demand, host.price if host else None),
            ("spot", spot, host.spot_price if host else None),
        ):
            if accelerator_price is None:
                continue
            if reason := _quirk(provider, row, accelerator_price):
                result.skipped.append(f"line {row.line}: {pricing} {accelerator_price:g} skipped: {reason}")
                continue
            if host is not None and host_price is None:
                continue  # no host price for this pricing model: no whole offer
            usd = accelerator_price + (host_price or 0.0)
            if acc.kind != "tpu" and usd / gpus < MIN_USD_PER_GPU_HOUR:
                result.skipped.append(_too_low(row, pricing, usd, gpus))
                continue
            key = (instance_type, row.region, pricing, row.accelerator, zone_group(row.zone))  # a Local Zone apart
            current = best.get(key)
            if current is not None and current["price_per_hour_usd"] <= usd:
                continue
            notes_here = [*notes, _SPOT_ONLY] if pricing == "spot" and on_demand is None else [*notes]
            best[key] = _offer_row(origin, row, acc, host, instance_type, via, pricing, usd, gpus, notes_here)
    result.offers = list(best.values())
    result.notes = list(noted)
    return result


_SPOT_ONLY = "spot only: the catalog lists no on-demand price"


def _too_low(row: CatalogRow, pricing: str, usd: float, gpus: float) -> str:
    """Why an offer priced below MIN_USD_PER_GPU_HOUR is skipped."""
    return (
        f"line {row.line}: {row.instance_type or row.accelerator} {pricing} {usd:g} USD/h skipped: "
        f"implausibly low for a GPU ({usd / gpus:.4f} USD per GPU-hour)"
    )


def _identity(
    provider: str, row: CatalogRow, convention: str | None
) -> tuple[Accelerator, float, str | None, tuple[str, ...]]:
    """What a row's accelerator and name say, alike for all rows with its (accelerator, instance type, GpuInfo,
    count): the accelerator, the whole-GPU equivalents it counts, the cloud it runs on (`_via`) and their notes."""
    acc = describe_accelerator(provider, row, convention)
    gpus = row.accelerator_count * acc.fraction
    notes = []
    slice_chips = tpus.chips(row.accelerator) if acc.kind == "tpu" else None
    if slice_chips:  # a TPU slice is priced per chip; the slice stays its instance type (knowledge.catalog.tpus)
        gpus = row.accelerator_count * slice_chips
        notes.append(f"TPU slice {row.accelerator}: {slice_chips} chips; price per chip-hour")
    via = _via(provider, row.instance_type)
    if via:
        notes.append(f"sold by {provider}, runs on {via}")
    return acc, gpus, via, tuple(notes)


def _with_host(
    provider: str, row: CatalogRow, acc: Accelerator, host_index: dict[tuple[str, str], CatalogRow]
) -> tuple[str, str | None, CatalogRow | None]:
    """(instance type, note, host row) of an accelerator priced without its host VM (GCP): the host VM of the same
    zone where `host_vms.csv` names one, else the accelerator alone, said plainly."""
    host_type = _host_type(provider, row.accelerator, row.accelerator_count)
    host = host_index.get((host_type, row.zone or row.region)) if host_type else None
    count = f"{row.accelerator_count:g}x {row.accelerator}"
    if host is not None and host_type:
        instance_type = host_type if _host_type_is_fixed(provider, row.accelerator) else f"{host_type} + {count}"
        return instance_type, f"price includes the {host_type} host VM", host
    if acc.kind == "tpu":
        return row.accelerator, None, None
    return f"{count} (GPU only)", "GPU-only price: the host VM is not included", None


def _offer_row(
    origin: _Origin,
    row: CatalogRow,
    acc: Accelerator,
    host: CatalogRow | None,
    instance_type: str,
    via: str | None,
    pricing: str,
    usd: float,
    gpus: float,
    notes: list[str],
) -> dict:
    """The `offers` columns of one offer: `usd` per instance-hour for `gpus` whole-GPU equivalents; `notes` are
    completed with what only the identity tells (an unrecognised name, a vGPU slice)."""
    usd_per_gpu = usd / gpus
    share = gpus / row.accelerator_count if row.accelerator_count >= 1 else gpus  # of one whole GPU
    vgpu = acc.fraction < 1 or gpus < 1 or not float(row.accelerator_count).is_integer()
    if not acc.recognised:
        notes.append(f"accelerator name {row.accelerator!r} not recognised: kept under its own name")
    if vgpu:
        notes.append(f"vGPU slice: {min(share, acc.fraction):.3g} of a {acc.gpu}; price shown per whole GPU-hour")
    live = _live_fields(row, pricing)
    currency = origin.currency
    return {
        "provider": origin.provider,
        "instance_type": instance_type,
        "accelerator": row.accelerator,
        "gpu": acc.gpu,
        "gpu_model": acc.gpu_model,
        "gpu_kind": acc.kind,
        "gpu_memory_gb": acc.memory_gb,
        "gpu_count": round(gpus, 6),
        "accelerator_count": row.accelerator_count,
        "vcpus": row.vcpus if host is None else host.vcpus,
        "memory_gib": row.memory_gib if host is None else host.memory_gib,
        "region": row.region,
        "zone": row.zone or None,
        "pricing": pricing,
        "price_per_hour": usd / currency.usd_per_unit,
        "price_per_gpu_hour": usd_per_gpu / currency.usd_per_unit,
        "currency": currency.code,
        "price_per_hour_usd": usd,
        "price_per_gpu_hour_usd": usd_per_gpu,
        "vgpu": vgpu,
        "kind": "catalog",
        "status": "ok",
        "note": "; ".join(notes) or None,
        "source": live.get("source") or origin.source,
        "as_of": (live.get("fetched_at") or origin.as_of)[:10] if live.get("fetched_at") else origin.as_of,
        "line": row.line,
        "gpu_variant": acc.variant or None,
        "gpu_form_factor": acc.form_factor,
        "gpu_vendor": acc.vendor,
        "gpu_recognised": acc.recognised,
        "via": via,
        "as_of_known": bool(live.get("fetched_at")) or origin.as_of_known,
        "fetched_at": live.get("fetched_at"),
        "stock": live.get("stock"),
        "stock_read_at": live.get("stock_read_at"),
    }


def _live_fields(row: CatalogRow, pricing: str) -> dict[str, str | None]:
    """Where and when a live source read this price (`PriceSource`/`SpotSource`, `...FetchedAt`), and the stock."""
    if not row.live:
        return {}
    prefix = "Spot" if pricing == "spot" else "Price"
    return {
        "source": row.live_value(f"{prefix}Source") or None,
        "fetched_at": row.live_value(f"{prefix}FetchedAt") or None,
        "stock": row.live_value("Stock") or None,
        "stock_read_at": row.live_value("StockReadAt") or None,
    }


def _host_type_is_fixed(provider: str, accelerator: str) -> bool:
    """True where the host VM type already names the GPU offer (a2/a3/g2), False for user-picked hosts (n1)."""
    return any(
        rule.provider == provider and rule.accelerator == accelerator and rule.accelerator_count != "*"
        for rule in host_rules()
    )
