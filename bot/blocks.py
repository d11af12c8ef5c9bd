"""The old import path of `bot.slack.blocks` (Block Kit for Slack replies): `bot.blocks` IS that module, so that a
test or a caller that patches `bot.blocks.answer_message` patches what the Slack app calls."""

import sys

from bot.slack import blocks as _blocks
from bot.slack.blocks import *  # noqa: F403  (the names, for readers and type checkers)

sys.modules[__name__] = _blocks
