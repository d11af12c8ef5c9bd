"""The command line keeps printed answers for the current knowledge base, and never serves them after it changed."""

from __future__ import annotations

import pytest

from bot.cli import main
from tests.conftest import copy_kb


@pytest.fixture
def home(kb, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    monkeypatch.delenv("GPUBOT_ANSWER_CACHE", raising=False)
    return home


def ask(capsys, *args: str) -> str:
    assert main(["ask", *args]) == 0
    return capsys.readouterr().out


def test_a_repeated_question_is_answered_from_the_kept_output(home, capsys):
    first = ask(capsys, "cheapest A100 spot")
    kept = list((home / "cache" / "answers").glob("*.out"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == first
    kept[0].write_text("kept answer\n", encoding="utf-8")
    assert ask(capsys, "cheapest A100 spot") == "kept answer\n"  # reused, not recomputed
    assert ask(capsys, "cheapest A100 spot", "--json") != "kept answer\n"  # --json is another output


def test_a_rebuilt_knowledge_base_is_never_answered_from_old_output(home, capsys):
    ask(capsys, "cheapest A100 spot")
    for kept in (home / "cache" / "answers").glob("*.out"):
        kept.write_text("stale answer\n", encoding="utf-8")
    assert main(["kb", "build"]) == 0
    capsys.readouterr()
    fresh = ask(capsys, "cheapest A100 spot")
    assert "stale" not in fresh and fresh.startswith("Cheapest A100 spot: ") and "/GPU-h" in fresh  # issue 16 shape


def test_history_and_digest_are_never_kept(home, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    ask(capsys, "digest")
    assert not list((home / "cache" / "answers").glob("*.out"))


def test_the_kept_answers_stay_within_their_bounds_least_recently_used_out(home, capsys, monkeypatch):
    """Issue 25: every question used to leave a file for good; now the folder keeps the most recently used."""
    from bot import disk_cache

    monkeypatch.setattr(disk_cache, "MAX_FILES", 3)
    folder = home / "cache" / "answers"
    questions = ["cheapest A100 spot", "cheapest H100 spot", "cheapest L4 spot", "cheapest A10G spot"]
    for question in questions[:3]:
        ask(capsys, question)
    first = ask(capsys, questions[0])  # used again: now the most recent
    ask(capsys, questions[3])
    assert len(list(folder.glob("*.out"))) == 3
    assert any(p.read_text(encoding="utf-8") == first for p in folder.glob("*.out")), "the one used again is kept"
    monkeypatch.setattr(disk_cache, "MAX_BYTES", 1)
    ask(capsys, "cheapest V100 spot")
    assert len(list(folder.glob("*.out"))) <= 1, "bounded by bytes too"


def test_a_half_built_knowledge_base_of_a_killed_build_is_removed_at_the_next_build(home):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftover = home / f".kb-{dead.stdout.strip()}-x1y2z3.db"
    old_style = home / ".kbabc123.db"
    leftover.write_bytes(b"half a database")
    old_style.write_bytes(b"not ours")
    assert main(["kb", "build"]) == 0
    assert not leftover.exists() and old_style.exists()
    assert not list(home.glob(".kb-*.db")), "the build's own temporary file is gone too"
