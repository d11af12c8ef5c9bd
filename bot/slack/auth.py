"""Who may change what: workspace-wide things need a workspace admin or owner; channel things, its members.

    is_workspace_admin(client, team, user) -> bool | None   users.info is_admin / is_owner (None: Slack could not say)
    workspace_refusal(client, team, user, lang) -> str | None   None when allowed, else what to tell the user

The rule: workspace settings (`/gpu set workspace ...`, the App Home form) and workspace-wide digest and alert
subscriptions need a workspace admin or owner (Slack's `users.info`: `is_admin`, `is_owner`,
`is_primary_owner`); guests never qualify. Channel settings and a channel's own subscriptions can be changed by
anyone who can run `/gpu` in the channel (Slack only lets its members do that) and are announced there.

An answer is cached for ADMIN_CACHE_SECONDS per (team, user), so a burst of commands costs one users.info; when
users.info fails the change is refused (never allowed on an unknown role) and nothing is cached.
"""

from __future__ import annotations

import logging
import threading
import time

from slack_sdk.errors import SlackApiError

from handlers.i18n import MESSAGES, t

__all__ = ["ADMIN_CACHE_SECONDS", "clear_cache", "is_workspace_admin", "workspace_refusal"]

log = logging.getLogger("gpubot.slack.auth")

ADMIN_CACHE_SECONDS = 60.0
_cache: dict[tuple[str, str], tuple[float, bool]] = {}
_lock = threading.Lock()


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def is_workspace_admin(client, team: str | None, user: str | None, *, now: float | None = None) -> bool | None:
    """True for a workspace admin or owner, False for anyone else, None when users.info failed."""
    if not user:
        return False
    now = time.monotonic() if now is None else now
    key = (team or "", user)
    with _lock:
        hit = _cache.get(key)
    if hit is not None and now - hit[0] < ADMIN_CACHE_SECONDS:
        return hit[1]
    try:
        info = client.users_info(user=user).get("user") or {}
    except SlackApiError as exc:
        log.warning("users.info failed for %s/%s: %s", team, user, exc.response.get("error"))
        return None
    except Exception as exc:  # the network
        log.warning("users.info failed for %s/%s: %s", team, user, type(exc).__name__)
        return None
    admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner")) and not (
        info.get("is_restricted") or info.get("is_ultra_restricted")
    )
    with _lock:
        _cache[key] = (now, admin)
    return admin


def workspace_refusal(
    client, team: str | None, user: str | None, lang: str = "en", what: str = "settings"
) -> str | None:
    """None when `user` may make a workspace-wide change, else the reason in the user's language."""
    admin = is_workspace_admin(client, team, user)
    if admin:
        return None
    label = t(f"auth.what.{what}" if f"auth.what.{what}" in MESSAGES else "auth.what.settings", lang)
    return t(f"auth.refusal.{'unknown' if admin is None else 'not_admin'}", lang, what=label)
