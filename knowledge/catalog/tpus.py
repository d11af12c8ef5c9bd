"""Cloud TPU slices priced per chip: a catalog row `tpu-v5litepod-4` is one slice of 4 chips (its price is the
slice's), `tpu-v4-8` counts TensorCores (8 cores = 4 chips). The rule per TPU generation is reviewed data with its
source (`knowledge/data/tpu_slices.csv`); a TPU name no rule covers keeps its catalog count."""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from knowledge.facts.reference import Row, load_rows
from knowledge.paths import DATA_DIR

_SIZE = re.compile(r"-(\d+)$")


class TpuSlice(Row):
    prefix: str
    unit: Literal["cores", "chips"]
    cores_per_chip: int
    source: str


@cache
def tpu_slices() -> tuple[TpuSlice, ...]:
    return tuple(load_rows(TpuSlice, DATA_DIR / "tpu_slices.csv"))


def chips(name: str) -> int | None:
    """Chips in one slice named `name` (`tpu-v5p-8` -> 4, `tpu-v6e-16` -> 16), None when no rule applies."""
    low = name.strip().lower()
    rule = next((r for r in tpu_slices() if low.startswith(r.prefix)), None)
    size = _SIZE.search(low)
    if rule is None or size is None:
        return None
    count = int(size.group(1))
    return max(1, count // rule.cores_per_chip) if rule.unit == "cores" else count
