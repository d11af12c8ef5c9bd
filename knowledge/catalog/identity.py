"""One canonical identity for every accelerator spelling in every catalog.

A catalog names its accelerators its own way (`H100-80G-SXM5`, `RTXA6000`, `RTX6000-Ada`, `GAUDI2`). `identify`
turns one catalog row into an `Identity`: the knowledge base's family (`H100`, from `gpus.csv`), the form factor
(SXM / PCIe / NVL), the memory per GPU, the vendor and, where exactly one fits, the datasheet model
(`gpu_specs.csv`). The ladder, first answer wins:

1. a reviewed mapping in `accelerators.csv` (per provider and instance-type pattern), as before;
2. the name itself: memory (`80G`, `80GB`) and form words (`SXM5`, `PCIe`, `NVL`) are peeled off and what is left
   must equal a family name or alias (compared without case, separators and vendor words). There is no fuzzy
   step: `RTX6000` (Turing, 24 GB) is its own family and never `RTX 6000 Ada`;
3. otherwise the name is **not recognised**: it is kept as its own family and reported, never mapped to a model.

Memory comes from the name, else from `GpuInfo`, read every way catalogs write it (MiB or GB, per GPU or per
instance, `TotalGpuMemoryInMiB` meaning one GPU or all) and checked against the family's datasheet sizes; the
reading that matches a datasheet size wins, and a `GpuInfo` that matches none is reported as a conflict (the
datasheet is preferred where the family comes in one size).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

from knowledge.facts.reference import AcceleratorMap, accelerator_maps, gpu_families, spec_models

__all__ = ["Identity", "identify", "parse_name", "split_words", "variant_label"]

_WORDS = re.compile(r"[\s\-_/]+")
_MEMORY_WORD = re.compile(r"^(\d+(?:\.\d+)?)(gb|g|gib)$")
_FORMS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL", "oam": "OAM"}
_FORM_WORD = re.compile(r"^(sxm|pcie|nvl|oam)\d?$")
_BRIDGE_WORDS = frozenset({"nvlink", "hgx"})  # an NVLink bridge or HGX board: not a form factor of its own
_NOISE = frozenset(
    {
        "nvidia",
        "tesla",
        "geforce",
        "quadro",
        "amd",
        "intel",
        "habana",
        "radeon",
        "instinct",
        "gpu",
        "hbm2",
        "hbm2e",
        "hbm3",
        "hbm3e",
        "generation",
    }
)
_INSTANCE_FORM = re.compile(r"(?<![a-z])(sxm\d?|pcie|nvl)(?=$|[^a-z]|x\d)", re.IGNORECASE)
_INSTANCE_MEMORY = re.compile(r"(?<![0-9])(\d{2,3})\s?G(?:B)?(?![a-z0-9])", re.IGNORECASE)  # "2xV100_16GB"
_MIB = re.compile(r"""['"]SizeInMiB['"]\s*:\s*(\d+(?:\.\d+)?)""")
_TOTAL = re.compile(r"""['"]TotalGpuMemoryInMiB['"]\s*:\s*(\d+(?:\.\d+)?)""")
_PLAUSIBLE = (1.0, 1024.0)  # GB per GPU a reading must fall in (16 "MiB" is 16 GB, not 0.016)
_TOLERANCE = 0.03  # a GpuInfo reading within 3 % of a datasheet size is that size (141 GB vs 144384 MiB)


@dataclass(frozen=True, slots=True)
class Identity:
    """What one catalog accelerator is. `family` is the raw name when it was not recognised."""

    family: str
    vendor: str | None
    kind: str
    form_factor: str | None
    memory_gb: float | None
    model: str | None
    recognised: bool
    how: str  # "mapping", "name" or "unrecognised"
    notes: tuple[str, ...] = ()

    @property
    def variant(self) -> str:
        return variant_label(self.family, self.form_factor, self.memory_gb)


def variant_label(family: str, form: str | None, memory_gb: float | None) -> str:
    """ "H100 SXM 80GB", "A100 40GB" (form unknown), "L40S 48GB"."""
    return " ".join(p for p in (family, form, f"{memory_gb:g}GB" if memory_gb else None) if p)


def split_words(raw: str) -> list[str]:
    return [w for w in _WORDS.split(unicodedata.normalize("NFKC", raw).casefold().strip()) if w]


def _key(words: list[str]) -> str:
    kept = [w for w in words if w not in _NOISE]
    return "".join(kept or words)


def parse_name(raw: str) -> tuple[str, str | None, float | None]:
    """(comparison key of the family part, form factor, memory GB) of an accelerator name.

    >>> parse_name("H100-80G-PCIe-NVLink")
    ('h100', 'PCIe', 80.0)
    >>> parse_name("RTX PRO 6000 96GB")
    ('rtxpro6000', None, 96.0)
    """
    form: str | None = None
    memory: float | None = None
    kept: list[str] = []
    words = split_words(raw)
    for i, word in enumerate(words):
        if kept and (match := _FORM_WORD.match(word)):
            form = form or _FORMS[match.group(1)]
            continue
        if kept and word in _BRIDGE_WORDS:
            continue
        if kept and (match := _MEMORY_WORD.match(word)):
            memory = memory or float(match.group(1))
            continue
        if kept and word.replace(".", "", 1).isdigit() and i + 1 < len(words) and words[i + 1] in ("gb", "g"):
            memory = memory or float(word)
            continue
        if kept and memory is not None and word in ("gb", "g"):
            continue
        kept.append(word)
    return _key(kept), form, memory


@dataclass(frozen=True, slots=True)
class _Family:
    name: str
    vendor: str
    kind: str
    models: tuple[tuple[str, str | None, float | None], ...]  # (datasheet model, form, memory)

    @property
    def sizes(self) -> set[float]:
        return {m for _, _, m in self.models if m}


@cache
def _families() -> tuple[dict[str, _Family], dict[str, str]]:
    """(family name -> family, comparison key -> family name) from gpus.csv, gpu_specs.csv, accelerators.csv."""
    specs = spec_models()
    extra_sizes: dict[str, set[float]] = {}
    for mapping in accelerator_maps():
        if mapping.memory_gb and not mapping.full_memory_gb:
            extra_sizes.setdefault(mapping.gpu, set()).add(mapping.memory_gb)
    families: dict[str, _Family] = {}
    keys: dict[str, str] = {}
    for fam in gpu_families():
        models = []
        for model in fam.spec_models:
            memory = specs.get(model)
            _, form, named_memory = parse_name(model)
            models.append((model, form, memory or named_memory))
        for size in sorted(extra_sizes.get(fam.name, ())):
            if size not in {m for _, _, m in models}:
                models.append(("", None, size))
        families[fam.name] = _Family(fam.name, fam.vendor, fam.kind, tuple(models))
        for alias in (fam.name, *fam.aliases):
            key, form, memory = parse_name(alias)
            if form is None and memory is None:
                keys.setdefault(key, fam.name)
            keys.setdefault(_key(split_words(alias)), fam.name)
    return families, keys


def _memory_readings(gpu_info: str, count: float) -> list[tuple[float, str]]:
    """Every per-GPU memory (GB) a GpuInfo can mean, most usual reading first, with how it was read."""
    readings: list[tuple[float, str]] = []
    size = float(m.group(1)) if (m := _MIB.search(gpu_info)) else None
    total = float(m.group(1)) if (m := _TOTAL.search(gpu_info)) else None
    n = count if count >= 1 else 1.0
    if size is not None:
        readings += [
            (size / 1024, "SizeInMiB per GPU"),
            (size / 1024 / n, "SizeInMiB per instance"),
            (size, "SizeInMiB holding GB"),
        ]
    if total is not None:
        readings += [
            (total / 1024 / n, "TotalGpuMemoryInMiB per instance"),
            (total / 1024, "TotalGpuMemoryInMiB per GPU"),
            (total / n, "TotalGpuMemoryInMiB holding GB per instance"),
        ]
    return [(round(gb, 1), how) for gb, how in readings if _PLAUSIBLE[0] <= gb <= _PLAUSIBLE[1]]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _TOLERANCE * b


def _memory(
    fam: _Family | None, named: float | None, gpu_info: str, count: float, raw: str, hint: float | None = None
) -> tuple[float | None, tuple[str, ...]]:
    readings = _memory_readings(gpu_info, count)
    sizes = fam.sizes if fam else set()
    if named is not None:
        if readings and not any(_close(gb, named) for gb, _ in readings):
            return named, (
                f"{raw}: GpuInfo memory ({readings[0][0]:g} GB) disagrees with the name's {named:g} GB; using the name",
            )
        return named, ()
    if not readings:
        return (hint if hint in sizes else next(iter(sizes)) if len(sizes) == 1 else None), ()
    if not sizes:  # no datasheet: the reading the instance name agrees with, else the usual one
        return next((gb for gb, _ in readings if hint and _close(gb, hint)), readings[0][0]), ()
    usual = "SizeInMiB per GPU" if _MIB.search(gpu_info) else "TotalGpuMemoryInMiB per instance"
    matched: dict[float, str] = {}  # datasheet size -> the first reading that gives it
    for gb, how in readings:
        for size in sizes:
            if _close(gb, size):
                matched.setdefault(size, how)
    if len(matched) > 1:  # the instance name's size decides ("2xV100_16GB": 32768 MiB is two 16 GB cards),
        usual_fit = [size for size, how in matched.items() if how == usual]  # else the usual reading
        pick = hint if hint in matched else usual_fit[0] if usual_fit else None
        matched = {pick: matched[pick]} if pick is not None else matched
    if len(matched) == 1:
        ((size, how),) = matched.items()
        note = () if how == usual else (f"{raw}: GpuInfo memory read as {how} ({size:g} GB per GPU, as the datasheet)",)
        return size, note
    if matched:
        return None, (
            f"{raw}: GpuInfo memory fits {' or '.join(f'{s:g}' for s in sorted(matched))} GB per GPU "
            "depending on its unit; memory left unknown",
        )
    if len(sizes) == 1:
        (size,) = sizes
        return size, (
            f"{raw}: GpuInfo memory ({readings[0][0]:g} GB) matches no datasheet size; using the "
            f"datasheet's {size:g} GB",
        )
    return None, (
        f"{raw}: GpuInfo memory ({readings[0][0]:g} GB) matches none of the datasheet sizes "
        f"({', '.join(f'{s:g}' for s in sorted(sizes))} GB); memory left unknown",
    )


def _model(fam: _Family, form: str | None, memory: float | None) -> tuple[str | None, str | None]:
    """(datasheet model, form) when exactly one datasheet model fits the known form and memory."""
    fits = [
        (m, f)
        for m, f, mem in fam.models
        if m and (form is None or f == form) and (memory is None or mem is None or _close(memory, mem))
    ]
    if len(fits) == 1:
        return fits[0][0], form or fits[0][1]
    return None, form


def _mapping(provider: str, name: str, instance_type: str) -> AcceleratorMap | None:
    return next((m for m in accelerator_maps() if m.matches(provider, name, instance_type)), None)


def identify(provider: str, name: str, instance_type: str = "", gpu_info: str = "", count: float = 1.0) -> Identity:
    """The canonical identity of accelerator `name` on one catalog row (see the module docstring)."""
    families, keys = _families()
    mapping = _mapping(provider, name, instance_type)
    if mapping is not None:
        fam = families.get(mapping.gpu)
        form = parse_name(mapping.gpu_model)[1] if mapping.gpu_model else parse_name(name)[1]
        return Identity(
            mapping.gpu,
            fam.vendor if fam else None,
            fam.kind if fam else "gpu",
            form,
            mapping.memory_gb,
            mapping.gpu_model or None,
            True,
            "mapping",
        )
    key, form, named = parse_name(name)
    family = keys.get(key) or keys.get(_key(split_words(name)))
    if family is None:
        return Identity(name.strip(), None, "gpu", form, named, None, False, "unrecognised")
    fam = families[family]
    if form is None and (match := _INSTANCE_FORM.search(instance_type)):
        form = _FORMS[match.group(1).lower().rstrip("0123456789")]
    hint = float(m.group(1)) if (m := _INSTANCE_MEMORY.search(instance_type)) else None
    memory, notes = _memory(fam, named, gpu_info, count, name, hint)
    model, form = _model(fam, form, memory)
    if memory is None and model:
        memory = next(mem for m, _, mem in fam.models if m == model)
    return Identity(family, fam.vendor, fam.kind, form, memory, model, True, "name", notes)
