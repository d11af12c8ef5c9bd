"""The clock refreshes every bundled cloud (issue 18) from recorded files, never the network: an
`httpx.MockTransport` serves the shared catalogs (SkyPilot's format) at the published URLs of
`knowledge/data/catalog_urls.csv` and the recorded Azure Retail Prices API pages; each refresh is a dated snapshot
whose offers match the file it came from. After the refresh the clock checks the price alerts, then the digest.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import httpx
import pytest

from knowledge.history import snapshots as history
from knowledge.paths import CATALOG_DIR, DATA_DIR

RECORDED = Path(__file__).parent / "data" / "catalogs"  # copies of ../shared/data/catalogs (the 7 newer clouds)
BUNDLED = {
    "aws",
    "azure",
    "gcp",
    "alibaba",
    "tencent",
    "oci",
    "lambda",
    "runpod",
    "nebius",
    "hyperstack",
    "primeintellect",
    "shadeform",
}


def _urls() -> dict[str, dict]:
    with (DATA_DIR / "catalog_urls.csv").open(encoding="utf-8", newline="") as handle:
        return {row["provider"]: row for row in csv.DictReader(handle)}


def _recorded_file(provider: str) -> Path:
    bundled = CATALOG_DIR / f"{provider}_vms.csv"
    return bundled if bundled.exists() else RECORDED / f"{provider}_vms.csv"


@pytest.fixture()
def recorded_web(state_url, tmp_path, monkeypatch):
    """An httpx client whose every URL is answered from recorded files; the requests it saw."""
    from bot import prices_cmd
    from tests.test_azure_fetcher import recorded_api

    monkeypatch.setenv("GPUBOT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GPUBOT_REFRESH_SOURCES", raising=False)
    monkeypatch.setattr(prices_cmd, "_import_into_kb", lambda *a: "skipped in this test")  # one KB rebuild each
    by_url = {row["url"]: name for name, row in _urls().items() if row["kind"] == "catalog"}
    azure = recorded_api()
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.host == "prices.azure.com":
            return azure(request)
        name = by_url.get(str(request.url))
        if name is None:
            return httpx.Response(404)
        return httpx.Response(200, content=_recorded_file(name).read_bytes())

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        yield client, seen


def test_catalog_urls_cover_every_bundled_cloud():
    from knowledge.catalog.fetchers.sources import default_names

    rows = _urls()
    assert set(default_names().split(",")) == set(rows) == BUNDLED
    assert rows["azure"]["kind"] == "azure_api"
    for name in BUNDLED - {"azure"}:
        url = rows[name]["url"]
        fork = "sugarlxn/skypilot-catalog" if name in ("alibaba", "tencent") else "skypilot-org/skypilot-catalog"
        assert url.startswith(f"https://raw.githubusercontent.com/{fork}/") and url.endswith("/vms.csv"), name
        assert _recorded_file(name).exists(), name


def test_the_clock_refreshes_every_bundled_cloud_from_recorded_files(recorded_web):
    from bot import clock

    client, seen = recorded_web
    started = dt.datetime.now(dt.UTC)
    results = clock.refresh_all(client)
    assert set(results) == BUNDLED
    failed = {name: r for name, r in results.items() if isinstance(r, str)}
    assert failed == {}
    assert all(r["created"] for r in results.values())
    assert any("prices.azure.com" in url for url in seen)
    for name in BUNDLED:
        [snap] = history.snapshots_of(name)
        assert snap.taken_at >= started - dt.timedelta(seconds=1)  # dated when it was taken
        assert snap.kind == ("api" if name == "azure" else "catalog")
        if name != "azure":
            assert _urls()[name]["url"] in snap.source and seen.count(_urls()[name]["url"]) == 1
            offers = history.offers_of(snap)
            with _recorded_file(name).open(encoding="utf-8-sig", newline="") as handle:
                regions = {row["Region"] for row in csv.DictReader(handle)}
            assert offers and {key[1] for key in offers} <= regions, name  # the file's regions, nothing else
    again = clock.refresh_all(client)  # the same files: nothing new recorded
    assert not any(r["created"] for r in again.values())


def test_a_missing_file_fails_that_cloud_only(recorded_web, monkeypatch):
    from bot import clock

    client, _ = recorded_web
    monkeypatch.setenv("GPUBOT_REFRESH_SOURCES", "lambda,nebius")
    monkeypatch.setenv("GPUBOT_CATALOG_URL_NEBIUS", "https://example.invalid/nebius/vms.csv")
    results = clock.refresh_all(client)
    assert results["lambda"]["created"] and "HTTP 404" in results["nebius"]


def test_the_clock_checks_alerts_after_the_refresh_and_before_the_digest(monkeypatch):
    from bot import clock

    order: list[str] = []
    monkeypatch.setattr(clock, "refresh_all", lambda: order.append("refresh") or {})
    monkeypatch.setattr(clock, "check_alerts", lambda: order.append("alerts"))
    monkeypatch.setattr(clock, "post_due", lambda: order.append("digest"))
    clock._daily()
    assert order == ["refresh", "alerts", "digest"]


def test_refresh_sources_names_live_sources_beside_catalogs(monkeypatch):
    """Issue 28: live source names in GPUBOT_REFRESH_SOURCES get their own jobs; the daily job keeps the catalogs."""
    from bot import clock, prices_cmd

    asked: list[tuple[str, bool]] = []
    monkeypatch.setattr(
        prices_cmd, "refresh_one", lambda name, client=None, prefer_live=True: asked.append((name, prefer_live)) or {}
    )
    monkeypatch.setenv("GPUBOT_REFRESH_SOURCES", "vast,gcp,runpod,azure,aws_spot")
    assert clock.live_names() == ["vast", "runpod", "aws_spot"]
    assert set(clock.refresh_all()) == {"gcp", "azure"} and asked == [("gcp", False), ("azure", False)]
    jobs = {job.id for job in clock.build_scheduler().get_jobs()}
    assert jobs == {"refresh", "digest", "live-vast", "live-runpod", "live-aws_spot"}
    monkeypatch.delenv("GPUBOT_REFRESH_SOURCES")
    assert clock.live_names() == ["aws_spot", "aws_price_list", "oci", "runpod", "vast"]  # unset: every live source
