"""Workspace and channel settings (issue 9): the store on SQLite and PostgreSQL, and `apply_defaults` (pure).

Store: channel over workspace over defaults, validated values with did-you-mean, one row per (team, channel,
key) even when two processes write at once, `clear`, `delete_team`. Defaults: what a channel's settings fill in,
what a question that says otherwise keeps, the notes in the answer's language, the budget filter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bot.pipeline import typed_setting
from handlers import defaults
from handlers.models import Budget, Query
from knowledge.state import settings_store as store
from knowledge.state.settings_store import EffectiveSettings, SettingError

# --- the store, on both backends --------------------------------------------------------------------------------


def test_channel_overrides_workspace_overrides_defaults(state_url, kb):
    store.set_setting("T1", "", "providers", "aws", kb=kb)
    store.set_setting("T1", "", "pricing", "spot", kb=kb)
    store.set_setting("T1", "C1", "providers", "aws, alibaba", kb=kb)
    here = store.get_settings("T1", "C1")
    assert here["providers"] == ["aws", "alibaba"] and here.origins["providers"] == "channel"
    assert here["pricing"] == "spot" and here.origins["pricing"] == "workspace"
    assert here["budget"] is None and here.origins["budget"] == "default"
    other = store.get_settings("T1", "C2")  # another channel: the workspace's
    assert other["providers"] == ["aws"] and other.origins["providers"] == "workspace"
    assert store.get_settings("T2", "C1")["providers"] is None  # another workspace: nothing
    assert store.scope_settings("T1", "C1") == {"providers": ["aws", "alibaba"]}
    assert store.scope_settings("T1", "") == {"providers": ["aws"], "pricing": "spot"}


@pytest.mark.parametrize(
    "key, raw, stored",
    [
        ("providers", "AWS,aliyun", ["aws", "alibaba"]),  # aliases become provider ids
        ("provider", "Tencent Cloud", ["tencent"]),  # singular key; a provider name with a space
        ("regions", "us-east-1, cn-hangzhou", ["us-east-1", "cn-hangzhou"]),
        ("currency", "cny", "CNY"),
        ("currency", "rmb", "CNY"),
        ("language", "Chinese", "zh"),
        ("lang", "en", "en"),
        ("pricing", "on-demand", "on_demand"),
        ("pricing", "reserved 1y", "reserved_1y"),
        ("budget", "2 USD/GPU-hour", {"amount": 2.0, "currency": "USD", "per": "gpu_hour"}),
        ("budget", "15 CNY/GPU-hour", {"amount": 15.0, "currency": "CNY", "per": "gpu_hour"}),
        ("budget", "$1.5", {"amount": 1.5, "currency": "USD", "per": "gpu_hour"}),
        ("budget", "2", {"amount": 2.0, "currency": "USD", "per": "gpu_hour"}),  # no currency: USD
        ("budget", "¥12 per GPU-hour", {"amount": 12.0, "currency": "CNY", "per": "gpu_hour"}),
        ("budget", "$20/hour", {"amount": 20.0, "currency": "USD", "per": "instance_hour"}),  # per machine-hour
    ],
)
def test_values_are_validated_and_normalised(kb, key, raw, stored):
    assert store.normalize(key, typed_setting(key, raw), kb) == stored


@pytest.mark.parametrize(
    "key, raw, suggestion",
    [
        ("providers", "awz", "aws"),  # a typo is refused, never guessed
        ("providers", "aws,gpc", "gcp"),
        ("providers", "azur", "azure"),  # even a close fuzzy match is only a suggestion
        ("regions", "cn-hangzou", "cn-hangzhou"),
        ("regions", "us-est-1", "us-east-1"),
        ("currency", "EUR", "USD"),
        ("language", "fr", "en"),
        ("pricing", "spto", "spot"),
        ("budget", "2 EUR/GPU-hour", "USD"),
        ("providers", "", None),
        ("budget", "cheap", None),
        ("budget", "0 USD", None),
    ],
)
def test_invalid_values_are_refused_with_did_you_mean(kb, key, raw, suggestion):
    with pytest.raises(SettingError) as err:
        store.normalize(key, typed_setting(key, raw), kb)
    if suggestion:
        assert suggestion in err.value.suggestions


def test_unknown_keys_suggest_the_right_one():
    with pytest.raises(SettingError) as err:
        store.key_of("provders")
    assert err.value.suggestions[0] == "providers"


def test_an_invalid_value_stores_nothing(state_url, kb):
    with pytest.raises(SettingError):
        store.set_setting("T1", "C1", "providers", "awz", kb=kb)
    assert store.scope_settings("T1", "C1") == {}


def test_set_again_replaces_clear_and_delete_team(state_url, kb):
    store.set_setting("T1", "C1", "pricing", "spot", kb=kb)
    store.set_setting("T1", "C1", "pricing", "reserved_3y", kb=kb)
    store.set_setting("T1", "C1", "budget", Budget(amount=2, currency="USD"), kb=kb)
    store.set_setting("T1", "", "currency", "CNY", kb=kb)
    store.set_setting("T9", "C1", "currency", "CNY", kb=kb)
    budget = {"amount": 2.0, "currency": "USD", "per": "gpu_hour"}
    assert store.scope_settings("T1", "C1") == {"pricing": "reserved_3y", "budget": budget}
    assert store.clear("T1", "C1", "pricing") == 1
    assert store.clear("T1", "C1", "pricing") == 0
    assert store.clear("T1", "C1") == 1  # everything of the channel
    assert store.scope_settings("T1", "C1") == {}
    assert store.get_settings("T1", "C1")["currency"] == "CNY"  # the workspace's is untouched
    assert store.delete_team("T1") == 1
    assert store.get_settings("T1", "C1")["currency"] is None
    assert store.get_settings("T9", "C1")["currency"] == "CNY"  # another workspace is untouched


def test_concurrent_writers_leave_one_row(state_url, tmp_path):
    """Several processes set the same key at once: INSERT ... ON CONFLICT keeps one row, holding one of the writes."""
    script = textwrap.dedent("""
        import sys
        from knowledge.state import settings_store
        settings_store.get_settings("T1", "C1")  # connected: now write as fast as possible
        for n in range(8):
            settings_store.set_setting("T1", "C1", "pricing", ["spot", "on_demand"][n % 2])
            settings_store.set_setting("T1", "C1", "currency", sys.argv[1])
    """)
    procs = [
        subprocess.Popen([sys.executable, "-c", script, cur], cwd=str(tmp_path), env=_env())
        for cur in ("USD", "CNY", "USD")
    ]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    import sqlalchemy as sa

    from knowledge.state.db import engine

    with engine().connect() as conn:
        rows = (
            conn.execute(sa.select(store.settings_table.c.key).where(store.settings_table.c.team_id == "T1"))
            .scalars()
            .all()
        )
    assert sorted(rows) == ["currency", "pricing"]
    assert store.get_settings("T1", "C1")["currency"] in ("USD", "CNY")


def _env() -> dict[str, str]:
    import os
    from pathlib import Path

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return env


# --- apply_defaults: pure -------------------------------------------------------------------------------------


def settings(origin: str = "channel", **values) -> EffectiveSettings:
    full = {key: values.get(key) for key in store.KEYS}
    return EffectiveSettings(full, {k: (origin if v is not None else "default") for k, v in full.items()})


CHANNEL = settings(providers=["aws", "alibaba"], regions=["us-east-1", "cn-hangzhou"], pricing="spot", currency="CNY")


def test_the_channel_fills_what_the_question_leaves_open():
    query = Query(text="cheapest A100", intent="cheapest", gpus=["A100"])
    applied, notes = defaults.apply_defaults(query, CHANNEL)
    assert applied.providers == ["aws", "alibaba"] and applied.regions == ["us-east-1", "cn-hangzhou"]
    assert applied.pricing == "spot" and applied.currency == "CNY" and applied.language == "en"
    assert notes == [
        "filtered to your channel's providers: aws, alibaba",
        "filtered to your channel's regions: us-east-1, cn-hangzhou",
        "your channel's pricing: spot",
    ]
    assert defaults.defaulted_fields(query, applied) == ["providers", "regions", "currency", "pricing"]


def test_what_the_question_says_wins():
    query = Query(
        text="cheapest A100 on-demand on gcp in us-central1",
        intent="cheapest",
        gpus=["A100"],
        providers=["gcp"],
        regions=["us-central1"],
        pricing="on_demand",
    )
    applied, notes = defaults.apply_defaults(query, CHANNEL)
    assert (applied.providers, applied.regions, applied.pricing) == (["gcp"], ["us-central1"], "on_demand")
    assert notes == ["you named gcp, so your channel's providers (aws, alibaba) do not apply to this question"]


def test_a_named_provider_keeps_only_the_channel_regions_it_has():
    query = Query(text="cheapest A100 on aws", intent="cheapest", gpus=["A100"], providers=["aws"])
    regions = {"us-east-1": {"aws"}, "cn-hangzhou": {"alibaba"}}
    applied, notes = defaults.apply_defaults(query, CHANNEL, region_providers=regions)
    assert applied.providers == ["aws"] and applied.regions == ["us-east-1"]
    assert "filtered to your channel's regions: us-east-1" in notes
    assert not any("do not apply" in n for n in notes)  # aws is one of the channel's providers: nothing to say
    on_gcp = Query(text="cheapest A100 on gcp", intent="cheapest", gpus=["A100"], providers=["gcp"])
    applied, notes = defaults.apply_defaults(on_gcp, CHANNEL, region_providers=regions)
    assert applied.regions == []
    assert any("regions (us-east-1, cn-hangzhou) have no offers from gcp" in n for n in notes)


def test_an_instance_type_names_its_provider():
    query = Query(text="price of p4d.24xlarge", intent="price", instance_types=["p4d.24xlarge"])
    applied, _ = defaults.apply_defaults(query, settings(providers=["alibaba"]))
    assert applied.providers == []


def test_workspace_settings_say_so_and_chinese_notes():
    query = Query(text="最便宜的A100", intent="cheapest", gpus=["A100"], language="zh")
    applied, notes = defaults.apply_defaults(query, settings("workspace", providers=["aws", "alibaba"]))
    assert notes == ["已按本工作区设置筛选云厂商：aws, alibaba"]
    english = Query(text="cheapest A100", intent="cheapest", gpus=["A100"])
    _, notes = defaults.apply_defaults(english, settings("workspace", providers=["aws"]))
    assert notes == ["filtered to your workspace's providers: aws"]


def test_the_channel_language_unless_the_question_is_in_chinese():
    zh_channel = settings(language="zh", providers=["aws"])
    applied, notes = defaults.apply_defaults(Query(text="cheapest A100", intent="cheapest"), zh_channel)
    assert applied.language == "zh" and notes == ["已按本频道设置筛选云厂商：aws"]
    applied, _ = defaults.apply_defaults(
        Query(text="最便宜的A100", intent="cheapest", language="zh"), settings(language="en")
    )
    assert applied.language == "zh"
    helped, notes = defaults.apply_defaults(Query(text="help", intent="help"), zh_channel)
    assert helped.language == "zh" and helped.providers == [] and notes == []  # help is not filtered


def test_nothing_set_changes_nothing():
    query = Query(text="cheapest A100", intent="cheapest", gpus=["A100"])
    assert defaults.apply_defaults(query, settings()) == (query, [])
    assert defaults.apply_defaults(query, {}) == (query, [])


def test_undo_defaults_keeps_what_a_button_changed():
    asked = Query(text="cheapest A100", intent="cheapest", gpus=["A100"])
    applied, _ = defaults.apply_defaults(asked, CHANNEL)
    fields = defaults.defaulted_fields(asked, applied)
    assert defaults.undo_defaults(applied, fields) == asked
    toggled = applied.model_copy(update={"pricing": "on_demand"})
    undone = defaults.undo_defaults(toggled, fields, unless_changed_from=applied)
    assert undone.pricing == "on_demand" and undone.providers == [] and undone.regions == []


def test_a_channel_budget_becomes_the_question_budget_once():
    stored = {"amount": 14, "currency": "CNY", "per": "gpu_hour"}
    query, notes = defaults.apply_defaults(
        Query(text="cheapest A100", intent="cheapest", gpus=["A100"]), settings("workspace", budget=stored)
    )
    assert query.budget == Budget(amount=14, currency="CNY", per="gpu_hour", text="14 CNY/GPU-hour")
    assert notes == ["filtered to your workspace's budget: at most 14 CNY/GPU-hour"]
    assert "budget" in defaults.defaulted_fields(Query(text="cheapest A100", intent="cheapest"), query)


def test_a_question_budget_or_a_specs_answer_keeps_its_own():
    said = Budget(amount=5, currency="USD", per="instance_hour", text="under $5/h")
    asked = Query(text="cheapest A100 under $5/h", intent="cheapest", gpus=["A100"], budget=said)
    stored = {"amount": 1, "currency": "USD", "per": "gpu_hour"}
    assert defaults.apply_defaults(asked, settings(budget=stored))[0].budget == said
    assert defaults.apply_defaults(Query(text="x", intent="spec"), settings(budget=stored))[0].budget is None
