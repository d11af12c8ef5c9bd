"""Rules as data, and the small arithmetic they rest on.

`knowledge/data/rules.yaml` holds every rule: the seeds' decision trees, selection guides and cost rules, brought
up to date with the knowledge base. Each rule is validated by `Rule` on load. `evaluate(facts)` returns the rules
that fire, in file order, each explained in the question's language (a `Fired`, shaped like `RuleHit`).

Conditions (`when`) are a small declarative language over `FACTS` (keys are ANDed):

    {workload: training}                   equal (list fact: contains)
    {workload: [training, fine_tuning]}    one of
    {model_size_b: {gte: 30}}              gte | gt | lte | lt | eq | ne | in | not_in | exists
    {any: [{...}, {...}]}  {all: [...]}  {not: {...}}

The arithmetic helpers are pure and small: memory fit, minimum GPU count, reserved break-even utilisation,
spot expected cost, and a TCO breakdown. The facts of a question come from `knowledge.facts.question_facts`.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge.paths import DATA_DIR

RULES_FILE = DATA_DIR / "rules.yaml"
HOURS_PER_MONTH = 730.0
HOURS_PER_YEAR = 8760.0

Group = Literal["hardware", "memory", "interconnect", "priority", "cost", "spot", "spec"]

# Every fact a condition or an explanation may use. Handlers build them from the Query and the knowledge base.
FACTS: dict[str, str] = {
    # from the question
    "intent": "the parsed intent",
    "workload": "training | fine_tuning | inference | hpc | rendering | general",
    "model_size_b": "model size in billions of parameters",
    "large_model": "the question says large model / LLM / 大模型",
    "compute_intensive": "False when the workload is not compute-intensive (workload general, 'CPU only')",
    "fine_tune_method": "full | lora | qlora (lora unless the question says otherwise)",
    "quantization": "int8 | int4 when the question asks for quantised inference",
    "gpu_count": "GPUs asked for",
    "distributed": "distributed / multi-node / 分布式 training asked",
    "priority": "cost | performance | ecosystem | compliance",
    "pricing": "on_demand | spot | reserved_1y | reserved_3y",
    "providers": "provider ids asked for",
    "regions": "regions asked for",
    "data_in_china": "data must stay in mainland China (China regions, 数据本地化, 等保)",
    "duration_hours": "how long the GPUs are needed",
    "duration_text": "the duration, for people",
    "long_project": "a long project (>= 6 months, or said so)",
    "short_project": "a short experiment (<= 1 week, or said so)",
    "mixed_workload": "training and inference both asked",
    "storage_gb": "storage in GB",
    "egress_gb": "egress in GB",
    "cross_region": "traffic crosses regions",
    "months": "duration in months (730 h each)",
    "instance_types": "instance types asked for",
    "gpus": "GPU names asked for",
    "topic": "interruption | break_even | None (tco questions about one figure)",
    # derived by handlers from the knowledge base
    "required_gb": "memory the workload needs (memory rule)",
    "gpus_needed": "fewest GPUs any candidate needs for required_gb (and the count asked)",
    "largest_gpu": "the candidate with the most memory",
    "largest_gb": "its memory in GB",
    "fp64_families": "GPU families meeting the FP64 threshold (gpu_specs)",
    "rank_gpu": "the GPU the provider ranking is for",
    "rank_pricing": "the pricing model of the provider ranking",
    "kb_ranking": "providers ranked by the knowledge base's prices",
    "perf_ranking": "GPUs ranked by dense BF16/FP16 TFLOPS",
    "seed_ranking_text": "the seeds' provider ranking, for people",
    "ranking_diff": "where the seeds' ranking and the knowledge base differ",
    "compliance_providers": "Chinese providers with mainland regions",
    "currency_converted": "a figure was converted between currencies",
    "fx_rate_text": "the exchange rate used",
    "fx_source": "source of the exchange rate",
    "fx_as_of": "date of the exchange rate",
    "break_even_pct": "reserved rate / on-demand rate x 100",
    "reserved_rate_text": "the reserved rate, for people",
    "on_demand_rate_text": "the on-demand rate, for people",
    "break_even_subject": "instance type, region and term of the break-even",
    "rate_source": "source of the rates",
    "rate_as_of": "date of the rates",
    "reserved_saving_text": "what the data says reserving saves",
    "spot_saving_text": "what the data says spot saves",
    "seed_discount_used": "no reserved rate in the data: the seeds' discount was used",
    "seed_discount_subject": "what had no reserved rate",
    "seed_discount_pct": "the seeds' discount used",
    "egress_rate_text": "egress price per GB",
    "egress_cost_text": "egress cost",
    "egress_rate_status": "where the egress price comes from and whether it is verified",
    "storage_rate_text": "storage price per GB-month",
    "storage_cost_text": "storage cost",
    "storage_rate_status": "where the storage price comes from and whether it is verified",
    "spot_bucket": "newest interruption bucket (<5% ... >20%)",
    "spot_source": "its source",
    "spot_as_of": "its date",
    "spot_subject": "instance type and region of the bucket",
    "spot_bucket_older": "an older source's different bucket",
    "spot_older_source": "the older source",
    "spot_older_as_of": "its date",
    "interruptions_per_month": "expected interruptions per instance-month",
    "spot_list_saving_pct": "spot list discount vs on-demand",
    "spot_effective_saving_pct": "spot discount after interruptions and checkpoints",
    "spot_job_hours": "compute hours of the job the spot estimate is for",
    "spot_instances": "instances of the job the spot estimate is for",
    "erratum_ids": "ids of seed errata the question touches",
    "throughput_precision": "precision used for price per throughput (dense BF16 or FP16)",
}
_DERIVED_PARAMS = {"overhead_pct", "nvlink_ratio"}  # computed from a rule's params by `_context`
_OPS = {"gte", "gt", "lte", "lt", "eq", "ne", "in", "not_in", "exists"}
_LOGIC = {"any", "all", "not"}


class Then(BaseModel):
    """A rule's conclusion, as data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    families: tuple[str, ...] = ()  # candidate GPU families, preferred first
    exclude_families: tuple[str, ...] = ()
    device: Literal["cpu", "gpu"] | None = None
    require: tuple[Literal["nvlink", "high_bandwidth_network"], ...] = ()
    pricing: Literal["on_demand", "spot", "reserved_1y", "reserved_3y"] | None = None
    providers: tuple[str, ...] = ()  # restrict to these providers
    seed_ranking: tuple[str, ...] = ()  # the seeds' provider order, to compare with the knowledge base's
    rank_by: Literal["price", "throughput", "fp64_price"] | None = None
    note_topic: Literal["compliance", "ecosystem", "network", "storage", "support", "pricing", "hardware"] | None = None
    seed_savings_pct: tuple[float, float] | None = None
    params: dict[str, float] = Field(default_factory=dict)  # numeric assumptions used by the arithmetic


class Rule(BaseModel):
    """One rule: when the condition holds over the facts, the conclusion applies, and it explains itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z]+(\.[a-z0-9]+(-[a-z0-9]+)*)+$")
    group: Group
    when: dict[str, Any]
    then: Then
    explain_en: str = Field(min_length=1)
    explain_zh: str = Field(min_length=1)
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> Rule:
        _check_condition(self.when, self.id)
        known = set(FACTS) | set(self.then.params) | _DERIVED_PARAMS
        for template in (self.explain_en, self.explain_zh):
            for _, name, _, _ in string.Formatter().parse(template):
                if name and name not in known:
                    raise ValueError(f"rule {self.id}: unknown placeholder {{{name}}}")
        return self

    def matches(self, facts: dict[str, Any]) -> bool:
        return matches(self.when, facts)

    def explain(self, facts: dict[str, Any], lang: str = "en") -> str:
        template = self.explain_zh if lang == "zh" else self.explain_en
        return string.Formatter().vformat(template, (), _Context(_context(self, facts)))


@dataclass(frozen=True, slots=True)
class Fired:
    """A rule that fired: its id and explanation (like `RuleHit`), plus its conclusion and source."""

    id: str
    explain: str
    then: Then
    source: str
    group: str


def _check_condition(cond: Any, rule_id: str) -> None:
    if not isinstance(cond, dict):
        raise ValueError(f"rule {rule_id}: a condition must be a mapping, not {cond!r}")
    for key, value in cond.items():
        if key in ("any", "all"):
            if not isinstance(value, list) or not value:
                raise ValueError(f"rule {rule_id}: '{key}' needs a non-empty list of conditions")
            for sub in value:
                _check_condition(sub, rule_id)
        elif key == "not":
            _check_condition(value, rule_id)
        elif key not in FACTS:
            raise ValueError(f"rule {rule_id}: unknown fact '{key}' (see knowledge.facts.rules.FACTS)")
        elif isinstance(value, dict) and not set(value) <= _OPS:
            raise ValueError(f"rule {rule_id}: unknown operator in {value!r} (use {sorted(_OPS)})")


def matches(cond: dict[str, Any], facts: dict[str, Any]) -> bool:
    """True when every key of the condition holds over the facts."""
    for key, expected in cond.items():
        if key == "any":
            ok = any(matches(sub, facts) for sub in expected)
        elif key == "all":
            ok = all(matches(sub, facts) for sub in expected)
        elif key == "not":
            ok = not matches(expected, facts)
        else:
            ok = _test(facts.get(key), expected)
        if not ok:
            return False
    return True


def _present(value: Any) -> bool:
    return value is not None and value != [] and value != ()


def _test(value: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return all(_op(op, value, arg) for op, arg in expected.items())
    if isinstance(expected, list):
        if isinstance(value, list | tuple | set):
            return any(v in expected for v in value)
        return value in expected
    if isinstance(value, list | tuple | set):
        return expected in value
    if isinstance(expected, bool) or isinstance(value, bool):
        return value is expected
    return value is not None and value == expected


def _op(op: str, value: Any, arg: Any) -> bool:
    if op == "exists":
        return _present(value) == bool(arg)
    if op == "in":
        return value in arg
    if op == "not_in":
        return value not in arg
    if op == "ne":
        return value != arg
    if value is None or isinstance(value, bool):
        return False
    return {"gte": value >= arg, "gt": value > arg, "lte": value <= arg, "lt": value < arg, "eq": value == arg}[op]


class _Missing:
    def __format__(self, spec: str) -> str:
        return "?"


class _Context(dict):
    def __missing__(self, key: str) -> _Missing:
        return _Missing()


def _context(rule: Rule, facts: dict[str, Any]) -> dict[str, Any]:
    params = dict(rule.then.params)
    context: dict[str, Any] = {**params, **{k: v for k, v in facts.items() if v is not None}}
    if "overhead" in params:
        context["overhead_pct"] = params["overhead"] * 100
    if params.get("pcie4_gbps"):
        context["nvlink_ratio"] = params["nvlink3_gbps"] / params["pcie4_gbps"]
    for key, value in list(context.items()):
        if isinstance(value, list | tuple):
            context[key] = ", ".join(str(v) for v in value)
    return context


@cache
def load_rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    """Every rule of rules.yaml, validated; raises ValueError naming the rule and field on a bad entry."""
    import yaml
    from pydantic import ValidationError

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of rules")
    rules = []
    for number, entry in enumerate(data, start=1):
        try:
            rules.append(Rule.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = entry.get("id", f"entry {number}") if isinstance(entry, dict) else f"entry {number}"
            field = ".".join(str(p) for p in err["loc"]) or "(rule)"
            raise ValueError(f"{path.name}: {where}: field '{field}': {err['msg']}") from None
    ids = [r.id for r in rules]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path.name}: duplicate rule ids")
    return tuple(rules)


def rule(rule_id: str) -> Rule:
    """One rule by id (KeyError when unknown)."""
    for item in load_rules():
        if item.id == rule_id:
            return item
    raise KeyError(rule_id)


def evaluate(facts: dict[str, Any], lang: str = "en", groups: tuple[str, ...] = ()) -> list[Fired]:
    """The rules that fire over `facts`, in file order, explained in `lang` (en/zh)."""
    return [
        Fired(r.id, r.explain(facts, lang), r.then, r.source, r.group)
        for r in load_rules()
        if (not groups or r.group in groups) and r.matches(facts)
    ]


def first(fired: list[Fired], group: str, attr: str = "") -> Fired | None:
    """The first fired rule of a group (that carries `then.<attr>`, if given)."""
    for item in fired:
        if item.group == group and (not attr or getattr(item.then, attr, None) or item.then.params.get(attr)):
            return item
    return None


# --- arithmetic -------------------------------------------------------------------------------------------------


def memory_required_gb(model_size_b: float, bytes_per_param: float, overhead: float) -> float:
    """GB of GPU memory for a model: parameters x bytes per parameter x (1 + overhead).

    1 billion parameters at 1 byte each is 1 GB, so 70 B at 2 bytes (FP16) with 20% KV cache is 168 GB.
    """
    return model_size_b * bytes_per_param * (1 + overhead)


def gpus_needed(required_gb: float, gpu_memory_gb: float) -> int:
    """Fewest GPUs whose memory adds up to `required_gb` (the work is assumed sharded evenly)."""
    if gpu_memory_gb <= 0:
        raise ValueError("gpu_memory_gb must be positive")
    return max(1, math.ceil(required_gb / gpu_memory_gb - 1e-9))


def break_even_utilisation(reserved_rate: float, on_demand_rate: float) -> float:
    """Share of the term a reservation must be used to beat on-demand: reserved / on-demand.

    A reservation is paid for every hour of its term; on-demand only for hours used. At utilisation u the
    on-demand bill is u x on_demand_rate per term-hour, the reserved bill reserved_rate, so they break even at
    u = reserved_rate / on_demand_rate (1.0 or more: the reservation never pays off).
    """
    if on_demand_rate <= 0:
        raise ValueError("on_demand_rate must be positive")
    return reserved_rate / on_demand_rate


BUCKET_PARAMS = {
    "<5%": "bucket_lt5",
    "5-10%": "bucket_5_10",
    "10-15%": "bucket_10_15",
    "15-20%": "bucket_15_20",
    ">20%": "bucket_gt20",
}


def interruptions_per_month(bucket: str, params: dict[str, float]) -> float:
    """Expected interruptions per instance-month for a Spot Advisor bucket (its midpoint, from the rule's params)."""
    return params[BUCKET_PARAMS[bucket]]


@dataclass(frozen=True, slots=True)
class SpotEstimate:
    """Expected cost of running a job on spot, with interruptions and checkpoints priced in."""

    hours: float  # useful compute hours the job needs
    instances: int
    interruptions: float  # expected, over the job, all instances
    lost_hours: float  # re-done work + restarts, wall-clock
    checkpoint_hours: float  # time spent writing checkpoints
    wall_hours: float  # hours + lost + checkpoint
    spot_cost: float  # spot rate x instances x wall hours
    on_demand_cost: float  # on-demand rate x instances x hours
    list_saving: float  # 1 - spot / on-demand rate
    effective_saving: float  # 1 - spot_cost / on_demand_cost


def spot_expected_cost(
    on_demand_rate: float,
    spot_rate: float,
    hours: float,
    interruptions_per_instance_month: float,
    *,
    instances: int = 1,
    checkpoint_interval_hours: float = 1.0,
    checkpoint_minutes: float = 2.0,
    restart_minutes: float = 10.0,
) -> SpotEstimate:
    """Spot cost of a job of `hours` compute hours, at an interruption rate, with periodic checkpoints.

    - checkpoints: one every `checkpoint_interval_hours`, each taking `checkpoint_minutes` (overhead share
      checkpoint_minutes / 60 / interval);
    - interruptions: rate x instances x (wall hours / 730); any instance's interruption stalls the whole job;
    - each interruption loses half an interval of work on average plus `restart_minutes`, on every instance.
    Rates are per instance-hour.
    """
    checkpoint_hours = hours * (checkpoint_minutes / 60.0) / checkpoint_interval_hours
    per_interruption = checkpoint_interval_hours / 2 + restart_minutes / 60.0
    base = hours + checkpoint_hours
    # interruptions happen during the wall-clock time, which itself grows with them: solve w = base + k w
    k = interruptions_per_instance_month * instances / HOURS_PER_MONTH * per_interruption
    wall = base / (1 - k) if k < 1 else math.inf
    interruptions = interruptions_per_instance_month * instances * wall / HOURS_PER_MONTH
    lost = interruptions * per_interruption
    spot_cost = spot_rate * instances * wall
    on_demand_cost = on_demand_rate * instances * hours
    return SpotEstimate(
        hours=hours,
        instances=instances,
        interruptions=interruptions,
        lost_hours=lost,
        checkpoint_hours=checkpoint_hours,
        wall_hours=wall,
        spot_cost=spot_cost,
        on_demand_cost=on_demand_cost,
        list_saving=1 - spot_rate / on_demand_rate,
        effective_saving=1 - spot_cost / on_demand_cost,
    )


@dataclass(frozen=True, slots=True)
class TcoBreakdown:
    compute: float
    storage: float
    egress: float

    @property
    def total(self) -> float:
        return self.compute + self.storage + self.egress


def tco(
    rate_per_hour: float,
    billed_hours: float,
    *,
    instances: int = 1,
    storage_gb: float = 0.0,
    storage_per_gb_month: float = 0.0,
    months: float = 0.0,
    egress_gb: float = 0.0,
    egress_per_gb: float = 0.0,
) -> TcoBreakdown:
    """Compute (rate x instances x billed hours) + storage (GB x GB-month rate x months) + egress (GB x rate).

    All rates in one currency; convert before calling.
    """
    return TcoBreakdown(
        compute=rate_per_hour * instances * billed_hours,
        storage=storage_gb * storage_per_gb_month * months,
        egress=egress_gb * egress_per_gb,
    )
