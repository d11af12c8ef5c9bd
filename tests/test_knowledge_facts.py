"""Integrity of the reviewed seed knowledge: seed_figures.csv, errata.yaml, providers.yaml, pitfalls.yaml.

The errata markdown (knowledge/data/seed_errata.md) is the reference: erratum IDs, headings, the top-10 table and
the section-7 table of every figure are parsed from it, so the data files cannot silently drift from it.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the repo is not installed into the venv
    sys.path.insert(0, str(ROOT))

from knowledge.facts.seed import (  # noqa: E402
    SEED_FIGURE_COLUMNS,
    load_errata,
    load_pitfalls,
    load_providers,
    load_seed_figures,
)

DATA = ROOT / "knowledge" / "data"
ERRATUM_ID = re.compile(r"\b(?:S[0-2]|X)-\d{2}\b")
CJK = re.compile(r"[\u4e00-\u9fff]")
TYPES = r"\b(SELF-CONTRADICTION|CROSS-SEED|NEEDS-QUALIFIER|IMPLAUSIBLE|UNVERIFIED|OUTDATED|WRONG|OK)\b"
PROVIDERS = {
    "aws",
    "azure",
    "gcp",
    "alibaba",
    "tencent",
    "huawei",
    "inspur",
    "oci",
    "lambda",
    "runpod",
    "nebius",
    "hyperstack",
    "primeintellect",
    "shadeform",
    "vast",  # issue 28: a live source only
}  # issue 14
SECTION7_PROVIDERS = {
    "AWS": {"aws"}, "Azure": {"azure"}, "Alibaba": {"alibaba"}, "Tencent": {"tencent"}, "Huawei": {"huawei"},
    "Inspur": {"inspur"}, "AWS/Alibaba": {"aws", "alibaba"}, "Alibaba/Tencent": {"alibaba", "tencent"},
}  # fmt: skip  # any other cell ("–", NVIDIA, PCI-SIG, Kubernetes) = not provider-specific


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _is_english(text: str) -> bool:
    """English text may quote Chinese ("直通模式") or gloss it in brackets, but not be written in it."""
    unquoted = re.sub(r"\"[^\"]*\"|'[^']*'|「[^」]*」|\([^)]*[\u4e00-\u9fff][^)]*\)", "", text)
    return bool(text.strip()) and not CJK.search(unquoted)


def _fragments(quote: str) -> list[str]:
    return [_norm(part) for part in quote.split("…") if part.strip()]


@pytest.fixture(scope="module")
def errata_md() -> str:
    return (DATA / "seed_errata.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    files = sorted((DATA / "seeds").glob("*.txt"))
    assert [f.name[:4] for f in files] == ["000_", "001_", "002_"]
    return {f"S{i}": _norm(f.read_text(encoding="utf-8")) for i, f in enumerate(files)}


@pytest.fixture(scope="module")
def figures():
    return load_seed_figures(DATA / "seed_figures.csv")


@pytest.fixture(scope="module")
def errata():
    return load_errata(DATA / "errata.yaml")


@pytest.fixture(scope="module")
def providers_fx():
    return load_providers(DATA / "providers.yaml")


@pytest.fixture(scope="module")
def pitfalls():
    return load_pitfalls(DATA / "pitfalls.yaml")


@pytest.fixture(scope="module")
def markdown_ids(errata_md) -> set[str]:
    return set(ERRATUM_ID.findall(errata_md))


def _section(md: str, start: str, end: str) -> str:
    return md.split(start, 1)[1].split(end, 1)[0]


# --- uniqueness and references ----------------------------------------------------------------------------
def test_ids_are_unique(figures, errata, providers_fx, pitfalls):
    providers, _ = providers_fx
    for rows in (figures, errata, providers, pitfalls):
        ids = [row.id for row in rows]
        assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_erratum_is_in_errata_yaml_and_in_a_pitfall(markdown_ids, errata, pitfalls):
    assert len(markdown_ids) >= 59
    assert {e.id for e in errata} == markdown_ids
    covered = {i for p in pitfalls for i in p.erratum_ids}
    assert markdown_ids <= covered, sorted(markdown_ids - covered)


def test_cited_erratum_ids_exist(markdown_ids, figures, providers_fx, pitfalls):
    providers, _ = providers_fx
    cited = {i for f in figures for i in f.erratum_ids} | {i for p in pitfalls for i in p.erratum_ids}
    cited |= {i for p in providers for item in (*p.notes, *p.costs) for i in item.erratum_ids}
    assert cited <= markdown_ids, sorted(cited - markdown_ids)


# --- errata.yaml against the markdown ---------------------------------------------------------------------
def test_errata_match_their_headings(errata_md, errata):
    by_id = {e.id: e for e in errata}
    headings = re.findall(r"^### ((?:S[0-2]|X)-\d{2}) · (.*)$", errata_md, flags=re.M)
    assert len(headings) == len(by_id)
    for eid, rest in headings:
        meta = " · ".join(rest.split(" · ")[1:])  # drop the title
        erratum = by_id[eid]
        types = re.findall(TYPES, meta)
        if types:  # headings without a type were classified by hand
            assert (erratum.type, list(erratum.also_types)) == (types[0], types[1:]), eid
        severity = re.search(r"(?:^|· )(HIGH|MEDIUM|LOW)\b", meta)
        assert erratum.severity == (severity.group(1) if severity else None), eid
        confidence = re.search(r"confidence (high|medium)", meta)
        assert erratum.confidence == (confidence.group(1) if confidence else None), eid


def test_top10_ranks_match_section_1(errata_md, errata):
    table = _section(errata_md, "## 1. Top-10", "## 2.")
    expected: dict[str, int] = {}
    for rank, cell in re.findall(r"^\| (\d+) \| ([^|]+) \|", table, flags=re.M):
        # "S2-05…08" is a range, "S0-05/06" a pair, "S0-13 / S2-04 / S1-06" a list
        for prefix, first, sep, last in re.findall(r"(S[0-2]|X)-(\d{2})(?:(…|/)(\d{2}))?", cell):
            numbers = range(int(first), int(last) + 1) if sep == "…" else {int(first), int(last or first)}
            expected.update({f"{prefix}-{n:02d}": int(rank) for n in numbers})
    assert sorted(set(expected.values())) == list(range(1, 11))
    assert {e.id: e.top10 for e in errata if e.top10 is not None} == expected


def test_errata_text_is_faithful_and_bilingual(errata, seeds):
    for e in errata:
        for fragment in _fragments(e.claim_zh):
            assert any(fragment in seeds[s] for s in e.seed), (e.id, fragment)
        for text in (e.correct_zh, e.question_zh):
            assert CJK.search(text), e.id
        assert all(_is_english(t) for t in (e.claim_en, e.correct_en, e.question_en)), e.id
        assert any(CJK.search(k) for k in e.keywords) and any(not CJK.search(k) for k in e.keywords), e.id


# --- seed_figures.csv -----------------------------------------------------------------------------------
def test_quotes_are_verbatim(figures, seeds):
    for f in figures:
        for fragment in _fragments(f.quote_zh):
            assert fragment in seeds[f.seed], (f.id, fragment)


def _section7_rows(md: str) -> list[list[str]]:
    table = _section(md, "## 7. Every concrete number", "## 8.")
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()
            if re.match(r"^\| S[0-2] \|", line)]  # fmt: skip


def test_every_section7_figure_is_in_seed_figures(errata_md, figures):
    rows = _section7_rows(errata_md)
    assert len(rows) > 100 and len(figures) >= len(rows)
    for seed, section, provider, item, value, *_, status, _erratum in rows:
        wanted = SECTION7_PROVIDERS.get(provider, {None})
        tokens = re.findall(r"\d[\d,]*(?:\.\d+)?", value)
        numbers = [float(t.replace(",", "")) for t in tokens]
        same_place = [f for f in figures if (f.seed, f.section, f.provider in wanted) == (seed, section, True)]
        matches = [f for f in same_place if any(math.isclose(abs(f.value), n) for n in numbers)]
        matches = matches or [f for f in same_place if any(t in f.quote_zh for t in tokens)]
        assert matches, (seed, section, provider, item, value)
        statuses = {f.status for f in matches}
        if status.startswith(("X", "U")):  # contradicted or unverified: never shown as ok
            assert "ok" not in statuses, (seed, section, item, value, statuses)
        elif status.startswith("V"):
            assert statuses & {"ok", "needs_qualifier", "outdated"}, (seed, section, item, value, statuses)


def test_non_ok_figures_carry_a_correction(figures):
    for f in figures:
        if f.status != "ok":
            assert f.correction and _is_english(f.correction), f.id
        if f.status in {"wrong", "self_contradiction", "outdated"}:
            assert f.erratum_ids, f.id


def test_as_of_is_the_date_the_seed_claims(figures):
    for f in figures:  # S0 §二 (2.1 prices, 2.2 benchmarks) is "基于2024年Q2市场数据"; nothing else is dated
        claimed = "2024-06" if f.seed == "S0" and f.section in {"二", "2.1", "2.2"} else None
        assert f.as_of == claimed, f.id


def test_header_is_fixed():
    header = (DATA / "seed_figures.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == SEED_FIGURE_COLUMNS


# --- providers.yaml -------------------------------------------------------------------------------------
def test_providers(providers_fx, figures):
    providers, fx = providers_fx
    assert {p.id for p in providers} == PROVIDERS
    aliases = [a for p in providers for a in p.aliases]
    assert len(aliases) == len(set(aliases)), "an alias names two providers"
    for p in providers:
        assert CJK.search(p.name_zh) and p.id in p.aliases, p.id
        assert all(a == a.lower() for a in p.aliases), p.id
        assert all(CJK.search(n.zh) and _is_english(n.en) for n in p.notes), p.id
        for cost in p.costs:  # every hidden cost is a seed figure, with a status no better than the figure's
            same = [f for f in figures if (f.provider, f.value, f.currency) == (p.id, cost.value, cost.currency)]
            assert same, (p.id, cost.item)
            assert cost.status == "unverified" or all(f.status == "ok" for f in same), (p.id, cost.item)
    converted = {p.id: p.usd_per_catalog_unit for p in providers if p.usd_per_catalog_unit is not None}
    assert converted == {"alibaba": fx.usd_per_cny, "tencent": fx.usd_per_cny}
    assert fx.usd_per_cny == 0.138 and "0.138" in (DATA / "catalogs" / "README.md").read_text(encoding="utf-8")


# --- pitfalls.yaml --------------------------------------------------------------------------------------
def test_pitfalls(pitfalls):
    assert len(pitfalls) >= 45
    for p in pitfalls:
        for text in (p.title_zh, p.body_zh, p.checklist_zh):
            assert CJK.search(text), p.id
        for text in (p.title_en, p.body_en, p.checklist_en):
            assert _is_english(text), p.id
        assert p.source and any(CJK.search(k) for k in p.keywords), p.id
    topics = {t for p in pitfalls for t in p.tags.topics}
    for needed in ("hidden_costs", "vgpu", "mig", "driver", "spot", "checkpoint", "reserved", "compliance",
                   "data_residency", "quota", "pricing_data"):  # fmt: skip
        assert needed in topics, needed


# --- malformed files ------------------------------------------------------------------------------------
GOOD_ROW = {
    "id": "s0-x", "seed": "S0", "section": "2.1", "provider": "aws", "subject": "A100", "metric": "price",
    "value": "3.26", "unit": "per_hour", "currency": "USD", "pricing": "on_demand", "quote_zh": "AWS $3.26",
    "status": "wrong", "erratum_ids": "X-01", "correction": "p4d is $32.7726/h", "source": "seed S0 §2.1", "as_of": "",
}  # fmt: skip


def _write_csv(path: Path, **changes: str) -> Path:
    import csv

    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SEED_FIGURE_COLUMNS)
        writer.writeheader()
        writer.writerow({**GOOD_ROW, **changes})
    return path


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"status": "maybe"}, "status"),  # not in the status vocabulary
        ({"correction": ""}, "correction"),  # wrong without a correction
        ({"value": "three"}, "value"),
        ({"erratum_ids": "X-01 S9-99"}, "erratum_ids"),
    ],
)
def test_malformed_csv_names_file_row_and_field(tmp_path, changes, field):
    path = _write_csv(tmp_path / "bad_figures.csv", **changes)
    with pytest.raises(ValueError, match=rf"bad_figures\.csv: row 2 \(id='s0-x'\): field '{field}'"):
        load_seed_figures(path)


def test_good_csv_row_loads(tmp_path):
    (row,) = load_seed_figures(_write_csv(tmp_path / "ok.csv"))
    assert (row.erratum_ids, row.as_of, row.currency) == (("X-01",), None, "USD")


def test_malformed_yaml_names_file_entry_and_field(tmp_path):
    bad = tmp_path / "bad_pitfalls.yaml"
    good = (DATA / "pitfalls.yaml").read_text(encoding="utf-8")
    bad.write_text(good.replace("topics: [hidden_costs, egress]", "topics: [hidden_costs, gossip]", 1), "utf-8")
    with pytest.raises(ValueError, match=r"bad_pitfalls\.yaml: entry 1 \(id='cross-region-transfer-fees'\): "
                                         r"field 'tags\.topics\.1'"):  # fmt: skip
        load_pitfalls(bad)

    bad = tmp_path / "bad_errata.yaml"
    bad.write_text("- {id: S0-01, seed: [S0], type: WRONG, severity: SEVERE}\n", "utf-8")
    with pytest.raises(ValueError, match=r"bad_errata\.yaml: entry 1 \(id='S0-01'\): field 'severity'"):
        load_errata(bad)

    bad = tmp_path / "bad_providers.yaml"
    bad.write_text("fx: {pair: USD/CNY, cny_per_usd: 7.0, usd_per_cny: 0.138, as_of: '2026-04', source: x}\n"
                   "providers: []\n", "utf-8")  # fmt: skip
    with pytest.raises(ValueError, match=r"bad_providers\.yaml: fx: field 'usd_per_cny'"):
        load_providers(bad)
