"""Enterprise Grid: which workspace a Slack payload comes from.

On an org-wide install, interactivity payloads may carry `team: null`, and `user.team_id` may name the org (`E...`)
rather than the workspace (`T...`); Bolt's own `extract_team_id` then gives the org or nothing. Settings, digests
and alerts are kept per workspace, so the edge asks `workspace_of(body)` for the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["workspace_of"]


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def workspace_of(body: Mapping[str, Any]) -> str | None:
    """The workspace (team id) of a slash command, event or interaction payload, Grid included: the first
    workspace id of the view's installing team, `team`, `team_id`, the view's team and the user's team; the org id
    only when no workspace is named at all; None when neither is."""
    team, view, user = body.get("team"), _dict(body.get("view")), _dict(body.get("user"))
    org = _dict(body.get("enterprise")).get("id") or body.get("enterprise_id") or _dict(team).get("enterprise_id")
    named = [
        view.get("app_installed_team_id"),
        _dict(team).get("id") if isinstance(team, Mapping) else team,
        body.get("team_id"),
        view.get("team_id"),
        user.get("team_id"),
    ]
    ids = [t for t in named if isinstance(t, str) and t]
    return next((t for t in ids if t != org and not t.startswith("E")), None) or (ids[0] if ids else None)
