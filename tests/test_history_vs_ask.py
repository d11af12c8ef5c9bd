"""Issue 26: history and ask tell the same truth. For every provider x GPU family x pricing model of the bundled
data, the history's point of today (recorded baselines of the bundled catalogs, and the bundled GCP weekly series)
equals ask's top offer: the same orderability (`knowledge.catalog.current`), the same two-source check (GCP billing
catalog over SkyPilot's undated figure) and the same zone labels."""

from __future__ import annotations

import pytest

from handlers import cheapest
from handlers.models import Query
from knowledge.history import series as history_series
from knowledge.history.snapshots import ensure_baselines
from tests.conftest import copy_kb


@pytest.fixture(scope="module")
def recorded(kb, tmp_path_factory):
    """A home of its own whose state holds every bundled catalog's baseline snapshot."""
    home = tmp_path_factory.mktemp("history-vs-ask")
    copy_kb(kb, home / "kb.db")
    patch = pytest.MonkeyPatch()
    patch.setenv("GPUBOT_HOME", str(home))
    ensure_baselines()
    yield home
    patch.undo()


def _combos(kb) -> list[tuple[str, str, str]]:
    return [
        (r["provider"], r["gpu"], r["pricing"])
        for r in kb.rows(
            "SELECT DISTINCT provider, gpu, pricing FROM offers WHERE kind IN ('catalog', 'pricing') "
            "AND gpu_recognised = 1 AND gpu_kind = 'gpu' ORDER BY provider, gpu, pricing"
        )
    ]


def test_todays_history_point_is_asks_top_offer_for_every_provider_family_and_pricing(kb, recorded):
    combos = _combos(kb)
    weekly = {gpu for provider, gpu, _ in combos if provider == "gcp"}  # families the bundled GCP series covers
    points = {}
    for family in sorted({gpu for _, gpu, _ in combos}):
        for point in history_series.series(family, kb=kb, bundled=family in weekly):
            points[(point.provider, family, point.pricing)] = point  # oldest first: the last one is today's
    compared = mismatched = zoned = 0
    missing = []
    for provider, family, pricing in combos:
        top = cheapest.handle(
            Query(intent="cheapest", text=f"cheapest {family}", gpus=[family], providers=[provider], pricing=pricing),
            kb,
        ).offers
        top = [o for o in top if o.kind != "article"]
        point = points.get((provider, family, pricing))
        if point is None:
            missing.append((provider, family, pricing, bool(top)))
            continue
        assert top, (provider, family, pricing, "history has a price of now, ask none")
        compared += 1
        if point.min_price_per_gpu_hour != pytest.approx(top[0].price_per_gpu_hour_usd, rel=1e-6):
            mismatched += 1
            print(
                "MISMATCH",
                provider,
                family,
                pricing,
                point.min_price_per_gpu_hour,
                top[0].price_per_gpu_hour_usd,
                point.cheapest_instance_type,
                top[0].instance_type,
            )
        elif top[0].zone_label:  # a Local Zone is today's cheapest: history names the same zone
            zoned += 1
            assert point.cheapest_zone == top[0].zone, (provider, family, pricing)
    print("compared", compared, "missing", len(missing), [m for m in missing if m[3]][:20])
    assert mismatched == 0
    # history records what catalogs and the weekly GCP file hold: the reserved terms of the AWS pricing file have no
    # recorded series, so those combinations are the only ones without a point
    assert all(pricing.startswith("reserved") and provider == "aws" for provider, _, pricing, _ in missing), missing
    assert compared > 100 and zoned > 0


def test_history_names_a_local_zone_as_its_own_place(kb, recorded):
    from handlers import history

    query = Query(intent="history", text="history H100 spot on aws", gpus=["H100"], providers=["aws"], pricing="spot")
    answer = history.handle(query, kb)
    assert "Atlanta (Local Zone, opt-in) of us-east-1" in " ".join([answer.title, *answer.lines])
