"""Reviewed reference tables under `knowledge/data/`, each row validated by a pydantic model on load.

- `gpus.csv`: GPU and accelerator families (the knowledge base's names), their aliases and datasheet models.
- `accelerators.csv`: how a catalog's accelerator name (per provider, optionally per instance-type pattern) maps
  to a family, a datasheet model and memory; `full_memory_gb` marks cards sold in memory slices (vGPU).
- `host_vms.csv`: which host VM carries an attached accelerator (GCP prices GPUs without their host).
- `catalog_quirks.csv`: known non-prices in catalogs (placeholders, data errors), skipped with a reason, or known
  errors corrected at build time (`action`: `swap_prices` where a catalog swapped on-demand and spot).
- `upstream_clouds.csv`: the clouds an aggregator's instance names start with (`lambdalabs_...` is Lambda).
"""

from __future__ import annotations

import csv
import fnmatch
from functools import cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from knowledge.paths import DATA_DIR


class Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


T = TypeVar("T", bound=Row)


class GpuFamily(Row):
    name: str
    vendor: str
    kind: str
    spec_models: list[str] = []
    aliases: list[str] = []
    note: str = ""

    @field_validator("spec_models", "aliases", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return [part.strip() for part in value.split("|") if part.strip()] if isinstance(value, str) else value


class AcceleratorMap(Row):
    provider: str
    accelerator: str
    instance_pattern: str
    gpu: str
    gpu_model: str | None = None
    memory_gb: float | None = None
    full_memory_gb: float | None = None
    source: str = ""

    def matches(self, provider: str, accelerator: str, instance_type: str) -> bool:
        return (
            self.provider in ("*", provider)
            and fnmatch.fnmatchcase(accelerator.lower(), self.accelerator.lower())
            and fnmatch.fnmatchcase(instance_type.lower(), self.instance_pattern.lower())
        )


class HostRule(Row):
    provider: str
    accelerator: str
    accelerator_count: str
    host_instance_type: str
    source: str


class CatalogQuirk(Row):
    provider: str
    instance_type: str = ""
    accelerator: str = ""
    price: float | None = None  # None: any price (a correction such as swap_prices)
    reason: str
    source: str
    fix: str | None = (
        None  # empty: the figure is skipped; else a correction (knowledge.catalog.quirks, knowledge.catalog.offers)
    )

    def matches(self, provider: str, instance_type: str, accelerator: str, price: float | None) -> bool:
        return (
            price is not None
            and self.provider == provider
            and (self.price is None or abs(price - self.price) < 1e-9)
            and (not self.instance_type or self.instance_type == instance_type)
            and (not self.accelerator or fnmatch.fnmatchcase(accelerator, self.accelerator))
        )


def load_rows(model: type[T], path: Path) -> list[T]:
    """Read a reviewed CSV; empty cells become None; errors name the file, line and field."""
    rows: list[T] = []
    with path.open(encoding="utf-8", newline="") as handle:
        for number, record in enumerate(csv.DictReader(handle), start=2):
            cleaned = {key: (value if value != "" else None) for key, value in record.items()}
            cleaned = {key: value for key, value in cleaned.items() if value is not None}
            try:
                rows.append(model.model_validate(cleaned))
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(part) for part in first["loc"])
                raise ValueError(f"{path.name}, line {number}, field {field}: {first['msg']}") from None
    return rows


@cache
def gpu_families() -> tuple[GpuFamily, ...]:
    return tuple(load_rows(GpuFamily, DATA_DIR / "gpus.csv"))


@cache
def accelerator_maps() -> tuple[AcceleratorMap, ...]:
    return tuple(load_rows(AcceleratorMap, DATA_DIR / "accelerators.csv"))


@cache
def _maps_named(provider: str, accelerator: str) -> tuple[AcceleratorMap, ...]:
    """The mappings of `provider` whose accelerator pattern matches `accelerator`, in the file's order."""
    low = accelerator.lower()
    return tuple(
        m
        for m in accelerator_maps()
        if m.provider in ("*", provider) and fnmatch.fnmatchcase(low, m.accelerator.lower())
    )


def accelerator_map(provider: str, accelerator: str, instance_type: str) -> AcceleratorMap | None:
    """The first mapping in `accelerators.csv` that `matches` (provider, accelerator, instance type), or None.

    The same answer as scanning every mapping with `AcceleratorMap.matches`, with the (provider, accelerator) part
    memoised: a catalog has a few hundred accelerator names but up to 100,000 instance types."""
    candidates = _maps_named(provider, accelerator)
    if not candidates:
        return None
    low = instance_type.lower()
    return next(
        (m for m in candidates if m.instance_pattern == "*" or fnmatch.fnmatchcase(low, m.instance_pattern.lower())),
        None,
    )


@cache
def host_rules() -> tuple[HostRule, ...]:
    return tuple(load_rows(HostRule, DATA_DIR / "host_vms.csv"))


@cache
def catalog_quirks() -> tuple[CatalogQuirk, ...]:
    return tuple(load_rows(CatalogQuirk, DATA_DIR / "catalog_quirks.csv"))


class UpstreamCloud(Row):
    aggregator: str
    prefix: str
    name: str


@cache
def upstream_clouds() -> tuple[UpstreamCloud, ...]:
    return tuple(load_rows(UpstreamCloud, DATA_DIR / "upstream_clouds.csv"))


@cache
def spec_models() -> dict[str, float | None]:
    """datasheet model (gpu_specs.csv) -> memory per GPU in GB (None where the sheet leaves it blank)."""
    with (DATA_DIR / "gpu_specs.csv").open(encoding="utf-8", newline="") as handle:
        return {
            row["model"]: float(row["memory_gb"]) if row["memory_gb"].strip() else None
            for row in csv.DictReader(handle)
        }
