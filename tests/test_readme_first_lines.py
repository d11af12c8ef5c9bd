"""Issue 26 (beside test_readme_examples.py, which checks the issue-23 block line by line):
README's `$ gpubot ask ...` examples are real output. Every example's first line (the verdict) must
equal what `gpubot ask` answers now on the bundled data, so the README fails this test when answers drift."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bot.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"


def _examples() -> list[tuple[str, str]]:
    """(question, first line shown) for every `$ gpubot ask "..."` line inside a fenced block that shows output."""
    found = []
    lines = README.read_text(encoding="utf-8").splitlines()
    fenced = False
    for n, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced and line.startswith("$ gpubot ask "):
            shown = lines[n + 1] if n + 1 < len(lines) else ""
            if shown and not shown.startswith(("$", "```", "...")):
                found.append((shlex.split(line[2:])[2], shown))
    return found


EXAMPLES = _examples()


def test_the_readme_has_examples_to_check():
    assert len(EXAMPLES) >= 3
    assert any(re.search(r"[\u4e00-\u9fff]", question) for question, _ in EXAMPLES)  # and a Chinese one


@pytest.mark.parametrize(("question", "shown"), EXAMPLES, ids=[q for q, _ in EXAMPLES])
def test_each_readme_example_shows_the_real_first_line(kb, capsys, question, shown):
    assert main(["ask", question]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    if shown.endswith("…"):  # an example shown as a prefix (tests/test_readme_examples.py checks its lines)
        shown = shown[:-1].rstrip()
        first = first[: len(shown)]
    assert first == shown, f"README.md shows {shown!r} for {question!r}; gpubot now answers {first!r}"
