"""Where a table goes in a Slack message.

Slack's table-block reference (docs.slack.dev/reference/block-kit/blocks/table-block, "Usage info"): a message
includes a table by providing the `table` block in the `attachments` field of chat.postMessage, with a top-level
`text` or `blocks` as well; one table per message (a second one fails with `only_one_table_allowed`); tables are
for messages only (not App Home or modals); cells are `raw_text` or `rich_text`.

    table_in_attachments(message) -> message   the table block moved from `blocks` to `attachments[0].blocks`
    tables_of(message) -> [dict]               the message's table blocks, wherever they are
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["table_in_attachments", "tables_of"]


def table_in_attachments(
    message: dict[str, Any], fit: Callable[[list[dict]], list[dict]] | None = None, *, lead: int | None = None
) -> dict[str, Any]:
    """`message` with its (first) table block in `attachments`, as Slack documents; other tables are dropped.
    `fit` (Slack's limits, `bot.slack.limits.fit_blocks`) is applied to the blocks and to the table separately, so the
    message keeps its 50 blocks for the rest. `lead`: only the first `lead` blocks (the verdict) stay in `blocks`;
    the rest follows the table in the same attachment, so the table is read right after the verdict (Slack shows
    attachments under the blocks)."""
    fit = fit or (lambda found: found)
    blocks = list(message.get("blocks") or [])
    tables = [b for b in blocks if b.get("type") == "table"]
    if not tables:
        return {**message, "blocks": fit(blocks)}
    others = [b for b in blocks if b.get("type") != "table"]
    keep, after = (others, []) if lead is None else (others[:lead], others[lead:])
    out = {**message, "blocks": fit(keep)}
    out["attachments"] = [*(message.get("attachments") or []), {"blocks": fit(tables[:1] + after)}]
    return out


def tables_of(message: dict[str, Any]) -> list[dict]:
    found = [b for b in message.get("blocks") or [] if b.get("type") == "table"]
    for attachment in message.get("attachments") or []:
        found += [b for b in attachment.get("blocks") or [] if b.get("type") == "table"]
    return found
