"""One cache mechanism per knowledge base, released with it (issue 17), and file caches that follow the code.

Everything derived from a knowledge base (answers, decoded errata and pitfalls, per-question scores) lives in
that `KB` object's memo: a rebuilt knowledge base (a new object) starts empty, and a replaced one is freed. The
command line's kept answers name the code that printed them, so an upgrade never serves an old answer.
"""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path

from bot.cli import main
from bot.pipeline import answer
from knowledge.code_version import tree_version
from knowledge.kb.reader import KB
from tests.conftest import copy_kb

QUESTIONS = ("cheapest A100 spot", "H100 vs A100 for training", "recommend a GPU to fine-tune a 7B model", "A100 坑")


def test_answers_and_derived_data_live_in_the_kb_and_go_with_it(kb):
    from handlers import cache

    fresh = KB(Path(kb.path))
    first = [answer(q, fresh) for q in QUESTIONS]
    assert {"handlers.cache.answers", "spec.errata", "pitfalls.rows"} <= set(fresh.__dict__["_memo"])
    hits = cache.stats["hits"]
    assert [answer(q, fresh) for q in QUESTIONS] == first  # the same answers, kept
    assert cache.stats["hits"] >= hits + len(QUESTIONS)
    other = KB(Path(kb.path))  # a rebuild is another KB object: nothing carried over
    assert "_memo" not in other.__dict__
    assert [answer(q, other).title for q in QUESTIONS] == [a.title for a in first]
    ref = weakref.ref(fresh)
    del fresh, first
    gc.collect()
    assert ref() is None  # no module-level cache keeps a replaced knowledge base alive


def test_clearing_the_answer_cache_drops_every_kbs_answers(kb):
    from bot.pipeline import understand
    from handlers import INTENTS, cache

    fresh = KB(Path(kb.path))
    query = understand(QUESTIONS[0], fresh)
    kept = INTENTS[query.intent](query, fresh)
    assert INTENTS[query.intent](query, fresh) is kept
    cache.clear()
    again = INTENTS[query.intent](query, fresh)
    assert again is not kept and again == kept


def test_the_code_version_moves_when_a_source_file_changes(tmp_path):
    root = Path(__file__).resolve().parents[1]
    for package in ("bot", "handlers", "knowledge"):
        shutil.copytree(root / package, tmp_path / package, ignore=shutil.ignore_patterns("data", "__pycache__"))
    before = tree_version(tmp_path)
    assert tree_version(tmp_path) == before
    with (tmp_path / "handlers" / "cheapest.py").open("a", encoding="utf-8") as handle:
        handle.write("# upgraded\n")
    assert tree_version(tmp_path) != before


def test_an_upgrade_never_prints_an_answer_kept_by_the_code_it_replaced(kb, tmp_path, monkeypatch, capsys):
    import knowledge.code_version as code

    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.delenv("GPUBOT_ANSWER_CACHE", raising=False)
    assert main(["ask", "cheapest A100 spot"]) == 0
    first = capsys.readouterr().out
    for kept in (home / "cache" / "answers").glob("*.out"):
        kept.write_text("answer of the old code\n", encoding="utf-8")
    assert main(["ask", "cheapest A100 spot"]) == 0
    assert capsys.readouterr().out == "answer of the old code\n"  # same code: the kept output
    monkeypatch.setattr(code, "code_version", lambda: "after-an-upgrade")
    assert main(["ask", "cheapest A100 spot"]) == 0
    assert capsys.readouterr().out == first  # computed again by the new code
