"""Reviewed facts taken from the three seed articles and their errata.

Four files in ``knowledge/data/``, one model per row, and one loader per file:

* ``seed_figures.csv`` -> :class:`SeedFigure` (:func:`load_seed_figures`): every figure the seeds state,
  with a review status. A figure whose status is not ``ok`` must never be shown without its ``correction``.
* ``errata.yaml`` -> :class:`Erratum` (:func:`load_errata`): every erratum of ``seed_errata.md``.
* ``providers.yaml`` -> :class:`Provider` + :class:`FxRate` (:func:`load_providers`).
* ``pitfalls.yaml`` -> :class:`Pitfall` (:func:`load_pitfalls`): procurement traps with a checklist line.

Every loader raises ``ValueError("<file>: <row/entry>: field '<field>': <problem>")`` on a bad row.

Vocabularies
------------
SeedFigure.metric (what the number measures; the precision or workload is in ``subject``/``quote_zh``):
    price                  price of an instance or GPU (``pricing`` says on-demand/reserved/spot)
    purchase_price         price to buy a card
    discount_pct           discount vs on-demand claimed for spot/reserved/subscription pricing
    cost_reduction_pct     any other claimed saving (TCO, cheaper GPU, cheaper provider)
    transfer_price         data transfer per GB (inter-region, intranet)
    storage_price          block storage per GB-month
    lb_price               load balancer fixed hourly charge
    price_ratio            one price divided by another
    benchmark_throughput   measured throughput (img/s, samples/s, seq/s, QPS)
    speedup                "N x faster" / "+N %" claims
    latency                network latency target
    latency_reduction_pct  claimed latency improvement
    network_bandwidth      instance / cluster network (Gbps)
    nvlink_bandwidth, pcie_bandwidth         GPU interconnect (GB/s, bidirectional per GPU)
    nvlink_generation, pcie_generation       interconnect generation
    memory                 GPU memory per GPU (GB)
    vgpu_granularity       vGPU memory allocation step (GB)
    gpu_count, cpu_count   GPUs / CPUs per instance or server (or a workload size)
    cpu_clock              CPU clock (GHz)
    fp32_tflops, fp8_tflops  peak compute at that precision
    model_size             trainable model size (billion parameters)
    software_version       driver / CUDA / container versions
    k8s_gpu_limit, k8s_gpu_request           Kubernetes ``nvidia.com/gpu`` quantities
    utilization_threshold  autoscaling trigger
    certification_level    compliance level (e.g. MLPS 2.0 level 3)
    date                   a year the seed names (data period, release)
    trial_length           free-trial / POC length (days)
    forecast_horizon       how long a forecast claims to hold (years)
    metric_count           number of criteria in an evaluation matrix

SeedFigure.unit: see ``Unit`` (``per_hour`` etc. are money per unit; ``x`` a ratio; ``pct`` a percentage).
SeedFigure.status: ``ok`` checked correct; ``wrong``; ``unverified`` (no source: never state as fact);
    ``needs_qualifier`` (true only under a condition); ``outdated``; ``self_contradiction`` (the seed's own
    numbers contradict it).
Erratum.type: the errata's types; ``type`` is the first one named in the erratum's heading, ``also_types``
    the others (headings without a type were classified by hand).
ProviderNote.topic: compliance, network, ecosystem (platforms, Kubernetes services), storage, support, pricing,
    hardware (instance/GPU facts). ProviderCost.item: egress_per_gb, cross_region_per_gb, intranet_per_gb,
    storage_per_gb_month, load_balancer_per_hour.
Pitfall.tags.topics: see ``Topic``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "SEED_FIGURE_COLUMNS",
    "Erratum",
    "FxRate",
    "Pitfall",
    "PitfallTags",
    "Provider",
    "ProviderCost",
    "ProviderNote",
    "SeedFigure",
    "load_errata",
    "load_pitfalls",
    "load_providers",
    "load_seed_figures",
]

# --- vocabularies -------------------------------------------------------------------------------------
ProviderId = Literal[
    "aws",
    "azure",
    "gcp",
    "alibaba",
    "tencent",
    "huawei",
    "inspur",
    "oci",
    "lambda",
    "runpod",
    "nebius",
    "hyperstack",
    "primeintellect",
    "shadeform",
    "vast",  # read live only (knowledge/catalog/fetchers/vast.py), no bundled catalog
]
SeedId = Literal["S0", "S1", "S2"]
Currency = Literal["USD", "CNY"]
Pricing = Literal["on_demand", "reserved_1y", "reserved_3y", "spot"]
Metric = Literal[
    "price", "purchase_price", "discount_pct", "cost_reduction_pct", "transfer_price", "storage_price",
    "lb_price", "price_ratio", "benchmark_throughput", "speedup", "latency", "latency_reduction_pct",
    "network_bandwidth", "nvlink_bandwidth", "pcie_bandwidth", "nvlink_generation", "pcie_generation",
    "memory", "vgpu_granularity", "gpu_count", "cpu_count", "cpu_clock", "fp32_tflops", "fp8_tflops",
    "model_size", "software_version", "k8s_gpu_limit", "k8s_gpu_request", "utilization_threshold",
    "certification_level", "date", "trial_length", "forecast_horizon", "metric_count",
]  # fmt: skip
Unit = Literal[
    "per_hour", "per_month", "per_gpu_hour", "per_card", "per_gb", "per_gb_month", "pct", "x",
    "img_per_s", "samples_per_s", "seq_per_s", "million_qps", "gbps", "gb_per_s", "ms", "gb", "tflops",
    "gpus", "cpus", "ghz", "generation", "version", "billion_params", "gpu_units", "level", "year",
    "days", "years", "metrics",
]  # fmt: skip
Status = Literal["ok", "wrong", "unverified", "needs_qualifier", "outdated", "self_contradiction"]
ErratumType = Literal[
    "WRONG", "SELF-CONTRADICTION", "CROSS-SEED", "IMPLAUSIBLE", "UNVERIFIED", "NEEDS-QUALIFIER", "OUTDATED", "OK"
]
Severity = Literal["HIGH", "MEDIUM", "LOW"]
NoteTopic = Literal["compliance", "network", "ecosystem", "storage", "support", "pricing", "hardware"]
CostItem = Literal[
    "egress_per_gb", "cross_region_per_gb", "intranet_per_gb", "storage_per_gb_month", "load_balancer_per_hour"
]
Topic = Literal[
    "hidden_costs", "egress", "storage", "network", "vgpu", "mig", "kubernetes", "driver", "cuda", "spot",
    "interruption", "checkpoint", "reserved", "lock_in", "compliance", "data_residency", "quota",
    "availability", "pricing_data", "billing", "benchmark", "memory", "interconnect", "specs", "procurement",
]  # fmt: skip

ERRATUM_ID = r"^(S[0-2]|X)-\d{2}$"
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
AS_OF = r"^\d{4}-\d{2}(-\d{2})?$"
MONEY_METRICS = {"price", "purchase_price", "transfer_price", "storage_price", "lb_price"}
COST_UNITS = {
    "egress_per_gb": "per_gb",
    "cross_region_per_gb": "per_gb",
    "intranet_per_gb": "per_gb",
    "storage_per_gb_month": "per_gb_month",
    "load_balancer_per_hour": "per_hour",
}

SEED_FIGURE_COLUMNS = [
    "id",
    "seed",
    "section",
    "provider",
    "subject",
    "metric",
    "value",
    "unit",
    "currency",
    "pricing",
    "quote_zh",
    "status",
    "erratum_ids",
    "correction",
    "source",
    "as_of",
]  # noqa: E501

Text = Annotated[str, Field(min_length=1)]  # non-empty after stripping


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


def _split_ids(value: Any) -> Any:
    """CSV cells hold space-separated ids; YAML holds lists. Both become tuples."""
    if value is None:
        return ()
    return tuple(value.split()) if isinstance(value, str) else value


class _HasErratumIds(_Frozen):
    erratum_ids: tuple[str, ...] = ()

    @field_validator("erratum_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        ids = _split_ids(value)
        for one in ids:
            if not re.match(ERRATUM_ID, str(one)):
                raise ValueError(f"{one!r} is not an erratum id like S0-07 or X-01")
        return ids


# --- seed_figures.csv -----------------------------------------------------------------------------------
class SeedFigure(_HasErratumIds):
    """One figure stated by a seed article (one CSV row)."""

    id: str = Field(pattern=r"^s[0-2]-[a-z0-9]+(-[a-z0-9]+)*$")
    seed: SeedId
    section: Text  # section marker as in seed_errata.md §7 ("2.1", "三.1", "结语")
    provider: ProviderId | None = None  # None: not provider-specific
    subject: Text  # GPU / instance / service the figure is about
    metric: Metric
    value: float  # as stated; ranges keep the low end (the quote has the range)
    unit: Unit
    currency: Currency | None = None
    pricing: Pricing | None = None
    quote_zh: Text  # verbatim; several fragments are joined with " … "
    status: Status
    correction: str | None = None  # English; required unless status is ok
    source: Text
    as_of: str | None = Field(default=None, pattern=AS_OF)  # date the seed claims, if any

    @model_validator(mode="after")
    def _consistent(self) -> SeedFigure:
        if self.status != "ok" and not self.correction:
            raise ValueError(f"correction: required when status is {self.status!r}")
        if self.metric in MONEY_METRICS and self.currency is None:
            raise ValueError(f"currency: required for metric {self.metric!r}")
        if self.pricing is not None and self.metric not in {"price", "discount_pct"}:
            raise ValueError("pricing: applies only to price and discount_pct rows")
        return self


# --- errata.yaml ----------------------------------------------------------------------------------------
class Erratum(_Frozen):
    """One erratum of seed_errata.md §2-5."""

    id: str = Field(pattern=ERRATUM_ID)
    seed: tuple[SeedId, ...] = Field(min_length=1)  # seeds the quoted claim comes from
    type: ErratumType
    also_types: tuple[ErratumType, ...] = ()
    severity: Severity | None  # None only for type OK
    confidence: Literal["high", "medium"] | None  # None: the errata state none
    top10: int | None = Field(ge=1, le=10)  # rank in the errata's top-10 table
    claim_zh: Text  # verbatim; fragments joined with " … "
    claim_en: Text
    correct_en: Text
    correct_zh: Text
    question_en: Text
    question_zh: Text
    keywords: tuple[str, ...] = Field(min_length=1)
    gpus: tuple[str, ...] = ()
    providers: tuple[ProviderId, ...] = ()
    instance_types: tuple[str, ...] = ()
    sources: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _severity(self) -> Erratum:
        if self.severity is None and self.type != "OK":
            raise ValueError("severity: required unless type is OK")
        return self


# --- providers.yaml -------------------------------------------------------------------------------------
class ProviderNote(_HasErratumIds):
    topic: NoteTopic
    en: Text
    zh: Text
    source: Text


class ProviderCost(_HasErratumIds):
    """A hidden-cost figure quoted by a seed (never verified as a current list price)."""

    item: CostItem
    service: Text  # e.g. "EBS (volume type not stated)", "Application Gateway"
    value: float = Field(ge=0)
    currency: Currency
    unit: Literal["per_gb", "per_gb_month", "per_hour"]
    source: Text
    as_of: str | None = Field(default=None, pattern=AS_OF)
    status: Literal["ok", "unverified"]

    @model_validator(mode="after")
    def _unit_matches_item(self) -> ProviderCost:
        if COST_UNITS[self.item] != self.unit:
            raise ValueError(f"unit: item {self.item!r} is priced {COST_UNITS[self.item]!r}, not {self.unit!r}")
        return self


class Provider(_Frozen):
    id: ProviderId
    name_en: Text
    name_zh: Text
    aliases: tuple[str, ...] = Field(min_length=1)  # lower-case English and Chinese names
    kind: Literal["cloud", "on_premise", "aggregator"]  # aggregator: resells other clouds' capacity
    catalog_currency: Currency | None  # currency the provider's price API returns; None: no catalog
    usd_per_catalog_unit: float | None = Field(gt=0)  # set when catalog prices were converted to USD
    notes: tuple[ProviderNote, ...] = ()
    costs: tuple[ProviderCost, ...] = ()


class FxRate(_Frozen):
    pair: Literal["USD/CNY"]
    cny_per_usd: float = Field(gt=0)
    usd_per_cny: float = Field(gt=0)
    as_of: str = Field(pattern=AS_OF)
    source: Text

    @model_validator(mode="after")
    def _inverse(self) -> FxRate:
        if abs(self.cny_per_usd * self.usd_per_cny - 1) > 1e-3:
            raise ValueError("usd_per_cny: not the inverse of cny_per_usd")
        return self


# --- pitfalls.yaml --------------------------------------------------------------------------------------
class PitfallTags(_Frozen):
    providers: tuple[ProviderId, ...] = ()  # the clouds it is specific to; empty: none in particular
    all_clouds: bool = False  # concerns every cloud (listed after a named cloud's own, e.g. `pitfalls alibaba`)
    gpus: tuple[str, ...] = ()
    pricing: tuple[Pricing, ...] = ()
    topics: tuple[Topic, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _general_or_specific(self) -> PitfallTags:
        if self.all_clouds and self.providers:
            raise ValueError("all_clouds: a pitfall of every cloud names no providers")
        return self


class Pitfall(_HasErratumIds):
    id: str = Field(pattern=SLUG)
    title_en: Text
    title_zh: Text
    body_en: Text
    body_zh: Text
    severity: Literal["high", "medium", "low"]
    tags: PitfallTags
    keywords: tuple[str, ...] = Field(min_length=1)
    source: Text
    checklist_en: Text
    checklist_zh: Text


# --- loaders --------------------------------------------------------------------------------------------
M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Any, path: Path, where: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field, msg = ".".join(str(part) for part in err["loc"]), err["msg"]
        if not field:  # a cross-field check: its message starts with "<field>: "
            field, _, msg = msg.removeprefix("Value error, ").partition(": ")
        raise ValueError(f"{path}: {where}: field '{field}': {msg}") from None


def _where(kind: str, number: int, data: Any) -> str:
    ident = data.get("id") if isinstance(data, dict) else None
    return f"{kind} {number}" + (f" (id={ident!r})" if ident else "")


def _read_yaml(path: Path) -> Any:
    import yaml  # lazy: only the loaders need it

    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 10x faster
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from None


def _entries(path: Path, data: Any, model: type[M]) -> list[M]:
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of entries")
    return [_validate(model, item, path, _where("entry", i, item)) for i, item in enumerate(data, start=1)]


def load_seed_figures(path: str | Path) -> list[SeedFigure]:
    """Read seed_figures.csv; empty cells become None (or () for erratum_ids)."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != SEED_FIGURE_COLUMNS:
            raise ValueError(f"{path}: header must be {','.join(SEED_FIGURE_COLUMNS)}")
        rows = []
        for line, row in enumerate(reader, start=2):
            if None in row or None in row.values():
                raise ValueError(f"{path}: row {line}: field '(row)': wrong number of cells")
            data = {key: (val if val.strip() else None) for key, val in row.items()}
            rows.append(_validate(SeedFigure, data, path, _where("row", line, data)))
    return rows


def load_errata(path: str | Path) -> list[Erratum]:
    path = Path(path)
    return _entries(path, _read_yaml(path), Erratum)


def load_providers(path: str | Path) -> tuple[list[Provider], FxRate]:
    """Read providers.yaml: a mapping with ``fx`` (one FxRate) and ``providers`` (a list)."""
    path = Path(path)
    data = _read_yaml(path)
    if not isinstance(data, dict) or set(data) != {"fx", "providers"}:
        raise ValueError(f"{path}: expected a mapping with exactly the keys 'fx' and 'providers'")
    fx = _validate(FxRate, data["fx"], path, "fx")
    return _entries(path, data["providers"], Provider), fx


def load_pitfalls(path: str | Path) -> list[Pitfall]:
    path = Path(path)
    return _entries(path, _read_yaml(path), Pitfall)
