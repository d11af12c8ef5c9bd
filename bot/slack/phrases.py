"""Slack-only phrases (the `slack.` area of the one table, `knowledge/data/phrases.json`)."""

from __future__ import annotations

from handlers.i18n import scoped

__all__ = ["phrase"]

phrase = scoped("slack")  # a Slack-only phrase in `lang` (English when missing), formatted with `values`
