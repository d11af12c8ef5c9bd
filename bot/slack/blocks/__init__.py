"""Block Kit for Slack replies, by what each module renders; this facade is the one import the app needs.

    answer    the message for an answer: header, offers table, reasoning sections, sources, buttons; the text
              fallback; the apology
    offers    the offers table and the context line of numbered, dated sources
    buttons   refine buttons; the query travels in the button value
    settings  `/gpu settings`, a command's notice, App Home's workspace-defaults section and form
    home      the App Home tab and its digest-subscriptions section
    base      section / header / cell builders and Jinja-rendered mrkdwn

Escaping is `bot.slack.escape`, Slack's limits `bot.slack.limits` (`fit_blocks`), phrases `bot.slack.phrases`.
"""

from __future__ import annotations

from bot.slack.blocks.answer import answer_message, error_message, fallback_text, text_message
from bot.slack.blocks.buttons import (
    ACTION_IDS,
    MAX_SUGGESTIONS,
    TOP_N_INTENTS,
    action_buttons,
    decode_value,
    encode_value,
)
from bot.slack.blocks.home import digest_home_section, home_view
from bot.slack.blocks.offers import TABLE_COLUMNS, offers_table
from bot.slack.blocks.settings import (
    SETTING_KEYS,
    SETTINGS_MODAL_ID,
    home_settings_section,
    notice_message,
    settings_from_view,
    settings_lines,
    settings_message,
    settings_modal,
)
from bot.slack.escape import slack_escape, slack_inline, slack_plain
from bot.slack.limits import LIMITS, fit_blocks
from bot.slack.phrases import phrase

__all__ = [
    "ACTION_IDS",
    "LIMITS",
    "MAX_SUGGESTIONS",
    "SETTINGS_MODAL_ID",
    "SETTING_KEYS",
    "TABLE_COLUMNS",
    "TOP_N_INTENTS",
    "action_buttons",
    "answer_message",
    "decode_value",
    "digest_home_section",
    "encode_value",
    "error_message",
    "fallback_text",
    "fit_blocks",
    "home_settings_section",
    "home_view",
    "notice_message",
    "offers_table",
    "phrase",
    "settings_from_view",
    "settings_lines",
    "settings_message",
    "settings_modal",
    "slack_escape",
    "slack_inline",
    "slack_plain",
    "text_message",
]
