"""knowledge.names: the resolution ladder (exact -> prefix -> fuzzy with cutoff and margin -> ask or suggest)."""

from __future__ import annotations

import pytest

from knowledge import names as nm
from knowledge.names import Ambiguous, Resolved, Unknown, resolve, resolve_gpu

# A tiny table where the ladder's choices are easy to see: two H100 boards that are different targets.
BOARDS = {
    "h100 sxm": "H100 SXM",
    "h100 sxm5 80gb": "H100 SXM",
    "h100 pcie": "H100 PCIe",
    "a100": "A100",
    "a10": "A10",
    "a10g": "A10G",
    "l4": "L4",
    "l40s": "L40S",
    "nvidia tesla v100": "V100",
    "trainium": "Trainium",
    "trainium2": "Trainium2",
}
TENANTS = {"tencent": "tencent", "tenant": "tenant-co"}


@pytest.fixture(scope="module")
def tables(kb):
    return {
        "gpu": kb.gpu_names,
        "provider": kb.provider_names,
        "region": {r: r for r in kb.regions},
        "instance_type": kb.instance_types,
        "boards": BOARDS,
    }


def table_for(tables, kind):
    return tables[kind], ("gpu" if kind == "boards" else kind)


@pytest.mark.parametrize(
    ("kind", "raw", "name"),
    [
        ("gpu", "A100", "A100"),  # the name itself
        ("gpu", "a100", "A100"),  # case-folded
        ("gpu", "NVIDIA Tesla V100", "V100"),  # vendor words dropped
        ("gpu", "nvidia tesla v100", "V100"),  # alias as written in gpus.csv
        ("gpu", "A-100", "A100"),  # hyphen
        ("gpu", "h1OO", "H100"),  # letter O next to digits read as zero
        ("gpu", "l40 s", "L40S"),  # split name
        ("gpu", "L4", "L4"),  # L4 is not L40S
        ("gpu", "H100s", "H100"),  # plural
        ("gpu", "Hopper", "H100"),  # alias from the knowledge base
        ("gpu", "Ａ１００", "A100"),  # full-width characters (NFKC)
        ("gpu", "gaudi2", "Gaudi 2"),  # spaced name typed glued
        ("provider", "Tencent Cloud", "tencent"),  # "cloud" is noise for providers
        ("provider", "腾讯云", "tencent"),  # Chinese alias
        ("provider", "AWS", "aws"),  # capitals
        ("region", "us-east-1", "us-east-1"),  # AWS region
        ("region", "us-east1", "us-east1"),  # GCP region: separators matter for regions
        ("instance_type", "P5.48XLARGE", "p5.48xlarge"),  # case-folded
        ("instance_type", "standard_nc24ads_a100_v4", "Standard_NC24ads_A100_v4"),  # Azure spelling restored
        ("boards", "H100 SXM", "H100 SXM"),  # exact in a small table
    ],
)
def test_exact(tables, kind, raw, name):
    names, kind = table_for(tables, kind)
    assert resolve(raw, names, kind=kind) == Resolved(raw, name, "exact", 100.0)


@pytest.mark.parametrize(
    ("kind", "raw", "name"),
    [
        ("gpu", "trainum", "Trainium"),  # missing letter
        ("gpu", "gaudii", "Gaudi"),  # doubled letter
        ("gpu", "mi300", "MI300X"),  # missing suffix, same digits
        ("gpu", "trainum2", "Trainium2"),  # the digit picks the generation
        ("provider", "tencnet", "tencent"),  # swapped letters, long enough to be sure
        ("provider", "alibba", "alibaba"),  # missing letter
        ("region", "cn-hangzou", "cn-hangzhou"),  # missing letter in a region id
        ("instance_type", "g4dn.xlarg", "g4dn.xlarge"),  # truncated type
        ("boards", "trainum", "Trainium"),  # "Trainium2" has a digit that was not typed: no competition
    ],
)
def test_fuzzy(tables, kind, raw, name):
    names, kind = table_for(tables, kind)
    found = resolve(raw, names, kind=kind)
    assert isinstance(found, Resolved) and found.step == "fuzzy", found
    assert found.name == name
    assert nm.CUTOFF <= found.score < 100


@pytest.mark.parametrize(
    ("kind", "raw", "candidates"),
    [
        ("boards", "h100", {"H100 SXM", "H100 PCIe"}),  # did you mean H100 SXM or H100 PCIe?
        ("gpu", "tpu", {"TPU v2", "TPU v3", "TPU v4", "TPU v5e", "TPU v5p", "TPU v6e"}),  # every TPU generation
        ("gpu", "rtx", {"RTX 3090", "RTX 4090", "RTX 5090"}),  # several RTX cards (the first six, issue 14 added more)
        ("region", "us-est-1", {"us-east-1", "us-west-1"}),  # "est" is as close to east as to west
        ("instance_type", "p5.48xlarg", {"p5.48xlarge", "p5e.48xlarge"}),  # p5 or p5e?
    ],
)
def test_ambiguous(tables, kind, raw, candidates):
    names, kind = table_for(tables, kind)
    found = resolve(raw, names, kind=kind)
    assert isinstance(found, Ambiguous), found
    assert candidates <= set(found.candidates)


@pytest.mark.parametrize(
    ("kind", "raw", "first"),
    [
        ("gpu", "H1000", "H100"),  # an extra zero: the digits differ, so suggest, never resolve
        ("gpu", "A1000", "A100"),  # same
        ("gpu", "Z900", None),  # nothing close: suggestions may be anything (or none)
        ("gpu", "qwertyuiop", None),  # gibberish
        ("gpu", "", None),  # empty
        ("instance_type", "p4d.12xlarge", "p4d.24xlarge"),  # a size that does not exist
        ("region", "us-east-7", "us-east-1"),  # a region that does not exist (Lambda has a us-east-3 since issue 14)
        ("provider", "azrue", "azure"),  # transposition in a 5-letter name scores 80: below the default cutoff
    ],
)
def test_unknown_with_suggestions(tables, kind, raw, first):
    names, kind = table_for(tables, kind)
    found = resolve(raw, names, kind=kind)
    assert isinstance(found, Unknown), found
    assert len(found.suggestions) <= nm.SUGGESTIONS
    if first:
        assert found.suggestions[0] == first


@pytest.mark.parametrize(
    ("raw", "cutoff", "margin", "expected"),
    [
        ("tenent", 85, 5, Resolved("tenent", "tencent", "fuzzy", 92.3)),  # clear winner (92 vs 83)
        ("tenent", 85, 10, Ambiguous("tenent", ("tencent", "tenant-co"))),  # a wider margin makes it a question
        ("tenent", 95, 5, Unknown("tenent", ("tencent", "tenant-co"))),  # a higher cutoff makes it a suggestion
    ],
)
def test_cutoff_and_margin(raw, cutoff, margin, expected):
    assert resolve(raw, TENANTS, kind="provider", cutoff=cutoff, margin=margin) == expected


def test_lower_cutoff_accepts_transposition(kb):
    assert resolve("azrue", kb.provider_names, kind="provider", cutoff=80) == Resolved("azrue", "azure", "fuzzy", 80.0)


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("a100 80gb", "A100 80GB"),  # memory variant
        ("A100-80G", "A100 80GB"),  # hyphen and G
        ("a100-80g", "A100 80GB"),  # lower case
        ("A100 80", "A100 80GB"),  # a known size needs no unit
        ("A100 80 GB", "A100 80GB"),  # unit as its own word
        ("a100 80g", "A100 80GB"),  # an alias that carries its memory
        ("H100 PCIe", "H100"),  # form factor: same 80 GB as SXM, so only the family
        ("H100 SXM", "H100"),  # same
        ("H100 NVL", "H100 94GB"),  # NVL is the only 94 GB H100: kept as memory
        ("H100 SXM5 80GB", "H100 80GB"),  # explicit memory wins
        ("tesla v100 sxm2 32gb", "V100 32GB"),  # spec model name
        ("nvidia tesla v100", "V100"),  # vendor words
        ("h1OO", "H100"),  # typo
        ("RTX 4090", "RTX 4090"),  # a number that is part of the name
        ("Gaudi 2", "Gaudi 2"),  # same
        ("L40S", "L40S"),  # no variant
    ],
)
def test_resolve_gpu(kb, raw, name):
    found = resolve_gpu(raw, kb.gpu_names, memories={"A100": [40, 80], "H100": [80, 94]})
    assert isinstance(found, Resolved), found
    assert found.name == name


def test_resolve_gpu_unknown_family(kb):
    found = resolve_gpu("H1000 80GB", kb.gpu_names)
    assert isinstance(found, Unknown) and found.suggestions[0] == "H100"


@pytest.mark.parametrize(
    ("raw", "variant"),
    [
        ("A100-80G", nm.GpuVariant("A100", 80.0, None)),  # memory
        ("H100 PCIe 80GB", nm.GpuVariant("H100", 80.0, "pcie")),  # form factor and memory
        ("H100 SXM5", nm.GpuVariant("H100", None, "sxm")),  # SXM5 -> sxm
        ("A100 8", nm.GpuVariant("A100 8", None, None)),  # 8 is not a known size: left alone
        ("RTX 4090", nm.GpuVariant("RTX 4090", None, None)),  # not a memory without a unit
    ],
)
def test_split_gpu_variant(raw, variant):
    assert nm.split_gpu_variant(raw, memories=[40, 80]) == variant


@pytest.mark.parametrize(
    ("raw", "kind", "key"),
    [
        ("NVIDIA Tesla V-100", "gpu", "v100"),  # vendor words and hyphen
        ("h1OO", "gpu", "h100"),  # O -> 0 beside digits
        ("GeForce RTX 4090", "gpu", "rtx4090"),  # vendor word
        ("Tencent Cloud", "provider", "tencent"),  # provider noise word
        ("us-east-1", "region", "us-east-1"),  # regions keep separators
        ("gpu", "gpu", "gpu"),  # only noise: kept rather than emptied
    ],
)
def test_compact(raw, kind, key):
    assert nm.compact(raw, kind) == key


def test_index_is_cached_per_mapping(kb):
    assert nm.name_index(kb.gpu_names, kind="gpu") is nm.name_index(kb.gpu_names, kind="gpu")
    other = dict(kb.gpu_names)
    assert nm.name_index(other, kind="gpu") is not nm.name_index(kb.gpu_names, kind="gpu")
