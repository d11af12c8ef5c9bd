"""The README's examples of exclusions, usage and unknown names (issue 23) are what gpubot answers: each
`$ gpubot ask "..."` is asked in process, and its lines must be the first lines of the text answer (a line ending
in "…" is a prefix)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot import pipeline
from bot.render import render_text

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
BLOCK = README.split("<!-- readme-examples -->", 1)[1].split("<!-- /readme-examples -->", 1)[0]
EXAMPLES = [
    (m.group(1), [line for line in m.group(2).splitlines() if line.strip()])
    for m in re.finditer(r'^\$ gpubot ask "(.+)"\n((?:.+\n)+)', BLOCK.replace("```", ""), re.MULTILINE)
]


def test_the_readme_has_its_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize(("question", "expected"), EXAMPLES, ids=[q for q, _ in EXAMPLES])
def test_a_readme_example_is_what_gpubot_answers(kb, question, expected):
    lines = render_text(pipeline.answer(question, kb)).splitlines()
    got = [line for line in lines if line.strip()]
    for want, line in zip(expected, got, strict=False):
        if want.endswith("…"):
            assert line.startswith(want[:-1].rstrip()), (question, line)
        else:
            assert line == want, (question, line)
    assert len(got) >= len(expected)
