"""A pitfalls question is answered with its pitfalls (issue 23): every pitfall tagged with the cloud (or GPU) named,
most severe first, each shown in the reply itself, not behind "--verbose"; the expected set is read straight from
`knowledge/data/pitfalls.yaml`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import pipeline
from bot.render import render_text
from tests.yaml_text import yaml_load

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "data"
PITFALLS = yaml_load((DATA / "pitfalls.yaml").read_text(encoding="utf-8"))
PROVIDERS = {p["id"]: p for p in yaml_load((DATA / "providers.yaml").read_text(encoding="utf-8"))["providers"]}
TAGGED = sorted({p for row in PITFALLS for p in row["tags"]["providers"]})
ORDER = {"high": 0, "medium": 1, "low": 2}


@pytest.mark.parametrize("template", ["pitfalls {p}", "what are the gotchas of {p}", "{zh}有哪些坑"])
@pytest.mark.parametrize("provider", TAGGED)
def test_a_pitfalls_question_shows_every_pitfall_of_that_cloud_worst_first(kb, provider, template):
    text = template.format(p=provider, zh=PROVIDERS[provider]["name_zh"])
    got = pipeline.answer(text, kb)
    assert got.query.intent == "pitfalls" and got.query.providers == [provider], got.query
    expected = {row["id"] for row in PITFALLS if provider in row["tags"]["providers"]}
    ids = [p.id for p in got.pitfalls]
    assert expected <= set(ids), (text, expected - set(ids))
    severities = [ORDER[p.severity] for p in got.pitfalls[: len(expected)]]  # then every cloud's (test below)
    assert severities == sorted(severities)
    shown = render_text(got)
    zh = got.query.language == "zh"
    for row in PITFALLS:
        if row["id"] in expected:
            assert (row["title_zh"] if zh else row["title_en"]) in shown  # in the short reply, not behind a flag


GENERAL = {row["id"] for row in PITFALLS if row["tags"].get("all_clouds")}


def test_the_pitfalls_of_every_cloud_are_marked_and_name_no_cloud():
    assert len(GENERAL) >= 5 and "spot-checkpoint-to-durable-storage" in GENERAL
    assert all(not row["tags"]["providers"] for row in PITFALLS if row["id"] in GENERAL)


@pytest.mark.parametrize("template", ["pitfalls {p}", "{zh}有哪些坑"])
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_cloud_gets_its_own_pitfalls_then_those_of_every_cloud_and_no_other_clouds(kb, provider, template):
    got = pipeline.answer(template.format(p=provider, zh=PROVIDERS[provider]["name_zh"]), kb)
    assert got.query.providers == [provider], got.query
    own = {row["id"] for row in PITFALLS if provider in row["tags"]["providers"]}
    ids = [p.id for p in got.pitfalls]
    assert set(ids[: len(own)]) == own and set(ids[len(own) :]) == GENERAL, (provider, ids)
    for part in (got.pitfalls[: len(own)], got.pitfalls[len(own) :]):  # each part worst first
        assert [ORDER[p.severity] for p in part] == sorted(ORDER[p.severity] for p in part)
    assert [p.all_clouds for p in got.pitfalls] == [False] * len(own) + [True] * len(GENERAL)
