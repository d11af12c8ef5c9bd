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

Memory comes from the name, else from `GpuInfo` read by its file's convention (per GPU or per instance, MiB or
GB: `knowledge.catalog.memory`), else row by row against the family's datasheet sizes; a size no datasheet lists
is kept as read and reported, never replaced by one the table has.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

from knowledge.catalog import suffixes
from knowledge.catalog.memory import close as _close
from knowledge.catalog.memory import memory as _memory
from knowledge.facts.reference import AcceleratorMap, accelerator_map, accelerator_maps, gpu_families, spec_models

__all__ = ["Identity", "datasheet_sizes", "identify", "model_name", "parse_name", "split_words", "variant_label"]

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


_NOTE = re.compile(r"\s*\([^()]*\)")  # a datasheet model's note: "B200 (HGX B200, per GPU)", "A10G (AWS G5 only)"


def model_name(model: str) -> str:
    """The name a reader sees for a datasheet model: its parenthesised notes dropped (issue 26, item 7).

    >>> model_name("B200 (HGX B200, per GPU)"), model_name("Tesla K80 (dual-GPU board; 2x GK210)")
    ('B200', 'Tesla K80')
    """
    return _NOTE.sub("", model).strip() or model


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
    words, _ = suffixes.strip(split_words(raw))  # offer and edition words (`_BAREMETAL`, `-WK`): name_suffixes.csv
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


def _model(fam: _Family, form: str | None, memory: float | None) -> tuple[str | None, str | None]:
    """(datasheet model, form) when exactly one datasheet model fits the known form and memory."""
    fits = [
        (m, f)
        for m, f, mem in fam.models
        if m and (form is None or f is None or f == form) and (memory is None or mem is None or _close(memory, mem))
    ]
    if len(fits) == 1:
        return fits[0][0], form or fits[0][1]
    return None, form


def datasheet_sizes(provider: str, name: str, instance_type: str = "") -> set[float]:
    """The datasheet memory sizes of the family a row's name resolves to by name (empty: a reviewed mapping decides
    its memory, or the name is not recognised), for `knowledge.catalog.memory.file_convention`."""
    if _mapping(provider, name, instance_type) is not None:
        return set()
    families, _ = _families()
    family = _resolve(name)[0]
    return families[family].sizes if family else set()


@lru_cache(maxsize=8192)  # pure over the bundled tables; a catalog repeats its few hundred names on every row
def _resolve(name: str) -> tuple[str | None, str | None, float | None]:
    """(family or None, form factor, memory from the name) by the name alone: family names and aliases, after
    form, memory and suffix words are peeled off (`knowledge.catalog.suffixes`)."""
    _, keys = _families()
    key, form, named = parse_name(name)
    edition = suffixes.strip(split_words(name))[1]
    family = keys.get(key) or keys.get(_key(split_words(name)))
    if family is None and (glued := suffixes.trailing(key, keys)):
        family, edition = glued
    if family and form is None and edition is not None and suffixes.applies(edition, family):
        form = edition.form_factor or None
    return family, form, named


def _mapping(provider: str, name: str, instance_type: str) -> AcceleratorMap | None:
    return accelerator_map(provider, name, instance_type)


def identify(
    provider: str,
    name: str,
    instance_type: str = "",
    gpu_info: str = "",
    count: float = 1.0,
    convention: str | None = None,
) -> Identity:
    """The canonical identity of accelerator `name` on one catalog row (see the module docstring); `convention` is
    how the row's file writes memory (`knowledge.catalog.memory.file_convention`, None: read the row alone)."""
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
    family, form, named = _resolve(name)
    if family is None:
        return Identity(name.strip(), None, "gpu", form, named, None, False, "unrecognised")
    fam = families[family]
    if form is None and (match := _INSTANCE_FORM.search(instance_type)):
        form = _FORMS[match.group(1).lower().rstrip("0123456789")]
    hint = float(m.group(1)) if (m := _INSTANCE_MEMORY.search(instance_type)) else None
    memory, notes = _memory(fam.sizes, named, gpu_info, count, name, hint, convention)
    model, form = _model(fam, form, memory)
    if memory is None and model:
        memory = next(mem for m, _, mem in fam.models if m == model)
    return Identity(family, fam.vendor, fam.kind, form, memory, model, True, "name", notes)
