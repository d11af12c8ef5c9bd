"""Issue 27: the README's three questions are real answers (each `$ gpubot ask` line's next line is the title)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.pipeline import answer

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = README.read_text(encoding="utf-8").split("### What a training run costs", 1)[1].split("\n### ", 1)[0]
ASKED = re.findall(r'^\$ gpubot ask "([^"]+)"\n(.+)$', SECTION, flags=re.MULTILINE)


def test_the_readme_asks_the_issue_questions():
    asked = [q for q, _ in ASKED]
    assert len(asked) >= 8
    assert {
        "cost to fine-tune Llama 2 70B with LoRA",
        "self-host Llama 3.1 8B or use an API?",
        "自己部署还是用API",
    } <= set(asked)
    assert all(
        s in SECTION for s in ("Apache-2.0", "MIT", "MLPerf Results Messaging Guidelines", "not verified by MLCommons")
    )


@pytest.mark.parametrize(("question", "title"), ASKED)
def test_each_readme_answer_is_what_the_bot_says(kb, question, title):
    found = answer(question, kb)
    assert found.title == title


def test_the_readme_counts_are_the_data_s(kb):
    counts = {
        "training systems": kb.rows("SELECT COUNT(*) AS n FROM mlperf_training")[0]["n"],
        "inference rows": kb.rows("SELECT COUNT(*) AS n FROM mlperf_inference")[0]["n"],
        "API ids": kb.rows("SELECT COUNT(*) AS n FROM api_prices")[0]["n"],
    }
    for what, n in counts.items():
        assert f"{n} {what}" in " ".join(SECTION.split()), what
