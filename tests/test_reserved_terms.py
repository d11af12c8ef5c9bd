"""Issue 26: every reserved / committed term a pricing file has ranks, named in words; break-even uses the cheapest
term of the asked length. Oracles are computed here from the raw pricing files (plain json / yaml), never from
gpubot code: AWS effective hourly rates of every `yrTerm{1,3}{Standard,Convertible}.{no,partial,all}Upfront` key,
GCP committed use `month_1y / 730`, `month_3y / 730`, per GPU (the files' READMEs)."""

from __future__ import annotations

import json
import re

import pytest

from bot.pipeline import answer
from bot.render import render_text
from handlers.break_even import break_even
from knowledge.paths import PRICING_DIR
from tests.reference_calc import CATALOGS, aws_reserved, rows
from tests.yaml_text import yaml_load

AWS = json.loads((PRICING_DIR / "aws_gpu_instances_reserved_spot.json").read_text(encoding="utf-8"))
GCP = yaml_load((PRICING_DIR / "gcp_gpu_commitments.yml").read_text(encoding="utf-8"))
# The bot prices instance types it knows from a catalog (accelerator, count): dl2q (Qualcomm) was dropped from the
# bundled AWS catalog (its README), so its reserved rates have nothing to attach to.
AWS_CATALOG_TYPES = {r["InstanceType"] for r in rows(CATALOGS / "aws_vms.csv")}
GCP_GPU_KEYS = {  # the GCP file's GPU count keys (its README) and the family each names
    "a100": "A100",
    "a100-80gb": "A100",
    "h100-80gb": "H100",
    "h100-80gb-mega": "H100",
    "l4": "L4",
    "rtx6000": "RTX PRO 6000",
}
RAW_KEY = re.compile(r"yrTerm|\bspot_(min|avg|max)\b|\bondemand\b|month_[13]y")


def _aws_family(model: str) -> str:
    """ "NVIDIA T4 Tensor Core" -> "T4", "NVIDIA Tesla V100" -> "V100", "AMD Radeon Pro V520" -> "Radeon Pro V520"."""
    for word in ("NVIDIA ", "AMD ", "AWS ", "Tesla ", " Tensor Core"):
        model = model.replace(word, "")
    return model


def _oracle() -> dict[tuple[str, int], list[tuple[float, str, str, str]]]:
    """(family, years) -> [(USD per GPU-hour, provider, instance type, region)], cheapest first, every term."""
    found: dict[tuple[str, int], list[tuple[float, str, str, str]]] = {}
    for item in AWS:
        count = float(item.get("GPU") or 0)
        if not item.get("GPU_model") or count <= 0 or item["instance_type"] not in AWS_CATALOG_TYPES:
            continue
        for region, by_os in item["pricing"].items():
            for years in (1, 3):
                best = aws_reserved(by_os.get("linux") or {}, years)
                if best:
                    entry = (best[0] / count, "aws", item["instance_type"], region)
                    found.setdefault((_aws_family(item["GPU_model"]), years), []).append(entry)
    for machine, entry in GCP["compute"]["instance"].items():
        key = next((k for k in GCP_GPU_KEYS if entry.get(k)), None)
        for region, cost in entry.get("cost", {}).items() if key else ():
            for years in (1, 3):
                if cost.get(f"month_{years}y"):
                    price = cost[f"month_{years}y"] / 730 / entry[key]
                    found.setdefault((GCP_GPU_KEYS[key], years), []).append((price, "gcp", machine, region))
    return {k: sorted(v) for k, v in found.items()}


ORACLE = _oracle()


@pytest.mark.parametrize(("family", "years"), sorted(ORACLE))
def test_cheapest_reserved_offer_per_family_is_the_cheapest_term_of_the_raw_files(kb, family, years):
    result = answer(f"cheapest {family} reserved {years} year", kb)
    assert result.offers, f"no {years}-year offer for {family}"
    top = result.offers[0]
    assert top.pricing == f"reserved_{years}y"
    assert top.price_per_gpu_hour_usd == pytest.approx(ORACLE[family, years][0][0], abs=1e-9)
    cheapest_types = {(p, i) for price, p, i, _ in ORACLE[family, years] if price - ORACLE[family, years][0][0] < 1e-9}
    assert (top.provider, top.instance_type) in cheapest_types
    text = render_text(result)
    assert not RAW_KEY.search(text), text  # terms in words


def test_the_h100_1_year_headline_names_its_convertible_term_in_words(kb):
    # p5.48xlarge has no 1-year Standard term in us-east-1: before issue 26 the Convertible ones never ranked
    text = render_text(answer("cheapest H100 reserved 1 year", kb))
    linux = next(i for i in AWS if i["instance_type"] == "p5.48xlarge")["pricing"]["us-east-1"]["linux"]
    rate, key = aws_reserved(linux, 1)
    assert key == "yrTerm1Convertible.allUpfront"
    assert text.splitlines()[0].startswith("Cheapest H100 1-year reserved: aws p5.48xlarge in us-east-1")
    assert "(1-year Convertible, all upfront)" in text.splitlines()[0] and f"${rate / 8:.2f}/GPU-h" in text
    zh = render_text(answer("最便宜的H100 一年预留", kb))
    assert "1年可转换预留，全部预付" in zh and not RAW_KEY.search(zh)


def _reserved_instances() -> list[tuple[str, str]]:
    """Every AWS GPU instance type with a reserved term in the file and a catalog row, with its regions."""
    return sorted(
        (item["instance_type"], region)
        for item in AWS
        if item["instance_type"] in AWS_CATALOG_TYPES
        for region, by_os in item["pricing"].items()
        if (by_os.get("linux") or {}).get("reserved") and float(by_os["linux"].get("ondemand") or 0) > 0
    )


def test_break_even_of_every_aws_gpu_instance_and_region_with_a_reserved_term(kb):
    checked = 0
    for instance_type, region in _reserved_instances():
        linux = next(i for i in AWS if i["instance_type"] == instance_type)["pricing"][region]["linux"]
        for years in (1, 3):
            best = aws_reserved(linux, years)
            got = break_even(kb, instance_type, region, f"reserved_{years}y")
            if best is None:
                assert got is None, (instance_type, region, years)
                continue
            assert got is not None, (instance_type, region, years)
            assert (got["term"], got["reserved_rate"]) == (best[1], best[0]), (instance_type, region, years)
            assert got["utilisation_pct"] == pytest.approx(100 * best[0] / float(linux["ondemand"]))
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("instance_type", sorted({i for i, _ in _reserved_instances()}))
def test_break_even_answer_in_words_for_every_reserved_aws_instance(kb, instance_type):
    item = next(i for i in AWS if i["instance_type"] == instance_type)
    region = "us-east-1" if "us-east-1" in item["pricing"] else sorted(item["pricing"])[0]
    linux = item["pricing"][region]["linux"]
    for text, years in ((f"break-even for {instance_type} reservation in {region}", 1),):
        result = answer(text, kb)
        best = aws_reserved(linux, years)
        rendered = render_text(result)
        assert not RAW_KEY.search(rendered), rendered
        if best is None:
            assert result.extra.get("break_even") is None
            continue
        pct = 100 * best[0] / float(linux["ondemand"])
        assert f"{pct:.1f}%" in rendered.splitlines()[0], rendered


def test_reserve_or_on_demand_in_chinese_uses_the_cheapest_term(kb):
    linux = next(i for i in AWS if i["instance_type"] == "p5.48xlarge")["pricing"]["us-east-1"]["linux"]
    rate, _ = aws_reserved(linux, 1)
    first = render_text(answer("p5.48xlarge 每月用300小时，预留还是按需？", kb)).splitlines()[0]
    pct = 100 * rate / float(linux["ondemand"])
    assert f"{pct:.1f}%" in first and "1年可转换预留，全部预付" in first and "按需更便宜" in first  # 300/730 = 41%


def test_every_term_key_of_the_pricing_files_has_words():
    from handlers.terms import term_words

    keys = {k for i in AWS for by_os in i["pricing"].values() for k in (by_os.get("linux") or {}).get("reserved", {})}
    assert len(keys) == 12  # the README: Standard and Convertible x no/partial/all upfront x 1 and 3 years
    for key in keys:
        years, kind, upfront = re.fullmatch(r"yrTerm(\d)(\w+)\.(\w+)Upfront", key).groups()
        assert term_words(key) == f"{years}-year {kind}, {upfront} upfront"
        assert term_words(key, "zh").startswith(f"{years}年") and not RAW_KEY.search(term_words(key, "zh"))
    assert term_words("reserved_3y", "en", "gcp") == "3-year committed use"
    assert term_words("spot_avg") == "average spot price" and term_words("ondemand") == "on-demand"
