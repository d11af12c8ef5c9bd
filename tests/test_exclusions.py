"""Exclusions (issue 23): "except gcp", "not spot", "outside China", "不要竞价" rule things out, in every intent.

The oracle for "the right answer" is the same question asked with the complement as an explicit filter (every other
provider through the pipeline's preferences, as `--providers` does); the region groups are recomputed from the
patterns of `knowledge/data/region_groups.csv` with `fnmatch`, not through the parser's vocabulary.
"""

from __future__ import annotations

import csv
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from bot import pipeline
from bot.render import render_text
from handlers.parse import Vocabulary, parse
from tests.yaml_text import yaml_load

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "data"
PROVIDERS = {p["id"]: p for p in yaml_load((DATA / "providers.yaml").read_text(encoding="utf-8"))["providers"]}
with (DATA / "region_groups.csv").open(encoding="utf-8") as _handle:
    GROUPS = list(csv.DictReader(_handle))

EN = ["cheapest {gpu} except {p}", "cheapest {gpu} excluding {p}", "cheapest {gpu} without {p}",
      "cheapest {gpu} not on {p}", "cheapest {gpu} other than {p}", "cheapest {gpu}, anything but {p}",
      "cheapest {gpu}, avoid {p}"]  # fmt: skip
ZH = ["最便宜的{gpu}，不要{zh}", "除了{zh}以外最便宜的{gpu}", "{zh}之外最便宜的{gpu}", "最便宜的{gpu}，排除{zh}",
      "最便宜的{gpu} 不用{p}", "最便宜的{gpu} 别用{zh}", "最便宜的非{zh}的{gpu}"]  # fmt: skip


@pytest.fixture(scope="module")
def vocab(kb):
    return Vocabulary.from_kb(kb)


def _gpu_of(kb, provider: str) -> str:
    """A GPU the provider rents on demand that others rent too (the question must have an answer elsewhere)."""
    rows = kb.rows(
        "SELECT gpu, COUNT(DISTINCT provider) n FROM offers WHERE gpu IN (SELECT gpu FROM offers WHERE provider = ?) "
        "AND kind IN ('catalog','pricing') AND pricing = 'on_demand' GROUP BY gpu ORDER BY n DESC, gpu",
        [provider],
    )
    return rows[0]["gpu"]


def _top(answer) -> tuple:
    best = answer.offers[0]
    return best.provider, best.instance_type, best.region, round(best.price_per_gpu_hour_usd, 6)


def _catalog_providers(kb) -> list[str]:
    return [r["provider"] for r in kb.rows("SELECT DISTINCT provider FROM offers WHERE kind IN ('catalog','pricing')")]


@pytest.mark.parametrize("template", EN + ZH)
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_an_excluded_provider_is_never_offered_and_the_answer_is_the_complements(kb, provider, template):
    if provider not in _catalog_providers(kb):
        pytest.skip(f"{provider} has no priced offers in the bundled catalogs")
    gpu = _gpu_of(kb, provider)
    text = template.format(gpu=gpu, p=provider, zh=PROVIDERS[provider].get("name_zh") or provider)
    got = pipeline.answer(text, kb)
    assert got.query.exclude_providers == [provider], text
    assert got.offers and provider not in {o.provider for o in [*got.offers, *got.context]}, text
    others = ",".join(sorted(set(_catalog_providers(kb)) - {provider}))
    plain = "最便宜的" + gpu if "最便宜" in template else "cheapest " + gpu
    complement = pipeline.answer_text_with(plain, kb, pipeline.prefs_from({"providers": others}, kb))
    assert _top(got) == _top(complement), text
    second = render_text(got).splitlines()[1]
    assert (
        ("Excluding" in second or "已排除" in second)
        and PROVIDERS[provider]["name_en"].split()[0] in second
        or (PROVIDERS[provider].get("name_zh", "") in second)
    ), second


@pytest.mark.parametrize(
    ("text", "pricing"),
    [("cheapest H100, not spot", "spot"), ("cheapest L4 that is not spot", "spot"), ("最便宜的A100，不要竞价", "spot"),
     ("cheapest A100 non-spot", "spot"), ("cheapest A100 without on-demand", "on_demand"),
     ("最便宜的A100，不用按需", "on_demand"), ("cheapest T4 except preemptible", "spot")],
)  # fmt: skip
def test_an_excluded_pricing_model_is_never_offered(kb, text, pricing):
    got = pipeline.answer(text, kb)
    assert pricing in got.query.exclude_pricing and got.query.pricing != pricing
    assert all(o.pricing != pricing for o in got.offers)
    if pricing == "spot":  # the default (on-demand) is what is left
        assert got.offers and {o.pricing for o in got.offers} == {"on_demand"}


def _group_regions(kb, group: dict) -> set[str]:
    patterns = group["patterns"].split("|")
    regions = {r["region"] for r in kb.rows("SELECT DISTINCT region FROM offers")}
    return {r for r in regions if any(fnmatchcase(r, p) for p in patterns)}


@pytest.mark.parametrize("group", GROUPS, ids=[g["group"] for g in GROUPS])
@pytest.mark.parametrize("template", ["cheapest A100 outside {w}", "cheapest A100 not in {w}", "{zh}以外最便宜的A100"])
def test_an_excluded_region_group_is_never_offered(kb, group, template):
    aliases = group["aliases"].split("|")
    zh = next((a for a in aliases if not a.isascii()), None)
    if "{zh}" in template and zh is None:
        pytest.skip("the group has no Chinese name")
    text = template.format(w=aliases[0], zh=zh)
    got = pipeline.answer(text, kb)
    inside = _group_regions(kb, group)
    assert inside and set(got.query.exclude_regions) >= inside & set(got.query.exclude_regions), text
    assert got.offers and not {o.region for o in got.offers} & inside, text


INTENTS = [
    ("price of A100 except aws", "price"),
    ("compare A100 vs H100 excluding aws", "compare"),
    ("cost of 8 H100 for a month without aws", "tco"),
    ("which gpu to fine-tune a 13B model, not on aws", "recommend"),
    ("cost per million tokens for Llama 8B except azure", "work"),
    ("Llama 8B 每百万token成本，不要微软Azure", "work"),
    ("A100 的价格，不要亚马逊云科技", "price"),
    ("对比A100和H100，除了亚马逊云科技以外", "compare"),
    ("8张H100用一个月要多少钱，不用aws", "tco"),
    ("微调13B模型用什么GPU，不要aws", "recommend"),
]


@pytest.mark.parametrize(("text", "intent"), INTENTS)
def test_every_intent_honours_an_excluded_provider(kb, text, intent):
    got = pipeline.answer(text, kb)
    out = got.query.exclude_providers
    said = {out[0], PROVIDERS[out[0]]["name_zh"]} if out else set()
    assert got.query.intent == intent and len(out) == 1 and any(w in text for w in said), got.query
    offers = [*got.offers, *got.context, *(r.offer for r in got.recommendations if r.offer)]
    named = {o.provider for o in offers} | {row["provider"] for row in got.extra.get("work", [])}
    if intent == "tco":  # the options are priced instance types: the title names the cheapest one's provider
        named = {pid for pid, p in PROVIDERS.items() if f"{pid} " in got.title or p.get("name_zh", "-") in got.title}
    assert named and out[0] not in named, got.title


@pytest.mark.parametrize(
    ("text", "wanted", "excluded"),
    [
        ("A100 on aws but not spot", dict(providers=["aws"]), dict(exclude_pricing=["spot"])),
        ("cheapest H100 not on aws in europe", dict(), dict(exclude_providers=["aws"])),
        ("cheapest H100 except gcp and azure", dict(), dict(exclude_providers=["gcp", "azure"])),
        ("cheapest H100 spot but not on gcp", dict(pricing="spot"), dict(exclude_providers=["gcp"])),
        ("除了阿里云以外的A100，要竞价", dict(pricing="spot"), dict(exclude_providers=["alibaba"])),
        ("aws以外的最便宜H100", dict(gpus=["H100"]), dict(exclude_providers=["aws"])),
        ("阿里云的A100，不要竞价", dict(providers=["alibaba"]), dict(exclude_pricing=["spot"])),
        ("cheapest GPU except H100", dict(gpus=[]), dict(exclude_gpus=["H100"])),
        ("not sure, cheapest A100 on aws", dict(providers=["aws"]), dict(exclude_providers=[])),
        ("cheapest A100 no more than $2/GPU-h on aws", dict(providers=["aws"]), dict(exclude_providers=[])),
    ],
)
def test_an_exclusion_governs_its_own_phrase_only(vocab, text, wanted, excluded):
    query = parse(text, vocab)
    for field, value in {**wanted, **excluded}.items():
        assert getattr(query, field) == value, (text, field, getattr(query, field))
    if "europe" in text:
        assert query.regions and all(r not in query.exclude_regions for r in query.regions)


def test_an_exclusion_of_a_whole_group_is_said_as_written(kb):
    got = pipeline.answer("cheapest A10 outside China", kb)
    assert render_text(got).splitlines()[1] == "(Excluding: China)"
    assert got.offers and not any(o.region.startswith(("cn-", "ap-beijing", "ap-shanghai")) for o in got.offers)


def test_an_instance_type_cannot_be_excluded_and_that_is_said(kb):
    got = pipeline.answer("cheapest A100 except p4d.24xlarge", kb)
    assert got.query.unapplied and any("p4d.24xlarge" in n for n in got.extra["settings_notes"])


@pytest.mark.parametrize("text", ["H100 spot price history except gcp", "H100 价格历史，不要谷歌云"])
def test_history_honours_an_excluded_provider(kb, text):
    got = pipeline.answer(text, kb)
    assert got.query.intent == "history" and got.query.exclude_providers == ["gcp"]
    rows = got.extra["history"]
    assert rows and all(r["provider"] != "gcp" for r in rows)


@pytest.mark.parametrize("text", ["A100 except aws below 1.2 per GPU-hour", "A100 不要竞价 低于2美元时提醒我"])
def test_an_alert_cannot_exclude_and_says_so(vocab, text):
    from handlers.parse.alert import AlertParseError, parse_alert

    with pytest.raises(AlertParseError, match="aws|竞价|spot"):
        parse_alert(text, vocab)
