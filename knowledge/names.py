"""Name resolution as a ladder that never guesses silently (STYLE.md guideline 6).

`resolve(raw, names, kind=...)` climbs four rungs and stops at the first that answers:

1. **exact**: the case-folded name, then its *compact* form (spaces, hyphens, underscores and, for GPUs, vendor
   words such as "nvidia", "tesla", "geforce" and "gpu" removed; an ``o`` touching a digit read as ``0``, so
   ``h1OO`` is ``h100``), then the compact form without an English plural ``s`` (``H100s``);
2. **prefix**: a short name that starts the names of two or more targets is ambiguous (``tpu``, ``rtx``);
3. **fuzzy**: ``rapidfuzz.process.extract`` with an explicit ``processor=rapidfuzz.utils.default_process`` and a
   ``score_cutoff``; the best target wins only if it clears ``cutoff``, beats the second-best *distinct* target by
   ``margin`` and has the same digits as what was typed (``H1000`` is not silently ``H100``);
4. otherwise `Ambiguous` (several close targets) or `Unknown` with the closest suggestions.

`names` maps every alias (any case) to its target, e.g. ``KB.gpu_names`` or ``KB.provider_names``; the index built
from it is cached per mapping object, so resolving against the same mapping again costs only the lookups.

GPU helpers: `split_gpu_variant` peels a memory size (``a100-80g``, ``A100 80GB``) and a form factor (``H100
PCIe``, ``SXM5``, ``NVL``) off a GPU name, and `resolve_gpu` resolves the rest and returns the name a `Query`
carries: ``"A100 80GB"`` with a memory variant, the family (``"H100"``) otherwise.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "AMBIGUOUS_FLOOR",
    "Ambiguous",
    "CUTOFF",
    "FORM_FACTORS",
    "FORM_LABELS",
    "GpuVariant",
    "MARGIN",
    "NameIndex",
    "Resolution",
    "Resolved",
    "SEPARATED_KINDS",
    "SUGGESTIONS",
    "SUGGEST_FLOOR",
    "Unknown",
    "VENDOR_WORDS",
    "compact",
    "form_factor",
    "form_memories",
    "gpu_label",
    "memory_of_form",
    "name_index",
    "repair",
    "resolve",
    "resolve_gpu",
    "split_gpu_variant",
    "variant_memory",
    "variant_name",
]

CUTOFF = 85.0  # fuzzy score (0-100, rapidfuzz ratio) a name must reach to resolve
MARGIN = 5.0  # and by how much it must beat the second-best distinct target
AMBIGUOUS_FLOOR = 70.0  # targets scoring at least this, within `margin` of the best, are offered as candidates
SUGGEST_FLOOR = 40.0  # an unknown name is offered targets scoring at least this
SUGGESTIONS = 3

# Words that do not change which GPU is meant: dropped from GPU names before comparing.
VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "gpu", "gpus", "card", "cards", "graphics"})
# Words a provider's name may carry or drop ("Tencent Cloud" is "tencent").
PROVIDER_WORDS = frozenset({"cloud", "services", "service", "platform"})
NOISE_WORDS: Mapping[str, frozenset[str]] = {"gpu": VENDOR_WORDS, "provider": PROVIDER_WORDS}
# Kinds whose separators carry meaning (AWS "us-east-1" and GCP "us-east1" are different regions): kept.
SEPARATED_KINDS = frozenset({"region", "instance_type"})

# Form factors of one GPU family: they change the board, not the family (H100 SXM5 / PCIe / NVL are all "H100").
FORM_FACTORS = frozenset({"sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "pcie", "nvl", "nvlink", "hgx", "oam"})


@dataclass(frozen=True, slots=True)
class Resolved:
    """`raw` names exactly one target: `name`. `step` says which rung of the ladder found it."""

    raw: str
    name: str
    step: Literal["exact", "fuzzy"] = "exact"
    score: float = 100.0


@dataclass(frozen=True, slots=True)
class Ambiguous:
    """`raw` could be any of `candidates` (best first): ask, do not pick."""

    raw: str
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unknown:
    """`raw` names nothing known; `suggestions` are the closest names (best first, maybe none)."""

    raw: str
    suggestions: tuple[str, ...] = ()


Resolution = Resolved | Ambiguous | Unknown

_SPLIT = re.compile(r"[\s\-_/]+")
_O_AS_ZERO = re.compile(r"(?<=\d)o|o(?=\d)")
_DIGITS = re.compile(r"\d+")
_HAS_DIGIT = re.compile(r"\d")


def repair(word: str) -> str:
    """Read an ``o`` touching a digit as ``0`` (``h1oo`` -> ``h100``), repeatedly, inside one word."""
    if "o" not in word or not _HAS_DIGIT.search(word):
        return word
    while True:
        fixed = _O_AS_ZERO.sub("0", word)
        if fixed == word:
            return word
        word = fixed


def compact(raw: str, kind: str = "gpu") -> str:
    """The comparison form of a name: NFKC, case-folded, noise words and separators removed, ``o``->``0`` by digits.

    Region ids and instance types keep their separators (only spaces go).

    >>> compact("NVIDIA Tesla V-100"), compact("h1OO"), compact("Tencent Cloud", "provider")
    ('v100', 'h100', 'tencent')
    """
    if kind in SEPARATED_KINDS:
        return repair("".join(unicodedata.normalize("NFKC", raw).casefold().split()))
    words = _SPLIT.split(unicodedata.normalize("NFKC", raw).casefold().strip())
    noise = NOISE_WORDS.get(kind, frozenset())
    kept = [repair(w) for w in words if w and w not in noise]
    return "".join(kept) or "".join(repair(w) for w in words)


def _digits(text: str) -> tuple[str, ...]:
    return tuple(_DIGITS.findall(text))


@dataclass
class NameIndex:
    """The precomputed lookups of one `names` mapping for one kind of name."""

    kind: str
    names: Mapping[str, str]
    cutoff: float = CUTOFF
    margin: float = MARGIN
    plain: dict[str, str] = field(default_factory=dict)
    compacts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    choices: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    _forms: dict[str, dict[str, set[float]]] | None = field(default=None, repr=False)
    _sorted: list[str] = field(default_factory=list, repr=False)

    @property
    def forms(self) -> dict[str, dict[str, set[float]]]:
        """family -> form factor -> memory sizes, from the aliases (built on first use)."""
        if self._forms is None:
            self._forms = form_memories(self.names)
        return self._forms

    def __post_init__(self) -> None:
        grouped: dict[str, list[str]] = {}
        for alias, target in self.names.items():
            folded = unicodedata.normalize("NFKC", alias).casefold().strip()
            self.plain.setdefault(folded, target)
            self.plain.setdefault(unicodedata.normalize("NFKC", target).casefold(), target)
            for key in {compact(alias, self.kind), compact(target, self.kind)}:
                if key and target not in grouped.setdefault(key, []):
                    grouped[key].append(target)
        self.compacts = {key: tuple(targets) for key, targets in grouped.items()}
        self._sorted = sorted(self.compacts)
        for key, targets in self.compacts.items():
            for target in targets:
                self.choices.append(key)
                self.targets.append(target)

    # --- the ladder ------------------------------------------------------------------------------------------

    def resolve(self, raw: str, *, cutoff: float | None = None, margin: float | None = None) -> Resolution:
        """Climb the ladder for `raw`; see the module docstring."""
        cutoff = self.cutoff if cutoff is None else cutoff
        margin = self.margin if margin is None else margin
        exact = self.exact(raw)
        if exact is not None:
            return exact
        key = compact(raw, self.kind)
        if not key:
            return Unknown(raw)
        prefixed = self.prefixed(key)
        if len(prefixed) > 1:
            return Ambiguous(raw, tuple(prefixed[:6]))
        return self._fuzzy(raw, key, cutoff, margin)

    def exact(self, raw: str) -> Resolution | None:
        """Rung 1 only: `Resolved`, `Ambiguous` (a compact form shared by several targets) or None."""
        folded = unicodedata.normalize("NFKC", raw).casefold().strip()
        if folded in self.plain:
            return Resolved(raw, self.plain[folded])
        key = compact(raw, self.kind)
        for candidate in (key, key[:-1] if len(key) > 2 and key.endswith("s") else None):
            targets = self.compacts.get(candidate) if candidate else None
            if targets:
                return Resolved(raw, targets[0]) if len(targets) == 1 else Ambiguous(raw, targets)
        return None

    def prefixed(self, raw: str) -> list[str]:
        """Targets with a name that starts with `raw` (compacted), in index order."""
        key = compact(raw, self.kind)
        if len(key) < 2:
            return []
        found: list[str] = []
        for choice in self._sorted[bisect.bisect_left(self._sorted, key) :]:
            if not choice.startswith(key):
                break
            for target in self.compacts[choice]:
                if target not in found:
                    found.append(target)
        return found

    def _fuzzy(self, raw: str, key: str, cutoff: float, margin: float) -> Resolution:
        from rapidfuzz import fuzz, process, utils  # rapidfuzz loads only when a name is not found exactly

        hits = process.extract(
            key, self.choices, scorer=fuzz.ratio, processor=utils.default_process,
            score_cutoff=SUGGEST_FLOOR, limit=24,
        )  # fmt: skip
        best: dict[str, tuple[float, str]] = {}  # target -> (score, matched key), best per target
        for choice, score, index in hits:
            target = self.targets[index]
            if target not in best or score > best[target][0]:
                best[target] = (score, choice)
        ranked = sorted(best.items(), key=lambda item: -item[1][0])
        if not ranked:
            return Unknown(raw)
        # Digits name the model (H100 vs H200, 12xlarge vs 24xlarge): only targets with the digits typed compete.
        # The best must have them, and lead every other target with them by `margin`.
        digits = _digits(key)
        same = [(target, score) for target, (score, choice) in ranked if _digits(choice) == digits]
        if same:
            top_target, top_score = same[0]
            second = same[1][1] if len(same) > 1 else 0.0
            if top_score >= cutoff and top_score >= ranked[0][1][0] and top_score - second >= margin:
                return Resolved(raw, top_target, "fuzzy", round(top_score, 1))
            lead = max(top_score, ranked[0][1][0])
            close = [target for target, score in same if score >= AMBIGUOUS_FLOOR and score > lead - margin]
            if len(close) > 1:
                return Ambiguous(raw, tuple(close))
        return Unknown(raw, tuple(target for target, _ in ranked[:SUGGESTIONS]))


_INDEXES: dict[tuple[int, str, float, float], NameIndex] = {}


def name_index(names: Mapping[str, str], *, kind: str, cutoff: float = CUTOFF, margin: float = MARGIN) -> NameIndex:
    """The index of `names`, built once per mapping object (and kind, cutoff, margin)."""
    cache_key = (id(names), kind, cutoff, margin)
    index = _INDEXES.get(cache_key)
    if index is None or index.names is not names:
        if len(_INDEXES) > 64:
            _INDEXES.clear()
        index = _INDEXES[cache_key] = NameIndex(kind, names, cutoff, margin)
    return index


def resolve(
    raw: str, names: Mapping[str, str], *, kind: str, cutoff: float = CUTOFF, margin: float = MARGIN
) -> Resolution:
    """Resolve `raw` against `names` (alias -> target): `Resolved`, `Ambiguous` or `Unknown`.

    Args:
        raw: the name as the user wrote it ("h1OO", "nvidia tesla v100", "Tencent Cloud").
        names: every alias (any case) -> its target name, e.g. ``kb.gpu_names``.
        kind: "gpu", "provider", "region" or "instance_type"; chooses which noise words are ignored.
        cutoff: the fuzzy score (0-100) a name must reach to resolve.
        margin: how far the best target must lead the second-best distinct target.
    """
    return name_index(names, kind=kind, cutoff=cutoff, margin=margin).resolve(raw)


# --- GPUs --------------------------------------------------------------------------------------------------

_MEMORY = re.compile(r"^(?P<gb>\d+(?:\.\d+)?)\s*(?P<unit>gb|g|gib)?$")
_MEMORY_UNITS = frozenset({"gb", "g", "gib"})
_FORM_CANON = {"nvlink": "sxm", "hgx": "sxm"}


@dataclass(frozen=True, slots=True)
class GpuVariant:
    """A GPU name split into the family part, a memory size and a form factor (each may be missing)."""

    base: str
    memory_gb: float | None = None
    form_factor: str | None = None


def form_factor(word: str) -> str | None:
    """The canonical form factor a word names ("SXM5" -> "sxm", "PCIe" -> "pcie"), or None."""
    low = word.casefold()
    if low not in FORM_FACTORS:
        return None
    return _FORM_CANON.get(low, low.rstrip("0123456789"))


def split_gpu_variant(raw: str, memories: Iterable[float] = ()) -> GpuVariant:
    """Peel memory and form factor off a GPU name.

    A number after the name is a memory size when it carries a unit (``80GB``, ``80G``, ``80 GB``) or is one of
    `memories` (the sizes this family comes in, so ``A100 80`` is 80 GB but ``A100 8`` is not).

    >>> split_gpu_variant("A100-80G")
    GpuVariant(base='A100', memory_gb=80.0, form_factor=None)
    >>> split_gpu_variant("H100 PCIe 80GB")
    GpuVariant(base='H100', memory_gb=80.0, form_factor='pcie')
    """
    words = [w for w in _SPLIT.split(unicodedata.normalize("NFKC", raw).strip()) if w]
    known = {float(m) for m in memories}
    memory: float | None = None
    form: str | None = None
    kept: list[str] = []
    for i, word in enumerate(words):
        low = word.casefold()
        if kept and form_factor(low):
            form = form or form_factor(low)
            continue
        if kept and memory is not None and low in _MEMORY_UNITS:
            continue
        match = _MEMORY.match(low)
        if kept and memory is None and match:
            value = float(match["gb"])
            unit = bool(match["unit"]) or (i + 1 < len(words) and words[i + 1].casefold() in _MEMORY_UNITS)
            if unit or value in known:
                memory = value
                continue
        kept.append(word)
    return GpuVariant(" ".join(kept), memory, form)


def form_memories(names: Mapping[str, str]) -> dict[str, dict[str, set[float]]]:
    """family -> form factor -> memory sizes, read from aliases like "H100 NVL 94GB" in `names`."""
    forms: dict[str, dict[str, set[float]]] = {}
    for alias, family in names.items():
        variant = split_gpu_variant(alias)
        if variant.form_factor and variant.memory_gb:
            forms.setdefault(family, {}).setdefault(variant.form_factor, set()).add(variant.memory_gb)
    return forms


def memory_of_form(forms: Mapping[str, set[float]], form: str) -> float | None:
    """The memory size that singles out `form` among a family's forms, if there is one (H100 NVL -> 94).

    A size shared with another form (H100 SXM and PCIe are both 80 GB) says nothing, so it is not kept.
    """
    sizes = forms.get(form, set())
    if len(sizes) != 1:
        return None
    (size,) = sizes
    others = {s for f, ss in forms.items() if f != form for s in ss}
    return None if size in others else size


def variant_memory(variant: GpuVariant, forms: Mapping[str, set[float]]) -> float | None:
    """The memory a GPU name singles out: stated ("A100-80GB"), or implied by its form factor ("H100-NVL": 94)."""
    if variant.memory_gb is None and variant.form_factor:
        return memory_of_form(forms, variant.form_factor)
    return variant.memory_gb


FORM_LABELS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL", "oam": "OAM"}


def variant_name(family: str, memory_gb: float | None, written: str) -> str | None:
    """ "H100 PCIe" when `written` (the GPU as the question wrote it) names a form factor, else None."""
    form = split_gpu_variant(written).form_factor
    if not form:
        return None
    return " ".join(p for p in (family, FORM_LABELS.get(form, form), f"{memory_gb:g}GB" if memory_gb else "") if p)


def gpu_label(family: str, memory_gb: float | None) -> str:
    """The name a `Query` carries: "A100 80GB" with a memory variant, "A100" without."""
    return f"{family} {memory_gb:g}GB" if memory_gb else family


def resolve_gpu(
    raw: str,
    names: Mapping[str, str],
    *,
    memories: Mapping[str, Iterable[float]] | None = None,
    cutoff: float = CUTOFF,
    margin: float = MARGIN,
) -> Resolution:
    """Resolve a GPU name, keeping a memory variant: ``"a100-80g"`` -> ``Resolved(name="A100 80GB")``.

    `memories` (family -> sizes it comes in) lets a bare number count as memory (``A100 80``). A form factor is
    dropped (``H100 PCIe`` -> "H100") unless its memory singles it out among the forms the aliases in `names`
    describe (``H100 NVL`` -> "H100 94GB"). The name as a whole is tried first, so an alias that ends in a number
    ("RTX 4090", "Gaudi 2") stays whole, and an alias that carries a memory ("A100 80G") keeps it.
    """
    index = name_index(names, kind="gpu", cutoff=cutoff, margin=margin)
    whole = index.exact(raw)
    if isinstance(whole, Resolved):
        memory = variant_memory(split_gpu_variant(raw), index.forms.get(whole.name, {}))
        return Resolved(raw, gpu_label(whole.name, memory), whole.step, whole.score)
    all_sizes = {m for sizes in (memories or {}).values() for m in sizes}
    variant = split_gpu_variant(raw, all_sizes)
    if not variant.base or (variant.memory_gb is None and variant.form_factor is None):
        return index.resolve(raw)
    found = index.resolve(variant.base)
    if not isinstance(found, Resolved):
        return found
    memory = variant.memory_gb
    if memory is None and variant.form_factor:
        memory = memory_of_form(index.forms.get(found.name, {}), variant.form_factor)
    return Resolved(raw, gpu_label(found.name, memory), found.step, found.score)
