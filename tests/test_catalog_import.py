"""The general catalog importer: every shared catalog loads; malformed files fail clearly and change nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest

from bot.cli import main
from knowledge.catalog.offers import Currency, convert
from knowledge.catalog.reader import CatalogError, read_catalog
from tests.conftest import copy_kb, seed_bundled_part
from tests.reference_calc import CATALOGS, per_gpu_ranking, rows


@pytest.mark.parametrize(
    ("file", "provider", "data_rows", "duplicates"),
    [
        ("aws_vms.csv", "aws", 2274, 0),
        ("azure_vms.csv", "azure", 187, 0),
        ("gcp_vms.csv", "gcp", 2403, 154),  # the source repeats some TPU rows exactly
        ("gcp_host_vms.csv", "gcp", 2991, 0),
        ("alibaba_vms.csv", "alibaba", 1309, 0),  # CRLF line endings
        ("tencent_vms.csv", "tencent", 405, 0),
        ("oci_vms.csv", "oci", 1134, 0),
        ("lambda_vms.csv", "lambda", 374, 0),
        ("runpod_vms.csv", "runpod", 2000, 14),  # 2x_B200_SECURE: 14 US rows repeated exactly
        ("nebius_vms.csv", "nebius", 21, 0),
        ("hyperstack_vms.csv", "hyperstack", 25, 0),
        ("primeintellect_vms.csv", "primeintellect", 115, 0),
        ("shadeform_vms.csv", "shadeform", 118, 0),
        ("history/aws_vms.csv", "aws", 2131, 0),  # no trailing newline
        ("history/gcp_vms.csv", "gcp", 2376, 154),
    ],
)
def test_every_shared_catalog_reads(file, provider, data_rows, duplicates):
    catalog = read_catalog(CATALOGS / file)
    assert len(catalog.rows) + len(catalog.hosts) + catalog.duplicates == data_rows
    assert catalog.duplicates == duplicates
    result = convert(provider, catalog, currency=Currency(), source="test", as_of="2026-12-01")
    if catalog.rows:
        assert result.offers
        assert all(o["price_per_gpu_hour_usd"] > 0 for o in result.offers)


def test_kb_holds_every_catalog_row(kb):
    counts = {r["file"]: r["n"] for r in kb.rows("SELECT file, COUNT(*) n FROM catalog_rows GROUP BY file")}
    assert counts == {
        "aws_vms.csv": 2274,
        "azure_vms.csv": 187,
        "gcp_vms.csv": 2403 - 154,
        "gcp_host_vms.csv": 2991,
        "alibaba_vms.csv": 1309,
        "tencent_vms.csv": 405,
        # issue 14: seven more bundled clouds (RunPod's source repeats its 14 US 2x_B200 rows exactly)
        "oci_vms.csv": 1134,
        "lambda_vms.csv": 374,
        "runpod_vms.csv": 2000 - 14,
        "nebius_vms.csv": 21,
        "hyperstack_vms.csv": 25,
        "primeintellect_vms.csv": 115,
        "shadeform_vms.csv": 118,
    }


def test_placeholder_and_disk_only_prices_are_not_offers(kb):
    assert not kb.rows("SELECT 1 FROM offers WHERE provider='gcp' AND price_per_hour_usd = 700.0")
    assert not kb.rows("SELECT 1 FROM offers WHERE instance_type='ecs.gn5i-c12g1.6xlarge'")
    skipped = " ".join(r["note"] for r in kb.rows("SELECT note FROM skipped"))
    assert "placeholder" in skipped and "disk" in skipped


def test_gcp_gpu_only_offers_say_so(kb):
    gpu_only = kb.rows("SELECT * FROM offers WHERE provider='gcp' AND instance_type LIKE '%GPU only%'")
    assert gpu_only and all("host VM is not included" in r["note"] for r in gpu_only)


def _reshuffled(source: Path, target: Path, order: list[str] | None = None) -> Path:
    """A copy of a catalog with its columns in another order (a cloud this project has never seen)."""
    data = rows(source)
    header = order or list(reversed(list(data[0].keys())))
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        writer.writerows(data)
    return target


@pytest.fixture
def private_home(tmp_path, monkeypatch, kb, bundled_part):
    """A GPUBOT_HOME of its own, seeded with a copy of the built knowledge base and of its cached bundled part."""
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    seed_bundled_part(home, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    return home


def test_import_a_new_cloud_with_another_column_order(private_home, tmp_path, capsys):
    newcloud = _reshuffled(CATALOGS / "aws_vms.csv", tmp_path / "newcloud.csv")
    assert main(["kb", "import", str(newcloud), "--provider", "newcloud", "--as-of", "2026-11-30"]) == 0
    capsys.readouterr()
    assert main(["ask", "cheapest L4 spot on newcloud", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = per_gpu_ranking(CATALOGS / "aws_vms.csv", {"L4"}, "SpotPrice")[:5]
    got = [(round(o["price_per_gpu_hour_usd"], 6), o["instance_type"], o["region"]) for o in result["offers"]]
    assert got == [(round(p, 6), i, r) for p, i, r in expected]
    assert {o["provider"] for o in result["offers"]} == {"newcloud"}
    assert {o["as_of"] for o in result["offers"]} == {"2026-11-30"}
    # the import survives a rebuild
    assert main(["kb", "build"]) == 0
    capsys.readouterr()
    assert main(["ask", "cheapest L4 spot on newcloud", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["offers"]


HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
GOOD = "x1.big,A100,8,96,1152,,20.5,8.1,r1\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"InstanceType,AcceleratorName,Price,Region\nx,A100,1.0,r1\n", "missing column(s) AcceleratorCount"),
        ((HEADER + "x1.big,A100,8,96,1152,,twenty,8.1,r1\n").encode(), "line 2, column Price"),
        ((HEADER + GOOD + "x2.big,A100,8,96,1152,,-3,8.1,r1\n").encode(), "line 3, column Price"),
        ((HEADER + GOOD + "x2.big,A100,8,96,1152,,0,,r1\n").encode(), "must be positive"),
        ((HEADER + GOOD + "x1.big,A100,8,96,1152,,21.0,8.1,r1\n").encode(), "conflicting duplicate"),
        ((HEADER + GOOD).encode() + "x3,A100,1,8,64,,1.5,,caf\xe9\n".encode("latin-1"), "not UTF-8"),
        ((HEADER + GOOD + "x3.big,A100,8,96").encode(), "line 3"),
        (HEADER.encode(), "no data rows"),
        (b"", "empty"),
        ((HEADER + "x1.big,A100,abc,96,1152,,20.5,8.1,r1\n").encode(), "column AcceleratorCount"),
    ],
    ids=[
        "missing-column",
        "bad-number",
        "negative",
        "zero",
        "duplicate",
        "encoding",
        "truncated",
        "header-only",
        "empty",
        "bad-count",
    ],
)
def test_malformed_catalog_is_rejected_and_kb_untouched(private_home, tmp_path, capsys, content, expected):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(content)
    before = hashlib.sha256((private_home / "kb.db").read_bytes()).hexdigest()
    assert main(["kb", "import", str(bad), "--provider", "badcloud"]) == 2
    err = capsys.readouterr().err
    assert "bad.csv" in err and expected in err
    assert "not changed" in err
    assert hashlib.sha256((private_home / "kb.db").read_bytes()).hexdigest() == before
    assert not (private_home / "imports" / "manifest.json").exists()


def test_catalog_error_names_file_line_and_column():
    text = HEADER + GOOD + "x2.big,A100,8,96,1152,,1e999,,r1\n"
    with pytest.raises(CatalogError) as info:
        from knowledge.catalog.reader import parse_catalog

        parse_catalog(io.StringIO(text).read(), "cloud.csv")
    assert (info.value.path, info.value.line, info.value.column) == ("cloud.csv", 3, "Price")


# Issue 14: a cloud nobody has seen, in its own layout and spellings (built here, not copied from a bundled file).
NEW_LAYOUT = [
    "Region",
    "SpotPrice",
    "Price",
    "AcceleratorCount",
    "AcceleratorName",
    "InstanceType",
    "GpuInfo",
    "AvailabilityZone",
    "vCPUs",
    "MemoryGiB",
]
NEW_ROWS = [
    ["eu-1", "0.00", "2.10", "1", "H100_SXM5", "nn.h100.1", "", "eu-1a", "", ""],  # 0.00 spot: no spot offer
    ["eu-1", "0.95", "1.80", "1", "h100 pcie 80gb", "nn.h100p.1", "", "eu-1b", "16", "128"],
    ["", "", "15.20", "8.0", "H100-80G-SXM5", "nn.h100.8", "", "", "", ""],  # no region: kept as "unknown"
    ["us-2", "", "0.61", "1", "NVIDIA RTX A6000", "nn.a6000.1", "", "", "", ""],
    [
        "us-2",
        "0.30",
        "0.59",
        "1.0",
        "RTXA6000",
        "nn.a6000b.1",
        '{"Gpus":[{"MemoryInfo":{"SizeInMiB":49152}}]}',
        "",
        "",
        "",
    ],
    [
        "us-2",
        "",
        "1.20",
        "1",
        "RTX6000",
        "nn.rtx6000.1",
        "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 24576}}]}",
        "",
        "",
        "",
    ],  # Turing, not Ada
    ["us-2", "", "3.00", "2", "Mystery-X1", "nn.mx.2", "", "", "", ""],
    ["us-2", "", "1.00", "1", "Zeta Accel 9", "nn.z9.1", "", "", "", ""],
    ["us-2", "", "0.40", "1", "H1000", "nn.h1000.1", "", "", "", ""],  # not an H100
    ["us-2", "", "0.25", "0.5", "L4", "nn.l4half", "", "", "", ""],  # half an L4
]


def _write(path: Path, header: list[str], data: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(data)
    return path


def _expected(spellings: set[str], column: str) -> list[tuple[float, str, str]]:
    """(price per GPU-hour, instance type, region) straight from NEW_ROWS: empty or 0 = no offer."""
    at = {name: NEW_LAYOUT.index(name) for name in NEW_LAYOUT}
    found = []
    for row in NEW_ROWS:
        value = row[at[column]]
        if row[at["AcceleratorName"]] in spellings and value and float(value) > 0:
            found.append(
                (
                    round(float(value) / float(row[at["AcceleratorCount"]]), 6),
                    row[at["InstanceType"]],
                    row[at["Region"]] or "unknown",
                )
            )
    return sorted(found)


def test_import_a_new_layout_with_new_spellings(private_home, tmp_path, capsys):
    path = _write(tmp_path / "neocloud.csv", NEW_LAYOUT, NEW_ROWS)
    assert main(["kb", "import", str(path), "--provider", "neocloud", "--as-of", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert "3 accelerator names not recognised: H1000 (1 rows), Mystery-X1 (1 rows), Zeta Accel 9 (1 rows)" in out
    assert "1 rows with SpotPrice 0: no spot offer" in out
    assert "1 rows without a region: kept under region 'unknown'" in out

    def ask(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    h100 = ask("cheapest H100 on neocloud")
    assert [
        (round(o["price_per_gpu_hour_usd"], 6), o["instance_type"], o["region"]) for o in h100["offers"]
    ] == _expected({"H100_SXM5", "h100 pcie 80gb", "H100-80G-SXM5"}, "Price")
    assert {o["gpu_variant"] for o in h100["offers"]} == {"H100 SXM 80GB", "H100 PCIe 80GB"}
    spot = ask("cheapest H100 spot on neocloud")
    assert [
        (round(o["price_per_gpu_hour_usd"], 6), o["instance_type"], o["region"]) for o in spot["offers"]
    ] == _expected({"H100_SXM5", "h100 pcie 80gb", "H100-80G-SXM5"}, "SpotPrice")  # the 0.00 spot is no offer
    a6000 = ask("cheapest A6000 on neocloud")
    assert [o["instance_type"] for o in a6000["offers"]] == [
        i for _, i, _ in _expected({"NVIDIA RTX A6000", "RTXA6000"}, "Price")
    ]
    ada = ask("cheapest RTX 6000 Ada on neocloud")
    assert not ada["offers"]  # RTX6000 is the 24 GB Turing card
    half = ask("cheapest L4 on neocloud")["offers"]
    assert half[0]["vgpu"] and half[0]["price_per_gpu_hour_usd"] == pytest.approx(0.25 / 0.5)

    assert main(["kb", "stats"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["unrecognised_accelerators"]["neocloud"] == [
        "H1000 (1 rows)",
        "Mystery-X1 (1 rows)",
        "Zeta Accel 9 (1 rows)",
    ]
    assert "H1000" not in {o["gpu"] for o in h100["offers"]}
