"""One message being parsed (`State`): its masked lower-case copy and what the extractors found so far."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from handlers.models import Currency, NameIssue, Priority, Workload
from knowledge import names as nm
from knowledge.kb.vocabulary import Hit, Vocabulary

WORD = re.compile(r"[a-z0-9]+")
MEMORY_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)(gb|g|gib)?$")
JOIN_GAP = frozenset(" -_./'’")  # what may stand between two words read as one name ("A-100", "H100 SXM")


@dataclass
class State:
    """One message being parsed: the text, its masked lower-case copy, and what was found so far.

    Each extractor blanks what it consumed (`take`), so later ones never read it twice."""

    text: str
    low: str
    gpus: list[str] = field(default_factory=list)
    gpu_count: float | None = None
    min_gpu_memory_gb: float | None = None
    pricings: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    instance_types: list[str] = field(default_factory=list)
    mentions: dict[str, int] = field(default_factory=dict)  # field -> how many separate names were given
    workload: Workload | None = None
    model_size_b: float | None = None
    priority: Priority | None = None
    durations: list[float] = field(default_factory=list)
    storage_gb: float | None = None
    egress_gb: float | None = None
    currency: Currency | None = None
    top_n: int | None = None
    cues: dict[str, int] = field(default_factory=dict)  # cue -> position of its first mention
    cue_ends: list[tuple[int, str]] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    issues: list[NameIssue] = field(default_factory=list)
    out_of_range: list[tuple[str, str]] = field(default_factory=list)  # (kind, as said) of unusable numbers
    used_tokens: set[int] = field(default_factory=set)
    positions: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    memory_at: int | None = None  # where a "80GB memory" that may belong to the GPU before it starts
    gpu_variants: list[str] = field(default_factory=list)
    pricing_at: list[tuple[int, str]] = field(default_factory=list)  # (position, pricing) of each pricing named
    said: dict[int, str] = field(default_factory=dict)  # position -> a region group as written ("China")
    # what the question rules out (handlers/parse/polarity.py): providers, pricings, regions, GPUs, and as said
    excluded: dict[str, list[str]] = field(default_factory=dict)

    def take(self, start: int, end: int) -> None:
        self.low = self.low[:start] + " " * (end - start) + self.low[end:]

    def add(self, listname: str, values: Iterable[str], pos: int) -> None:
        """Add names found at `pos`; `ordered` later puts every list in the order the text names them."""
        target = getattr(self, listname)
        self.mentions[listname] = self.mentions.get(listname, 0) + 1
        for value in values:
            if value not in target:
                target.append(value)
                self.positions[listname, value] = (pos, len(target))

    def ordered(self, listname: str) -> list[str]:
        return sorted(getattr(self, listname), key=lambda value: self.positions.get((listname, value), (0, 0)))

    def apply(self, hit: Hit, start: int, end: int, vocab: Vocabulary) -> None:
        """Record what one lexicon hit means."""
        f, v = hit.field, hit.value
        if f == "gpu":
            self.add("gpus", [nm.gpu_label(*v)], start)
            variant = nm.variant_name(v[0], v[1], self.text[start:end])  # "H100 PCIe": a variant question narrows
            if variant and variant not in self.gpu_variants:
                self.gpu_variants.append(variant)
        elif f == "provider":
            self.add("providers", [v], start)
        elif f == "group":
            self.add("regions", vocab.region_groups.get(v, ()), start)
            self.said[start] = self.text[start:end]
        elif f == "family":
            self.add("instance_types", v, start)
        elif f == "cue":
            self.cues.setdefault(v, start)
            self.cue_ends.append((end, v))
        elif f == "pricing":
            self.pricings.append(v)
            self.pricing_at.append((start, v))
        elif f == "topic":
            if v not in self.topics:
                self.topics.append(v)
        elif f == "none":  # a phrase that only stops a shorter one from matching ("比如" is not "比")
            pass
        elif getattr(self, f) is None:  # workload, priority, currency: the first mention wins
            setattr(self, f, v)


def ladder(st: State, raw: str, index: nm.NameIndex | None, kind: str, listname: str, pos: int) -> None:
    """Resolve `raw` down the name ladder: a name found is added to `listname`, any other outcome is an issue."""
    if index is None:
        return
    found = index.resolve(raw)
    if isinstance(found, nm.Resolved):
        st.add(listname, [found.name], pos)
    elif isinstance(found, nm.Ambiguous):
        st.issues.append(NameIssue(kind=kind, text=raw, status="ambiguous", candidates=list(found.candidates)))
    else:
        st.issues.append(NameIssue(kind=kind, text=raw, status="unknown", candidates=list(found.suggestions)))
