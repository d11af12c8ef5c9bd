"""The contract between layers: a parsed `Query` goes in, an `Answer` comes out.

Edges (CLI, Slack) build a `Query` with `handlers.parse`, handlers turn it into an `Answer`, and the edges render
that `Answer`. Everything here is a frozen pydantic model, so a handler can never mutate what it was given, and
`Answer.model_dump()` is the JSON contract of `gpubot ask --json` (see README, "JSON contract").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Intent = Literal[
    "cheapest",
    "price",
    "compare",
    "spec",
    "recommend",
    "tco",
    "pitfalls",
    "checklist",
    "digest",
    "history",
    "help",
    "unknown",
    "work",
    "train_cost",
    "rent_or_api",
]
Pricing = Literal["on_demand", "spot", "reserved_1y", "reserved_3y"]
Workload = Literal["training", "fine_tuning", "inference", "hpc", "rendering", "general"]
Priority = Literal["cost", "performance", "ecosystem", "compliance"]
Language = Literal["en", "zh"]
Currency = Literal["USD", "CNY"]
BenchWorkload = Literal["chat-256-128", "rag-1024-256", "long-4096-512"]
BenchStep = Literal["max_throughput", "synchronous", "single_stream"]

PRICINGS: tuple[Pricing, ...] = ("on_demand", "spot", "reserved_1y", "reserved_3y")


class Model(BaseModel):
    """Base of every contract model: immutable, strict about unknown fields, cheap to import."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class NameIssue(Model):
    """A name in the question that could not be resolved to exactly one thing in the knowledge base."""

    kind: Literal["gpu", "provider", "region", "instance_type", "model"]
    text: str
    status: Literal["unknown", "ambiguous"]
    candidates: list[str] = Field(default_factory=list)


class NumberIssue(Model):
    """A number in the question too large (or too small) to use: said back, never replaced by a default."""

    kind: Literal["duration", "count", "memory", "budget"]
    text: str


class Budget(Model):
    """A spending cap said in the question: per GPU-hour, per instance-hour, or a total (over `hours`, if said)."""

    amount: float
    currency: Currency = "USD"
    per: Literal["gpu_hour", "instance_hour", "total"] = "gpu_hour"
    hours: float | None = None  # the period of a total budget ("$5,000 for the month": 730)
    text: str = ""  # the words it was read from

    def usd(self, fx: Mapping[str, Any]) -> float:
        """The cap in USD, at the knowledge base's one rate (`kb.fx()`, with its source and date): the only
        conversion of a budget."""
        return self.amount * (float(fx["usd_per_cny"]) if self.currency == "CNY" else 1.0)


class Usage(Model):
    """How much a machine is used ("at 50% utilisation", "12 hours a day", "weekdays 9-5", "使用率50%").

    `utilisation` is the share of all hours it runs, in (0, 1]; `basis` how it was said; `duration_hours` how long
    it is needed ("for a year", the Query's `duration_hours`). A stated usage is never replaced by 100 %."""

    utilisation: float
    basis: Literal["utilisation", "per_day", "per_week", "per_month", "schedule", "always"] = "utilisation"
    text: str = ""  # the words it was read from
    duration_hours: float | None = None

    @property
    def hours_per_month(self) -> float:
        return self.utilisation * 730.0


class Query(Model):
    """One question, parsed once. Handlers never see raw text."""

    text: str = ""
    intent: Intent = "unknown"
    gpus: list[str] = Field(default_factory=list)
    gpu_count: float | None = None
    min_gpu_memory_gb: float | None = None
    pricing: Pricing | None = None
    providers: list[str] = Field(default_factory=list)
    regions: list[str] = Field(default_factory=list)
    instance_types: list[str] = Field(default_factory=list)
    workload: Workload | None = None
    model_size_b: float | None = None
    priority: Priority | None = None
    duration_hours: float | None = None
    storage_gb: float | None = None
    egress_gb: float | None = None
    currency: Currency | None = None
    top_n: int | None = None
    language: Language = "en"
    topic: str | None = None
    issues: list[NameIssue] = Field(default_factory=list)
    out_of_range: list[NumberIssue] = Field(default_factory=list)  # "for 3000 years", "5000x H100": refused
    gpu_variants: list[str] = Field(default_factory=list)  # form factors named: "H100 PCIe" (issue 14)
    budget: Budget | None = None
    machines: int | None = None  # "2 nodes of 8 H100": machines, with `gpu_count` GPUs each
    # what the words say beyond names and numbers (handlers/parse/flags.py): handlers test flags, never the text
    # derived from `text`, so not dumped (a stored question gets them again from its text when rebuilt)
    flags: list[str] = Field(default_factory=list, exclude=True)
    precisions: list[str] = Field(default_factory=list, exclude=True)  # "FP16 TFLOPS of H100": precisions asked about
    train_tokens: float | None = Field(default=None, exclude=True)  # "train on 2T tokens"
    any_gpu: bool = False  # "cheapest GPU in asia": any GPU, ranked across all of them (no GPU named)
    usage: Usage | None = None  # "at 50% utilisation", "12 hours a day" (handlers/parse/usage.py)
    # what the question rules out ("except gcp", "not spot", "outside China", "不要竞价"): handlers/parse/polarity.py
    exclude_providers: list[str] = Field(default_factory=list)
    exclude_pricing: list[Pricing] = Field(default_factory=list)
    exclude_regions: list[str] = Field(default_factory=list)
    exclude_gpus: list[str] = Field(default_factory=list)
    exclude_region_names: list[str] = Field(default_factory=list)  # the excluded places as said ("China")
    region_names: list[str] = Field(default_factory=list)  # the places asked for as said ("华东", "Osaka")
    unapplied: list[str] = Field(default_factory=list)  # constraints said that gpubot cannot apply, as said
    # the "work" intent ($ per 1M tokens): benchmarked model, benchmark workload and step (handlers/parse/work.py)
    model: str | None = None
    bench_workload: BenchWorkload | None = None
    bench_step: BenchStep | None = None
    # issue 27: the MLPerf Training benchmark asked about (train_cost), the usage stated (rent_or_api)
    train_benchmark: str | None = None
    mlperf_model: str | None = None  # a model only MLPerf Inference measured (work): "llama2-70b-99"
    tokens_per_day: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _words_of_the_text(cls, data: Any) -> Any:
        """A Query built without the parser (a test, a button's stored question) gets the flags its text raises, by
        the parser's own reader (`handlers/parse/flags.py`); the parser passes them itself."""
        if isinstance(data, dict) and data.get("text") and "flags" not in data:
            from handlers.parse.flags import find_flags

            flags, precisions, tokens = find_flags(str(data["text"])[:2000].lower())
            data = {"precisions": precisions, "train_tokens": tokens, **data, "flags": flags}
        return data


class Offer(Model):
    """One way to rent GPUs: an instance type in a region under one pricing model.

    `price_per_hour` is for the whole instance, `price_per_gpu_hour` for one whole GPU (fractional and vGPU
    offers are scaled up to a whole GPU), both in `currency`, the currency the vendor quoted. The `_usd` twins
    carry the same figure in USD and are what rankings compare.
    """

    provider: str
    instance_type: str
    gpu: str
    gpu_model: str | None = None
    gpu_memory_gb: float | None = None
    gpu_count: float
    region: str
    zone: str | None = None
    pricing: Pricing
    price_per_hour: float
    price_per_gpu_hour: float
    currency: str
    price_per_hour_usd: float
    price_per_gpu_hour_usd: float
    source: str
    as_of: str
    vgpu: bool = False
    kind: Literal["catalog", "pricing", "article"] = "catalog"
    status: str = "ok"
    note: str | None = None
    suspect: dict[str, Any] | None = None  # why this price looks wrong (knowledge.catalog.anomalies): kept, marked
    sizes: list[str] = Field(default_factory=list)  # sizes merged into this line (handlers.ranking.collapse)
    size_label: str | None = None  # "n3-H100 x1/x2/x4/x8": how a merged line names its sizes
    term: str | None = None  # a reserved offer's term key (`yrTerm1Convertible.noUpfront`): handlers.terms words it
    gpu_variant: str | None = None  # which one of the family: "H100 SXM 80GB" (knowledge.catalog.identity)
    via: str | None = None  # an aggregator's offer: the cloud it runs on ("Lambda")
    as_of_known: bool = True  # False: `as_of` is only the day the catalog was bundled (upstream date unknown)
    gpu_vendor: str | None = None  # NVIDIA, AMD, Intel, ... (None: the accelerator name was not recognised)
    # gpu, tpu, accelerator, fpga (the offers table's `gpu_kind`; None: a GPU): a TPU slice is priced per chip and
    # labelled per chip-hour (handlers.display)
    gpu_kind: str | None = None
    other_regions: int = 0  # a short answer's one line per instance type: how many more regions offer it
    # Whether it can be ordered at this pricing model (knowledge.catalog.availability), where it is
    # (knowledge.catalog.zones), and
    # what a second source says of its price (knowledge.catalog.crosscheck).
    availability: Literal["orderable", "spot_only", "reservation_only", "preview", "unknown"] = "orderable"
    availability_reason: str | None = None
    availability_source: str | None = None
    zone_kind: Literal["availability_zone", "local_zone", "wavelength_zone"] | None = None
    zone_label: str | None = None
    other_prices: list[dict[str, Any]] = Field(default_factory=list)
    price_trust_reason: str | None = None
    # When a live source read the price (ISO UTC), the figure's freshness tier (knowledge.catalog.freshness,
    # computed from fetched_at / as_of when not given) and the stock a source reported (issue 28).
    fetched_at: str | None = None
    freshness: Literal["live", "fresh", "stale", "bundled"] | None = None
    stock: Literal["in_stock", "low", "out_of_stock"] | None = None
    stock_read_at: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _with_freshness(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("freshness") is None and "as_of" in data:
            from knowledge.catalog.freshness import tier

            data = {**data, "freshness": tier(data.get("fetched_at"), data["as_of"], data.get("as_of_known", True))}
        return data

    @field_validator("availability", mode="before")
    @classmethod
    def _orderable_by_default(cls, value: Any) -> Any:
        return value or "orderable"

    @field_validator("suspect", mode="before")
    @classmethod
    def _suspect_from_json(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) and value else value or None

    @field_validator("other_prices", mode="before")
    @classmethod
    def _prices_from_json(cls, value: Any) -> Any:
        if value is None or value == "":
            return []
        return json.loads(value) if isinstance(value, str) else value


class Source(Model):
    """Where figures in an answer came from, and how old they are."""

    source: str
    as_of: str
    as_of_known: bool = True


class RuleHit(Model):
    """A rule that fired while answering, with its explanation in the question's language."""

    id: str
    explain: str


class Recommendation(Model):
    gpu: str
    gpu_memory_gb: float | None = None
    gpu_count: float | None = None
    offer: Offer | None = None
    reason: str


class Pitfall(Model):
    id: str
    title: str
    body: str
    severity: str
    tags: dict[str, list[str]] = Field(default_factory=dict)
    all_clouds: bool = False  # concerns every cloud, not one named in `tags["providers"]`
    source: str


class Tco(Model):
    hours: float
    pricing: Pricing
    compute: float
    storage: float
    egress: float
    total: float
    currency: str
    assumptions: list[str] = Field(default_factory=list)


class Answer(Model):
    """What a handler returns; rendered to text, Block Kit or JSON by the edges.

    `title` is the one-line headline, `offers` the ranked offers, `context` dated figures shown beside them
    (seed-article prices), `lines` the reasoning, `notes` caveats, `suggestions` did-you-mean choices.
    """

    query: Query
    title: str
    offers: list[Offer] = Field(default_factory=list)
    context: list[Offer] = Field(default_factory=list)
    lines: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    more: int = 0
    recommendations: list[Recommendation] = Field(default_factory=list)
    rules: list[RuleHit] = Field(default_factory=list)
    specs: list[dict[str, Any]] = Field(default_factory=list)
    tco: Tco | None = None
    tco_options: list[Tco] = Field(default_factory=list)
    pitfalls: list[Pitfall] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
