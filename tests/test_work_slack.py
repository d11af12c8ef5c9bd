"""The "work" answer in Slack, through the real Bolt app over signed HTTP against the stand-in Slack API."""

from __future__ import annotations

import json

from bot.pipeline import answer
from tests import test_slack_app as harness
from tests.slack_standin import message_blocks
from tests.test_slack_app import assert_valid, block_action, buttons, dispatch, slash

slack, app, _fresh = harness.slack, harness.app, harness._fresh  # the module's Slack stand-in and Bolt app fixtures

ATTRIBUTION = ("sc-inspector-data", "CC BY-SA 4.0")


def _work_table(message: dict) -> list[list[str]]:
    assert not [b for b in message["blocks"] if b["type"] == "table"]
    return harness.table_rows(message)  # issue 17: the one table is in the message's attachments


def instances(rows: list[list[str]]) -> list[str]:
    """The instance type of each row ("azure Standard_NC40ads_H100_v5 · 1x H100" -> the type)."""
    return [r[1].split(" · ")[0].split(" ", 1)[1] for r in rows[1:]]


def test_slash_work_shows_one_table_with_the_ranking_and_the_attribution(app, slack, kb):
    message = slash(app, slack, "cost per million tokens for Llama 3.1 8B")
    assert_valid(message)
    expected = answer("cost per million tokens for Llama 3.1 8B", kb).extra["work"]
    rows = _work_table(message)
    assert rows[0] == ["#", "Instance", "Region", "Per hour", "Tokens/s", "$ per 1M tokens"]  # 6 short columns
    assert instances(rows) == [w["instance_type"] for w in expected[:5]]
    assert [r[5].split(" [")[0] for r in rows[1:]] == [f"${w['usd_per_million_tokens']:.4f}" for w in expected[:5]]
    shown = json.dumps(message_blocks(message), ensure_ascii=False)
    assert all(part in shown for part in ATTRIBUTION)


def test_slash_work_in_chinese(app, slack, kb):
    text = "用Llama 3.1 8B做在线推理，每百万token成本最低的是哪家？"
    message = slash(app, slack, text)
    assert_valid(message)
    rows = _work_table(message)
    assert rows[0][5] == "每百万token"
    assert instances(rows) == [w["instance_type"] for w in answer(text, kb).extra["work"][:5]]
    assert "每百万输出token成本最低" in "".join(harness.rendered_strings(message["blocks"]))  # the verdict


def test_workload_button_re_answers_for_rag(app, slack, kb):
    message = slash(app, slack, "cost per million tokens for Llama 3.1 8B")
    switch = buttons(message)["gpu_work_1"]
    assert switch["text"]["text"] == "RAG"
    body, hook = block_action(slack, switch)
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    rag = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(rag)
    expected = answer("cost per million tokens for Llama 3.1 8B rag", kb).extra["work"]
    assert {w["workload"] for w in expected} == {"rag-1024-256"}
    assert instances(_work_table(rag)) == [w["instance_type"] for w in expected[:5]]
    assert "gpu_work_0" in buttons(rag) and "gpu_work_1" not in buttons(rag)  # back to chat; RAG is current


def test_model_did_you_mean_button_answers_for_the_model_picked(app, slack, kb):
    message = slash(app, slack, "llama 9b cost per million tokens")
    picks = {b["text"]["text"]: b for b in buttons(message).values() if b["action_id"].startswith("gpu_suggest_")}
    assert "Llama-3.1-8B" in picks
    body, hook = block_action(slack, picks["Llama-3.1-8B"])
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    picked = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(picked)
    expected = answer("cost per million tokens for Llama 3.1 8B", kb).extra["work"]
    assert instances(_work_table(picked)) == [w["instance_type"] for w in expected[:5]]
