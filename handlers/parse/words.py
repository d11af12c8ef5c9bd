"""Extractors 3 and 4: ASCII words and Chinese phrases, longest first, against the vocabulary.

ASCII words (`find_words`) are read up to four at a time: GPU names (with the memory and form factor written after
them), instance families, providers, region groups and every keyword of the lexicon. Chinese text (`find_cjk`) is
matched as substrings, longest phrase first, against the same lexicon and the knowledge base's Chinese names.
"""

from __future__ import annotations

import re

from handlers.parse.numbers import number_word
from handlers.parse.state import JOIN_GAP, MEMORY_TOKEN, WORD, State
from knowledge import names as nm
from knowledge.kb.vocabulary import Hit, Vocabulary

Token = tuple[int, int, str]  # start, end, the word as read (``o`` beside digits as ``0``)


def _links(st: State, toks: list[Token]) -> list[bool]:
    """links[k]: token k may be read together with token k-1 (only spaces, "-", "_", "." or "/" between)."""
    links = [False]
    for k in range(1, len(toks)):
        gap = st.low[toks[k - 1][1] : toks[k][0]]
        ok = len(gap) <= 2 and set(gap) <= JOIN_GAP
        if ok and " " in gap and len(toks[k - 1][2]) == 1 and toks[k - 1][2].isalpha() and toks[k][2][0].isdigit():
            ok = False  # "a 100 dollar budget" is not an A100
        links.append(ok)
    return links


def find_words(st: State, vocab: Vocabulary) -> None:
    """ASCII words, longest phrase first: names (GPU, family, provider, region group) and keywords."""
    toks = [(m.start(), m.end(), nm.repair(m.group())) for m in WORD.finditer(st.low)]
    links = _links(st, toks)
    vendor = [t[2] in nm.VENDOR_WORDS for t in toks]
    words = vocab.words
    i = 0
    while i < len(toks):
        step = 1
        longest = 1
        while longest < 4 and i + longest < len(toks) and links[i + longest]:
            longest += 1
        for n in range(longest, 0, -1):
            parts = [t[2] for t in toks[i : i + n]]
            hits = _case_ok(words.get("".join(parts)), st.text, toks[i][0], toks[i + n - 1][1])
            if not hits and any(vendor[i : i + n]):
                stripped = "".join(p for p, v in zip(parts, vendor[i : i + n], strict=True) if not v)
                hits = [h for h in words.get(stripped, ()) if h.field == "gpu"] if stripped else []
            if hits:
                start, end = toks[i][0], toks[i + n - 1][1]
                for hit in hits:
                    if hit.field == "gpu":
                        extra, hit = _gpu_suffix(st, toks, i + n, hit, vocab)
                        n += extra
                        end = toks[i + n - 1][1]
                        if hit.value[1] is None and st.memory_at is not None and 0 < st.memory_at - end <= 2:
                            hit = Hit("gpu", (hit.value[0], st.min_gpu_memory_gb))
                            st.min_gpu_memory_gb = st.memory_at = None
                        _count_before(st, toks, i)
                    st.apply(hit, start, end, vocab)
                st.used_tokens.update(range(i, i + n))
                st.take(start, end)
                step = n
                break
        i += step


def _case_ok(hits: list[Hit] | None, text: str, start: int, end: int) -> list[Hit]:
    """The hits whose required capitalisation, if any, is how the words were written ("RI", not "ri")."""
    if not hits:
        return []
    written = None
    kept = []
    for hit in hits:
        if hit.case:
            written = written if written is not None else re.sub(r"[^A-Za-z0-9]", "", text[start:end])
            if written != hit.case:
                continue
        kept.append(hit)
    return kept


def _gpu_suffix(st: State, toks: list[Token], j: int, hit: Hit, vocab: Vocabulary) -> tuple[int, Hit]:
    """Memory ("80GB", "80") and form factor ("PCIe", "SXM5") right after a GPU name: (tokens taken, new hit)."""
    family, memory = hit.value
    form = None
    taken = 0
    while j + taken < len(toks) and taken < 3:
        k = j + taken
        gap = st.low[toks[k - 1][1] : toks[k][0]]
        if len(gap) > 2 or not set(gap) <= JOIN_GAP | {"("}:
            break
        word = toks[k][2]
        m = MEMORY_TOKEN.match(word)
        if nm.form_factor(word) and form is None:
            form = nm.form_factor(word)
        elif m and memory is None:
            size = float(m.group(1))
            unit = m.group(2) or (k + 1 < len(toks) and toks[k + 1][2] in {"gb", "g", "gib"} and
                                  st.low[toks[k][1] : toks[k + 1][0]] in {"", " "})  # fmt: skip
            if not unit and size not in vocab.gpu_memories.get(family, ()):
                break
            memory = size
            if m.group(2) is None and unit:
                taken += 1  # the separate "GB"
        elif word in {"gb", "g"} and memory is not None:
            pass
        else:
            break
        taken += 1
    if memory is None and form:
        memory = nm.memory_of_form(vocab.forms.get(family, {}), form)
    return taken, Hit("gpu", (family, memory))


def _count_before(st: State, toks: list[Token], i: int) -> None:
    """A bare number or number word right before a GPU name is a count ("8 H100s", "a single A10G")."""
    if st.gpu_count is not None or i == 0 or (i - 1) in st.used_tokens:
        return
    prev = toks[i - 1][2]
    gap = st.low[toks[i - 1][1] : toks[i][0]]
    if gap.strip() or len(gap) > 2:
        return
    value = (float(prev) if len(prev) <= 4 else None) if prev.isdigit() else number_word(prev)
    if value and 0 < value <= 4096:
        st.gpu_count = value
        st.used_tokens.add(i - 1)
        st.take(toks[i - 1][0], toks[i - 1][1])


def find_cjk(st: State, vocab: Vocabulary) -> None:
    """Chinese phrases, longest first, against the lexicon and the KB's Chinese names."""
    low, i = st.low, 0
    while i < len(low):
        if ord(low[i]) < 128:
            i += 1
            continue
        for length in vocab.cjk_lengths:
            phrase = low[i : i + length]
            hits = vocab.cjk.get(phrase) if len(phrase) == length else None
            if hits:
                for hit in hits:
                    st.apply(hit, i, i + length, vocab)
                st.take(i, i + length)
                i += length
                break
        else:
            i += 1
