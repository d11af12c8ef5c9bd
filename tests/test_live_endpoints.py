"""The real vendor endpoints, once each (issue 28), for deployers with internet: each parser still reads them.

Opt-in: `GPUBOT_LIVE_TESTS=1 ./scripts/test -m live` (skipped otherwise, and never part of the default run's
network). Each test fetches the vendor's default URL (`knowledge.catalog.fetchers.live`), not a stand-in, and
checks that the parse gives offers. The AWS Price List test reads the two indexes whole and only the first
10 MB of one region's offer file (the whole file is hundreds of MB).
"""

from __future__ import annotations

import datetime as dt
import itertools

import httpx
import pytest

from knowledge.catalog.fetchers import aws_price_list, aws_spot, new_client, oci, runpod, vast
from knowledge.catalog.fetchers.live import SOURCES
from knowledge.catalog.fetchers.live_http import get_bounded
from knowledge.paths import CATALOG_DIR

pytestmark = pytest.mark.live
NOW = dt.datetime.now(dt.UTC)


def fetch(name: str, **kwargs) -> bytes:
    src = SOURCES[name]
    with new_client() as client:
        return get_bounded(client, src.default_url, timeout=src.timeout, max_bytes=src.max_bytes, **kwargs).body


def test_aws_spot_feed():
    known = {line.split(",")[0] for line in (CATALOG_DIR / "aws_vms.csv").read_text().splitlines()[1:]}
    data = aws_spot.parse(fetch("aws_spot"), known=known, fetched_at=NOW)
    assert len(data.rows) > 20 and all(r.spot_price and r.spot_price > 0 for r in data.rows)


def test_runpod_graphql():
    data = runpod.parse(fetch("runpod", method="POST", json=runpod.query()), fetched_at=NOW)
    assert data.rows and {r.stock for r in data.rows} <= {"in_stock", "low", "out_of_stock"}


def test_vast_bundles():
    data = vast.parse(fetch("vast", params=vast.params()), fetched_at=NOW)
    assert len(data.rows) > 5


def test_oci_price_list():
    catalog = (CATALOG_DIR / "oci_vms.csv").read_text(encoding="utf-8")
    data = oci.parse(fetch("oci"), catalog_text=catalog, fetched_at=NOW)
    assert any(r.instance_type.startswith("BM.GPU.H100") for r in data.rows)


def test_aws_price_list_indexes_and_the_head_of_one_offer_file():
    with new_client() as client:
        index = get_bounded(client, aws_price_list.URL, timeout=60, max_bytes=8 << 20).body
        ec2 = aws_price_list._ec2(httpx.Response(200, content=index).json(), aws_price_list.URL)
        region_url = str(httpx.URL(aws_price_list.URL).join(ec2["currentRegionIndexUrl"]))
        regions = get_bounded(client, region_url, timeout=60, max_bytes=8 << 20).body
        path = aws_price_list.region_urls(httpx.Response(200, content=regions).json(), region_url, ["us-east-1"])
        url = str(httpx.URL(aws_price_list.URL).join(path["us-east-1"]))
        with client.stream("GET", url, timeout=120) as response:
            lines = list(itertools.islice(response.iter_lines(), 40_000))
    prices, read = aws_price_list.parse_offer_csv(lines, families={"p4d", "p5", "g5", "g6"}, url=url)
    assert read > 1000  # the header was understood; GPU rows may lie beyond this head
