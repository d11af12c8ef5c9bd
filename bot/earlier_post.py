"""Whether an earlier attempt's post is already in a channel: the check a sender makes after taking over a claim
(`knowledge.state.post_once`), for the digest and price alerts alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError

from knowledge.state.post_once import is_our_post

__all__ = ["HISTORY_PAGES", "find_earlier_post"]

HISTORY_PAGES = 5  # messages read looking for an earlier attempt's post: 5 pages of 200


def find_earlier_post(
    client: Any, channel: str, event_type: str, payload: Mapping[str, Any], *, pages: int = HISTORY_PAGES
) -> tuple[str | None, str | None]:
    """(ts, None) when the post with metadata `event_type` + `payload` is in the channel, (None, None) when it is
    verifiably not, (None, why) when that cannot be told (history unreadable: `missing_scope` in a group DM or an
    old install, rate limits; or more newer messages than are read). The caller then records the post
    `unverified` instead of posting blindly a second time."""
    cursor = None
    for _page in range(pages):
        try:
            response = client.conversations_history(
                channel=channel, limit=200, include_all_metadata=True, **({"cursor": cursor} if cursor else {})
            )
        except SlackApiError as exc:
            error = (exc.response.get("error") if exc.response is not None else None) or "error"
            return None, f"the channel's history cannot be read ({error})"
        for message in response.get("messages") or []:
            if is_our_post(message, event_type, payload):
                return message.get("ts"), None
        if not response.get("has_more"):
            return None, None
        cursor = (response.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            break
    return None, "more newer messages in the channel than could be read"
