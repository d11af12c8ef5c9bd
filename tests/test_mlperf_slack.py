"""Issue 27 in Slack (train_cost, rent_or_api, MLPerf serving rows), through the real Bolt app over signed HTTP
against the stand-in Slack API."""

from __future__ import annotations

import json

from bot.pipeline import answer
from tests import test_slack_app as harness
from tests.slack_standin import message_blocks
from tests.test_slack_app import assert_valid, block_action, buttons, dispatch, slash

slack, app, _fresh = harness.slack, harness.app, harness._fresh  # the module's Slack stand-in and Bolt app fixtures

LABEL = "not verified by MLCommons"


def test_slash_train_cost_shows_the_measured_table_and_the_label(app, slack, kb):
    text = "cost to fine-tune Llama 2 70B with LoRA"
    message = slash(app, slack, text)
    assert_valid(message)
    expected = answer(text, kb).extra["train_cost"]
    rows = harness.table_rows(message)
    assert rows[0][:3] == ["Provider", "Instance", "Nodes x GPUs"]
    assert [r[1] for r in rows[1:]] == [e["instance_type"] for e in expected]
    assert [r[7] for r in rows[1:]] == [f"${e['cost_usd']:,.2f}" for e in expected]
    assert all(LABEL in r[8] for r in rows[1:])
    shown = json.dumps(message_blocks(message), ensure_ascii=False)
    assert "Estimates, not measurements" in shown and "Apache-2.0" in shown


def test_train_cost_spot_button_re_answers_at_spot(app, slack, kb):
    message = slash(app, slack, "how much to pretrain Llama 3.1 8B")
    toggle = buttons(message)["gpu_toggle_pricing"]
    body, hook = block_action(slack, toggle)
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    spot = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(spot)
    expected = answer("how much to pretrain Llama 3.1 8B on spot", kb)
    assert expected.query.pricing == "spot"
    assert spot["blocks"][0]["text"]["text"].startswith(expected.title[:40])


def test_slash_rent_or_api_in_chinese_with_workload_buttons(app, slack, kb):
    text = "Llama 3.1 8B 自己部署还是用API"
    message = slash(app, slack, text)
    assert_valid(message)
    expected = answer(text, kb).extra["rent_or_api"]
    rows = harness.table_rows(message)
    assert rows[0][1] == "API模型ID"
    assert [r[1] for r in rows[1:]] == [a["api_model_id"] for a in expected["api"]]
    assert {"gpu_work_1", "gpu_toggle_pricing"} <= set(buttons(message))
    body, hook = block_action(slack, buttons(message)["gpu_work_1"])
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    rag = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(rag)
    assert "4 个输入token" in json.dumps(message_blocks(rag), ensure_ascii=False)  # RAG: 1024 in / 256 out


def test_work_answer_keeps_its_table_and_lists_the_mlperf_rows_beside(app, slack, kb):
    message = slash(app, slack, "cost per million tokens for Llama 3.1 8B")
    assert_valid(message)
    tuned = answer("cost per million tokens for Llama 3.1 8B", kb).extra["mlperf_serving"]
    assert tuned and any("1M" in c for c in harness.table_rows(message)[0])  # the Spare Cores table stays the table
    shown = json.dumps(message_blocks(message), ensure_ascii=False)
    assert "MLPerf Inference v5.1" in shown and tuned[0]["result_id"] in shown  # its cheapest; every row behind Why


def test_did_you_mean_button_answers_for_the_benchmark_picked(app, slack, kb):
    message = slash(app, slack, "cost to train Mistral 7B")
    assert_valid(message)
    picks = {b["text"]["text"]: b for b in buttons(message).values() if b["action_id"].startswith("gpu_suggest_")}
    assert "llama2_70b_lora" in picks
    body, hook = block_action(slack, picks["llama2_70b_lora"])
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    picked = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(picked)
    expected = answer("cost to fine-tune Llama 2 70B with LoRA", kb).extra["train_cost"]
    assert [r[1] for r in harness.table_rows(picked)[1:]] == [e["instance_type"] for e in expected]


def test_a_model_only_mlperf_measured_gets_its_own_table(app, slack, kb):
    text = "cost per million tokens for Llama 2 70B"
    message = slash(app, slack, text)
    assert_valid(message)
    tuned = answer(text, kb).extra["mlperf_serving"]
    rows = harness.table_rows(message)
    assert [r[6] for r in rows[1:]] == [f"${r['usd_per_million_tokens']:.4f}" for r in tuned]
    assert all("MLPerf Inference v5.1" in r[7] and LABEL in r[7] for r in rows[1:])
