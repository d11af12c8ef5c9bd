"""Extractor 5: what no other extractor claimed. A number after "cheapest" is a top N, a bare "48GB" a memory size,
and what still looks like a name goes down the resolution ladder (`knowledge.names`): a GPU-shaped word that does
not resolve becomes a `NameIssue` with candidates, never a silent guess.
"""

from __future__ import annotations

import re

from handlers.models import NameIssue
from handlers.parse.state import MEMORY_TOKEN, WORD, State, ladder
from knowledge import lexicon
from knowledge import names as nm
from knowledge.kb.vocabulary import Vocabulary

NOT_NAMES = lexicon.not_names()  # words that are never a name, though they look like one ("llama3", "fp16")
STOPWORDS = lexicon.stopwords()
_UNIT_TOKEN = re.compile(
    r"^\d+(?:\.\d+)?(?:b|m|k|t|g|gb|tb|mb|pb|gib|tib|h|hr|hrs|d|w|y|yr|yrs|x|ms|s|nm|kw|gbps|mbps|tflops|"
    r"st|nd|rd|th|min|mins|mo|p|fps|qps|tps|usd|cny|rmb|k)$"
)
_GPU_SHAPE = re.compile(r"^[a-z]{1,4}\d{2,5}[a-z]{0,3}$")  # "h1000", "z900", "rtx5090": a model number
_PROVIDER_CUTOFF = 80  # a plain word is read as a provider from this score: "azrue" (80), "huwaei" (83)


def find_leftovers(st: State, vocab: Vocabulary) -> None:
    """Words nobody claimed: a number after "cheapest", a bare memory size, and anything that looks like a name."""
    toks = [(m.start(), m.end(), m.group()) for m in WORD.finditer(st.low)]
    skip = -1
    for idx, (start, end, word) in enumerate(toks):
        memory = MEMORY_TOKEN.match(word)
        if idx <= skip or word in NOT_NAMES or word in STOPWORDS:
            continue
        if word.isdigit():
            after_cheapest = any(0 <= start - end_ <= 2 and cue == "cheapest" for end_, cue in st.cue_ends)
            if st.top_n is None and after_cheapest and len(word) <= 3 and 0 < int(word) <= 999:
                st.top_n = int(word)  # "cheapest 3"
        elif memory and memory.group(2) and st.min_gpu_memory_gb is None and 4 <= float(memory.group(1)) <= 512:
            st.min_gpu_memory_gb = float(memory.group(1))  # "a 48GB card"
        elif not _UNIT_TOKEN.match(word):
            nxt = toks[idx + 1] if idx + 1 < len(toks) else None
            if (word.isalpha() and nxt and nxt[2].isdigit() and st.low[end : nxt[0]] in {" ", "-", ""}
                    and vocab.gpu_index and vocab.gpu_index.prefixed(word)):  # fmt: skip
                _name(st, vocab, st.text[start : nxt[1]], start, two_words=True)  # "RTX 5090"
                skip = idx + 1
            else:
                _name(st, vocab, st.text[start:end], start)


def _name(st: State, vocab: Vocabulary, raw: str, pos: int, *, two_words: bool = False) -> None:
    """Resolve a leftover word that may be a name. Only GPU-shaped words ("H1000", "rtx") become issues: a plain
    word that resolves is taken (a typo such as "tencnet"), one that does not is just a word."""
    key, word = nm.compact(raw), raw.lower()
    if any(key in nm.compact(gpu) for gpu in st.gpus):
        return  # "紫霄C100": the model number of a GPU already named
    if two_words or _GPU_SHAPE.match(key) or (word.isalpha() and word in vocab.family_words):
        ladder(st, raw, vocab.gpu_index, "gpu", "gpus", pos)
        return
    if word.isalpha() and len(word) < 5 or len(word) < 4:
        return
    choices: tuple[tuple[nm.NameIndex | None, str, int | None], ...]
    if word.isalpha():  # "hoper", "tencnet"
        choices = ((vocab.gpu_word_index, "gpus", None), (vocab.provider_index, "providers", _PROVIDER_CUTOFF))
    else:  # "trainum2"
        choices = ((vocab.gpu_index, "gpus", None),)
    for index, listname, cutoff in choices:
        found = index.resolve(word, cutoff=cutoff) if index else None
        if isinstance(found, nm.Resolved):
            st.add(listname, [found.name], pos)
            return
    _unknown_place(st, vocab, raw, pos)


_ON = re.compile(r"(?:\b(?:on|via|using|through)|在|用)\s*$")  # "on coreweave", "在coreweave"
_IN = re.compile(r"\b(?:in|near)\s+$")  # "in Osaka"


def _unknown_place(st: State, vocab: Vocabulary, raw: str, pos: int) -> None:
    """A word nobody knows where a cloud or a place is named ("on coreweave", "in Jakarta") is said back, never
    dropped: a `NameIssue` with the closest names, so the answer does not pass the global one off as its own."""
    from handlers.parse.work import is_model_family

    before = st.text[max(0, pos - 12) : pos].lower()
    if is_model_family(raw.lower()):
        return  # "用Llama 3.1 8B", "on Qwen": a model, not a cloud
    if _ON.search(before) and raw.isalpha() and not (st.instance_types or st.providers):  # not "p4d on ResNet"
        found = vocab.provider_index.resolve(raw.lower()) if vocab.provider_index else None
        st.issues.append(NameIssue(kind="provider", text=raw, status="unknown", candidates=_close(raw, found)))
    elif _IN.search(before) and raw[:1].isupper() and raw.isalpha():
        found = vocab.region_index.resolve(raw.lower()) if vocab.region_index else None
        st.issues.append(NameIssue(kind="region", text=raw, status="unknown", candidates=_close(raw, found)))


def _close(raw: str, found: object) -> list[str]:
    """The did-you-mean names that are close to what was written (not just the least far of far names)."""
    from rapidfuzz import fuzz  # rapidfuzz loads only when a name is not found exactly

    hints = getattr(found, "suggestions", ()) or getattr(found, "candidates", ())
    return [h for h in hints if fuzz.partial_ratio(raw.lower(), h.lower()) >= 70][:3]
