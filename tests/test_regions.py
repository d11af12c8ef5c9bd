"""Region words mean what they say on every cloud (issue 14): directions, cities, country codes, continents.

Expected region sets are written out here by hand (what each place is, per cloud), independent of the patterns in
`knowledge/data/region_groups.csv`. They are checked over the knowledge base's regions plus the region ids of the
seven neocloud catalogs (`NEOCLOUD_REGIONS`, copied from their CSV files), so the groups already work for clouds
that are bundled or imported later.
"""

from __future__ import annotations

import json
import re

import pytest

from bot.cli import main
from handlers.parse import Vocabulary, parse

NEOCLOUD_REGIONS = {  # the Region column of ../shared/data/catalogs/<cloud>_vms.csv
    "oci": (
        "af-casablanca-1",
        "af-johannesburg-1",
        "ap-batam-1",
        "ap-chuncheon-1",
        "ap-hyderabad-1",
        "ap-kulai-2",
        "ap-melbourne-1",
        "ap-mumbai-1",
        "ap-osaka-1",
        "ap-seoul-1",
        "ap-singapore-1",
        "ap-singapore-2",
        "ap-sydney-1",
        "ap-tokyo-1",
        "ca-montreal-1",
        "ca-toronto-1",
        "eu-amsterdam-1",
        "eu-frankfurt-1",
        "eu-madrid-1",
        "eu-madrid-3",
        "eu-marseille-1",
        "eu-milan-1",
        "eu-paris-1",
        "eu-stockholm-1",
        "eu-turin-1",
        "eu-zurich-1",
        "il-jerusalem-1",
        "me-abudhabi-1",
        "me-dubai-1",
        "me-jeddah-1",
        "me-riyadh-1",
        "mx-monterrey-1",
        "mx-queretaro-1",
        "sa-bogota-1",
        "sa-santiago-1",
        "sa-saopaulo-1",
        "sa-valparaiso-1",
        "sa-vinhedo-1",
        "uk-cardiff-1",
        "uk-london-1",
        "us-ashburn-1",
        "us-chicago-1",
        "us-phoenix-1",
        "us-sanjose-1",
    ),
    "lambda": (
        "asia-northeast-1",
        "asia-northeast-2",
        "asia-south-1",
        "australia-east-1",
        "europe-central-1",
        "europe-south-1",
        "me-west-1",
        "us-east-1",
        "us-east-2",
        "us-east-3",
        "us-midwest-1",
        "us-south-1",
        "us-south-2",
        "us-south-3",
        "us-west-1",
        "us-west-2",
        "us-west-3",
    ),
    "runpod": ("CA", "CZ", "IS", "NL", "NO", "RO", "SE", "US"),
    "nebius": ("eu-north1", "eu-west1", "us-central1"),
    "hyperstack": ("CANADA-1", "NORWAY-1", "US-1"),
    "primeintellect": ("AU", "CA", "DE", "FI", "FR", "IN", "IS", "JP", "NO", "US"),
    "shadeform": (
        "austin-usa-1",
        "bangalore-india-1",
        "beltsville-usa-1",
        "calgary-canada-1",
        "casper-usa-2",
        "chicago-usa-2",
        "chicago-usa-3",
        "culpeper-usa-1",
        "dallas-usa-3",
        "desmoines-usa-1",
        "dulles-usa-1",
        "dulles-usa-4",
        "houston-usa-1",
        "houston-usa-2",
        "kansascity-usa-1",
        "kansascity-usa-6",
        "montreal-canada-2",
        "newyork-usa-1",
        "paris-france-1",
        "paris-france-5",
        "phoenix-usa-2",
        "saltlakecity-usa-1",
        "sanjose-usa-2",
        "tokyo-japan-1",
        "tokyo-japan-5",
        "warsaw-poland-1",
        "wichita-usa-1",
    ),
}
NEO = {r for ids in NEOCLOUD_REGIONS.values() for r in ids}

WEST = {
    "us-west-1",
    "us-west-2",
    "us-west1",
    "us-west2",
    "us-west3",
    "us-west4",
    "westus",
    "westus2",
    "westus3",
    "na-siliconvalley",
    "us-west-3",
    "us-sanjose-1",
    "us-phoenix-1",
    "sanjose-usa-2",
    "phoenix-usa-2",
    "saltlakecity-usa-1",
}
EAST = {
    "us-east-1",
    "us-east-2",
    "us-east1",
    "us-east4",
    "us-east5",
    "eastus",
    "eastus2",
    "na-ashburn",
    "us-east-3",
    "us-ashburn-1",
    "newyork-usa-1",
    "culpeper-usa-1",
    "dulles-usa-1",
    "dulles-usa-4",
    "beltsville-usa-1",
}
OSAKA = {"ap-northeast-3", "asia-northeast2", "asia-northeast-2", "ap-osaka-1"}
TOKYO = {
    "ap-northeast-1",
    "asia-northeast1",
    "asia-northeast-1",
    "ap-tokyo",
    "ap-tokyo-1",
    "tokyo-japan-1",
    "tokyo-japan-5",
}
FRANKFURT = {"eu-central-1", "europe-west3", "eu-frankfurt", "eu-frankfurt-1", "europe-central-1"}
MUMBAI = {"ap-south-1", "asia-south1", "ap-mumbai-1"}
VIRGINIA = {
    "us-east-1",
    "us-east4",
    "eastus",
    "eastus2",
    "na-ashburn",
    "us-ashburn-1",
    "culpeper-usa-1",
    "dulles-usa-1",
    "dulles-usa-4",
}
OREGON = {"us-west-2", "us-west1"}
LONDON = {"eu-west-2", "europe-west2", "uk-london-1"}
PARIS = {"eu-west-3", "europe-west9", "eu-paris-1", "paris-france-1", "paris-france-5"}
SEOUL = {"ap-northeast-2", "asia-northeast3", "ap-seoul", "ap-seoul-1"}
SYDNEY = {"ap-southeast-2", "australia-southeast1", "ap-sydney-1"}
SINGAPORE = {"ap-southeast-1", "asia-southeast1", "ap-singapore", "ap-singapore-1", "ap-singapore-2"}
CANADA = {
    "ca-central-1",
    "northamerica-northeast1",
    "northamerica-northeast2",
    "ca-montreal-1",
    "ca-toronto-1",
    "CA",
    "CANADA-1",
    "calgary-canada-1",
    "montreal-canada-2",
}
CALIFORNIA = {"us-west-1", "us-west2", "westus", "na-siliconvalley", "us-sanjose-1", "sanjose-usa-2"}
AZURE_US = {"centralus", "eastus", "eastus2", "northcentralus", "southcentralus", "westus", "westus2", "westus3"}


def _us(regions: set[str]) -> set[str]:
    return {
        r
        for r in regions
        if re.match(r"(?i)us-", r) or r in AZURE_US or r.startswith("na-") or "-usa-" in r or r == "US"
    }


def _europe(regions: set[str]) -> set[str]:
    return {r for r in regions if r.lower().startswith(("eu-", "europe-", "uk-"))} | {
        "NL",
        "CZ",
        "RO",
        "SE",
        "NO",
        "IS",
        "FI",
        "DE",
        "FR",
        "NORWAY-1",
        "paris-france-1",
        "paris-france-5",
        "warsaw-poland-1",
    }


@pytest.fixture(scope="module")
def everywhere(kb):
    """(vocabulary over the KB's regions plus the neocloud region ids, all those region ids)."""
    regions = set(kb.regions) - {"article"} | NEO
    vocab = Vocabulary.build(
        gpu_names=kb.gpu_names,
        provider_names=kb.provider_names,
        regions=regions,
        instance_types=kb.instance_types.values(),
    )
    return vocab, regions


CASES = [  # (question, expected regions: a set, or a function of all region ids)
    ("cheapest H100 in us-west", WEST),  # "in us" must not swallow "us-west"
    ("cheapest H100 in us west", WEST),
    ("cheapest H100 in the US west", WEST),
    ("美西最便宜的H100", WEST),
    ("美国西部的H100多少钱", WEST),
    ("cheapest H100 in us-east", EAST),
    ("美东的A100", EAST),
    ("cheapest T4 in Osaka", OSAKA),  # the city, not Japan: no Tokyo
    ("大阪的T4", OSAKA),
    ("cheapest A100 in Tokyo", TOKYO),
    ("东京的A100", TOKYO),
    ("cheapest H100 in Frankfurt", FRANKFURT),
    ("法兰克福的H100", FRANKFURT),
    ("cheapest T4 in Mumbai", MUMBAI),
    ("孟买的T4", MUMBAI),
    ("cheapest H100 in Virginia", VIRGINIA),
    ("弗吉尼亚的H100", VIRGINIA),
    ("cheapest A100 in Oregon", OREGON),
    ("cheapest A100 in London", LONDON),
    ("伦敦的A100", LONDON),
    ("cheapest A100 in Paris", PARIS),
    ("cheapest A100 in Seoul", SEOUL),
    ("首尔的A100", SEOUL),
    ("cheapest A100 in Sydney", SYDNEY),
    ("悉尼的A100", SYDNEY),
    ("cheapest A100 in Singapore", SINGAPORE),
    ("cheapest H100 in CA", CANADA),  # the country code neoclouds use: Canada, not California
    ("cheapest H100 in Canada", CANADA),
    ("加拿大的H100", CANADA),
    ("cheapest H100 in California", CALIFORNIA),
    ("cheapest H100 in IS", {"IS"}),  # RunPod / Prime Intellect Iceland
    ("cheapest H100 in Iceland", {"IS"}),
    ("cheapest H100 in FI", {"europe-north1", "eu-north1", "FI"}),
    ("cheapest H100 in NO", {"NO", "NORWAY-1"}),
    ("cheapest H100 in SE", {"eu-north-1", "eu-stockholm-1", "SE"}),
    ("cheapest H100 in NL", {"europe-west4", "eu-amsterdam-1", "NL"}),
    ("cheapest H100 in CZ", {"CZ"}),
    ("cheapest H100 in RO", {"RO"}),
    ("cheapest H100 in US", _us),
    ("cheapest H100 in us", _us),
    ("cheapest H100 in the United States", _us),
    ("美国的H100", _us),
    ("cheapest H100 in Europe", _europe),
    ("在欧洲最便宜的H100", _europe),
    ("欧洲的H100", _europe),
    ("cheapest H100 in North America", lambda rs: _us(rs) | CANADA | {"mx-monterrey-1", "mx-queretaro-1"}),
    ("北美的H100", lambda rs: _us(rs) | CANADA | {"mx-monterrey-1", "mx-queretaro-1"}),
]


@pytest.mark.parametrize(("question", "expected"), CASES, ids=[c[0] for c in CASES])
def test_region_word_resolves_to_exactly_its_regions(everywhere, question, expected):
    vocab, regions = everywhere
    want = (expected(regions) if callable(expected) else expected) & regions
    assert want, question
    assert set(parse(question, vocab).regions) == want


@pytest.mark.parametrize("question", ["cheapest A100 in Asia", "亚洲的A100"])
def test_asia_is_asia_not_australia(everywhere, question):
    vocab, _ = everywhere
    got = set(parse(question, vocab).regions)
    assert {"ap-northeast-1", "asia-east1", "cn-beijing", "JP", "IN", "tokyo-japan-1", "bangalore-india-1"} <= got
    assert not got & {"ap-southeast-2", "ap-sydney-1", "AU", "australia-southeast1", "eu-central-1", "us-east-1"}


@pytest.mark.parametrize(
    "question",
    [
        "help us pick an H100",  # "us" the pronoun
        "cheapest H100 in 2 regions",  # "in" is not India's code
        "is the H100 cheaper than the A100",  # "is" is not Iceland
        "no spot H100 please",  # "no" is not Norway
        "ca 8 H100 for training",  # lower-case "ca" is not Canada
    ],
)
def test_small_words_are_not_country_codes(everywhere, question):
    vocab, _ = everywhere
    assert parse(question, vocab).regions == []


# --- rankings on the real knowledge base rank only those regions ----------------------------------------------


@pytest.fixture
def ask(kb, capsys):
    def run(text: str) -> dict:
        assert main(["ask", text, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    return run


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("cheapest T4 in us-west top 20", WEST),
        ("cheapest A100 in us-west top 20", WEST),
        ("cheapest T4 in Osaka", OSAKA),
        ("大阪最便宜的T4", OSAKA),
        ("cheapest A100 in Osaka top 20", OSAKA),  # no seed-article figure: it has no region
        ("大阪最便宜的A100", OSAKA),
        ("cheapest H100 in Europe top 20", None),
        ("在欧洲最便宜的H100 前20", None),
        ("cheapest A100 in Tokyo top 20", TOKYO),
    ],
)
def test_rankings_hold_only_the_regions_asked(ask, kb, question, expected):
    result = ask(question)
    offers = result["offers"]
    assert offers, result["text"]
    regions = {o["region"] for o in offers}
    if expected is None:  # Europe: every region a European one, by its own name
        assert regions <= _europe(regions), regions
    else:
        assert regions <= expected, regions
    if "Osaka" in question or "大阪" in question:
        assert not regions & TOKYO
