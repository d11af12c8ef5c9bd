"""What every listener shares: a question answered with its channel's settings and rendered for Slack, never
raising (an unexpected error is logged with its context and becomes the short apology), and the workers that keep
slow work off the request path.

Every question (slash command, mention, DM, button) is answered with its channel's effective settings
(`knowledge.state.settings_store.get_settings`: channel over workspace over defaults) through the one pipeline
(`bot.pipeline.answer_with`); a state database that cannot be read in time means an answer without them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.pipeline import answer_with, understand, understood
from bot.settings import Settings
from bot.slack import blocks
from bot.slack.delivery import Delivered, respond_message
from bot.slack.help import with_commands
from handlers.i18n import t
from handlers.language import has_chinese, language_of
from handlers.models import Answer, Query
from knowledge.kb.reader import KB
from knowledge.state import claims

__all__ = ["Answerer", "failure_message", "user_language"]

log = logging.getLogger("gpubot.slack")


def failure_message(exc: BaseException, lang: str = "en") -> dict[str, Any]:
    """What a user is told when answering failed: a state database that cannot save (gone, read-only, full, locked,
    unreachable) is "settings can't be saved right now; nothing was changed; …", anything else the apology."""
    from knowledge.state.presence import state_error_text

    if state_error_text(exc) is None:
        return blocks.error_message(lang)
    log.warning("state database unavailable: %s", state_error_text(exc))
    return blocks.notice_message(t("state.unavailable", lang))


def user_language(client: WebClient, user: str) -> str:
    """zh for users whose Slack locale is Chinese, else en (users:read; en when the lookup fails)."""
    try:
        locale = (client.users_info(user=user, include_locale=True).get("user") or {}).get("locale") or ""
    except SlackApiError as exc:
        log.info("users.info failed for the Home tab: %s", exc.response.get("error"))
        return "en"
    return "zh" if locale.lower().startswith("zh") else "en"


@dataclass
class Answerer:
    """The Slack app's answering side, one per app: the knowledge base, the settings, the ack budget and workers."""

    kb: KB
    settings: Settings
    ack_budget: Callable[[], float]  # seconds an answer may take to go inside the ack (read per request)
    answers: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=8, thread_name_prefix="gpubot-answer")
    )
    charts: ThreadPoolExecutor = field(  # rendering never holds a listener
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpubot-chart")
    )

    # --- work off the request path ----------------------------------------------------------------------------

    def in_background(self, where: str, work: Callable[..., Any], *args: Any) -> None:
        """Run `work` on the chart worker; its failure is logged with the request's context."""

        def run() -> None:
            try:
                work(*args)
            except Exception:  # a background job (a chart) must not kill the pool's thread: logged, the answer stands
                log.exception("background work failed (%s)", where)

        self.charts.submit(run)

    def post_chart(self, client: WebClient, channel: str, thread_ts: str | None, query: Query, **options: Any) -> dict:
        from bot.slack.history import post_history_chart

        return post_history_chart(client, channel, thread_ts, query, self.kb, **options)

    # --- a channel's settings applied to a question -----------------------------------------------------------

    def settings_of(self, team: str | None, channel: str | None) -> dict[str, Any]:
        """The channel's effective settings; none (answer anyway) when the state database cannot be read."""
        if not team:
            return {}
        from knowledge.state.settings_store import get_settings

        try:
            return claims.bounded(get_settings, team, channel)  # never waits long on the state database
        except Exception as exc:  # locked, unreachable, too slow: answer without the channel's settings (logged)
            log.warning(
                "could not read the settings of %s/%s (%s); answering without them", team, channel, type(exc).__name__
            )
            return {}

    def answer_in(self, query: Query, team: str | None, channel: str | None) -> Answer:
        """Answer `query` with its channel's settings applied (the one pipeline: `bot.pipeline.answer_with`)."""
        return answer_with(query, self.kb, self.settings_of(team, channel))

    def answer_text(
        self, text: str, team: str | None, channel: str | None, help_language: Callable[[], str] | None = None
    ) -> Answer:
        """Parse `text` once and answer it with its channel's settings; a help answer in `help_language()` when
        given (a slash command: the asker's language, also for an English word like "help")."""
        query = understood(text.strip(), self.kb)
        if isinstance(query, Answer):
            return query
        if query.intent == "help" and help_language is not None:
            query = query.model_copy(update={"language": help_language()})
        return self.answer_in(query, team, channel)

    def is_history(self, text: str) -> bool:
        try:
            return bool(text.strip()) and understand(text, self.kb).intent == "history"
        except Exception:  # a text the parser fails on is not a history question; its answer says what failed
            return False

    def asker_language(
        self, client: WebClient, text: str, team: str | None, channel: str | None, user: str | None
    ) -> str:
        """Chinese text, else the channel's (or workspace's) language setting, else the asker's Slack locale."""
        if has_chinese(text):
            return "zh"
        chosen = self.settings_of(team, channel).get("language")
        if chosen:
            return chosen
        return user_language(client, user) if user else "en"

    # --- rendered replies (never raising) ---------------------------------------------------------------------

    def message_for(
        self,
        text: str,
        *,
        shareable: bool,
        where: str,
        team: str | None = None,
        channel: str | None = None,
        help_language: Callable[[], str] | None = None,
    ) -> dict[str, Any]:
        """The rendered reply to `text`; never raises (an unexpected error becomes the apology, logged)."""
        try:
            result = self.answer_text(text, team, channel, help_language)
            if result.query.intent == "history" and shareable:  # a slash command: the summary + "post chart"
                from bot.slack.history import history_summary_message

                return history_summary_message(result)
            message = blocks.answer_message(result, shareable=shareable)
            if result.query.intent == "help":
                message = with_commands(message, result.query.language)
            return message
        except Exception:  # the outermost edge of a Slack answer: the apology, never a traceback
            log.exception("internal error answering in Slack (%s)", where)
            return blocks.error_message(language_of(text))

    def message_for_query(
        self,
        query: Query,
        *,
        shareable: bool,
        where: str,
        shared_by: str | None = None,
        team: str | None = None,
        channel: str | None = None,
        verbose: bool = False,
    ) -> dict[str, Any]:
        """The rendered reply to a button's query (`verbose`: "Why", everything and no buttons); never raises."""
        try:
            result = self.answer_in(query, team, channel)
            if verbose:
                return blocks.answer_message(result, verbose=True, buttons=False)
            return blocks.answer_message(result, shareable=shareable, shared_by=shared_by)
        except Exception:  # the outermost edge of a button's answer: the apology, never a traceback
            log.exception("internal error answering a button in Slack (%s)", where)
            return blocks.error_message(query.language)

    @staticmethod
    def respond(respond: Any, where: str, **message: Any) -> Delivered:
        """Post to the response_url; refused blocks fall back to text (`bot.slack.delivery`); never raises."""
        return respond_message(respond, where, **message)
