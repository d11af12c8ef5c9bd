"""The names a question may use, precomputed from one knowledge base: what the question parser looks up.

`Vocabulary.from_kb(kb)` holds the GPU, provider, region and instance-type names of the knowledge base with their
indexes for the resolution ladder (`knowledge.names`), the region groups (`data/region_groups.csv`) and every
phrase of the lexicon (`knowledge.lexicon`), each phrase under its compact key with what it means (`Hit`).

It is built once per knowledge base and kept in the KB's memo (`KB.memo`). Building takes about a second on the
full catalogs, so the built vocabulary is also pickled beside the knowledge-base file, named for that very build
(`kb.vocab2-<built_at>-<inode>.pickle`): a derived artifact of kb.db, replaced with it, never trusted when
unreadable. A lexicon change changes the bundled data, so the knowledge base, and with it this file, is rebuilt.
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge import lexicon
from knowledge import names as nm

__all__ = ["Hit", "Vocabulary", "cache_path", "instance_families", "phrase_key"]

_FORMAT = 2  # in the cache file's name: bump when what `build` produces changes
_MEMO_KEY = "vocabulary"
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def phrase_key(text: str) -> str:
    """Lower-cased letters and digits only, ``o`` beside digits read as ``0`` ("A-100" -> "a100")."""
    return nm.repair(_NOT_ALNUM.sub("", text.lower()))


@dataclass(frozen=True, slots=True)
class Hit:
    """One meaning of a phrase: `field` gets `value`. `case` is the exact capitalisation required, if any."""

    field: str
    value: Any
    case: str | None = None

    def __reduce__(self) -> tuple[type[Hit], tuple[str, Any, str | None]]:
        """Pickled as a constructor call: the CLI loads ~2,800 of them per run, twice as fast as through the frozen
        dataclass's field-by-field `__setstate__`."""
        return Hit, (self.field, self.value, self.case)


@dataclass
class Vocabulary:
    """Everything the parser looks up, precomputed from one knowledge base (build once, reuse for every message)."""

    gpu_names: Mapping[str, str]
    provider_names: Mapping[str, str]
    regions: dict[str, str]  # lower-cased id -> id
    instance_types: dict[str, str]  # lower-cased type (also without "standard_"/"ecs.") -> type
    region_groups: dict[str, tuple[str, ...]]  # group -> region ids
    gpu_memories: dict[str, frozenset[float]] = field(default_factory=dict)  # family -> memory sizes (GB)
    words: dict[str, list[Hit]] = field(default_factory=dict)  # compact ASCII phrase -> hits
    cjk: dict[str, list[Hit]] = field(default_factory=dict)  # Chinese phrase -> hits
    cjk_lengths: tuple[int, ...] = ()
    region_prefixes: frozenset[str] = frozenset()
    region_words: tuple[str, ...] = ()  # second parts of region ids ("east", "hangzhou")
    family_words: frozenset[str] = frozenset()  # first words of multi-word GPU names ("tpu", "rtx")
    gpu_index: nm.NameIndex | None = None
    gpu_word_index: nm.NameIndex | None = None  # GPU names without digits ("hopper", "trainium"), for plain words
    provider_index: nm.NameIndex | None = None
    region_index: nm.NameIndex | None = None
    instance_index: nm.NameIndex | None = None
    forms: dict[str, dict[str, set[float]]] = field(default_factory=dict)

    @classmethod
    def from_kb(cls, kb: Any) -> Vocabulary:
        """The vocabulary of `kb` (a `KB`, or a live one's current KB), built on first use, kept with the KB."""
        current = kb.current() if hasattr(kb, "current") else kb
        return current.memo(_MEMO_KEY, lambda: _from_disk(current) or _built(current))

    @classmethod
    def build(
        cls,
        *,
        gpu_names: Mapping[str, str],
        provider_names: Mapping[str, str],
        regions: Iterable[str],
        instance_types: Iterable[str],
        gpu_memories: Mapping[str, Iterable[float]] | None = None,
        region_groups_csv: Path | None = None,
    ) -> Vocabulary:
        """Build from plain names (what `from_kb` reads from a KB; tests may pass small ones). The region groups
        are read from `region_groups_csv`, by default `knowledge.catalog.regions.REGION_GROUPS_CSV`."""
        from knowledge.catalog.regions import REGION_GROUPS_CSV, load_groups

        region_ids = {r.lower(): r for r in regions if r and r != "article"}
        types: dict[str, str] = {}
        for t in instance_types:
            low = t.lower()
            for key in (low, low.removeprefix("standard_"), low.removeprefix("ecs.")):
                types.setdefault(key, t)
        memories = {family: set(sizes) for family, sizes in (gpu_memories or {}).items()}
        for alias, family in gpu_names.items():
            size = nm.split_gpu_variant(alias).memory_gb
            if size:
                memories.setdefault(family, set()).add(size)
        groups, group_aliases = load_groups(region_ids.values(), region_groups_csv or REGION_GROUPS_CSV)
        gpu_index = nm.name_index(gpu_names, kind="gpu")
        vocab = cls(
            gpu_names=gpu_names,
            provider_names=provider_names,
            regions=region_ids,
            instance_types=types,
            region_groups=groups,
            gpu_memories={family: frozenset(sizes) for family, sizes in memories.items()},
            region_prefixes=frozenset(r.split("-")[0] for r in region_ids if "-" in r),
            region_words=tuple(sorted({r.split("-")[1] for r in region_ids if "-" in r})),
            gpu_index=gpu_index,
            gpu_word_index=nm.NameIndex(
                "gpu", {a: t for a, t in gpu_names.items() if len(a) >= 4 and not re.search(r"[\d*/]", a)}
            ),
            provider_index=nm.name_index(provider_names, kind="provider"),
            region_index=nm.name_index({r: r for r in region_ids.values()}, kind="region"),
            instance_index=nm.name_index(types, kind="instance_type"),
            forms=gpu_index.forms,
        )
        vocab._fill_lexicon(group_aliases, types.values())
        return vocab

    def _add(self, phrase: str, hit: Hit) -> None:
        if not phrase.isascii():  # Chinese (or "¥"): matched as a substring
            hits = self.cjk.setdefault(phrase.lower(), [])
        else:
            key = phrase_key(phrase)
            if not key:
                return
            if any(c.isupper() for c in phrase):  # written with capitals: matches only as written ("RI", "US")
                hit = Hit(hit.field, hit.value, re.sub(r"[^A-Za-z0-9]", "", phrase))
            hits = self.words.setdefault(key, [])
        if hit not in hits:
            hits.append(hit)

    def _fill_lexicon(self, group_aliases: Mapping[str, str], types: Iterable[str]) -> None:
        family_words: set[str] = set()
        plurals: list[tuple[str, Hit]] = []
        for alias, family in self.gpu_names.items():  # GPU names first: they win over everything else
            if len(nm.compact(alias)) < 2 or any(c in alias for c in "*/"):
                continue
            variant = nm.split_gpu_variant(alias)
            hit = Hit("gpu", (family, nm.variant_memory(variant, self.forms.get(family, {}))))  # "H100-NVL": 94
            self._add(alias, hit)
            key = phrase_key(alias)
            stripped = nm.compact(alias)
            if stripped and stripped not in self.words:
                self.words[stripped] = [hit]
            if key and key[-1].isdigit():
                plurals.append((key + "s", hit))  # "H100s", added once every real name is in
            if " " in alias.strip():
                family_words.add(alias.split()[0].lower())
        for key, hit in plurals:
            self.words.setdefault(key, [hit])
        self.family_words = frozenset(w for w in family_words if len(w) >= 3 and w not in nm.VENDOR_WORDS)
        for alias, pid in self.provider_names.items():
            for phrase in {alias, re.sub(r"\s*\(.*?\)\s*", " ", alias).strip(), *re.findall(r"\((.*?)\)", alias)}:
                if phrase:
                    self._add(phrase, Hit("provider", pid))
        for alias, group in group_aliases.items():
            self._add(alias, Hit("group", group))
        for family, members in instance_families(types).items():
            if family not in self.words:
                self.words[family] = [Hit("family", members)]
        for fieldname, value, phrases in lexicon.phrases():
            for phrase in phrases:
                self._add(phrase, Hit(fieldname, value))
        self.cjk_lengths = tuple(sorted({len(k) for k in self.cjk}, reverse=True))


def instance_families(types: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """compact family name -> the instance types of that family.

    A family is any leading part of a type cut at "." "-" or "_" ("p4d" of "p4d.24xlarge", "gn7i" of
    "ecs.gn7i-c8g1.2xlarge", "a2-highgpu" of "a2-highgpu-8g"), and for Azure the series without sizes ("NC A100 v4"
    and "NCads A100 v4" of "Standard_NC24ads_A100_v4"). A family must contain a digit and a letter.
    """
    families: dict[str, list[str]] = {}
    for t in sorted(set(types)):
        if " " in t:
            continue
        low = t.lower()
        body = low.removeprefix("standard_").removeprefix("ecs.")
        keys = {phrase_key(body[: m.start()]) for m in re.finditer(r"[._\-]", body)}
        if low.startswith("standard_"):
            head, *tail = [p for p in body.split("_") if p != "promo"]
            tail_key = "".join(tail)
            letters = re.match(r"[a-z]+", head)
            if letters:
                keys.add(letters.group() + tail_key)
                keys.add(re.sub(r"\d", "", head) + tail_key)
        for key in keys:
            if key and re.search(r"\d", key) and re.search(r"[a-z]", key) and key != phrase_key(body):
                families.setdefault(key, []).append(t)
    return {key: tuple(members) for key, members in families.items()}


# --- the built vocabulary beside kb.db ---------------------------------------------------------------------------


def _built(kb: Any) -> Vocabulary:
    """Build the vocabulary of `kb` from its tables and keep it on disk for the next process."""
    memories: dict[str, set[float]] = {}
    for row in kb.rows(  # through kb.rows: a damaged file is reported as such
        "SELECT DISTINCT gpu, gpu_memory_gb FROM offers WHERE gpu_memory_gb IS NOT NULL AND NOT vgpu"
    ):
        memories.setdefault(row["gpu"], set()).add(float(row["gpu_memory_gb"]))
    vocab = Vocabulary.build(
        gpu_names=kb.gpu_names,
        provider_names=kb.provider_names,
        regions=kb.regions,
        instance_types=kb.instance_types.values(),
        gpu_memories=memories,
    )
    _to_disk(kb, vocab)
    return vocab


def cache_path(kb: Any) -> Path | None:
    """Where the built vocabulary of `kb` is kept beside its file (named for when and which file was built)."""
    built = getattr(kb, "meta", lambda _key: None)("built_at")
    path = getattr(kb, "path", None)
    if not built or path is None:
        return None
    stamp = re.sub(r"[^0-9A-Za-z]", "", built)
    return Path(path).with_name(f"{Path(path).stem}.vocab{_FORMAT}-{stamp}-{Path(path).stat().st_ino}.pickle")


def _from_disk(kb: Any) -> Vocabulary | None:
    """A vocabulary pickled by an earlier process for this very knowledge base (the CLI's fast path)."""
    try:
        path = cache_path(kb)
        if path is None or not path.exists():
            return None
        with path.open("rb") as handle:
            vocab = pickle.load(handle)
        return vocab if isinstance(vocab, Vocabulary) else None
    except Exception:  # a stale or unreadable cache is rebuilt, never trusted
        return None


def _to_disk(kb: Any, vocab: Vocabulary) -> None:
    """Replace the vocabularies kept beside `kb` with this one (atomically; a failure only costs speed)."""
    try:
        path = cache_path(kb)
        if path is None:
            return
        for old in path.parent.glob(f"{Path(kb.path).stem}.vocab*.pickle"):
            old.unlink(missing_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump(vocab, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # caching is an optimisation: never fail a question for it
        return
