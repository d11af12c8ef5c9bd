"""Text -> `Query`: every message is parsed once, here; handlers never see raw text.

`parse(text, vocab)` is pure. `Vocabulary.from_kb(kb)` (`knowledge.kb.vocabulary`) precomputes, once per knowledge
base, everything the parser looks up: GPU, provider, region and instance-type names (from the KB), region groups
(`knowledge/data/region_groups.csv`) and the keyword lexicon (`knowledge/data/lexicon/`). A message then goes
through a few focused extractors over one masked copy of the text; each blanks what it consumed, so later ones
never read it twice (the "a100" inside an instance type, the "8" of "8卡" or the "12" of "g5.12xlarge"):

1. `ids`: exact instance types and region ids, region prefixes ("europe-west"), and typos of both (fuzzy);
2. `numbers`: model size, top N, GPU memory, storage, egress, duration, GPU count, by regex;
3. `words`: ASCII words, longest n-gram first: GPU names (with memory and form factor), instance families,
   providers, region groups and every keyword of the lexicon; then Chinese text, longest phrase first, against
   the same lexicon and the KB's Chinese names;
4. `leftovers`: what still looks like a name goes down the resolution ladder (`knowledge.names`); what does
   not resolve becomes a `NameIssue` with candidates, never a silent guess.

The intent is then chosen by the ordered rules of `intent` (`entry.parse` puts it all together).
"""

from __future__ import annotations

from typing import Any

from handlers.parse.entry import MAX_CHARS, parse
from handlers.parse.numbers import zh_number
from knowledge.kb.vocabulary import Hit, Vocabulary

__all__ = ["LEXICON", "MAX_CHARS", "REGION_GROUPS_CSV", "Hit", "Vocabulary", "parse", "zh_number"]


def __getattr__(name: str) -> Any:
    """Read on first use only: the region-groups path and the lexicon (field, value, phrases) table."""
    if name == "REGION_GROUPS_CSV":
        from knowledge.catalog.regions import REGION_GROUPS_CSV

        return REGION_GROUPS_CSV
    if name == "LEXICON":
        from knowledge.lexicon import phrases

        return phrases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
