"""spec and compare: datasheet figures with their source (dense vs sparse stated), instance facts, known seed errors
answered, and side-by-side comparisons with price per GPU-hour and per dense PFLOPS-hour."""

from __future__ import annotations

import csv
import json
import re

import pytest

from handlers import compare, spec
from handlers.models import Query
from tests.reference_calc import CATALOGS, per_gpu_ranking

SPECS_CSV = CATALOGS.parent / "gpu_specs.csv"


def datasheet(model: str) -> dict:
    with SPECS_CSV.open(encoding="utf-8", newline="") as handle:
        return next(r for r in csv.DictReader(handle) if r["model"] == model)


def run_spec(kb, text: str, **fields):
    return spec.handle(Query(intent="spec", text=text, **fields), kb)


def run_compare(kb, text: str, **fields):
    return compare.handle(Query(intent="compare", text=text, **fields), kb)


# --- spec ---------------------------------------------------------------------------------------------------------


def test_spec_rows_are_the_datasheet_with_its_source(kb):
    answer = run_spec(kb, "specs of H100", gpus=["H100"])
    rows = {r["model"]: r for r in answer.specs}
    assert set(rows) == {"H100 SXM5 80GB", "H100 PCIe 80GB", "H100 NVL 94GB"}
    sxm = datasheet("H100 SXM5 80GB")
    assert rows["H100 SXM5 80GB"]["fp8_tflops_dense"] == float(sxm["fp8_tflops_dense"]) == 1979
    assert rows["H100 SXM5 80GB"]["source"] == sxm["source"]
    assert [r.id for r in answer.rules] == ["spec.datasheet"]
    assert "dense" in answer.rules[0].explain and "sparse" in answer.rules[0].explain


def test_dense_and_sparse_are_both_stated_for_a_precision(kb):
    answer = run_spec(kb, "H100 FP8 TFLOPS", gpus=["H100 80GB"])
    text = "\n".join(answer.lines)
    assert "FP8 1,979 TFLOPS dense (3,958 with sparsity)" in text  # S2-12: 1,979 is the SXM *dense* FP8 figure
    assert "FP8 1,513 TFLOPS dense" in text  # the PCIe card


def test_a100_has_no_fp8(kb):
    answer = run_spec(kb, "Does the A100 support FP8?", gpus=["A100"])
    text = "\n".join(answer.lines)
    assert re.search(r"A100 .*: no FP8 support \(datasheet: No FP8\)", text)
    assert "Correction (S0-01" in text and "glennklockwood.com" in text  # the correction with its source
    assert answer.extra["errata"][0]["id"] == "S0-01"
    assert [r.id for r in answer.rules] == ["spec.datasheet", "spec.seed-erratum"]


def test_a100_fp8_in_chinese(kb):
    answer = run_spec(kb, "A100支持FP8吗？", gpus=["A100"], language="zh")
    text = "\n".join(answer.lines)
    assert "不支持FP8" in text and "更正（S0-01" in text
    assert all(re.search(r"[\u4e00-\u9fff]", r.explain) for r in answer.rules)


def test_instance_memory_p4d_is_8x_a100_40gb(kb):
    answer = run_spec(kb, "how much memory does p4d.24xlarge have", instance_types=["p4d.24xlarge"])
    text = "\n".join(answer.lines)
    assert "p4d.24xlarge (aws): 8x A100 40GB SXM4 = 320 GB GPU memory (40 GB each)" in text
    assert "p4de.24xlarge (8x A100 80 GB" in text  # S1-03: the 80 GB variant is p4de
    assert "spec.instance-memory" in [r.id for r in answer.rules]


def test_instance_memory_p4de_is_8x_a100_80gb(kb):
    answer = run_spec(kb, "p4de.24xlarge 显存多大", instance_types=["p4de.24xlarge"], language="zh")
    assert "p4de.24xlarge（aws）：8卡 A100 80GB SXM4，GPU显存共640 GB（每卡80 GB）" in answer.lines[0]


def test_a100_nvlink_is_3_0_at_600_gbps(kb):
    answer = run_spec(kb, "NVLink version of A100", gpus=["A100"])
    text = "\n".join(answer.lines)
    assert "A100 40GB SXM4" in text and "NVLink 3 (600 GB/s per GPU, bidirectional)" in text
    assert "PCIe card: only with the NVLink bridge" in text  # the PCIe A100 needs the bridge (S0-08)
    assert {"S0-07", "X-05"} & {e["id"] for e in answer.extra["errata"]}


def test_fp32_of_a_multi_gpu_server_is_count_times_datasheet(kb):
    answer = run_spec(kb, "FP32 TFLOPS of 8x A30", gpus=["A30"], gpu_count=8)
    assert any("8 x 10.3 = 82.4 TFLOPS" in line for line in answer.lines)


def test_spec_without_a_subject_asks(kb):
    answer = run_spec(kb, "specs")
    assert answer.title.startswith("Which GPU or instance type?") and not answer.specs


# --- compare ------------------------------------------------------------------------------------------------------


def test_compare_two_gpus_on_aws(kb):
    answer = run_compare(
        kb, "compare A100 and H100 on aws", gpus=["A100", "H100"], providers=["aws"], pricing="on_demand"
    )
    a100 = per_gpu_ranking(CATALOGS / "aws_vms.csv", {"A100", "A100-80GB"}, "Price")[0]
    h100 = per_gpu_ranking(CATALOGS / "aws_vms.csv", {"H100"}, "Price")[0]
    assert [round(o.price_per_gpu_hour_usd, 6) for o in answer.offers] == [round(a100[0], 6), round(h100[0], 6)]
    models = {r["model"] for r in answer.specs}
    assert {"A100 40GB SXM4", "H100 SXM5 80GB"} <= models and all(r["source"] for r in answer.specs)
    text = "\n".join(answer.lines)
    per_pflops = a100[0] / (312 / 1000)  # dense BF16, A100 SXM4
    assert f"${per_pflops:,.2f}/PFLOPS-h (BF16 dense)" in text
    assert "BF16 dense 0.32x" in text  # 312 / 989.5
    assert {"cost.per-gpu-hour", "spec.datasheet", "spec.throughput-price"} <= {r.id for r in answer.rules}


def test_compare_every_pricing_model_when_none_is_asked(kb):
    answer = run_compare(kb, "A100 vs H100", gpus=["A100", "H100"])
    text = "\n".join(answer.lines + answer.extra.get("details", []))  # pricings after the first: on request
    for label in ("on-demand", "spot", "1-year reserved"):
        assert f"A100, {label}:" in text and f"H100, {label}:" in text
    assert all("GPU only" not in o.instance_type for o in answer.offers)  # host VM price unknown: not compared


def test_compare_instance_types(kb):
    answer = run_compare(kb, "p4d.24xlarge vs p5.48xlarge", instance_types=["p4d.24xlarge", "p5.48xlarge"])
    assert [o.instance_type for o in answer.offers] == ["p4d.24xlarge", "p5.48xlarge"]
    assert {r["model"] for r in answer.specs} == {"A100 40GB SXM4", "H100 SXM5 80GB"}
    # AWS has no 1-year Standard p5 term there: the cheapest 1-year Convertible one ranks (issue 26)
    details = answer.extra.get("details", [])
    assert any(d.startswith("p5.48xlarge, 1-year reserved: $5.06/GPU-h") for d in details), details


def test_compare_providers_for_one_gpu(kb):
    answer = run_compare(
        kb, "compare aws and gcp for H100", gpus=["H100"], providers=["aws", "gcp"], pricing="on_demand"
    )
    assert [o.provider for o in answer.offers] == ["aws", "gcp"]
    aws = per_gpu_ranking(CATALOGS / "aws_vms.csv", {"H100"}, "Price")[0]
    assert answer.offers[0].price_per_gpu_hour_usd == pytest.approx(aws[0])


def test_compare_in_chinese(kb):
    answer = run_compare(kb, "A100 和 H100 对比", gpus=["A100", "H100"], language="zh")
    # line one names the winner and by how much, in Chinese (issue 16)
    winner = min(answer.offers, key=lambda o: o.price_per_gpu_hour_usd)
    assert answer.title.startswith("A100 vs H100（按需）：") and f"{winner.gpu}更便宜" in answer.title
    assert all(re.search(r"[\u4e00-\u9fff]", r.explain) for r in answer.rules)


def test_compare_needs_two_subjects(kb):
    answer = run_compare(kb, "compare", gpus=["A100"])
    assert answer.title.startswith("Compare what?")


# --- end to end -----------------------------------------------------------------------------------------------------


@pytest.fixture
def ask_json(kb, capsys):
    from bot.cli import main

    def run(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return run


def test_cli_compare(ask_json):
    data = ask_json("compare A100 vs H100")
    assert data["query"]["intent"] == "compare" and len(data["offers"]) == 2
    assert {"model", "memory_gb", "bf16_tflops_dense", "source"} <= set(data["specs"][0])


def test_cli_spec_in_chinese(ask_json):
    data = ask_json("A100 和 H100 的显存是多少？")
    assert data["query"]["language"] == "zh"
    assert data["specs"] and all(r["explain"] for r in data["rules"])
