"""The old import path of `bot.slack.app` (`build_app`, the Slack app): `bot.slack_app` IS that module, so that a
caller or a test that sets `bot.slack_app.ACK_BUDGET_SECONDS` sets what the app reads."""

import sys

from bot.slack import app as _app
from bot.slack.app import *  # noqa: F403  (the names, for readers and type checkers)

sys.modules[__name__] = _app
