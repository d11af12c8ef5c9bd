"""The short Slack answer and its "Why" button (issue 16), through the real Bolt app and the stand-in Slack API."""

from __future__ import annotations

from bot.slack import blocks
from tests.test_slack_app import (  # noqa: F401  (fixtures: app, slack, _fresh)
    _fresh,
    app,
    assert_valid,
    block_action,
    buttons,
    dispatch,
    rendered_strings,
    slack,
    slash,
)


def test_why_shows_what_the_short_answer_left_out_privately(app, slack):
    message = slash(app, slack, "A10 vs L4 price per GPU-hour on alibaba")
    short = "\n".join(rendered_strings(message["blocks"]))
    assert "A10 vs L4 (on-demand): only A10 has an offer" in short  # the verdict heads the message
    assert "Rules applied" not in short and "Correction" not in short  # about AWS A100s: not this answer
    why = buttons(message)[blocks.ACTION_IDS["why"]]
    body, hook = block_action(slack, why)
    assert dispatch(app, body, "application/x-www-form-urlencoded").status == 200
    reply = slack.wait_for(f"hooks/{hook}")[0].body
    assert_valid(reply)
    full = "\n".join(rendered_strings(reply["blocks"]))
    assert reply["response_type"] == "ephemeral" and "Rules applied" in full
    assert not any(b["type"] == "actions" for b in reply["blocks"])  # the full answer is the end of the road


def test_short_slack_answer_links_the_pricing_page(app, slack):
    message = slash(app, slack, "cheapest A100 spot on aws")
    text = "\n".join(rendered_strings(message["blocks"]))
    assert "https://aws.amazon.com/ec2/pricing/" in text
    assert text.count(":warning:") <= 1
