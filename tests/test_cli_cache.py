"""The command line keeps printed answers for the current knowledge base, and never serves them after it changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main


@pytest.fixture
def home(kb, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "kb.db").write_bytes(Path(kb.path).read_bytes())
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
