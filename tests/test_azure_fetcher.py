"""The Azure Retail Prices API fetcher against recorded pages (tests/data/recorded/, README beside them).

Nothing here reaches the internet: every response comes from `httpx.MockTransport`. Pages 810 and 811 of the
2022-06-06 crawl are consecutive (810's NextPageLink is `$skip=81100`); the test serves the 2026 preview page
(9 items, `NextPageLink: null`) as the answer to 811's link, so paging runs over three real pages of different
sizes and ends on a real final page. Expected prices are read by hand from the JSON (README tables).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path

import httpx
import pytest

from knowledge.catalog.fetchers import FetchError, azure
from knowledge.history import snapshots as history

RECORDED = Path(__file__).parent / "data" / "recorded"
PAGE810 = json.loads((RECORDED / "azure_retail_prices_2022-06-06_page810.json").read_text(encoding="utf-8"))
PAGE811 = json.loads((RECORDED / "azure_retail_prices_2022-06-06_page811.json").read_text(encoding="utf-8"))
PREVIEW = json.loads((RECORDED / "azure_retail_prices_eastus_d2s_v3_preview.json").read_text(encoding="utf-8"))
RECORDED_ON = dt.datetime(2022, 6, 6, tzinfo=dt.UTC)


class Api:
    """A stand-in for prices.azure.com: `$skip` -> page body (dict, bytes or an httpx.Response factory)."""

    def __init__(self, pages: dict[str | None, object]):
        self.pages = pages
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        page = self.pages[request.url.params.get("$skip")]
        if callable(page):
            return page(request)
        if isinstance(page, list):  # a sequence of answers for retries
            answer = page.pop(0)
            return answer(request) if callable(answer) else httpx.Response(200, json=answer)
        return httpx.Response(200, content=page if isinstance(page, bytes) else json.dumps(page).encode())

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))


def recorded_api() -> Api:
    return Api({None: PAGE810, "81100": PAGE811, "81200": PREVIEW})


def _fetch(api: Api, waits: list[float] | None = None, **kwargs) -> azure.AzurePrices:
    """Fetch through the stand-in; retry waits are recorded in `waits` instead of slept."""
    waits = [] if waits is None else waits
    return azure.fetch(api.client(), now=RECORDED_ON, sleep=waits.append, **kwargs)


@pytest.fixture()
def state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'state.db'}")
    return tmp_path


def test_recorded_pages_become_prices():
    api = recorded_api()
    result = _fetch(api)
    assert (result.pages, result.items) == (3, 209)
    prices = {key: price for key, (price, _item) in result.prices.items()}
    assert prices == {
        # NC6s v3, westeurope (page 810 items 97-99): 3.823/h; 21332 per year; 32149 per 3 years
        ("Standard_NC6s_v3", "westeurope", "on_demand"): 3.823,
        ("Standard_NC6s_v3", "westeurope", "reserved_1y"): pytest.approx(21332 / 8760),
        ("Standard_NC6s_v3", "westeurope", "reserved_3y"): pytest.approx(32149 / 26280),
        # ND A100 v4, usgovvirginia (page 811), under its deployable name, not armSkuName ..._A100_v4
        ("Standard_ND96asr_v4", "usgovvirginia", "on_demand"): 34.003,
        ("Standard_ND96asr_v4", "usgovvirginia", "reserved_1y"): pytest.approx(206214 / 8760),
        ("Standard_ND96asr_v4", "usgovvirginia", "reserved_3y"): pytest.approx(357442 / 26280),
    }
    assert prices[("Standard_NC6s_v3", "westeurope", "reserved_1y")] == pytest.approx(2.43516, abs=1e-5)
    assert prices[("Standard_ND96asr_v4", "usgovvirginia", "reserved_3y")] == pytest.approx(13.6013, abs=1e-4)
    # left out: the Low Priority NC32ads_A10_v4, the Windows NV12 spot, the FPGA NP40s, every non-GPU item
    assert result.skipped["Low Priority"] == 1 and result.skipped["Windows"] == 1
    assert result.skipped["FPGA size (NP), not a GPU"] == 2
    assert not result.unknown_sizes
    # the rows are SkyPilot's Azure catalog format, GPU name and count from the bundled catalog
    assert result.catalog_csv().splitlines() == [
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region",
        "Standard_NC6s_v3,V100,1.0,6.0,112.0,V100,3.823,,westeurope",
        "Standard_ND96asr_v4,A100,8.0,96.0,900.0,A100,34.003,,usgovvirginia",
    ]


def test_paging_follows_next_page_link_literally():
    api = recorded_api()
    _fetch(api)
    first, second, third = (r.url for r in api.requests)
    assert first.host == "prices.azure.com" and first.params["api-version"] == azure.API_VERSION
    assert "serviceName eq 'Virtual Machines'" in first.params["$filter"]
    assert str(second) == PAGE810["NextPageLink"].replace(":443", "")
    assert third.params["$skip"] == "81200" and "$filter" not in third.params


def test_offers_flow_through_convert_with_reserved_terms():
    offers = {(o["instance_type"], o["region"], o["pricing"]): o for o in _fetch(recorded_api()).offers()}
    nd = offers[("Standard_ND96asr_v4", "usgovvirginia", "reserved_1y")]
    assert (nd["gpu"], nd["gpu_count"]) == ("A100", 8.0)
    assert nd["price_per_gpu_hour_usd"] == pytest.approx(206214 / 8760 / 8)
    assert "8760" in nd["note"]
    from handlers.models import Offer
    from handlers.terms import pricing_text

    item = Offer.model_validate({k: v for k, v in nd.items() if k in Offer.model_fields})
    assert (pricing_text(item), pricing_text(item, "zh")) == ("1-year reservation", "1年预留实例")  # issue 26
    assert offers[("Standard_NC6s_v3", "westeurope", "on_demand")]["gpu"] == "V100"
    assert len(offers) == 6


def _spot_page() -> dict:
    """Page 810's NC6s v3 on-demand item, turned into the meters of one size that the recording lacks
    (Linux Spot, Linux Low Priority, Windows Spot) -- synthetic variants in the documented format."""
    base = next(i for i in PAGE810["Items"] if i["armSkuName"] == "Standard_NC6s_v3" and i["type"] == "Consumption")
    linux_spot = {
        **copy.deepcopy(base),
        "meterName": "NC6s v3 Spot",
        "skuName": "NC6s v3 Spot",
        "retailPrice": 0.7646,
        "unitPrice": 0.7646,
    }
    low_priority = {
        **copy.deepcopy(base),
        "meterName": "NC6s v3 Low Priority",
        "skuName": "NC6s v3 Low Priority",
        "retailPrice": 0.7,
        "unitPrice": 0.7,
    }
    windows_spot = {
        **copy.deepcopy(linux_spot),
        "productName": "Virtual Machines NCSv3 Series Windows",
        "retailPrice": 0.9,
        "unitPrice": 0.9,
    }
    devtest = {**copy.deepcopy(base), "type": "DevTestConsumption", "retailPrice": 1.0}
    items = [low_priority, windows_spot, linux_spot, devtest]
    return {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": items,
        "NextPageLink": None,
        "Count": len(items),
    }


def test_spot_is_kept_and_low_priority_windows_and_devtest_are_not():
    result = _fetch(Api({None: _spot_page()}))
    assert {k: p for k, (p, _i) in result.prices.items()} == {("Standard_NC6s_v3", "westeurope", "spot"): 0.7646}
    assert result.catalog_csv().splitlines()[1] == "Standard_NC6s_v3,V100,1.0,6.0,112.0,V100,,0.7646,westeurope"


def test_an_empty_or_missing_link_ends_paging():
    last = {**_spot_page(), "NextPageLink": ""}
    empty = {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": [],
        "NextPageLink": None,
        "Count": 0,
    }
    first = {**PAGE810, "NextPageLink": "https://prices.azure.com/api/retail/prices?$skip=1"}
    result = _fetch(Api({None: first, "1": {**last, "NextPageLink": "https://prices.azure.com/x?$skip=2"}, "2": empty}))
    assert result.pages == 3
    assert _fetch(Api({None: last})).pages == 1


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        (
            {None: PAGE810, "81100": b'{"Items": [', "81200": PREVIEW},
            "page 2 https://prices.azure.com",
        ),  # truncated body
        ({None: {"Items": "nope", "NextPageLink": None}}, "page 1 .*no 'Items' list"),
        ({None: [1, 2, 3]}, "not a JSON object"),
        ({None: {**PAGE810, "Count": 1000}}, "'Count' is 1000 but the page holds 100 items"),
        ({None: {**PAGE810, "NextPageLink": 42}}, "NextPageLink"),
        ({None: {**PAGE810, "NextPageLink": "https://evil.example/api?$skip=1"}}, "leaves prices.azure.com"),
        (
            {
                None: {**PAGE810, "NextPageLink": "https://prices.azure.com/api/retail/prices?$skip=7"},
                "7": {**PAGE810, "NextPageLink": "https://prices.azure.com/api/retail/prices?$skip=7"},
            },
            "paging loop",
        ),
    ],
    ids=["truncated-json", "no-items", "not-an-object", "count-mismatch", "bad-link", "other-host", "loop"],
)
def test_malformed_pages_are_rejected_with_the_page_named(pages, message):
    with pytest.raises(FetchError, match=message):
        _fetch(Api(dict(pages)))


def test_a_malformed_gpu_item_names_page_and_item():
    page = copy.deepcopy(PAGE810)
    gpu = next(n for n, i in enumerate(page["Items"]) if i["armSkuName"] == "Standard_NC6s_v3")
    page["Items"][gpu]["retailPrice"] = "3.823"
    with pytest.raises(FetchError, match=rf"page 1 .*item {gpu + 1}: .*non-numeric retailPrice"):
        _fetch(Api({None: page}))


def test_429_and_5xx_and_transport_errors_are_retried():
    def limited(request):
        return httpx.Response(429, headers={"Retry-After": "7"}, json={"error": "too many requests"})

    def unavailable(request):
        return httpx.Response(503, text="Service Unavailable")

    def reset(request):
        raise httpx.ReadTimeout("timed out", request=request)

    api = Api({None: [limited, unavailable, reset, _spot_page()]})
    waits: list[float] = []
    result = _fetch(api, waits)
    assert result.pages == 1 and len(api.requests) == 4
    assert waits[0] == 7.0  # Retry-After honoured
    assert 2.0 <= waits[1] <= 2.5 and 4.0 <= waits[2] <= 4.5  # exponential backoff with jitter


def test_retries_give_up_and_client_errors_are_not_retried():
    api = Api({None: lambda r: httpx.Response(500)})
    with pytest.raises(FetchError, match="page 1 .*failed after 5 attempts \\(HTTP 500\\)"):
        _fetch(api)
    assert len(api.requests) == 5
    api = Api({None: lambda r: httpx.Response(400, json={"error": "bad filter"})})
    with pytest.raises(FetchError, match="HTTP 400 \\(not retried\\)"):
        _fetch(api)
    assert len(api.requests) == 1


def test_size_lookup_handles_the_naming_trap_and_the_size_table():
    assert azure.size_info("Standard_ND96asr_A100_v4").instance_type == "Standard_ND96asr_v4"
    assert azure.size_info("Standard_ND96amsr_A100_v4").accelerator == "A100-80GB"
    a10 = azure.size_info("Standard_NC8ads_A10_v4")  # a GPU slice the bundled catalog does not name
    assert (a10.accelerator, a10.count, a10.origin) == (
        "A10",
        pytest.approx(1 / 3),
        "Microsoft Learn: NC A10 v4 (GPU slices)",
    )
    assert azure.size_info("Standard_NCC40ads_H100_v5").accelerator == "H100"
    assert azure.size_info("Standard_NC999zz_v9") is None


def test_refresh_records_a_snapshot_and_a_failed_fetch_records_nothing(state_home):
    from bot.prices_cmd import refresh_azure

    first = refresh_azure(client=recorded_api().client(), now=RECORDED_ON, sleep=lambda s: None)
    assert first["created"] and first["offers"] == 6 and first["fetch"]["pages"] == 3
    snap = history.latest_snapshot("azure")
    assert snap.kind == "api" and "Azure Retail Prices API" in snap.source
    reserved = history.offers_of(snap)[("Standard_NC6s_v3", "westeurope", "reserved_3y")]
    assert reserved["price_per_hour_usd"] == pytest.approx(32149 / 26280)

    broken = Api({None: PAGE810, "81100": b'{"Items": [{"serviceName": "Virtual Ma', "81200": PREVIEW})
    with pytest.raises(FetchError, match="page 2"):
        refresh_azure(client=broken.client(), now=RECORDED_ON, sleep=lambda s: None)
    assert [s.id for s in history.snapshots_of("azure")] == [snap.id]

    again = refresh_azure(client=recorded_api().client(), now=RECORDED_ON, sleep=lambda s: None)
    assert not again["created"] and len(history.snapshots_of("azure")) == 1


def test_a_region_refresh_keeps_the_other_regions(state_home):
    from bot.prices_cmd import refresh_azure

    refresh_azure(client=recorded_api().client(), now=RECORDED_ON, sleep=lambda s: None)
    page = _spot_page()
    api = Api({None: page})
    report = refresh_azure(["westeurope"], client=api.client(), now=RECORDED_ON, sleep=lambda s: None)
    assert "armRegionName eq 'westeurope'" in api.requests[0].url.params["$filter"]
    offers = history.offers_of(history.latest_snapshot("azure"))
    assert ("Standard_ND96asr_v4", "usgovvirginia", "on_demand") in offers  # kept from the previous snapshot
    assert ("Standard_NC6s_v3", "westeurope", "on_demand") not in offers  # westeurope now: spot only
    assert report["vs_previous"] == {"added": 1, "removed": 3, "changed": 0}
