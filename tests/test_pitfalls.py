"""Pitfalls lookup and procurement checklist: the right pitfalls come first, in both languages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.pipeline import answer
from bot.render import answer_json
from knowledge.facts import pitfalls as store

ERRATA = Path(__file__).resolve().parent.parent / "knowledge" / "data" / "seed_errata.md"


@pytest.mark.parametrize(
    ("question", "expected_in_top"),
    [
        ("pitfalls spot on aws", {"spot-two-minute-interruption"}),  # provider + pricing model
        ("竞价实例有哪些坑", {"spot-two-minute-interruption", "spot-checkpoint-to-durable-storage"}),
        (
            "gotchas with reserved instances on azure",
            {"reserved-lock-in-price-cuts", "reserved-break-even-utilization"},
        ),
        ("预留实例有什么坑", {"reserved-lock-in-price-cuts", "reserved-break-even-utilization"}),
        ("pitfalls egress costs", {"egress-from-where-data-lives", "cross-region-transfer-fees"}),
        ("出网流量费用有什么坑", {"egress-from-where-data-lives", "cross-region-transfer-fees"}),
        ("pitfalls kubernetes gpu sharing 0.25 gpu", {"k8s-no-fractional-gpu", "time-slicing-no-isolation"}),
        ("k8s分配0.25张卡有什么坑", {"k8s-no-fractional-gpu"}),
        ("pitfalls driver cuda mismatch", {"driver-cuda-version-matching"}),
        ("驱动和CUDA版本不匹配怎么办 有什么坑", {"driver-cuda-version-matching"}),
        ("pitfalls vgpu sold as physical gpu", {"virtual-gpu-sold-as-physical"}),
        ("虚拟GPU冒充物理卡的坑", {"virtual-gpu-sold-as-physical"}),
        ("pitfalls gcp gpu prices", {"gcp-gpu-price-excludes-host-vm"}),
        ("谷歌云GPU价格有什么坑", {"gcp-gpu-price-excludes-host-vm"}),
        ("pitfalls p4d memory", {"p4d-40gb-vs-p4de-80gb"}),
        ("p4d.24xlarge 显存 有什么坑", {"p4d-40gb-vs-p4de-80gb"}),
        ("pitfalls A100 fp8", {"a100-has-no-fp8"}),
        ("A100支持FP8吗 有哪些坑", {"a100-has-no-fp8"}),
        ("pitfalls alibaba vgpu slices", {"alibaba-vgpu-slices-per-slice-price"}),
        ("阿里云vGPU分片的坑", {"alibaba-vgpu-slices-per-slice-price"}),
        ("pitfalls tencent GN10Xp", {"tencent-gn10xp-is-v100"}),
        ("腾讯云GN10Xp有什么坑", {"tencent-gn10xp-is-v100"}),
        ("pitfalls azure ncv3", {"azure-ncv3-is-v100-and-retired"}),
        ("pitfalls gpu quota regional availability", {"quota-and-regional-availability"}),
        ("GPU配额不够有什么坑", {"quota-and-regional-availability"}),
        ("pitfalls compliance data residency china", {"data-residency", "compliance-certification-scope"}),
        ("合规和数据本地化要注意什么坑", {"data-residency", "compliance-certification-scope"}),
        ("pitfalls storage disks billing", {"block-storage-billing"}),
        ("云盘存储费用的坑", {"block-storage-billing"}),
        ("pitfalls minimum billing increments", {"minimum-billing-increments"}),
        ("pitfalls tflops sparse dense", {"dense-vs-sparse-tflops"}),
        ("算力TFLOPS稀疏和稠密的坑", {"dense-vs-sparse-tflops"}),
        ("pitfalls H100 SXM vs PCIe vs NVL", {"sxm-pcie-nvl-one-name"}),
        ("pitfalls load balancer costs", {"load-balancer-capacity-units"}),
        ("负载均衡费用的坑", {"load-balancer-capacity-units"}),
    ],
)
def test_right_pitfalls_come_first(kb, question, expected_in_top):
    result = answer_json(answer(question, kb))
    assert result["query"]["intent"] == "pitfalls", result["query"]
    top = [p["id"] for p in result["pitfalls"][:3]]
    assert expected_in_top & set(top), (question, top)
    for pitfall in result["pitfalls"]:
        assert pitfall["source"] and pitfall["title"] and pitfall["body"]
    if result["query"]["language"] == "zh":
        assert re.search(r"[\u4e00-\u9fff]", result["pitfalls"][0]["title"])


def test_every_seed_pitfall_and_erratum_is_findable(kb):
    rows = kb.rows("SELECT id, title_en, title_zh, keywords, erratum_ids FROM pitfalls")
    for row in rows:  # each pitfall comes back when asked for by its own title, in both languages
        for title in (row["title_en"], row["title_zh"]):
            ids = [s.row["id"] for s in store.search(kb, title, limit=5)]
            assert row["id"] in ids, (title, ids)
    errata_ids = set(re.findall(r"^### ((?:S[0-2]|X)-\d{2})", ERRATA.read_text(encoding="utf-8"), re.MULTILINE))
    covered = {e for row in rows for e in json.loads(row["erratum_ids"])}
    assert errata_ids <= covered
    for erratum in kb.rows("SELECT id, question_en, question_zh, gpus, providers FROM errata"):
        for question in (erratum["question_en"], erratum["question_zh"]):  # as the parser would pass it
            found = store.search(
                kb, question, gpus=json.loads(erratum["gpus"]), providers=json.loads(erratum["providers"]), limit=8
            )
            ids = {e for s in found for e in s.row["erratum_ids"]}
            assert erratum["id"] in ids, (erratum["id"], question)


def test_nothing_matches_gives_did_you_mean(kb):
    result = answer_json(answer("pitfalls zzzqqq", kb))
    assert result["query"]["intent"] == "pitfalls"
    assert not result["pitfalls"]
    assert result["suggestions"]


@pytest.mark.parametrize(
    "question",
    ["checklist 8x A100 spot on aws", "采购前检查清单 8卡A100 竞价 aws", "procurement checklist H100 on gcp"],
)
def test_checklist_for_a_plan(kb, question):
    result = answer_json(answer(question, kb))
    assert result["query"]["intent"] == "checklist"
    items = [line for line in result["text"].splitlines() if line.startswith("☐")]
    assert len(items) >= 5
    assert result["offers"], "the plan's cheapest offer is shown"
    if "spot" in question or "竞价" in question:
        assert any("spot" in i["id"] for i in result["checklist"])
        assert "interrupt" in result["text"].lower() or "中断" in result["text"]


def test_checklist_figures_for_spot_on_aws(kb):
    text = answer("checklist 8x A100 spot on aws", kb)
    lines = "\n".join(text.lines)
    assert ">20%" in lines or "<5%" in lines or "%" in lines  # the interruption bucket of the plan
    assert "utilisation" in lines  # reserved break-even


@pytest.mark.parametrize(
    "question",
    ["cheapest A100 spot", "最便宜的H100按需实例", "cheapest T4 on alibaba"],
)
def test_other_answers_carry_pitfalls(kb, question):
    result = answer_json(answer(question, kb))
    assert 1 <= len(result["pitfalls"]) <= 3
    if "spot" in question:
        assert any("spot" in p["id"] for p in result["pitfalls"])
