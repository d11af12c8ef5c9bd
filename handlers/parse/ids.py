"""Extractor 1: exact instance types and region ids, region prefixes ("europe-west"), and typos of both."""

from __future__ import annotations

import re

from handlers.models import NameIssue
from handlers.parse.state import State, ladder
from knowledge import names as nm
from knowledge.kb.vocabulary import Vocabulary, phrase_key

_GLUED_SIZE = re.compile(r"[a-z]+\d+[a-z]*\d*(?:xlarge|large|metal)")  # "g5xlarge", "p4d24xlarge": dot left out
_BIG = re.compile(r"[a-z0-9][a-z0-9._\-]*[a-z0-9]|[a-z0-9]")  # a token with its dots, hyphens and underscores


def find_ids(st: State, vocab: Vocabulary) -> None:
    """Exact instance types and region ids; region prefixes; typos of either go down the ladder."""
    for m in _BIG.finditer(st.low):
        token = m.group()
        if token in vocab.instance_types:
            st.add("instance_types", [vocab.instance_types[token]], m.start())
        elif len(token) <= 2 and token.isalpha():
            continue  # a country code used as a region id ("US", "CA", "IS") is a region group, never "us"/"in"
        elif token in vocab.regions:
            st.add("regions", [vocab.regions[token]], m.start())
        elif token[:-1] in vocab.regions and token[-2].isdigit():  # a zone ("us-east-1a") is in its region
            st.add("regions", [vocab.regions[token[:-1]]], m.start())
        elif (token.isalnum() and not _GLUED_SIZE.fullmatch(token)) or phrase_key(token) in vocab.words:
            continue
        elif _looks_like_region(token, vocab):
            prefixed = [r for low, r in vocab.regions.items() if low.startswith(token + "-") or
                        (low.startswith(token) and low[len(token):].isdigit())]  # fmt: skip
            if prefixed:
                st.add("regions", sorted(prefixed), m.start())
            else:
                ladder(st, token, vocab.region_index, "region", "regions", m.start())
        elif _looks_like_instance(token, vocab):
            _instance_ladder(st, st.text[m.start() : m.end()], vocab, m.start())  # said back as written
        else:
            continue
        st.take(m.start(), m.end())


def _looks_like_region(token: str, vocab: Vocabulary) -> bool:
    """ "us-est-1", "cn-hangzou", "europe-west": a known first part, then a digit or a known-looking second part."""
    parts = token.split("-")
    if len(parts) < 2 or parts[0] not in vocab.region_prefixes or not parts[1]:
        return False
    if any(c.isdigit() for c in token):
        return True
    from rapidfuzz import fuzz, process  # rapidfuzz loads only when a name is not found exactly

    return process.extractOne(parts[1], vocab.region_words, scorer=fuzz.ratio, score_cutoff=80) is not None


def _is_family(word: str, vocab: Vocabulary) -> bool:
    return any(hit.field == "family" for hit in vocab.words.get(phrase_key(word), ()))


def _looks_like_instance(token: str, vocab: Vocabulary) -> bool:
    """ "p4d.12xlarge", "standard_nc24ads_a100_v4", "a2-highgpu-3g": shaped like an instance type."""
    if token.startswith(("standard_", "ecs.")) or "xlarge" in token or re.search(r"_v\d+$", token):
        return True
    head = re.split(r"[.\-]", token)[0]
    if "." in token and (_is_family(head, vocab) or re.search(r"large|metal", token.rsplit(".", 1)[-1])):
        return True
    return "-" in token and _is_family(head, vocab) and any(c.isdigit() for c in token)


def _instance_ladder(st: State, raw: str, vocab: Vocabulary, pos: int) -> None:
    """An instance type down the ladder. A fuzzy match is taken only as the completion of what was typed
    ("g4dn.xlarg"); any other is suggested, never taken, as a guessed size or family prices another machine
    ("Standard_NC24ads_A100v4": did you mean Standard_NC24ads_A100_v4?)."""
    found = vocab.instance_index.resolve(raw) if vocab.instance_index else None
    kind = "instance_type"
    if isinstance(found, nm.Resolved) and found.step == "fuzzy" and not _completes(found.name, raw):
        st.issues.append(NameIssue(kind=kind, text=raw, status="unknown", candidates=[found.name]))
    else:
        ladder(st, raw, vocab.instance_index, kind, "instance_types", pos)


def _completes(name: str, raw: str) -> bool:
    """`raw` is the start of `name`, the vendor prefix aside ("g4dn.xlarg" of "g4dn.xlarge")."""
    typed = nm.compact(raw, "instance_type").removeprefix("standard_").removeprefix("ecs.")
    return nm.compact(name, "instance_type").removeprefix("standard_").removeprefix("ecs.").startswith(typed)
