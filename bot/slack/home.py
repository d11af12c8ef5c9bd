"""App Home: what gpubot answers, how fresh its data is, sections from `home_sections_providers` (this workspace's
digest subscriptions) and the workspace defaults, with a form that edits them (for workspace admins and owners:
`bot.slack.auth`; every change recorded, `knowledge.state.settings_audit`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.grid import workspace_of
from bot.pipeline import answer_query, typed_setting
from bot.slack import blocks
from bot.slack.answering import Answerer, user_language
from bot.slack.auth import workspace_refusal
from bot.slack.payloads import log_context
from bot.slack.settings_cmd import error_text, record_change
from handlers.models import Query
from knowledge.kb.reader import KB

__all__ = ["HomeContext", "home_sections_providers", "publish_home", "register"]

log = logging.getLogger("gpubot.slack")


@dataclass(frozen=True)
class HomeContext:
    """What a Home-tab section provider gets: who opened the tab, in which workspace."""

    team_id: str | None
    user_id: str
    lang: str
    kb: KB


# Features append callables returning Block Kit blocks for the Home tab's "subscriptions" part
# (the digest feature lists this workspace's digest subscriptions). A failing provider is logged and skipped.
home_sections_providers: list[Callable[[HomeContext], list[dict]]] = []


def _digest_subscriptions_section(ctx: HomeContext) -> list[dict]:
    """App Home: this workspace's digest subscriptions."""
    if not ctx.team_id:
        return []
    from knowledge.state.subscriptions import list_subscriptions

    return blocks.digest_home_section(ctx.lang, list_subscriptions(ctx.team_id))


home_sections_providers.append(_digest_subscriptions_section)


def publish_home(
    answerer: Answerer, client: WebClient, team: str | None, user: str, where: str, lang: str | None = None
) -> None:
    from knowledge.state.settings_store import scope_settings

    kb = answerer.kb
    ctx = HomeContext(team_id=team, user_id=user, lang=lang or user_language(client, user), kb=kb)
    extra: list[dict] = []
    for provider in list(home_sections_providers):
        try:
            extra += provider(ctx)
        except Exception:  # one section's failure leaves the rest of the Home tab: logged
            log.exception("home section provider %r failed (%s)", provider, where)
    settings_section: list[dict] = []
    if team:
        try:
            settings_section = blocks.home_settings_section(ctx.lang, scope_settings(team, ""))
        except Exception:  # the state cannot be read: the Home tab without its settings section (logged)
            log.exception("could not read the workspace defaults for the Home tab (%s)", where)
    help_answer = answer_query(Query(text="help", intent="help", language=ctx.lang), kb)
    view = blocks.home_view(ctx.lang, help_answer.lines, kb.meta("built_at"), _freshness(kb), extra, settings_section)
    try:
        client.views_publish(user_id=user, view=view)
    except SlackApiError as exc:
        log.warning("could not publish the Home tab: %s (%s)", exc.response.get("error"), where)


def register(app: App, answerer: Answerer) -> None:
    """The Home tab and the workspace-defaults form."""

    @app.event("app_home_opened")
    def on_home(body: dict, event: dict, client: WebClient) -> None:
        if event.get("tab", "home") != "home":
            return
        publish_home(answerer, client, body.get("team_id"), event["user"], log_context(body))

    @app.action(blocks.ACTION_IDS["settings_open"])
    def on_settings_open(ack, body: dict, client: WebClient) -> None:
        ack()
        from knowledge.state.settings_store import scope_settings

        team = workspace_of(body) or ""
        user = (body.get("user") or {}).get("id") or ""
        lang = user_language(client, user) if user else "en"
        view = blocks.settings_modal(lang, team, scope_settings(team, ""), sorted(answerer.kb.providers))
        try:
            client.views_open(trigger_id=body.get("trigger_id"), view=view)
        except SlackApiError as exc:
            log.warning("could not open the settings form: %s (%s)", exc.response.get("error"), log_context(body))

    @app.view(blocks.SETTINGS_MODAL_ID)
    def on_settings_submit(ack, body: dict, view: dict, client: WebClient) -> None:
        settings_submitted(answerer, ack, body, view, client)


def settings_submitted(answerer: Answerer, ack: Callable[..., Any], body: dict, view: dict, client: WebClient):
    """The workspace-defaults form sent: checked, refused to non-admins, saved and recorded, the tab refreshed."""
    from knowledge.state import settings_store as store

    kb = answerer.kb
    team = workspace_of(body) or ""
    user = (body.get("user") or {}).get("id") or ""
    try:
        lang = json.loads(view.get("private_metadata") or "{}").get("lang") or "en"
    except ValueError:
        lang = "en"
    wanted = blocks.settings_from_view(view)
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key, raw in wanted.items():
        if raw is None:
            continue
        try:
            values[key] = store.normalize(key, typed_setting(key, raw), kb)
        except store.SettingError as exc:
            errors[f"setting_{key}"] = error_text(lang, exc)[:150]
    if errors:
        ack(response_action="errors", errors=errors)
        return
    refusal = workspace_refusal(client, team, user, lang)
    if refusal:  # the workspace defaults are for workspace admins and owners
        ack(response_action="errors", errors={"setting_providers": refusal[:150]})
        return
    try:  # saved before the form closes, so that a failure can still be shown in it
        before = store.scope_settings(team, store.WORKSPACE)
        for key in store.KEYS:
            if key in values:
                stored = store.set_setting(team, store.WORKSPACE, key, values[key], kb=kb, updated_by=user)
                record_change(team, store.WORKSPACE, key, before.get(key), stored, user, "home")
            elif store.clear(team, store.WORKSPACE, key):
                record_change(team, store.WORKSPACE, key, before.get(key), None, user, "home")
    except Exception:  # the outermost edge of the settings form: its error shown in the form, logged
        log.exception("could not save the workspace defaults (%s)", log_context(body))
        ack(response_action="errors", errors={"setting_providers": blocks.error_message(lang)["text"][:150]})
        return
    ack()
    log.info("workspace defaults of %s saved by %s: %s", team, user, sorted(values))
    publish_home(answerer, client, team, user, log_context(body), lang)


@cache
def _freshness_of(path: str, built_at: str | None, kb: KB) -> tuple[dict, ...]:
    rows = kb.rows(
        "SELECT provider, source, as_of, COUNT(*) AS n FROM offers "
        "GROUP BY provider, source, as_of ORDER BY provider, as_of DESC, source"
    )
    providers: dict[str, dict] = {}
    for row in rows:
        entry = providers.setdefault(row["provider"], {"provider": row["provider"], "sources": []})
        entry["sources"].append({"source": row["source"], "as_of": row["as_of"], "n": row["n"]})
    return tuple(providers.values())


def _freshness(kb: KB) -> list[dict]:
    """Per provider, each source of its offers with its date and offer count (cached per knowledge-base build)."""
    return list(_freshness_of(str(kb.path), kb.meta("built_at"), kb))
