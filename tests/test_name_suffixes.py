"""Issue 26: accelerator names with vendor and offer suffixes (`knowledge/data/name_suffixes.csv`) resolve to their
family and form factor; answers say how many offers of the asked cloud sit under names that could not be placed.
Spellings are held out: none of them occurs in a bundled catalog."""

from __future__ import annotations

import csv
import json

import pytest

from bot.cli import main
from knowledge.catalog.identity import identify
from knowledge.catalog.suffixes import suffixes
from tests.conftest import copy_kb, seed_bundled_part
from tests.reference_calc import CATALOGS, rows


@pytest.mark.parametrize(
    ("name", "family", "form"),
    [
        ("A6000_PCIE_LOW_RAM", "RTX A6000", "PCIe"),  # Spheron: an offer suffix after the form word
        ("A6000_PCIE_HIGH_PERF", "RTX A6000", "PCIe"),
        ("H100_PCIE_BAREMETAL", "H100", "PCIe"),
        ("L40S_PCIE_BAREMETAL", "L40S", "PCIe"),
        ("RTX5090_PCIE_BAREMETAL", "RTX 5090", "PCIe"),
        ("RTXPRO6000_PCIE_BAREMETAL", "RTX PRO 6000", "PCIe"),
        ("H100_SXM5_BAREMETAL", "H100", "SXM"),
        ("h200-sxm-bare-metal", "H200", "SXM"),  # the two-word spelling, lower case, hyphens
        ("A100_SXM4_80GB_HIGH_RAM", "A100", "SXM"),
        ("RTXPRO6000S", "RTX PRO 6000", "Server Edition"),  # Vast: a glued trailing S
        ("RTXPRO6000-WK", "RTX PRO 6000", "Workstation Edition"),  # Lium
        ("RTX PRO 6000 Blackwell Max-Q", "RTX PRO 6000", "Max-Q Workstation Edition"),
        ("rtx_pro_6000_server_edition", "RTX PRO 6000", "Server Edition"),
        ("L40S", "L40S", None),  # its own GPU: the trailing-S rule never reads it as an L40
        ("L40", "L40", None),
    ],
)
def test_held_out_spellings_resolve_to_family_and_form_factor(name, family, form):
    ident = identify("heldout", name)
    assert (ident.family, ident.form_factor, ident.recognised) == (family, form, True)


@pytest.mark.parametrize("name", ["A10S", "T4S", "MI50_PCIE_BAREMETAL", "BAREMETAL"])
def test_suffix_rules_do_not_invent_gpus(name):
    assert not identify("heldout", name).recognised  # no A10 "Server Edition"; MI50 is no family here


def test_every_suffix_row_has_a_source_and_a_meaning():
    assert all(s.source and s.meaning for s in suffixes())
    assert {s.words for s in suffixes()} >= {"baremetal", "low ram", "high perf", "wk", "s"}


SPHERON = [  # (accelerator, instance type, count, price per hour, region)
    ("A6000_PCIE_LOW_RAM", "spot-a6000-low", 1, 0.468, "us-central-1"),
    ("A6000_PCIE_HIGH_PERF", "spot-a6000-perf", 1, 0.52, "us-central-1"),
    ("A6000_PCIE_LOW_RAM", "spot-a6000x2-low", 2, 0.98, "eu-north-1"),
    ("H100_PCIE_BAREMETAL", "bm-h100", 8, 15.2, "us-central-1"),
    ("RTXPRO6000_PCIE_BAREMETAL", "bm-rtxpro", 1, 1.45, "eu-north-1"),
    ("MI50_PCIE_BAREMETAL", "bm-mi50", 1, 0.21, "eu-north-1"),
    ("Quantum-Z9_LOW_RAM", "vm-z9", 1, 0.33, "us-central-1"),
]


@pytest.fixture
def spheron_home(tmp_path, monkeypatch, kb, bundled_part):
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    seed_bundled_part(home, bundled_part)  # the import's build starts from the cached bundled part
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    path = tmp_path / "spheron.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Region", "Price", "AcceleratorName", "InstanceType", "AcceleratorCount", "GpuInfo"])
        writer.writerows([[r, f"{p:g}", a, i, str(c), ""] for a, i, c, p, r in SPHERON])
    assert main(["kb", "import", str(path), "--provider", "spheron", "--as-of", "2026-11-30"]) == 0
    return home


def test_cheapest_a6000_on_spheron_finds_the_suffixed_rows_and_names_the_rest(spheron_home, capsys):
    capsys.readouterr()
    assert main(["ask", "cheapest A6000 on spheron", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    expected = sorted((p / c, i) for a, i, c, p, _ in SPHERON if a.startswith("A6000"))
    got = [(o["price_per_gpu_hour_usd"], o["instance_type"]) for o in result["offers"]]
    assert got == [(pytest.approx(p), i) for p, i in expected]
    assert {o["gpu_variant"] for o in result["offers"]} == {"RTX A6000 PCIe 48GB"}
    unplaced = [n for n in result["notes"] if "could not place" in n]
    assert unplaced == ["2 spheron offers under names I could not place, e.g. MI50_PCIE_BAREMETAL (not ranked)."]
    assert main(["ask", "spheron上最便宜的A6000", "--json"]) == 0
    zh = json.loads(capsys.readouterr().out)
    assert [o["instance_type"] for o in zh["offers"]] == [i for _, i in expected]
    assert any("spheron有2个报价的GPU名称无法识别" in n for n in zh["notes"])


def test_no_bundled_catalog_uses_these_spellings():
    names = {r["AcceleratorName"] for p in CATALOGS.glob("*_vms.csv") for r in rows(p)}
    assert not names & {a for a, *_ in SPHERON} and not names & {"RTXPRO6000S", "RTXPRO6000-WK"}


def test_an_import_without_a_date_says_its_date_is_unknown(tmp_path, monkeypatch, kb, bundled_part, capsys):
    home = tmp_path / "home"
    home.mkdir()
    copy_kb(kb, home / "kb.db")
    seed_bundled_part(home, bundled_part)
    monkeypatch.setenv("GPUBOT_HOME", str(home))
    path = tmp_path / "undated.csv"
    path.write_text("InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nbox-h100,H100_SXM5,1,2.10,x-1\n")
    assert main(["kb", "import", str(path), "--provider", "undated"]) == 0  # no --as-of
    capsys.readouterr()
    assert main(["ask", "cheapest H100 on undated", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [o["as_of_known"] for o in result["offers"]] == [False]
    assert "date unknown" in result["text"]  # the import day is never presented as the prices' date
