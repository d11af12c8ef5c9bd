"""A cheapest answer over a whole family reads the summary per instance type stored at build (issue 29:
`knowledge/kb/groups.py`, `ranks.lines`), and says what the general path (every matching offer, `ranks.ranking`)
says: the same counts, the same first lines with every member, the same number of lines; and the same answers, on the
bundled knowledge base and on one with a 20,000-row import (the bundled Lambda rows under distinct instance names).

The general path is what a knowledge base whose `offer_where` narrows the offers gets (`handlers.constraints.Narrowed`);
`General` is such a knowledge base narrowing nothing.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from bot import pipeline
from bot.render import answer_json
from handlers import ranking
from knowledge.catalog import importer
from knowledge.catalog.importer import import_catalog
from knowledge.kb import build as kb_build
from knowledge.kb import ranks
from knowledge.kb.build import build
from knowledge.kb.reader import KB, GpuRef
from knowledge.paths import CATALOG_DIR, kb_path
from tests.conftest import built_once, seed_bundled_part

IMPORTED_ROWS = 20_000


class General:
    """The knowledge base `kb`, its offers read row by row (an `offer_where` of its own, as a narrowing one has)."""

    def __init__(self, kb: KB):
        self._kb = kb

    def __getattr__(self, name: str) -> Any:
        return getattr(self._kb, name)

    def offer_where(self, **filters: Any) -> tuple[list[str], list]:
        return self._kb.offer_where(**filters)


def _import_big_cloud(target: Path, part: Path) -> None:
    """`target`: the bundled catalogs plus IMPORTED_ROWS rows of a new cloud, as the import builds it (incremental,
    from the cached bundled part), in the home `built_once` set (GPUBOT_HOME, its default SQLite state)."""
    home = Path(os.environ["GPUBOT_HOME"])
    seed_bundled_part(home, part)
    with (CATALOG_DIR / "lambda_vms.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    path = home / "bigcloud.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.DictWriter(handle, fieldnames=list(rows[0]))
        out.writeheader()
        for i in range(IMPORTED_ROWS):
            row = rows[i % len(rows)]
            out.writerow({**row, "InstanceType": f"{row['InstanceType']}-r{i // len(rows)}"})
    reports: list[dict] = []

    def recorded(*args: Any, **kwargs: Any) -> dict:
        reports.append(build(*args, **kwargs))
        return reports[-1]

    with pytest.MonkeyPatch.context() as patch:  # the import's own build, its report kept
        patch.setattr(kb_build, "build", recorded)
        patch.setattr(importer, "BESIDE_FROM_OFFERS", 10**9)  # built here, not in a child (the same KB either way)
        import_catalog(path, "bigcloud", as_of="2026-11-30")
    assert [r["incremental"] for r in reports] == [True]
    os.replace(kb_path(), target)


@pytest.fixture(scope="session")
def imported_kb(tmp_path_factory, bundled_part):
    """The bundled catalogs plus IMPORTED_ROWS rows of a new cloud, built once per run; never write to it."""
    return KB(
        built_once(tmp_path_factory, "summary_imported_kb.db", lambda path: _import_big_cloud(path, bundled_part))
    )


@pytest.fixture(params=["bundled", "imported"])
def any_kb(request, kb):
    return kb if request.param == "bundled" else request.getfixturevalue("imported_kb")


def _families(kb: KB) -> list[tuple[str, str]]:
    return [
        (r["gpu"], r["pricing"])
        for r in kb.rows("SELECT DISTINCT gpu, pricing FROM offers WHERE kind != 'article' ORDER BY gpu, pricing")
    ]


def _general_lines(kb: KB, filters: dict, limit: int) -> tuple[ranks.Tally, list[dict], int]:
    """What the summary must say, from every matching offer: the Tally, the members of the first `limit` lines in
    rank order, and how many lines there are."""
    tally, rows = ranks.ranking(General(kb), filters)  # type: ignore[arg-type]  # a KB by its attributes
    lines = ranking.groups(rows)
    members = sorted((m for line in lines[:limit] for m in line), key=lambda r: r["rank"])
    return tally, members, len(lines)


@pytest.mark.parametrize("limit", [1, 5, 50])
def test_every_family_and_pricing_ranks_as_the_general_path(any_kb, limit):
    served = 0
    for gpu, pricing in _families(any_kb):
        filters = {"gpus": [GpuRef(gpu)], "pricing": pricing}
        got = ranks.lines(any_kb, filters, limit)
        if got is None:  # an instance type in several summary rows: the general path answers
            continue
        served += 1
        assert got == _general_lines(any_kb, filters, limit), (gpu, pricing)
    assert served >= 0.9 * len(_families(any_kb))


def test_offers_left_out_are_counted_as_from_the_offers(any_kb):
    """ "N offers left out: sold out, ..." (recommend, cheapest): the counts stored at build, for every family and
    pricing and for a provider's, equal those of the offers themselves."""
    for gpu, pricing in _families(any_kb):
        for filters in ({"gpus": [GpuRef(gpu)], "pricing": pricing}, {"gpus": [GpuRef(gpu)], "providers": ["aws"]}):
            assert any_kb.excluded(**filters) == KB.excluded(General(any_kb), **filters), (gpu, pricing)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "filters",
    [
        {"gpus": [GpuRef("H100")], "pricing": "on_demand", "providers": ["aws"], "gpu_count": 8.0},
        {"gpus": [GpuRef("A100", memory_gb=80)], "pricing": "on_demand"},
        {"gpus": [GpuRef("H100", form_factor="PCIe")], "pricing": "on_demand"},
        {"gpus": [GpuRef("A100"), GpuRef("H100")], "pricing": "on_demand"},
        {"gpus": [GpuRef("T4")], "pricing": "spot", "providers": ["alibaba", "gcp"]},
        {"gpus": [], "pricing": "spot", "gpu_kind": "gpu", "min_memory_gb": 80.0},
    ],
)
def test_narrower_filters_rank_as_the_general_path(any_kb, filters):
    got = ranks.lines(any_kb, filters, 5)
    assert got is not None
    assert got == _general_lines(any_kb, filters, 5)


def test_a_region_or_an_exclusion_reads_the_offers(kb):
    assert ranks.lines(kb, {"gpus": [GpuRef("A100")], "pricing": "spot", "regions": ["us-east-1"]}, 5) is None
    assert ranks.lines(General(kb), {"gpus": [GpuRef("A100")], "pricing": "spot"}, 5) is None  # type: ignore[arg-type]


QUESTIONS = [  # the shapes the summary serves, and a few it leaves to the general path (a region, a budget)
    "cheapest A100 on-demand",
    "cheapest A100 spot",
    "最便宜的H100按需实例",
    "最便宜的A100竞价实例",
    "cheapest 8x H100 on aws",
    "cheapest H100 on lambda",
    "lambda上最便宜的H100，前2个",
    "cheapest A100 80GB",
    "cheapest H100 PCIe",
    "cheapest L4 on gcp",
    "最便宜的TPU v5e",
    "cheapest V100 reserved",
    "top 200 cheapest H100",
    "最便宜的A100前100个",
    "cheapest GPU spot with at least 80GB",
    "cheapest H100 spot in europe",
    "cheapest A100 on lambda under $2/GPU-h",
    "cheapest H100 except gcp",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_answers_are_the_general_paths(any_kb, monkeypatch, text):
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", "0")
    got = answer_json(pipeline.answer(text, any_kb), False)
    want = answer_json(pipeline.answer(text, General(any_kb)), False)  # type: ignore[arg-type]
    assert got["offers"], got["title"]
    assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str)


def _imported_lines(accelerators: str) -> int:
    """The lines the import adds, from the Lambda CSV it repeats: each instance type at its first region (cheapest,
    then by name), one line per that region, GPU model, per-GPU price and naming pattern (the sizes of a family and
    the import's rounds `-rN` are one line)."""
    heads: dict[str, tuple[float, str, str]] = {}
    with (CATALOG_DIR / "lambda_vms.csv").open(encoding="utf-8", newline="") as handle:
        for r in csv.DictReader(handle):
            if r["AcceleratorName"].startswith(accelerators) and r["Price"]:
                place = (float(r["Price"]) / float(r["AcceleratorCount"]), r["Region"], r["AcceleratorName"])
                heads[r["InstanceType"]] = min(heads.get(r["InstanceType"], place), place)
    return len(
        {(region, model, round(price, 4), re.sub(r"\d+", "#", re.sub(r"x\d+$", "", name)))
         for name, (price, region, model) in heads.items()}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "gpu", "pricing"),
    [
        ("cheapest A100 on-demand", "A100", "on_demand"),
        ("最便宜的A100按需实例", "A100", "on_demand"),
        ("cheapest H100", "H100", "on_demand"),
        ("最便宜的H100", "H100", "on_demand"),
    ],
)
def test_the_imported_cloud_adds_its_lines_to_the_count(kb, imported_kb, monkeypatch, text, gpu, pricing):
    """ "… N more" over 20,000 more rows: the bundled lines plus the imported ones counted from the CSV."""
    monkeypatch.setenv("GPUBOT_ANSWER_CACHE", "0")
    bundled = ranks.lines(kb, {"gpus": [GpuRef(gpu)], "pricing": pricing}, 5)
    assert bundled is not None
    got = pipeline.answer(text, imported_kb)
    assert got.more == bundled[2] + _imported_lines(gpu) - 5, got.title


def test_a_kb_whose_offers_fill_no_form_factor_builds_and_ranks(tmp_path):
    """No catalog at all (a bundled part of no clouds, a live home of clouds that leave columns empty): the seed
    articles' offers lack `gpu_form_factor`; the summaries and the ranking index still read it, as NULL."""
    from tests.conftest import SMALL_KB_DATA

    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    header = (SMALL_KB_DATA / "catalogs" / "manifest.csv").read_text(encoding="utf-8").splitlines()[0]
    (catalogs / "manifest.csv").write_text(header + "\n", encoding="utf-8")
    build(tmp_path / "kb.db", catalog_dir=catalogs, pricing_dir=SMALL_KB_DATA / "pricing")
    kb = KB(tmp_path / "kb.db")
    try:
        articles = kb.conn.execute("SELECT COUNT(*) FROM offers WHERE gpu = 'A100' AND kind = 'article'").fetchone()[0]
        answer = pipeline.answer("cheapest A100", kb)
        assert articles and answer.offers and all(o.kind == "article" for o in answer.offers)
    finally:
        kb.close()
