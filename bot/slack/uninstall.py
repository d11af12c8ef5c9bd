"""The app leaving Slack: a workspace (`bot.slack.oauth.forget_workspace`) or an Enterprise Grid org-wide install.

`app_uninstalled` / `tokens_revoked` (bot tokens) for an org-wide install (`is_enterprise_install`, the org's
`enterprise_id`; the team absent or the org) delete the org's installation and bot rows and everything kept for
the workspaces it served: their settings, settings audit, digest subscriptions and price alerts, as a workspace's
own uninstall does. Which workspaces those were is what `knowledge.state.grid_members` recorded while the install
served them (`note_grid_workspace`, and `bot.installations.granted_teams`): Slack's `auth.teams.list` cannot be
asked any more once the org's token is revoked. A workspace of the org that has its own installation keeps it.
An uninstall from one workspace of an org removes that workspace only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa

from bot.grid import workspace_of
from bot.settings import Settings
from bot.slack.oauth import forget_workspace, installation_store

__all__ = ["forget", "forget_org", "is_org_wide", "note_grid_workspace"]

log = logging.getLogger("gpubot.slack")


def is_org_wide(body: Mapping[str, Any], context: Any) -> bool:
    """The event is about an org-wide install (rather than one workspace's)."""
    flag = body.get("is_enterprise_install")
    return bool((flag is True or flag == "true" or context.is_enterprise_install) and context.enterprise_id)


def forget(body: Mapping[str, Any], context: Any, settings: Settings) -> None:
    """The app left what the event names: the whole org of an org-wide install, else one workspace."""
    team = context.team_id or body.get("team_id")
    if is_org_wide(body, context):
        forget_org(context.enterprise_id, settings, team=team)
    else:
        forget_workspace(team, settings, enterprise_id=context.enterprise_id)


def forget_org(enterprise_id: str, settings: Settings, *, team: str | None = None) -> list[str]:
    """Org `enterprise_id`'s org-wide install is gone: its installation and bot rows, and what its workspaces
    kept (those without an installation of their own), are deleted; the workspaces forgotten."""
    from bot import installations
    from knowledge.state import grid_members

    teams = set(grid_members.members_of(enterprise_id)) | {enterprise_id}
    if team:
        teams.add(team)
    own: set[str] = set()
    if settings.oauth_enabled:
        store = installation_store(settings)
        org_bot = store.find_bot(enterprise_id=enterprise_id, team_id=None, is_enterprise_install=True)
        if org_bot is not None:  # Slack still answers only while the token is valid (usually it is revoked)
            teams |= installations.granted_teams(org_bot, settings.slack_api_url)
        own = _own_installs(store, enterprise_id)
        store.delete_bot(enterprise_id=enterprise_id, team_id=None)
        store.delete_installation(enterprise_id=enterprise_id, team_id=None)
        _delete_org_rows(store, enterprise_id)
        installations.forget_grants(enterprise_id)
    gone = sorted(teams - own)
    for workspace in gone:
        forget_workspace(workspace, settings, enterprise_id=enterprise_id)
    grid_members.forget_org(enterprise_id)
    log.info("org %s uninstalled: %d workspaces forgotten (%s)", enterprise_id, len(gone), ", ".join(gone))
    return gone


def _own_installs(store, enterprise_id: str) -> set[str]:
    """The workspaces of the org installed on their own (not through the org-wide install)."""
    c = store.bots.c
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(c.team_id).where(
                c.client_id == store.client_id,
                c.enterprise_id == enterprise_id,
                c.team_id.is_not(None),
                c.is_enterprise_install.is_not(True),
            )
        )
        return {t for t in rows.scalars() if t}


def _delete_org_rows(store, enterprise_id: str) -> None:
    """Org-wide rows that name a team too (slack_sdk's delete matches `team_id IS NULL` only)."""
    with store.engine.begin() as conn:
        for table in (store.bots, store.installations):
            c = table.c
            conn.execute(
                table.delete().where(
                    c.client_id == store.client_id, c.enterprise_id == enterprise_id, c.is_enterprise_install.is_(True)
                )
            )


def note_grid_workspace(body: dict, context: Any, next: Callable[[], Any]) -> Any:
    """Bolt middleware: a request from a workspace served by an org-wide install records that workspace as the
    org's (`knowledge.state.grid_members`, once per process), so that the org's uninstall can forget it."""
    if context.is_enterprise_install and context.enterprise_id:
        team = workspace_of(body)
        if team and team != context.enterprise_id:
            from knowledge.state import grid_members

            try:
                grid_members.record(context.enterprise_id, [team])
            except Exception:  # noqa: BLE001 - bookkeeping never fails a request
                log.exception("cannot record workspace %s of org %s", team, context.enterprise_id)
    return next()
