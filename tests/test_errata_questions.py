"""The ten major seed errata (seed_errata.md section 1), asked as questions in English and Chinese through the
full pipeline (`bot.pipeline.answer`): the correct fact appears, and the wrong figure is never stated as fact.

Each case asks the erratum's own question (from errata.yaml) and a second phrasing of ours. "Stated as fact"
patterns are the shapes gpubot uses for facts (an instance line, a datasheet line, an offer); corrections may
quote the wrong figure while explaining it ("624 is a single A100's sparse figure"), which is allowed.
"""

from __future__ import annotations

import re

import pytest

from bot.pipeline import answer
from bot.render import render_text
from tests.reference_calc import CATALOGS
from tests.yaml_text import yaml_load

ERRATA = {e["id"]: e for e in yaml_load((CATALOGS.parent / "errata.yaml").read_text(encoding="utf-8"))}
STOP = r"[^\n,，;；。(（\"“”「」]"  # within one clause, outside quotes


def fp32_claim(value: str) -> str:
    return rf"(FP32|单精度){STOP}{{0,30}}\b{value}\s*TFLOPS"


# (top-10 rank, erratum id, extra phrasings, patterns that must appear, patterns that must not appear)
CASES = [
    (
        1,
        "S2-05",
        ["Is the FP32 performance of p4d.24xlarge 624 TFLOPS?", "AWS P4实例的FP32算力是624 TFLOPS吗？"],
        [r"\b156(\.0)? TFLOPS|=\s*156\b"],
        [fp32_claim("624")],
    ),
    (1, "S2-06", ["FP32 TFLOPS of 8 V100 GPUs?", "8张V100的单精度算力有多少？"], [r"125\.6"], [fp32_claim("496")]),
    (
        1,
        "S2-07",
        ["Do four T4 GPUs give 130 TFLOPS FP32?", "阿里云GN6i 4卡T4的FP32算力是130 TFLOPS吗？"],
        [r"32\.4"],
        [fp32_claim("130")],
    ),
    (
        1,
        "S2-08",
        ["Is an 8x A30 server 312 TFLOPS in FP32?", "8卡A30的FP32算力是312 TFLOPS吗？"],
        [r"82\.4"],
        [fp32_claim("312")],
    ),
    (
        2,
        "S0-07",
        ["Which NVLink generation does the A100 use?", "A100用的是第几代NVLink？"],
        [r"NVLink 3", r"600 ?GB/s"],
        [rf"A100{STOP}{{0,15}}(supports?|uses|支持|使用)\s*NVLink\s*4"],
    ),
    (
        3,
        "S1-03",
        ["Is p4d.24xlarge an 80GB A100 instance?", "p4d.24xlarge是80GB显存的A100吗？"],
        [r"320 ?GB", r"p4de"],
        [r"p4d\.24xlarge[ ·(（)）:：aws]*8(x|卡) ?(Tesla )?A100 80 ?GB"],
    ),
    (
        4,
        "S1-04",
        ["Does Azure NCv3 have A100 GPUs?", "Azure NCv3是A100吗？"],
        [r"V100"],
        [rf"NC\d+r?s_v3{STOP}{{0,20}}A100"],
    ),
    (
        5,
        "X-01",
        ["Is AWS A100 on-demand $3.06 per hour?", "AWS A100按需价格是3.26美元每小时吗？"],
        # Chinese answers say "/GPU·小时" and name AWS "亚马逊云科技" (issue 16)
        [r"p4d\.24xlarge", r"\$2\.74/GPU(-h|·小时)"],
        [r"(aws|亚马逊云科技) [^\n]*A100[^\n]*\$3\.(06|26)/GPU(-h|·小时)"],
    ),
    (
        6,
        "S0-11",
        [
            "Kubernetes: can I set requests nvidia.com/gpu: 0.25 to share a GPU?",
            "K8s里requests写nvidia.com/gpu: 0.25能分配1/4卡吗？",
        ],
        [r"limits", r"time-slicing|时间片", r"0\.25 is rejected|0\.25会被拒绝"],
        [r"0\.25[^\n]{0,20}(is allowed|works|可以分配)"],
    ),
    (
        7,
        "S0-05",
        ["Does p4d.24xlarge do 1000 images/s on ResNet-50?", "p4d.24xlarge训练ResNet-50是1000张图像/秒吗？"],
        [r"16,621"],
        [rf"(8x ?A100|8卡A100|p4d\.24xlarge){STOP}{{0,20}}\b1,?000\s*(img|images|张)"],
    ),
    (
        7,
        "S0-06",
        ["Is Tencent GN10Xp an 8x A100 instance?", "腾讯云GN10Xp是8卡A100吗？"],
        [r"V100"],
        [rf"GN10Xp[.\w]*{STOP}{{0,20}}(8x ?A100|8卡 ?A100)"],
    ),
    (
        8,
        "S0-01",
        ["Does A100 80GB support FP8 precision?", "A100 80GB支持FP8精度吗？"],
        [r"no FP8|不支持FP8"],
        [r"A100[^\n]{0,40}FP8 \d"],
    ),
    (
        9,
        "S0-13",
        ["Does p4d have 100Gbps networking?", "p4d.24xlarge是100Gbps网络吗？"],
        [r"400 ?(Gbps|Gigabit)"],
        [rf"p4d{STOP}{{0,30}}\b100 ?Gbps"],
    ),
    (
        9,
        "S2-04",
        ["Is the AWS P4 network 100 Gbps?", "AWS P4实例的网络带宽是100Gbps吗？"],
        [r"400 ?(Gbps|Gigabit)"],
        [rf"p4d{STOP}{{0,30}}\b100 ?Gbps"],
    ),
    (
        9,
        "S1-06",
        ["Does Tencent GN10Xp have a 100 Gbps network?", "腾讯云GN10Xp有100Gbps网络吗？"],
        [r"24 ?Gbps"],
        [rf"GN10Xp{STOP}{{0,30}}\b100 ?Gbps"],
    ),
    (
        10,
        "S0-04",
        ["Which provider has the best 1-year reserved A100 value, Tencent?", "腾讯云1年预留A100性价比最优吗？"],
        [r"contradicts|自相矛盾", r"unverified|未经核实|synthetic|编造"],
        [rf"(Tencent|腾讯云){STOP}{{0,30}}(is the best value|性价比最优|性价比最高)"],
    ),
]


SAME_FACT = {
    "S2-04": ("S0-13",),
    "S0-13": ("S2-04",),
    "S0-06": ("X-06",),
    "S2-05": ("X-05",),
    "S0-07": ("X-05",),
    "X-01": ("S1-10",),
}


def questions():
    for rank, erratum, extra, must, never in CASES:
        row = ERRATA[erratum]
        for text in (row["question_en"], row["question_zh"], *extra):
            yield pytest.param(erratum, text, must, never, id=f"{rank}-{erratum}-{text[:40]}")


def test_every_top10_erratum_is_covered():
    ranked = {e["id"] for e in ERRATA.values() if e.get("top10")}
    assert ranked <= {case[1] for case in CASES}
    assert {case[0] for case in CASES} == set(range(1, 11))


@pytest.mark.parametrize(("erratum", "text", "must", "never"), list(questions()))
def test_erratum_question_is_answered_correctly(kb, erratum, text, must, never):
    result = answer(text, kb)
    shown = render_text(result)
    for pattern in must:
        assert re.search(pattern, shown, re.IGNORECASE), f"{erratum}: {pattern!r} missing from:\n{shown}"
    for pattern in never:
        assert not re.search(pattern, shown, re.IGNORECASE), f"{erratum}: wrong figure stated:\n{shown}"
    chinese = bool(re.search(r"[\u4e00-\u9fff]", text))
    assert result.query.language == ("zh" if chinese else "en")
    same = {erratum, *SAME_FACT.get(erratum, ())}  # errata that state the same correction
    assert same & {e["id"] for e in result.extra.get("errata", [])}
    assert "spec.seed-erratum" in [r.id for r in result.rules]
