"""Live sources end to end (issue 28): every source served by a stand-in HTTP server on 127.0.0.1, refreshed over
real sockets into the shared state and the knowledge base, then asked as a user asks.

The oracles read the same bodies (and the bundled catalogs they update) with the csv/json modules, independently
of the fetchers. To keep builds short the knowledge base here holds the bundled AWS, OCI and RunPod catalogs only
(plus the live ones); the code path is the production one.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import threading
import time
from pathlib import Path

import pytest

from knowledge.paths import CATALOG_DIR, PRICING_DIR
from tests.conftest import copy_kb
from tests.live_standin import LiveStandin
from tests.reference_calc import aws_offer_file_reserved

LIVE = Path(__file__).parent / "data" / "live"
ALL = ("aws_spot", "aws_price_list", "oci", "runpod", "vast")
SUBSET = ("aws", "oci", "runpod")
V = "/offers/v1.0/aws/AmazonEC2/20250523232744"
VERSIONS = {"20261001000000": "aws_offers_us-east-1_v1.csv", "20261101000000": "aws_offers_us-east-1.csv"}
EMPTY_OFFERS = "\n".join((LIVE / "aws_offers_us-west-2.csv").read_text().splitlines()[:6]) + "\n"  # header only


def body(name: str) -> bytes:
    return (LIVE / name).read_bytes()


def serve_all(standin: LiveStandin) -> None:
    standin.route("/spot.json", body("aws_spot.json"))
    standin.route("/offers/v1.0/aws/index.json", body("offers_index_2026-04-27.json"))
    standin.route(
        "/offers/v1.0/aws/AmazonEC2/current/region_index.json", body("AmazonEC2_region_index_2025-05-23.json")
    )
    standin.route(f"{V}/us-east-1/index.csv", body("aws_offers_us-east-1.csv"))
    standin.route(f"{V}/us-west-2/index.csv", body("aws_offers_us-west-2.csv"))
    standin.fallback, standin.fallback_prefix = EMPTY_OFFERS.encode(), V  # other regions: no GPU rows
    standin.route("/offers/v1.0/aws/AmazonEC2/index.json", body("aws_version_index.json"))  # versionIndexUrl
    for version, name in VERSIONS.items():
        standin.route(f"/offers/v1.0/aws/AmazonEC2/{version}/us-east-1/index.csv", body(name))
        standin.route(f"/offers/v1.0/aws/AmazonEC2/{version}/us-west-2/index.csv", EMPTY_OFFERS.encode())
    standin.route("/oci/products/", body("oci.json"))
    standin.route("/graphql", body("runpod.json"))
    standin.route("/bundles/", body("vast.json"))


URLS = {
    "AWS_SPOT": "/spot.json",
    "AWS_PRICE_LIST": "/offers/v1.0/aws/index.json",
    "OCI": "/oci/products/",
    "RUNPOD": "/graphql",
    "VAST": "/bundles/",
}


@pytest.fixture(scope="module")
def standin(gpubot_home):
    """The sources' stand-in. After the session's knowledge base and home (`gpubot_home`): the tests here patch the
    bundled catalog list, and a session fixture first set up under that patch would be a subset for everyone."""
    server = LiveStandin().start()
    serve_all(server)
    yield server
    server.stop()


def live_home(tmp_path_factory, standin, name: str, providers=SUBSET) -> pytest.MonkeyPatch:
    """A fresh home and SQLite state with the sources pointed at the stand-in (undo the patch to leave)."""
    from knowledge.catalog import sources

    home = tmp_path_factory.mktemp(name)
    patch = pytest.MonkeyPatch()
    patch.setenv("GPUBOT_HOME", str(home))
    patch.setenv("DATABASE_URL", f"sqlite:///{home / 'state.db'}")
    for key, path in URLS.items():
        patch.setenv(f"GPUBOT_SOURCE_{key}_URL", standin.url(path))
    original = sources.bundled_catalogs
    patch.setattr(
        sources, "bundled_catalogs", lambda *a, **k: [c for c in original(*a, **k) if c.provider in providers]
    )
    return patch


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory, standin):
    """All five sources refreshed at once over HTTP (imports stored, one knowledge-base build at the end)."""
    from bot.live_refresh import refresh_many
    from knowledge.kb import build
    from knowledge.kb.opener import open_kb
    from knowledge.paths import kb_path

    patch = live_home(tmp_path_factory, standin, "live-all")
    real_build = build.build
    with pytest.MonkeyPatch.context() as no_build:
        no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
        results = refresh_many(ALL)
    real_build(kb_path())
    kb = open_kb(kb_path())
    yield results, kb
    kb.close()
    patch.undo()


def ask(kb, text: str):
    from bot.pipeline import answer

    return answer(text, kb)


def bundled(provider: str) -> list[dict]:
    with (CATALOG_DIR / f"{provider}_vms.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# --- oracles: the same bodies, read by hand -------------------------------------------------------------------


def runpod_oracle(display: str) -> tuple[float, float]:
    """(cheapest on-demand USD/GPU-h in stock, cheapest out of stock) for a GPU in runpod.json."""
    gpu = next(g for g in json.loads(body("runpod.json"))["data"]["gpuTypes"] if g["displayName"] == display)
    lows = [v for k, v in gpu.items() if k.startswith("dc_") and v["uninterruptablePrice"]]
    return (
        min(v["uninterruptablePrice"] for v in lows if v["stockStatus"]),
        min(v["uninterruptablePrice"] for v in lows if not v["stockStatus"]),
    )


def aws_oracle(accelerators: set[str], region: str, column: str) -> tuple[float, str]:
    """(cheapest USD/GPU-h, instance) in a region after the spot feed (SpotPrice) or the price list (Price)."""
    if column == "SpotPrice":
        feed = json.loads(body("aws_spot.json"))["config"]["regions"]
        live = {
            (s["size"], r["region"]): float(c["prices"]["USD"])
            for r in feed
            for f in r["instanceTypes"]
            for s in f["sizes"]
            for c in s["valueColumns"]
            if c["name"] == "linux" and c["prices"]["USD"][0].isdigit()
        }
    else:
        live = {}
        for name, reg in (("aws_offers_us-east-1.csv", "us-east-1"), ("aws_offers_us-west-2.csv", "us-west-2")):
            rows = csv.DictReader((LIVE / name).read_text().splitlines()[5:])
            for r in rows:
                terms = (
                    r["TermType"],
                    r["Operating System"],
                    r["Tenancy"],
                    r["Pre Installed S/W"],
                    r["CapacityStatus"],
                )
                if terms == ("OnDemand", "Linux", "Shared", "NA", "Used"):
                    live[(r["Instance Type"], reg)] = float(r["PricePerUnit"])
    best = []
    for row in bundled("aws"):
        if row["AcceleratorName"] in accelerators and row["Region"] == region:
            price = live.get((row["InstanceType"], region)) or (float(row[column]) if row[column] else None)
            if price:
                best.append((price / float(row["AcceleratorCount"]), row["InstanceType"]))
    return min(best)


OFFER_FILES = (("aws_offers_us-east-1.csv", "us-east-1"), ("aws_offers_us-west-2.csv", "us-west-2"))


def aws_reserved_oracle(accelerators: set[str], years: int, region: str | None) -> tuple[float, str, str]:
    """(cheapest USD/GPU-h, instance, region) of the `years`-year AWS reserved terms after the refresh: the offer
    files' terms where they have any for an instance and region, else the bundled reserved file's."""
    counts = {
        r["InstanceType"]: float(r["AcceleratorCount"]) for r in bundled("aws") if r["AcceleratorName"] in accelerators
    }
    pairs = {}
    reserved_file = json.loads((PRICING_DIR / "aws_gpu_instances_reserved_spot.json").read_text())
    for item in reserved_file:
        for reg, by_os in item["pricing"].items():
            terms = (by_os.get("linux") or {}).get("reserved") or {}
            pairs[(item["instance_type"], reg)] = {k: float(v) for k, v in terms.items() if v}
    for name, reg in OFFER_FILES:
        for instance, terms in aws_offer_file_reserved((LIVE / name).read_text()).items():
            pairs[(instance, reg)] = terms  # the live terms replace the file's
    best = [
        (rate / counts[instance], instance, reg)
        for (instance, reg), terms in pairs.items()
        if instance in counts and (region is None or reg == region)
        for key, rate in terms.items()
        if key.startswith(f"yrTerm{years}") and rate > 0
    ]
    return min(best)


# --- refresh -> answers ---------------------------------------------------------------------------------------


def test_every_source_refreshes_over_http(refreshed, standin):
    results, _ = refreshed
    assert {name: isinstance(r, dict) for name, r in results.items()} == dict.fromkeys(ALL, True), results
    assert standin.hits[f"{V}/us-east-1/index.csv"] == 1  # streamed once, as CSV


@pytest.mark.parametrize(
    ("text", "endpoint"),
    [
        ("cheapest H100 on runpod", "RunPod GraphQL API"),
        ("price of p4d.24xlarge spot in us-east-1", "AWS EC2 spot price feed"),
        ("cheapest H100 on aws", "AWS Price List bulk API"),
        ("最便宜的H100 在vast", "Vast.ai marketplace search"),
    ],
)
def test_a_live_figure_cites_the_vendor_endpoint_it_was_read_from(refreshed, text, endpoint):
    """Every figure's source can be opened: a live one names its vendor endpoint and address (spot.json,
    index.json are web addresses, not this repository's files), never "gpubot's reviewed notes"."""
    from bot.render import render_text

    _, kb = refreshed
    reply = ask(kb, text)
    live = [o for o in reply.offers if o.fetched_at]
    assert live and live[0].source.startswith(endpoint), [o.source for o in reply.offers]
    shown = render_text(reply)
    assert live[0].source in shown and "reviewed notes" not in shown and "审核过的" not in shown, shown[-800:]


def test_runpod_cheapest_equals_the_oracle_and_ranks_out_of_stock_last(refreshed):
    _, kb = refreshed
    in_stock, out = runpod_oracle("H100 SXM")
    assert out < in_stock  # the fixture's trap: the cheapest data centre has none free
    reply = ask(kb, "cheapest H100 on runpod by region")
    first, *rest = reply.offers
    assert first.price_per_gpu_hour_usd == pytest.approx(in_stock) and first.stock == "in_stock"
    assert [o.price_per_gpu_hour_usd for o in rest if o.stock == "out_of_stock"] == [pytest.approx(out)]
    assert any("1 offer(s) known to be out of stock" in n for n in reply.notes)
    from bot.render import render_text

    assert "out of stock, read" in render_text(reply) and "in stock, read" in render_text(reply)
    from bot.slack.blocks import answer_message
    from bot.slack.tables import tables_of

    [table] = tables_of(answer_message(reply))
    pricing = [row[5]["text"] for row in table["rows"][1:]]
    assert pricing[0] == "on-demand just now · in stock, read just now", pricing
    assert "out of stock" in pricing[-1]


def test_vast_cheapest_equals_the_oracle(refreshed):
    _, kb = refreshed
    offers = json.loads(body("vast.json"))["offers"]
    oracle = min(
        o["dph_total"] for o in offers if o["gpu_name"] == "RTX 4090" and o["rentable"] and o["reliability2"] >= 0.9
    )
    reply = ask(kb, "cheapest RTX 4090 on vast")
    assert reply.offers[0].price_per_gpu_hour_usd == pytest.approx(oracle)
    assert reply.offers[0].freshness == "live" and reply.offers[0].stock == "in_stock"
    assert reply.offers[0].source.startswith("Vast.ai marketplace search http://127.0.0.1")


def test_oci_cheapest_equals_the_price_list(refreshed):
    _, kb = refreshed
    items = json.loads(body("oci.json"))["items"]
    per_gpu = next(i for i in items if i["displayName"] == "Compute - GPU - H100")
    oracle = per_gpu["currencyCodeLocalizations"][0]["prices"][0]["value"]
    reply = ask(kb, "cheapest H100 on oci")
    assert reply.offers[0].price_per_gpu_hour_usd == pytest.approx(oracle)
    assert reply.offers[0].fetched_at and "Oracle Cloud price list API" in reply.offers[0].source


@pytest.mark.parametrize(
    ("question", "accelerators", "region", "column"),
    [
        ("cheapest A100 spot on aws in us-east-1", {"A100", "A100-80GB"}, "us-east-1", "SpotPrice"),
        ("cheapest A10G on aws in us-west-2", {"A10G"}, "us-west-2", "Price"),
    ],
)
def test_aws_cheapest_equals_the_feed_merged_into_the_catalog(refreshed, question, accelerators, region, column):
    _, kb = refreshed
    price, instance = aws_oracle(accelerators, region, column)
    first = ask(kb, question).offers[0]
    assert (first.instance_type, first.price_per_gpu_hour_usd) == (instance, pytest.approx(price))
    assert first.fetched_at is not None  # the live figure, not the bundled one


def test_both_aws_sources_landed_in_one_catalog(refreshed):
    _, kb = refreshed
    rows = kb.offers(providers=["aws"], regions=["us-east-1"])
    p4d = {o["pricing"]: o for o in rows if o["instance_type"] == "p4d.24xlarge"}
    assert p4d["spot"]["price_per_hour_usd"] == pytest.approx(6.4)
    assert p4d["on_demand"]["price_per_hour_usd"] == pytest.approx(30.1234)
    assert "spot price feed" in p4d["spot"]["source"] and "Price List" in p4d["on_demand"]["source"]


@pytest.mark.parametrize(
    ("question", "accelerators", "years", "region"),
    [
        ("cheapest H100 1-year reserved on aws", {"H100"}, 1, None),
        ("cheapest H100 3-year reserved on aws in us-east-1", {"H100"}, 3, "us-east-1"),
        ("cheapest A100 1-year reserved on aws in us-east-1", {"A100", "A100-80GB"}, 1, "us-east-1"),
    ],
)
def test_aws_reserved_cheapest_equals_the_offer_file_terms(refreshed, question, accelerators, years, region):
    _, kb = refreshed
    price, instance, where = aws_reserved_oracle(accelerators, years, region)
    first = ask(kb, question).offers[0]
    assert (first.instance_type, first.region, first.pricing) == (instance, where, f"reserved_{years}y")
    assert first.price_per_gpu_hour_usd == pytest.approx(price)
    assert first.fetched_at is not None and first.freshness == "live" and "Price List" in first.source


def test_every_reserved_term_is_kept_and_the_others_dropped(refreshed):
    _, kb = refreshed
    east = aws_offer_file_reserved((LIVE / "aws_offers_us-east-1.csv").read_text())
    terms = {r["term"]: r for r in kb.price_terms("p5.48xlarge", "us-east-1")}
    reserved = {k: r["price_per_hour"] for k, r in terms.items() if k.startswith("yrTerm")}
    every = {
        f"yrTerm{y}{c}.{o}Upfront"
        for y in (1, 3)
        for c in ("Standard", "Convertible")
        for o in ("no", "partial", "all")
    }
    assert set(reserved) == every and reserved == pytest.approx(east["p5.48xlarge"])
    assert all(terms[k]["fetched_at"] and "Price List" in terms[k]["source"] for k in (*every, "ondemand"))
    assert terms["ondemand"]["price_per_hour"] == pytest.approx(55.04)  # the same reading's on-demand price
    p4d = {r["term"]: r["price_per_hour"] for r in kb.price_terms("p4d.24xlarge", "us-east-1")}
    # the Linux shared terms only: not Windows' 9.99/h, not the Dedicated all-upfront term, none of the file's
    assert {k: v for k, v in p4d.items() if k.startswith("yrTerm")} == pytest.approx(east["p4d.24xlarge"])
    assert kb.price_terms("m5.large") == []  # not a GPU instance
    west = kb.price_terms("p4d.24xlarge", "us-west-2")  # the offer file there has no reserved row: the file's terms
    assert west and all(r["fetched_at"] is None and "ec2instances" in r["source"] for r in west)


def test_tco_and_break_even_use_the_live_reserved_terms(refreshed):
    _, kb = refreshed
    rate = 286000 / 8760  # p5.48xlarge us-east-1, 1 yr Standard All Upfront: the cheapest 1-year term of the file
    be = ask(kb, "reserved vs on-demand break-even for p5.48xlarge in us-east-1").extra["break_even"]
    assert (be["term"], be["reserved_rate"], be["on_demand_rate"]) == (
        "yrTerm1Standard.allUpfront",
        pytest.approx(rate),
        pytest.approx(55.04),
    )
    assert be["utilisation_pct"] == pytest.approx(100 * rate / 55.04) and "Price List" in be["source"]
    usage = ask(kb, "p5.48xlarge 每月用200小时，预留还是按需？").extra["break_even"]
    assert usage["reserved_rate"] == pytest.approx(rate)
    tco = ask(kb, "tco p5.48xlarge 8760 hours in us-east-1, the job cannot be interrupted")
    reserved = next(o for o in tco.tco_options if o.pricing == "reserved_1y")
    assert reserved.total == pytest.approx(286000)  # the upfront fee: the year costs exactly that
    assert "1-year reserved in us-east-1, $286,000.00 in total" in tco.title  # the cheapest that may not stop


def test_aws_versions_back_fill_two_dated_history_points(refreshed):
    from knowledge.history.series import series

    results, _ = refreshed
    assert [h["created"] for h in results["aws_price_list"]["history"]] == [True, True]
    index = json.loads(body("aws_version_index.json"))["versions"]
    expected = []
    for version, name in sorted(VERSIONS.items()):
        rows = csv.DictReader((LIVE / name).read_text().splitlines()[5:])
        p4d = [float(r["PricePerUnit"]) for r in rows if r["Instance Type"] == "p4d.24xlarge"
               and (r["TermType"], r["Operating System"], r["Tenancy"], r["Pre Installed S/W"], r["CapacityStatus"])
               == ("OnDemand", "Linux", "Shared", "NA", "Used")]  # fmt: skip
        expected.append((index[version]["versionEffectiveBeginDate"][:10], min(p4d) / 8))
    points = series("A100", provider="aws_price_list", pricing="on_demand", bundled=False)
    assert [(p.taken_at.date().isoformat(), pytest.approx(p.min_price_per_gpu_hour)) for p in points] == expected


# --- changes, 304, failures -----------------------------------------------------------------------------------


def test_a_changed_body_moves_the_price_and_the_answer_says_how_long_ago(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from bot.render import render_text
    from knowledge.kb.opener import open_kb
    from knowledge.paths import kb_path

    patch = live_home(tmp_path_factory, standin, "live-change", providers=("runpod",))
    try:
        now = dt.datetime.now(dt.UTC)
        refresh_source("runpod", now=now - dt.timedelta(minutes=40))
        changed = json.loads(body("runpod.json"))
        changed["data"]["gpuTypes"][0]["dc_US_TX_3"]["uninterruptablePrice"] = 2.49
        standin.route("/graphql", json.dumps(changed).encode())
        refresh_source("runpod", now=now - dt.timedelta(minutes=12))
        kb = open_kb(kb_path())
        reply = ask(kb, "cheapest H100 on runpod")
        kb.close()
        assert reply.offers[0].price_per_gpu_hour_usd == pytest.approx(2.49)
        assert "on-demand 12 min ago" in render_text(reply)
    finally:
        standin.route("/graphql", body("runpod.json"))
        patch.undo()


def test_304_keeps_the_data_and_records_the_check(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from knowledge.catalog.imports import latest_imports
    from knowledge.state.live_sources import read_one

    patch = live_home(tmp_path_factory, standin, "live-304", providers=("aws",))
    try:
        first = refresh_source("aws_spot", now=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5))
        imports = len(latest_imports())
        before = read_one("aws_spot")
        second = refresh_source("aws_spot")
        after = read_one("aws_spot")
        assert first["rows"] > 0 and second["not_modified"] and standin.conditional["/spot.json"] >= 1
        assert after.checked_at > before.checked_at and after.succeeded_at == before.succeeded_at
        assert after.etag == before.etag and len(latest_imports()) == imports  # nothing re-imported
    finally:
        patch.undo()


def test_hanging_and_huge_sources_are_cut_while_the_others_finish(tmp_path_factory, standin):
    from bot.live_refresh import refresh_many
    from knowledge.catalog.fetchers.live import SOURCES
    from knowledge.kb import build

    patch = live_home(tmp_path_factory, standin, "live-faults")
    standin.hang("/bundles/")
    standin.huge("/oci/products/", 50 * 1024 * 1024)
    limited = {
        "vast": SOURCES["vast"].limited(timeout=1.0),
        "oci": SOURCES["oci"].limited(max_bytes=1024 * 1024),
    }
    try:
        with pytest.MonkeyPatch.context() as no_build:
            no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
            started = time.monotonic()
            results = refresh_many(["vast", "oci", "runpod", "aws_spot"], sources=limited)
            took = time.monotonic() - started
        assert "no answer within 1 s" in results["vast"] and "cap of 1,048,576" in results["oci"]
        assert isinstance(results["runpod"], dict) and isinstance(results["aws_spot"], dict)
        assert took < 5, took  # the hang cost one second, in its own thread
    finally:
        serve_all(standin)
        patch.undo()


def test_a_malformed_body_is_refused_the_last_good_kept_and_reported(tmp_path_factory, standin, capsys):
    from bot.cli import main
    from bot.live_refresh import refresh_source
    from knowledge.catalog.fetchers import FetchError
    from knowledge.kb.opener import open_kb
    from knowledge.paths import kb_path

    patch = live_home(tmp_path_factory, standin, "live-malformed", providers=("runpod",))
    try:
        refresh_source("runpod", now=dt.datetime.now(dt.UTC) - dt.timedelta(hours=26))  # the last good answer
        standin.route("/graphql", b'{"data": {"gpuTypes": [{"displayName": "H100 SXM", "dc_US_TX_3": {"uninter')
        with pytest.raises(FetchError):
            refresh_source("runpod")
        kb = open_kb(kb_path())  # the last good import still serves, and the answer names the silent source
        reply = ask(kb, "cheapest H100 on runpod")
        kb.close()
        assert reply.offers[0].price_per_gpu_hour_usd == pytest.approx(2.99) and reply.offers[0].freshness == "stale"
        silent = [n for n in reply.notes if "has not answered for a day" in n]
        assert silent == [
            f"RunPod GraphQL API {standin.url('/graphql')} (gpuTypes.lowestPrice) has not answered for a day "
            "(last good answer 26 h ago): its prices here are from that answer."
        ]
        capsys.readouterr()
        assert main(["prices", "sources", "--json"]) == 0
        row = next(r for r in json.loads(capsys.readouterr().out)["sources"] if r["name"] == "runpod")
        assert "not JSON" in row["error"] and row["succeeded_at"] and row["rows"] == 4
        assert main(["prices", "sources"]) == 0
        text = capsys.readouterr().out
        assert "runpod (feeds runpod): last success" in text and "last error" in text
        from bot.slack.commands import parse_command
        from bot.slack.settings_cmd import CommandContext, command_reply

        message, kind = command_reply(parse_command("sources"), CommandContext(None, None, "T1", "C1", "U1", "en"))
        assert kind == "ephemeral" and "runpod (feeds runpod)" in message["text"] and "not JSON" in message["text"]
    finally:
        standin.route("/graphql", body("runpod.json"))
        patch.undo()


def test_a_malformed_reserved_row_is_refused_and_the_on_demand_rows_kept(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from knowledge.kb.opener import open_kb
    from knowledge.paths import kb_path
    from knowledge.state.live_sources import read_one
    from tests.test_live_parsers import MALFORMED, with_rows

    patch = live_home(tmp_path_factory, standin, "live-bad-reserved", providers=("aws",))
    good = body("aws_offers_us-east-1.csv").decode()
    standin.route(f"{V}/us-east-1/index.csv", with_rows(good, [dict(c) for c in MALFORMED]).encode())
    try:
        report = refresh_source("aws_price_list")
        assert report["skipped"] == {"reserved term refused": 3}
        assert [w.split(": ")[0] for w in report["warnings"]] == ["us-east-1"] * 3
        assert "refused" in read_one("aws_price_list").error  # said in `prices sources`
        kb = open_kb(kb_path())
        try:
            g5 = kb.offers(instance_types=["g5.xlarge"], regions=["us-east-1"], pricing="on_demand")
            assert g5 and {(o["price_per_hour_usd"], bool(o["fetched_at"])) for o in g5} == {(0.9876, True)}
            p4d = {r["term"]: r["price_per_hour"] for r in kb.price_terms("p4d.24xlarge", "us-east-1")}
            east = aws_offer_file_reserved(good)
            assert {k: v for k, v in p4d.items() if k.startswith("yrTerm")} == pytest.approx(east["p4d.24xlarge"])
            g5_terms = {r["term"]: r["price_per_hour"] for r in kb.price_terms("g5.xlarge", "us-east-1")}
            assert {k: v for k, v in g5_terms.items() if k.startswith("yrTerm")} == pytest.approx(east["g5.xlarge"])
        finally:
            kb.close()
    finally:
        standin.route(f"{V}/us-east-1/index.csv", body("aws_offers_us-east-1.csv"))
        patch.undo()


def test_the_digest_reports_stock_changes(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from handlers.digest import handle
    from handlers.models import Query
    from knowledge.kb import build

    patch = live_home(tmp_path_factory, standin, "live-digest", providers=("runpod",))
    try:
        with pytest.MonkeyPatch.context() as no_build:
            no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
            refresh_source("runpod")  # US-TX-3: High
            gone = json.loads(body("runpod.json"))
            gone["data"]["gpuTypes"][0]["dc_US_TX_3"]["stockStatus"] = None
            standin.route("/graphql", json.dumps(gone).encode())
            refresh_source("runpod")
        reply = handle(Query(intent="digest", providers=["runpod"]))
        stock = reply.lines[reply.lines.index("Stock changes:") + 1 :]
        assert [line.strip() for line in stock] == ["• runpod 1x_H100-SXM_SECURE in US: in stock → out of stock"]
        assert reply.extra["digest"]["stock"] == 2  # the on-demand and the spot offer
    finally:
        standin.route("/graphql", body("runpod.json"))
        patch.undo()


def test_repeated_refreshes_keep_three_imports_per_provider(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from knowledge.catalog.imports import catalog_imports
    from knowledge.kb import build
    from knowledge.state.db import engine

    patch = live_home(tmp_path_factory, standin, "live-prune", providers=("runpod",))
    try:
        with pytest.MonkeyPatch.context() as no_build:
            no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
            for minutes in (50, 40, 30, 20, 10):  # a new body each time (the same one would be a 304)
                listings = json.loads(body("vast.json"))
                listings["offers"][0]["dph_total"] = 0.5 + minutes / 100
                standin.route("/bundles/", json.dumps(listings).encode())
                refresh_source("vast", now=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=minutes))
        with engine().connect() as conn:
            stored = conn.execute(catalog_imports.select().where(catalog_imports.c.provider == "vast")).all()
        assert len(stored) == 3
    finally:
        standin.route("/bundles/", body("vast.json"))
        patch.undo()


def test_azure_is_refreshed_from_its_url_override(tmp_path_factory, standin, capsys):
    """The recorded Azure pages, chained through the stand-in (their NextPageLink points the next page at it)."""
    from bot.cli import main
    from knowledge.kb.opener import open_kb
    from knowledge.paths import kb_path

    recorded = Path(__file__).parent / "data" / "recorded"
    names = ["2022-06-06_page810", "2022-06-06_page811", "eastus_d2s_v3_preview"]
    for n, name in enumerate(names):
        page = json.loads((recorded / f"azure_retail_prices_{name}.json").read_bytes())
        if page["NextPageLink"]:
            page["NextPageLink"] = standin.url(f"/azure/{n + 1}")
        standin.route(f"/azure/{n}", json.dumps(page).encode())
    patch = live_home(tmp_path_factory, standin, "live-azure", providers=("lambda",))
    patch.setenv("GPUBOT_SOURCE_AZURE_URL", standin.url("/azure/0"))
    try:
        assert main(["prices", "refresh", "--source", "azure"]) == 0
        kb = open_kb(kb_path())
        first = ask(kb, "cheapest A100 on azure in usgovvirginia").offers[0]
        kb.close()
        assert (first.instance_type, first.price_per_hour_usd) == ("Standard_ND96asr_v4", 34.003)  # README table
        assert first.freshness == "live" and first.fetched_at and "Azure Retail Prices API" in first.source
        capsys.readouterr()
        assert main(["prices", "sources", "--json"]) == 0
        row = next(r for r in json.loads(capsys.readouterr().out)["sources"] if r["name"] == "azure")
        assert (
            row["succeeded_at"] and row["url"] == standin.url("/azure/0") and row["verified"] == "recorded real bodies"
        )
    finally:
        patch.undo()


def test_the_daily_catalog_refresh_keeps_newer_live_figures(tmp_path_factory, standin):
    from bot.live_refresh import current_catalog, refresh_source
    from bot.prices_cmd import refresh_catalog
    from knowledge.kb import build

    patch = live_home(tmp_path_factory, standin, "live-carry", providers=("aws",))
    try:
        with pytest.MonkeyPatch.context() as no_build:
            no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
            refresh_source("aws_spot")
            refresh_catalog(CATALOG_DIR / "aws_vms.csv", "aws", as_of="2026-12-02")  # the daily file, again
        rows = list(csv.DictReader(current_catalog("aws")[0].splitlines()))
        p4d = [r for r in rows if (r["InstanceType"], r["Region"]) == ("p4d.24xlarge", "us-east-1")]
        assert p4d and {(r["SpotPrice"], bool(r["SpotFetchedAt"])) for r in p4d} == {("6.4", True)}
        other = [r for r in rows if r["Region"] == "eu-west-1" and r["InstanceType"] == "p4d.24xlarge"]
        assert other and not any(r["SpotFetchedAt"] for r in other)  # the feed did not price it: the file's figure
    finally:
        patch.undo()


def test_the_daily_runpod_file_stands_aside_while_the_live_source_answers(tmp_path_factory, standin):
    from bot.live_refresh import refresh_source
    from bot.prices_cmd import refresh_one
    from knowledge.kb import build

    patch = live_home(tmp_path_factory, standin, "live-aside", providers=("runpod",))
    patch.setenv("GPUBOT_CATALOG_URL_RUNPOD", str(CATALOG_DIR / "runpod_vms.csv"))
    try:
        with pytest.MonkeyPatch.context() as no_build:
            no_build.setattr(build, "build", lambda *a, **k: {"offers": 0})
            assert refresh_one("runpod", prefer_live=False)["created"]  # no live answer yet: the daily file
            refresh_source("runpod")
            assert "answered within a day" in refresh_one("runpod", prefer_live=False)["skipped"]
    finally:
        patch.undo()


def test_cli_refreshes_one_source_by_name(tmp_path_factory, standin, capsys):
    from bot.cli import main

    patch = live_home(tmp_path_factory, standin, "live-cli", providers=("runpod",))
    try:
        assert main(["prices", "refresh", "--source", "vast"]) == 0
        assert "vast: 3 rows" in capsys.readouterr().out
    finally:
        patch.undo()


# --- answers keep their latency while a source hangs ------------------------------------------------------------


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def test_answers_over_http_keep_their_latency_while_a_source_hangs(tmp_path_factory, standin, kb):
    """p99 of the ack of `/gpu cheapest H100` over HTTP: quiet; while vast hangs (2.5 s); while vast hangs and runpod
    is fetched, imported and swapped into the server. Figures in BENCHMARKS.md (issue 28)."""
    import os

    from bot.live_refresh import refresh_many
    from knowledge.catalog.fetchers.live import SOURCES
    from tests.slack_standin import SlackStandIn
    from tests.test_import_serving import _ask
    from tests.test_slack_http import running_server

    patch = live_home(tmp_path_factory, standin, "live-serving", providers=("runpod",))
    home = Path(os.environ["GPUBOT_HOME"])
    copy_kb(kb, home / "kb.db")
    standin.hang("/bundles/")
    env = {"GPUBOT_KB_REFRESH_SECONDS": "1", "DATABASE_URL": os.environ["DATABASE_URL"]}
    hang = {"vast": SOURCES["vast"].limited(timeout=2.5)}
    phases: dict[str, list[float]] = {}
    try:
        with SlackStandIn() as slack, running_server(home, slack, "--workers", "1", **env) as port:
            _ask(port, slack, "cheapest H100")  # warm
            phases["quiet"] = [_ask(port, slack, "cheapest H100")[0] for _ in range(40)]
            for phase, names in (("vast hangs", ["vast"]), ("vast hangs, runpod swapped in", ["vast", "runpod"])):
                worker = threading.Thread(target=refresh_many, args=(names,), kwargs={"sources": hang})
                worker.start()
                phases[phase] = []
                while worker.is_alive() and len(phases[phase]) < 300:
                    phases[phase].append(_ask(port, slack, "cheapest H100")[0])
                worker.join()
        print("\n" + "; ".join(f"{k}: p99 {p99(v) * 1000:.0f} ms over {len(v)} asks" for k, v in phases.items()))
        assert len(phases["vast hangs"]) >= 20  # answers kept coming while the source hung
        # none waited for the source: an answer that did would take its whole 2.5 s timeout (a figure of the test,
        # not of the machine's load: p99 against the quiet phase is reported above and in BENCHMARKS.md)
        assert max(phases["vast hangs"]) < 2.5, phases
        assert p99(phases["vast hangs, runpod swapped in"]) < 3.0, phases  # the ack limit of issue 19
    finally:
        serve_all(standin)
        patch.undo()
