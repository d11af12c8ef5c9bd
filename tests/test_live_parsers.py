"""Live sources, parsing (issue 28): each parser's rows equal what the fixture says when read by hand, a malformed
body is refused with the URL named, merged catalogs change only the column a source priced, the reader checks the
live columns, and freshness tiers and stock are said as specified. No network, no knowledge-base build."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import httpx
import pytest

from knowledge.catalog.fetchers import FetchError, aws_price_list, aws_spot, oci, runpod, vast
from knowledge.catalog.fetchers.live_http import Validators, get_bounded
from knowledge.catalog.fetchers.live_rows import LiveData, LiveRow, newest_stamp, restamp, to_catalog
from knowledge.catalog.freshness import tier
from knowledge.catalog.reader import CatalogError, parse_catalog
from knowledge.paths import CATALOG_DIR
from tests.reference_calc import aws_offer_file_reserved

LIVE = Path(__file__).parent / "data" / "live"
NOW = dt.datetime(2026, 12, 2, 7, 0, tzinfo=dt.UTC)
AWS_TYPES = {"p4d.24xlarge", "g5.xlarge", "p5.48xlarge"}


def body(name: str) -> bytes:
    return (LIVE / name).read_bytes()


def test_aws_spot_rows_are_the_linux_prices_of_accelerator_types():
    feed = json.loads(body("aws_spot.json"))
    expected = {
        (size["size"], region["region"]): float(column["prices"]["USD"])
        for region in feed["config"]["regions"]
        for family in region["instanceTypes"]
        for size in family["sizes"]
        for column in size["valueColumns"]
        if column["name"] == "linux" and size["size"] in AWS_TYPES and column["prices"]["USD"][0].isdigit()
    }
    data = aws_spot.parse(body("aws_spot.json"), known=AWS_TYPES, fetched_at=NOW)
    assert {(r.instance_type, r.region): r.spot_price for r in data.rows} == expected
    assert data.skipped == {"not an accelerator instance type": 1, "no Linux spot price": 1}  # m5.large; N/A*
    jsonp = b"callback(" + body("aws_spot.json") + b");"  # the old spot.js form reads the same
    assert aws_spot.parse(jsonp, known=AWS_TYPES, fetched_at=NOW).rows == data.rows


def test_runpod_rows_carry_prices_and_stock_per_data_centre():
    types = json.loads(body("runpod.json"))["data"]["gpuTypes"]
    data = runpod.parse(body("runpod.json"), fetched_at=NOW)
    got = {(r.accelerator, r.zone): (r.price, r.spot_price, r.stock) for r in data.rows}
    expected = {}
    for gpu in types:
        for key, low in gpu.items():
            if key.startswith("dc_") and (low["uninterruptablePrice"] or low["minimumBidPrice"]):
                centre = next(c for c in runpod.DATA_CENTRES if "dc_" + c.replace("-", "_") == key)
                status = {"High": "in_stock", "Medium": "in_stock", "Low": "low"}.get(
                    low["stockStatus"], "out_of_stock"
                )
                expected[(gpu["displayName"], centre)] = (low["uninterruptablePrice"], low["minimumBidPrice"], status)
    assert got == expected
    assert {r.region for r in data.rows} == {"US", "RO", "CA", "SE"}  # country codes, as the bundled catalog


def test_runpod_query_asks_every_data_centre_once():
    text = runpod.query()["query"]
    assert all(text.count(f'dataCenterId: "{c}"') == 1 for c in runpod.DATA_CENTRES)


def test_vast_groups_listings_and_counts_free_ones():
    offers = json.loads(body("vast.json"))["offers"]
    data = vast.parse(body("vast.json"), fetched_at=NOW)
    rows = {(r.accelerator, r.accelerator_count, r.region): r for r in data.rows}
    sweden = [o for o in offers if o["gpu_name"] == "RTX 4090" and o["reliability2"] >= 0.9 and o["rentable"]]
    assert rows[("RTX 4090", 1.0, "SE")].price == min(o["dph_total"] for o in sweden)
    assert rows[("RTX 4090", 1.0, "SE")].stock == "in_stock"  # 3 free listings
    assert rows[("H100 SXM", 8.0, "US")].price == 17.6 and rows[("H100 SXM", 8.0, "US")].stock == "low"  # 1 free
    assert rows[("A100 SXM4", 1.0, "CA")].stock == "out_of_stock"  # every listing rented
    assert data.skipped == {"reliability below 0.9": 1}


def test_oci_prices_every_shape_per_gpu_times_count():
    catalog = (CATALOG_DIR / "oci_vms.csv").read_text(encoding="utf-8")
    data = oci.parse(body("oci.json"), catalog_text=catalog, fetched_at=NOW)
    prices = {r.instance_type: r.price for r in data.rows}
    assert prices["BM.GPU.H100.8"] == 8 * 9.5 and prices["VM.GPU.A10.1"] == 1.75
    assert prices["BM.GPU.A100-v2.8"] == 8 * 3.8 and "BM.GPU4.8" not in prices  # A100 40GB is not in the fixture
    assert {r.region for r in data.rows} == {"*"}
    assert data.skipped == {"GPU part not mapped to a shape": 1, "not a GPU-hour part": 1}


def test_aws_offer_file_keeps_linux_shared_on_demand_gpu_rows_only():
    lines = body("aws_offers_us-east-1.csv").decode().splitlines()
    prices, read = aws_price_list.parse_offer_csv(lines, families={"p4d", "g5"}, url="u")
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[5:]))))
    wanted = [
        r
        for r in rows
        if r["TermType"] == "OnDemand"
        and r["Operating System"] == "Linux"
        and r["Tenancy"] == "Shared"
        and r["Pre Installed S/W"] == "NA"
        and r["CapacityStatus"] == "Used"
        and r["Instance Type"].split(".")[0] in {"p4d", "g5"}
    ]
    assert prices == {r["Instance Type"]: float(r["PricePerUnit"]) for r in wanted} and read == len(rows)


EVERY_TERM = {
    f"yrTerm{years}{kind}.{option}Upfront"
    for years in (1, 3)
    for kind in ("Standard", "Convertible")
    for option in ("no", "partial", "all")
}


def test_aws_offer_file_keeps_every_reserved_term_of_linux_shared_gpu_rows():
    text = body("aws_offers_us-east-1.csv").decode()
    families = {"p4d", "p5", "g5"}
    found = aws_price_list.parse_offer_file(text.splitlines(), families=families, url="u")
    by_hand = aws_offer_file_reserved(text, families)
    assert found.reserved.keys() == by_hand.keys() and found.refused == []
    assert all(found.reserved[i] == pytest.approx(by_hand[i]) for i in by_hand)
    p5 = found.reserved["p5.48xlarge"]
    assert set(p5) == EVERY_TERM  # no, partial and all upfront; standard and convertible; 1 and 3 years
    assert p5["yrTerm1Standard.allUpfront"] == pytest.approx(286000 / 8760)  # the fixture's rows, by hand
    assert p5["yrTerm1Standard.partialUpfront"] == pytest.approx(146000 / 8760 + 16.67)
    assert p5["yrTerm1Standard.noUpfront"] == pytest.approx(34.24)
    assert p5["yrTerm3Convertible.partialUpfront"] == pytest.approx(460000 / 26280 + 17.5)
    # p4d's Windows term (9.99/h) and Dedicated all-upfront term are dropped; m5 is no GPU family
    assert found.reserved["p4d.24xlarge"] == pytest.approx(
        {
            "yrTerm1Standard.noUpfront": 13.5,
            "yrTerm1Convertible.partialUpfront": 68000 / 8760 + 7.76,
            "yrTerm3Standard.allUpfront": 210000 / 26280,
        }
    )
    assert set(found.reserved) == {"p4d.24xlarge", "p5.48xlarge", "g5.xlarge"}
    assert found.on_demand == {"p4d.24xlarge": 30.1234, "g5.xlarge": 0.9876, "p5.48xlarge": 55.04}


def with_rows(text: str, changes: list[dict]) -> str:
    """The offer file with rows appended: each a copy of the row with the given RateCode, some cells changed."""
    lines = text.splitlines()
    header = next(csv.reader([lines[5]]))
    rows = {r["RateCode"]: r for r in csv.DictReader(lines[5:])}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for change in changes:
        writer.writerow({**rows[change.pop("like")], **change})
    return text + out.getvalue()


MALFORMED = [  # three reserved terms that cannot be priced, in the bulk CSV's own format
    # a Partial Upfront term without its Upfront Fee row: its hourly part alone would look far too cheap
    {"like": "SKUUS0000.4NA7Y494T4.6YS6EN2CT7", "OfferTermCode": "HU7G6KETJZ", "PurchaseOption": "Partial Upfront",
     "PricePerUnit": "6.9", "RateCode": "SKUUS0000.HU7G6KETJZ.6YS6EN2CT7"},
    # an upfront fee that is not a number
    {"like": "SKUUS0006.4NA7Y494T4.6YS6EN2CT7", "OfferTermCode": "HU7G6KETJZ", "PurchaseOption": "Partial Upfront",
     "PricePerUnit": "0.3", "RateCode": "SKUUS0006.HU7G6KETJZ.6YS6EN2CT7"},
    {"like": "SKUUS0006.MZU6U2429S.2TG2D8R56U", "OfferTermCode": "HU7G6KETJZ", "PurchaseOption": "Partial Upfront",
     "LeaseContractLength": "1yr", "OfferingClass": "standard", "PricePerUnit": "n/a",
     "RateCode": "SKUUS0006.HU7G6KETJZ.2TG2D8R56U"},
    # a lease AWS does not sell
    {"like": "SKUUS0006.4NA7Y494T4.6YS6EN2CT7", "OfferTermCode": "ZZZZZZZZZZ", "LeaseContractLength": "2yr",
     "PricePerUnit": "0.5", "RateCode": "SKUUS0006.ZZZZZZZZZZ.6YS6EN2CT7"},
]  # fmt: skip


def test_a_malformed_reserved_term_is_refused_whole_and_the_on_demand_rows_kept():
    good = body("aws_offers_us-east-1.csv").decode()
    families = {"p4d", "p5", "g5"}
    bad = with_rows(good, [dict(change) for change in MALFORMED])
    found = aws_price_list.parse_offer_file(bad.splitlines(), families=families, url="u")
    expected = aws_price_list.parse_offer_file(good.splitlines(), families=families, url="u")
    assert found.on_demand == expected.on_demand and found.reserved == expected.reserved
    assert "yrTerm1Standard.partialUpfront" not in found.reserved["p4d.24xlarge"]  # never 6.9/h from half a term
    assert len(found.refused) == 3, found.refused
    first = len(good.splitlines()) + 1  # the line of the first appended row
    assert found.refused[0].startswith(f"line {first}: 0 Upfront Fee") and "p4d.24xlarge" in found.refused[0]
    assert found.refused[1].startswith(f"line {first + 2}: PricePerUnit 'n/a' is not a number")
    assert found.refused[2].startswith(f"line {first + 3}: LeaseContractLength '2yr'")


def test_reserved_terms_go_on_every_zone_row_and_the_reader_checks_them():
    from knowledge.catalog.fetchers.live_rows import carry
    from knowledge.catalog.reader import parse_reserved_cell

    base = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,AvailabilityZone\n"
    base += "p5.48xlarge,H100,8,98.32,,us-east-1,use1-az1\np5.48xlarge,H100,8,98.32,,us-east-1,use1-az2\n"
    base += "p5.48xlarge,H100,8,98.32,,us-west-2,usw2-az1\n"
    terms = (("yrTerm1Standard.allUpfront", 286000 / 8760), ("yrTerm1Standard.noUpfront", 34.24))
    data = LiveData(
        "aws_price_list",
        "aws",
        "price",
        "AWS Price List U",
        NOW,
        [LiveRow("p5.48xlarge", "us-east-1", 55.04, reserved=terms)],
    )
    text, updated = to_catalog(data, base)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert updated == 2 and [bool(r["Reserved"]) for r in rows] == [True, True, False]
    assert [r["ReservedFetchedAt"] for r in rows] == ["2026-12-02T07:00:00Z"] * 2 + [""]
    catalog = parse_catalog(text)
    assert parse_reserved_cell(catalog.rows[0].live_value("Reserved")) == pytest.approx(dict(terms))
    assert catalog.rows[0].live_value("ReservedSource") == "AWS Price List U"
    later = "2026-12-02T09:00:00Z"
    assert newest_stamp(restamp(text, "AWS Price List U", later), "AWS Price List U") == later
    kept, carried = carry(base, text)  # the daily file again: the live terms stay on their rows
    assert carried == 2 and [r["Reserved"] for r in csv.DictReader(io.StringIO(kept))] == [rows[0]["Reserved"]] * 2 + [
        ""
    ]
    head = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,Reserved,ReservedFetchedAt\n"
    for cell in ("yrTerm2Standard.noUpfront=1.0", "yrTerm1Standard.noUpfront=abc", "yrTerm1Standard.noUpfront=-1"):
        with pytest.raises(CatalogError, match="Reserved"):
            parse_catalog(head + f"x,H100,1,2.0,US,{cell},2026-12-02T07:00:00Z\n")
    with pytest.raises(CatalogError, match="ReservedFetchedAt"):
        parse_catalog(head + "x,H100,1,2.0,US,yrTerm1Standard.noUpfront=1.0,yesterday\n")


def test_aws_indexes_from_the_recorded_real_bodies():
    index = json.loads(body("offers_index_2026-04-27.json"))
    regions = json.loads(body("AmazonEC2_region_index_2025-05-23.json"))
    urls = aws_price_list.region_urls(regions, "u", ["us-east-1", "nowhere-1"])
    assert urls == {"us-east-1": "/offers/v1.0/aws/AmazonEC2/20250523232744/us-east-1/index.csv"}
    assert aws_price_list._ec2(index, "u")["versionIndexUrl"] == "/offers/v1.0/aws/AmazonEC2/index.json"
    assert [v for v, _ in aws_price_list.versions(json.loads(body("aws_version_index.json")), "u")] == [
        "20261001000000",
        "20261101000000",
    ]


@pytest.mark.parametrize(
    ("parse", "bad"),
    [
        (lambda b: aws_spot.parse(b, known=AWS_TYPES, fetched_at=NOW), b'{"config": {"regions": "x"}}'),
        (lambda b: aws_spot.parse(b, known=AWS_TYPES, fetched_at=NOW), b'{"vers": 0.01, "config": {"regi'),  # cut
        (lambda b: runpod.parse(b, fetched_at=NOW), b'{"errors": [{"message": "rate limited"}]}'),
        (
            lambda b: runpod.parse(b, fetched_at=NOW),
            b'{"data": {"gpuTypes": [{"displayName": "H100", "dc_US_TX_3": {"uninterruptablePrice": "2.99"}}]}}',
        ),  # a price as a string
        (lambda b: vast.parse(b, fetched_at=NOW), b'{"offers": [{"gpu_name": "RTX 4090", "dph_total": "cheap"}]}'),
        (lambda b: vast.parse(b, fetched_at=NOW), b"<html>maintenance</html>"),
        (lambda b: oci.parse(b, catalog_text="", fetched_at=NOW), b'{"items": {}}'),
    ],
)
def test_a_malformed_body_is_refused(parse, bad):
    with pytest.raises(FetchError):
        parse(bad)


def test_a_spot_update_changes_only_the_priced_rows_and_says_when():
    base = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,AvailabilityZone\n"
    base += "p4d.24xlarge,A100,8,32.77,12.0,us-east-1,use1-az1\np4d.24xlarge,A100,8,32.77,11.0,us-east-1,use1-az2\n"
    base += "p4d.24xlarge,A100,8,32.77,10.0,us-west-2,usw2-az1\n"
    data = LiveData(
        "aws_spot",
        "aws",
        "spot",
        "AWS EC2 spot price feed U",
        NOW,
        [LiveRow("p4d.24xlarge", "us-east-1", spot_price=9.5)],
    )
    text, updated = to_catalog(data, base)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert updated == 2 and [r["SpotPrice"] for r in rows] == ["9.5", "9.5", "10.0"]
    assert [r["SpotFetchedAt"] for r in rows] == ["2026-12-02T07:00:00Z"] * 2 + [""]
    assert [r["Price"] for r in rows] == ["32.77"] * 3 and not any(r["PriceFetchedAt"] for r in rows)
    catalog = parse_catalog(text)
    assert catalog.rows[0].live_value("SpotSource") == "AWS EC2 spot price feed U"
    later = "2026-12-02T09:00:00Z"
    assert newest_stamp(restamp(text, "feed U", later), "feed U") == later


def test_the_reader_checks_the_live_columns():
    head = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,Stock,PriceFetchedAt\n"
    with pytest.raises(CatalogError, match="Stock"):
        parse_catalog(head + "x,H100,1,2.0,US,plenty,2026-12-02T07:00:00Z\n")
    with pytest.raises(CatalogError, match="PriceFetchedAt"):
        parse_catalog(head + "x,H100,1,2.0,US,in_stock,yesterday\n")


@pytest.mark.parametrize(
    ("fetched", "as_of", "known", "expected"),
    [
        ("2026-12-02T06:01:00Z", "2026-12-02", True, "live"),  # 59 min
        ("2026-12-02T06:00:00Z", "2026-12-02", True, "fresh"),  # exactly 1 h
        ("2026-12-01T07:00:01Z", "2026-12-01", True, "fresh"),  # just under 24 h
        ("2026-12-01T07:00:00Z", "2026-12-01", True, "stale"),
        (None, "2026-12-01", False, "bundled"),  # bundled, date unknown
        (None, "2026-04", True, "stale"),  # a dated catalog
    ],
)
def test_freshness_tiers(fetched, as_of, known, expected):
    assert tier(fetched, as_of, known, NOW) == expected


def test_offer_line_says_age_and_stock():
    from handlers.freshness import offer_label
    from handlers.models import Offer

    item = Offer(
        provider="runpod", instance_type="1x", gpu="H100", gpu_count=1, region="US", pricing="spot",
        price_per_hour=1, price_per_gpu_hour=1, currency="USD", price_per_hour_usd=1, price_per_gpu_hour_usd=1,
        source="s", as_of="2026-12-02", fetched_at="2026-12-02T06:48:00Z", stock="low",
        stock_read_at="2026-12-02T06:48:00Z",
    )  # fmt: skip
    assert offer_label(item, "en", NOW) == " · spot 12 min ago · low stock, read 12 min ago"
    assert "12 分钟前" in offer_label(item, "zh", NOW)


def test_bounded_get_sends_validators_and_keeps_data_on_304():
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(dict(request.headers))
        if request.headers.get("If-None-Match") == '"v1"':
            return httpx.Response(304)
        return httpx.Response(200, content=b"{}", headers={"ETag": '"v1"', "Last-Modified": "Wed, 02 Dec 2026"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        first = get_bounded(client, "http://s/x", timeout=1, max_bytes=10)
        second = get_bounded(client, "http://s/x", timeout=1, max_bytes=10, validators=first.validators)
    assert first.validators == Validators('"v1"', "Wed, 02 Dec 2026") and first.body == b"{}"
    assert second.not_modified and second.body == b"" and seen[1]["if-modified-since"] == "Wed, 02 Dec 2026"


def test_bounded_get_cuts_a_body_over_the_cap_even_without_a_length():
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter([b"x" * 4096] * 100))  # streamed: no Content-Length

    with httpx.Client(transport=httpx.MockTransport(answer)) as client, pytest.raises(FetchError, match="cap"):
        get_bounded(client, "http://s/x", timeout=1, max_bytes=10_000)


def test_mixed_tiers_and_a_day_silent_source_are_said():
    from handlers.freshness import answer_notes
    from handlers.models import Offer

    def item(**kw):
        base = dict(
            provider="p", instance_type="i", gpu="H100", gpu_count=1, region="r", pricing="on_demand",
            price_per_hour=1, price_per_gpu_hour=1, currency="USD", price_per_hour_usd=1, price_per_gpu_hour_usd=1,
            source="bundled file", as_of="2026-12-01", as_of_known=False,
        )  # fmt: skip
        return Offer.model_validate({**base, **kw})

    now = dt.datetime.now(dt.UTC)  # the tier is computed when the offer is made, against the clock

    def at(hours: float) -> str:
        return (now - dt.timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")

    live = item(source="A https://a", as_of=at(0.2)[:10], as_of_known=True, fetched_at=at(0.2))
    old = item(source="B https://b", as_of=at(59)[:10], as_of_known=True, fetched_at=at(59))
    notes = answer_notes([live, old, item()], "en", now)
    assert notes == [
        "Prices here are of different ages: 1 live (< 1 h), 1 stale (> 24 h), 1 bundled, date unknown.",
        "B https://b has not answered for a day (last good answer 2 d ago): its prices here are from that answer.",
    ]
    assert answer_notes([live, live], "en", now) == []  # one tier, nobody silent: nothing to say


def test_an_aws_region_over_its_budget_is_left_out_and_said():
    v = "/offers/v1.0/aws/AmazonEC2/20250523232744"
    m5 = next(line for line in body("aws_offers_us-east-1.csv").splitlines() if b'"m5.large"' in line)
    huge = body("aws_offers_us-east-1.csv") + (m5 + b"\n") * 5_000  # non-GPU rows, > 1 MB: over the region budget
    routes = {
        "/offers/v1.0/aws/index.json": body("offers_index_2026-04-27.json"),
        "/offers/v1.0/aws/AmazonEC2/current/region_index.json": body("AmazonEC2_region_index_2025-05-23.json"),
        f"{v}/us-east-1/index.csv": huge,
        f"{v}/us-west-2/index.csv": body("aws_offers_us-west-2.csv"),
    }

    def answer(request: httpx.Request) -> httpx.Response:
        found = routes.get(request.url.path)
        return httpx.Response(200, content=found) if found else httpx.Response(404)

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        data, _ = aws_price_list.fetch(
            client,
            url="http://pricing.test/offers/v1.0/aws/index.json",
            regions=["us-east-1", "us-west-2"],
            families={"p4d", "g5"},
            max_bytes=1024 * 1024,
            seconds=10,
            fetched_at=NOW,
        )
    assert data is not None and {r.region for r in data.rows} == {"us-west-2"}
    assert len(data.warnings) == 1 and data.warnings[0].startswith("us-east-1: ") and "byte budget" in data.warnings[0]
    assert data.history_url == "http://pricing.test/offers/v1.0/aws/AmazonEC2/index.json"
