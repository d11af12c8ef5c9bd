"""knowledge/data/lexicon/*.json, the question parser's lexicon (issue 17): every file loads, every file and section
is read, every intent, workload, priority, currency and pricing it names is one the `Query` model knows, every cue
it gives is read by an intent rule; and the vocabulary built from it is cached beside kb.db by the knowledge layer.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from handlers.models import Currency, Intent, Pricing, Priority, Workload
from knowledge import lexicon
from knowledge.kb.vocabulary import Hit, Vocabulary, cache_path, phrase_key

ROOT = Path(__file__).resolve().parents[1]
DIR = ROOT / "knowledge" / "data" / "lexicon"
RAW = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(DIR.glob("*.json"))}


def test_every_file_loads_and_says_what_it_is():
    assert set(RAW) == set(lexicon.FILES)  # no data file that the loader does not know
    for name in lexicon.FILES:
        data = lexicon.load(name)
        assert len(data["about"]) > 40, name
        assert "handlers/parse" in data["about"], name  # says who reads it
    assert "lexicon" in (DIR / "README.md").read_text(encoding="utf-8")


def test_every_section_is_read(monkeypatch):
    """No dead data: the accessors the parser calls read every section of every file."""
    read: set[tuple[str, str]] = set()

    class Tracked(dict):
        def __init__(self, name, data):
            super().__init__(data)
            self.name = name

        def __getitem__(self, key):
            read.add((self.name, key))
            return super().__getitem__(key)

    real = lexicon.load.__wrapped__
    monkeypatch.setattr(lexicon, "load", lambda name: Tracked(name, real(name)))
    lexicon.phrases(), lexicon.not_names(), lexicon.stopwords(), lexicon.numbers(), lexicon.polarity()
    assert read == {(name, section) for name, sections in lexicon.FILES.items() for section in sections}
    # ... and the parser calls each of those accessors
    parser_files = [*(ROOT / "handlers" / "parse").glob("*.py"), ROOT / "knowledge" / "kb" / "vocabulary.py"]
    sources = "".join(path.read_text(encoding="utf-8") for path in parser_files)
    for accessor in ("phrases", "not_names", "stopwords", "numbers", "polarity"):
        assert f"lexicon.{accessor}()" in sources, accessor


def test_a_file_with_an_unknown_section_is_refused(tmp_path, monkeypatch):
    broken = dict(RAW["words.json"], names_typo=["x"])
    (tmp_path / "words.json").write_text(json.dumps(broken), encoding="utf-8")
    monkeypatch.setattr(lexicon, "LEXICON_DIR", tmp_path)
    with pytest.raises(lexicon.LexiconError, match="names_typo"):
        lexicon.load.__wrapped__("words.json")


def test_every_intent_named_is_an_intent():
    intents = RAW["intents.json"]["intents"]
    assert set(intents) <= set(typing.get_args(Intent)), set(intents) - set(typing.get_args(Intent))
    assert {"cheapest", "price", "compare", "spec", "recommend", "tco", "pitfalls", "help"} <= set(intents)
    assert not set(RAW["intents.json"]["cues"]) & set(typing.get_args(Intent))  # the other cues are no intents


@pytest.mark.parametrize(("field", "model"), [("workload", Workload), ("priority", Priority), ("currency", Currency)])
def test_every_field_value_is_one_the_query_knows(field, model):
    assert set(RAW["fields.json"][field]) <= set(typing.get_args(model))


def test_pricings_are_query_pricings():
    """ "reserved" becomes reserved_1y or reserved_3y by the term the question names."""
    kinds = set(RAW["fields.json"]["pricing"])
    assert kinds - {"reserved"} <= set(typing.get_args(Pricing))
    assert {"reserved_1y", "reserved_3y"} <= set(typing.get_args(Pricing))


def test_every_cue_is_read_by_an_intent_rule_and_every_rule_cue_has_phrases():
    from handlers.parse.intent import _INTENT_RULES

    read = set()
    for _, rule in _INTENT_RULES:
        for const in rule.__code__.co_consts:
            read.update([const] if isinstance(const, str) else const if isinstance(const, frozenset) else [])
    given = set(RAW["intents.json"]["intents"]) | set(RAW["intents.json"]["cues"])
    priorities = set(typing.get_args(Priority))  # `s.priority == "cost"` reads a field, not a cue
    assert read - priorities == given


def test_phrases_are_clean():
    for name in ("intents.json", "fields.json"):
        for section, entries in RAW[name].items():
            if section == "about":
                continue
            for value, entry in ({"": entries} if section == "not_cues" else entries).items():
                assert set(entry) <= {"en", "zh"}, (name, section, value)
                for lang, phrases in entry.items():
                    assert all(p and p == p.strip() for p in phrases), (section, value)
                    assert len(set(phrases)) == len(phrases), (section, value, "duplicate phrase")
                    if lang == "en":
                        assert all(p.isascii() for p in phrases), (section, value)


@pytest.fixture(scope="module")
def bare() -> Vocabulary:
    """A vocabulary of the lexicon alone (no names of any knowledge base)."""
    return Vocabulary.build(gpu_names={}, provider_names={}, regions=[], instance_types=[])


def test_every_phrase_is_in_the_vocabulary(bare):
    for field, value, phrases in lexicon.phrases():
        for phrase in phrases:
            hits = bare.cjk.get(phrase.lower()) if not phrase.isascii() else bare.words.get(phrase_key(phrase))
            assert hits and any((h.field, h.value) == (field, value) for h in hits), (field, value, phrase)
    assert Hit("pricing", "reserved", "RI") in bare.words["ri"]  # written with capitals: only as written


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("H100 spot price", "pricing", "spot"),
        ("A100 竞价实例价格", "pricing", "spot"),
        ("recommend a GPU for fine-tuning", "workload", "fine_tuning"),
        ("推荐一个微调用的GPU", "workload", "fine_tuning"),
        ("cheapest H100 in RMB", "currency", "CNY"),
        ("cheapest L4 with a tight budget", "priority", "cost"),
        ("spot pitfalls egress", "topic", "spot egress"),
        ("两张H100多少钱", "gpu_count", 2),
        ("a single A10G price", "gpu_count", 1),
    ],
)
def test_data_reaches_the_query(kb, text, field, value):
    from handlers.parse import parse

    assert getattr(parse(text, Vocabulary.from_kb(kb)), field) == value


def test_the_vocabulary_is_kept_beside_the_knowledge_base(kb):
    """Built once per KB (its memo), pickled beside kb.db by the knowledge layer, read back by the next process."""
    from knowledge.kb.reader import KB

    vocab = Vocabulary.from_kb(kb)
    assert Vocabulary.from_kb(kb) is vocab
    path = cache_path(kb)
    assert path is not None and path.exists() and path.parent == Path(kb.path).parent
    again = KB(Path(kb.path))  # another process, in effect: an empty memo
    try:
        assert Vocabulary.from_kb(again) == vocab
        path.write_bytes(b"not a pickle")  # a damaged cache is rebuilt, never trusted
        fresh = KB(Path(kb.path))
        try:
            assert Vocabulary.from_kb(fresh).words == vocab.words
        finally:
            fresh.close()
    finally:
        again.close()
    assert sorted(p.name for p in path.parent.glob("*.vocab*.pickle")) == [path.name]
