"""Which workspaces an Enterprise Grid org-wide install served (state database), so that its uninstall can forget
them.

An org-wide installation names only the org; Slack says which workspaces it is granted to (`auth.teams.list`) only
while its token is valid, and `app_uninstalled` arrives after the token is revoked. So every workspace seen served
by an org's install is recorded here (`record`), and the org's uninstall reads the list back (`members_of`) and
drops it (`forget_org`).

Table (on `knowledge.state.db.metadata`; migration `0005_grid_members`):
- `grid_members`: one row per (org, workspace) ever seen served by the org's org-wide install, and when.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import sqlalchemy as sa

from knowledge.clock import utc_now
from knowledge.state import db as state
from knowledge.state.db import metadata

__all__ = ["forget_org", "forget_workspace", "members_of", "record"]

members = sa.Table(
    "grid_members",
    metadata,
    sa.Column("enterprise_id", sa.String(40), primary_key=True),
    sa.Column("team_id", sa.String(40), primary_key=True),
    sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
)

_known: set[tuple[str, str]] = set()  # recorded by this process already: one write per pair and process


def record(enterprise_id: str, teams: Iterable[str]) -> None:
    """Workspaces `teams` are served by org `enterprise_id`'s org-wide install (idempotent; workspace ids only)."""
    new = sorted({t for t in teams if t and t.startswith("T") and (enterprise_id, t) not in _known})
    if not enterprise_id or not new:
        return
    c = members.c
    with state.engine().begin() as conn:
        have = set(
            conn.execute(sa.select(c.team_id).where(c.enterprise_id == enterprise_id, c.team_id.in_(new))).scalars()
        )
        rows = [{"enterprise_id": enterprise_id, "team_id": t, "seen_at": utc_now()} for t in new if t not in have]
        if rows:
            with contextlib.suppress(sa.exc.IntegrityError), conn.begin_nested():  # another worker was first
                conn.execute(members.insert(), rows)
    _known.update((enterprise_id, t) for t in new)


def members_of(enterprise_id: str) -> list[str]:
    """The workspaces recorded as served by org `enterprise_id`'s org-wide install."""
    c = members.c
    with state.engine().connect() as conn:
        return list(
            conn.execute(sa.select(c.team_id).where(c.enterprise_id == enterprise_id).order_by(c.team_id)).scalars()
        )


def forget_org(enterprise_id: str) -> int:
    """The org's install is gone: its workspaces are no longer recorded; how many were."""
    _known.difference_update({k for k in _known if k[0] == enterprise_id})
    with state.engine().begin() as conn:
        return conn.execute(members.delete().where(members.c.enterprise_id == enterprise_id)).rowcount


def forget_workspace(team_id: str) -> None:
    """A workspace left its org's install (or the app): no longer recorded under any org."""
    _known.difference_update({k for k in _known if k[1] == team_id})
    with state.engine().begin() as conn:
        conn.execute(members.delete().where(members.c.team_id == team_id))
