"""The daily price-change digest in Slack: a channel's digest as an answer (`/gpu digest now`, the CLI) and the
scheduled post to every subscribed channel.

`post_digests(client_for_team, now=None)` posts; `client_for_team` maps a team id to a `slack_sdk.WebClient`
(`clients_by_team()`: each workspace's own token in OAuth mode, else SLACK_BOT_TOKEN).

Posting is idempotent through the `digest_posts` table (see `knowledge.state.subscriptions`): a channel's row for the
period is claimed in the database before the post and marked sent after, so a rerun, a retry, a crash mid-run or
a second clock process on another machine posts nothing twice. 429s are retried after `Retry-After` by slack_sdk's
`RateLimitErrorRetryHandler`; a channel error (`not_in_channel`, `channel_not_found`, `is_archived`) fails that
channel for the period, is reported, pauses the subscription at once and tells its subscriber once (a DM from
the app); `/gpu digest subscribe` in the channel switches it back on.

The post is Block Kit (`bot.slack.blocks.digest`): the verdict as header, at most five moves, the price lists by
dataset and date; the rest of the list and the chart of the biggest moves go in its thread.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowledge.state.subscriptions import Claim, Subscription

__all__ = [
    "CHANNEL_ERRORS",
    "PERMANENT_ERRORS",
    "PostReport",
    "PostResult",
    "clients_by_team",
    "default_client_for_team",
    "digest_answer",
    "digest_now_message",
    "next_refresh",
    "post_digests",
]

log = logging.getLogger("gpubot.digest")

CHANNEL_ERRORS = frozenset({"not_in_channel", "channel_not_found", "is_archived"})
# errors that another attempt in the same period will not fix
PERMANENT_ERRORS = CHANNEL_ERRORS | {
    "account_inactive",
    "invalid_auth",
    "not_authed",
    "token_revoked",
    "missing_scope",
    "restricted_action",
    "team_access_not_granted",
    "no_permission",
    "msg_too_long",
    "no_text",
    "invalid_blocks",
    "ekm_access_denied",
    "is_inactive",
    "org_login_required",
}
MAX_TEXT = 39_000  # Slack rejects message text over 40,000 characters (msg_too_long)
STALE_CLAIM = dt.timedelta(minutes=30)


@dataclass(slots=True)
class PostResult:
    """What happened to one subscribed channel in a run."""

    team: str
    channel: str
    period: str
    status: str  # posted | quiet | already_sent | already_skipped | already_failed | in_progress | not_due | failed
    # | unverified (an earlier attempt may have posted; the channel could not be checked) | already_unverified
    detail: str | None = None
    message_ts: str | None = None
    changes: int = 0


@dataclass(slots=True)
class PostReport:
    results: list[PostResult] = field(default_factory=list)

    def of(self, status: str) -> list[PostResult]:
        return [r for r in self.results if r.status == status]

    @property
    def posted(self) -> list[PostResult]:
        return self.of("posted")

    @property
    def failed(self) -> list[PostResult]:
        return self.of("failed")

    def as_json(self) -> dict:
        return {
            "results": [asdict(r) for r in self.results],
            "posted": len(self.posted),
            "failed": len(self.failed),
            "unverified": len(self.of("unverified")),
        }

    def lines(self) -> list[str]:
        out = []
        for r in self.results:
            extra = f": {r.detail}" if r.detail else ""
            out.append(f"{r.team}/{r.channel} {r.period} {r.status}{extra}")
        return out


def _ensure_rate_limit_retries(client) -> None:
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    handlers = getattr(client, "retry_handlers", None)
    if handlers is not None and not any(isinstance(h, RateLimitErrorRetryHandler) for h in handlers):
        handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))


def default_client_for_team(team: str):
    """The WebClient that posts to workspace `team` with its own token (OAuth installs), or SLACK_BOT_TOKEN.

    429s are retried after Retry-After; connection errors and 5xx are *not* retried inside a run (the message may
    have been posted): the next run retries the channel, up to `knowledge.state.subscriptions.MAX_ATTEMPTS` times.
    """
    from bot.slack.oauth import client_for_team

    return client_for_team(team)


def clients_by_team() -> Callable[[str], object]:
    """`client_for_team` with one client per workspace per run; fails at once when no token is configured."""
    from functools import cache

    from bot.settings import load_settings

    settings = load_settings()
    if not settings.oauth_enabled and not settings.secret("slack_bot_token"):
        raise RuntimeError("SLACK_BOT_TOKEN is not set: it is needed to post the digest")
    return cache(default_client_for_team)


def _posted_before(client, team: str, channel: str, period: str) -> tuple[str | None, str | None]:
    """This period's digest in the channel (metadata `gpubot_digest`, team, period): see `find_earlier_post`."""
    from bot.earlier_post import find_earlier_post

    return find_earlier_post(client, channel, "gpubot_digest", {"team": team, "period": period})


def _digest_for(sub, cache: dict):
    from handlers.digest import matches_gpus
    from knowledge.history import snapshots as history
    from knowledge.history.snapshots import Digest
    from knowledge.state.subscriptions import last_delivered

    start = last_delivered(sub.team, sub.channel) or {}
    key = (tuple(sorted(start.items())), sub.threshold_pct)
    if key not in cache:
        cache[key] = history.diff_since(start_ids=start, threshold_pct=sub.threshold_pct)
    digest = cache[key]
    if sub.gpus:
        digest = digest.filtered(matches_gpus(sub.gpus))
        digest = Digest(digest.providers, digest.threshold_pct, digest.since, sub.gpus)
    return digest


def _post(client, sub, period: str, answer, digest) -> str | None:
    """The digest post (Block Kit: `bot.slack.blocks.digest`), tagged so a retry can find it; its ts."""
    from bot.slack.blocks.digest import digest_message

    message = digest_message(answer)
    response = client.chat_postMessage(
        channel=sub.channel,
        text=message["text"][:MAX_TEXT],
        blocks=message["blocks"],
        unfurl_links=False,
        unfurl_media=False,
        metadata={"event_type": "gpubot_digest", "event_payload": {"team": sub.team, "period": period}},
    )
    return response.get("ts")


def _thread(client, sub, ts: str | None, answer, digest) -> None:
    """The rest of the list and the chart of the biggest moves, in the post's thread; a failure is logged only
    (the digest itself is posted and recorded)."""
    from slack_sdk.errors import SlackApiError

    from bot.slack.blocks.digest import digest_thread

    rest = digest_thread(answer) if digest else None
    if rest and ts:
        try:
            client.chat_postMessage(channel=sub.channel, thread_ts=ts, unfurl_links=False, **rest)
        except SlackApiError as exc:
            log.warning("digest thread in %s/%s failed: %s", sub.team, sub.channel, exc.response.get("error"))
    if sub.charts and digest:
        from bot.slack.history import attach_digest_chart

        attach_digest_chart(client, sub.channel, ts, digest, lang=sub.language)


def _pause(client_for_team, sub, error: str) -> str:
    """A channel that refuses the digest (`not_in_channel`, `channel_not_found`, `is_archived`): the subscription is
    paused (not retried blindly every day) and whoever subscribed is told once, in a DM from the app."""
    from bot.slack.phrases import phrase
    from knowledge.state.subscriptions import pause, subscriber

    if not pause(sub.team, sub.channel, error):
        return "subscription already paused"
    user = subscriber(sub.team, sub.channel)
    if not user:
        return "subscription paused (no subscriber to tell)"
    text = phrase(f"digest.paused.{error}", sub.language, channel=f"<#{sub.channel}>")
    try:
        client_for_team(sub.team).chat_postMessage(channel=user, text=text, unfurl_links=False)
    except Exception as exc:  # the pause stands; telling is best effort
        log.warning("could not tell %s that the digest in %s is paused: %s", user, sub.channel, exc)
        return "subscription paused (subscriber could not be told)"
    return f"subscription paused; {user} told"


def post_digests(
    client_for_team: Callable[[str], object],
    now: dt.datetime | None = None,
    *,
    due_only: bool = False,
    team: str | None = None,
    stale_after: dt.timedelta = STALE_CLAIM,
    on_posted: Callable[[PostResult], None] | None = None,
) -> PostReport:
    """Post the digest to every active subscription (of `team`, or all) whose post for the period is not done.

    `due_only` (the clock) skips subscriptions whose local hour has not come yet; the CLI's `--post` posts to all.
    `on_posted` is called after each channel's outcome is recorded (progress; an exception it raises stops the
    run like a crash would, which is how the tests simulate one).
    """
    from knowledge.history import snapshots as history
    from knowledge.state.subscriptions import claim_post, list_subscriptions, period_for

    now = now or dt.datetime.now(dt.UTC)
    report = PostReport()
    history.ensure_baselines()
    cache: dict = {}
    for sub in list_subscriptions(team, active_only=True):
        period, due = period_for(sub, now)
        if due_only and not due:
            report.results.append(PostResult(sub.team, sub.channel, period, "not_due"))
            continue
        claim = claim_post(sub.team, sub.channel, period, now=now, stale_after=stale_after)
        if isinstance(claim, str):
            status = claim if claim == "in_progress" else f"already_{claim}"
            report.results.append(PostResult(sub.team, sub.channel, period, status))
            continue
        result = _post_claimed(client_for_team, _Slot(sub, period, claim, now), cache)
        report.results.append(result)
        if on_posted is not None:
            on_posted(result)
    return report


@dataclass(frozen=True, slots=True)
class _Slot:
    """One subscription's post for one period, claimed by this run (`claim_post`) at `now`."""

    sub: Subscription
    period: str
    claim: Claim
    now: dt.datetime


def _post_claimed(client_for_team: Callable[[str], object], slot: _Slot, cache: dict) -> PostResult:
    """Post (or skip, when quiet) a claimed digest and record the outcome; a failure is this channel's only."""
    from slack_sdk.errors import SlackApiError

    from knowledge.state.subscriptions import MAX_ATTEMPTS, finish_post

    sub, claim, now = slot.sub, slot.claim, slot.now
    result = PostResult(sub.team, sub.channel, slot.period, "failed")
    try:
        digest = _digest_for(sub, cache)
        result.changes = len(digest.changed) + len(digest.added) + len(digest.removed)
        if not digest and sub.quiet:
            finish_post(claim, "skipped", snapshot_ids=digest.snapshot_ids(), changes=0, now=now)
            result.status = "quiet"
        else:
            _deliver(client_for_team, slot, digest, result)
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        error = error or f"HTTP {getattr(exc.response, 'status_code', '?')}"
        retryable = error not in PERMANENT_ERRORS and claim.attempts < MAX_ATTEMPTS
        finish_post(claim, "failed", error=error, retryable=retryable, now=now)
        result.detail = error + ("" if retryable else " (not retried this period)")
        if error in CHANNEL_ERRORS:  # paused at once, its subscriber told once (`_pause`)
            result.detail += "; " + _pause(client_for_team, sub, error)
        log.warning("digest to %s/%s failed: %s", sub.team, sub.channel, error)
    except Exception as exc:  # one channel's surprise must not block the others
        log.exception("digest to %s/%s failed", sub.team, sub.channel)
        retryable = claim.attempts < MAX_ATTEMPTS
        finish_post(claim, "failed", error=f"{type(exc).__name__}: {exc}"[:500], retryable=retryable, now=now)
        result.detail = f"{type(exc).__name__}: {exc}"
    except BaseException:  # interrupted: let a rerun try this channel again
        finish_post(claim, "failed", error="interrupted", retryable=True, now=now)
        raise
    return result


def _deliver(client_for_team: Callable[[str], object], slot: _Slot, digest, result: PostResult) -> None:
    """Post the digest and its thread, unless an earlier attempt's post is found (or cannot be ruled out)."""
    from handlers.digest import summarize
    from knowledge.state.subscriptions import finish_post

    sub, claim, now = slot.sub, slot.claim, slot.now
    answer = summarize(
        digest, lang=sub.language, no_changes_one_line=not digest, display=channel_display(sub.team, sub.channel)
    )
    client = client_for_team(sub.team)
    _ensure_rate_limit_retries(client)
    earlier, unknown = (
        _posted_before(client, sub.team, sub.channel, slot.period) if claim.attempts > 1 else (None, None)
    )
    if unknown:  # an earlier attempt may have posted: never post blindly again; say so
        result.status, result.detail = (
            "unverified",
            f"{unknown}; an earlier attempt may have posted it: not posted again (check the channel)",
        )
        finish_post(claim, "unverified", error=unknown[:500], now=now)
        log.warning("digest to %s/%s not verified, not posted again: %s", sub.team, sub.channel, unknown)
        return
    if earlier:  # an earlier attempt timed out or died after Slack stored its post: do not post again
        result.status, result.message_ts = "already_sent", earlier
        result.detail = "found in the channel (posted by an earlier attempt)"
    else:
        result.message_ts = _post(client, sub, slot.period, answer, digest)
        result.status = "posted"
        result.detail = None if digest else "no changes (one line)"
    finish_post(
        claim, "sent", message_ts=result.message_ts, snapshot_ids=digest.snapshot_ids(), changes=result.changes, now=now
    )
    if not earlier:
        _thread(client, sub, result.message_ts, answer, digest)  # after "sent": never a second post


def next_refresh(now: dt.datetime | None = None) -> str:
    """When the clock's next daily price refresh is due ("2026-12-03 05:00 UTC"; GPUBOT_REFRESH_HOUR)."""
    from knowledge.config import config

    now = now or dt.datetime.now(dt.UTC)
    due = now.replace(hour=config().gpubot_refresh_hour, minute=0, second=0, microsecond=0)
    if due <= now:
        due += dt.timedelta(days=1)
    return due.strftime("%Y-%m-%d %H:%M UTC")


def digest_now_message(team: str, channel: str, lang: str) -> dict:
    """`/gpu digest now`: the digest for the channel (in_channel), or, with nothing to compare yet, a private note
    saying when the next refresh is due."""
    from bot.slack.blocks.digest import digest_message, digest_notice

    answer, _ = digest_answer(team, channel, lang=lang)
    state = (answer.extra.get("digest") or {}).get("state")
    if state in ("one_snapshot", "no_history"):
        return {**digest_notice(answer, next_refresh()), "response_type": "ephemeral"}
    return {**digest_message(answer, in_thread=False), "response_type": "in_channel"}


def digest_answer(
    team: str | None = None,
    channel: str | None = None,
    *,
    since: dt.date | None = None,
    lang: str | None = None,
    threshold_pct: float | None = None,
    gpus: tuple[str, ...] = (),
):
    """The digest as an `Answer` for `/gpu digest now` or the CLI; records nothing about posting.

    With a subscribed (team, channel): that channel's GPUs, threshold and language, and the changes since its
    last digest; otherwise the changes since the previous snapshot (or `since`).
    """
    from handlers.digest import matches_gpus, summarize
    from knowledge.history import snapshots as history
    from knowledge.history.snapshots import Digest
    from knowledge.state.subscriptions import get_subscription, last_delivered

    history.ensure_baselines()
    sub = get_subscription(team or "default", channel) if channel else None
    start = last_delivered(sub.team, sub.channel) if sub and since is None else None
    threshold = threshold_pct if threshold_pct is not None else (sub.threshold_pct if sub else 1.0)
    digest = history.diff_since(since=since, start_ids=start, threshold_pct=threshold)
    wanted = tuple(gpus) or (sub.gpus if sub else ())
    if wanted:
        digest = digest.filtered(matches_gpus(wanted))
        digest = Digest(digest.providers, digest.threshold_pct, digest.since, wanted)
    display = channel_display(team or "default", channel) if channel else None
    return summarize(digest, lang=lang or (sub.language if sub else "en"), display=display), digest


def channel_display(team: str, channel: str) -> dict | None:
    """The display currency of a channel's settings (`/gpu set currency CNY`), at the knowledge base's one rate."""
    from handlers.display import in_currency
    from knowledge.kb.opener import open_kb
    from knowledge.state.settings_store import get_settings

    currency = get_settings(team, channel).get("currency")
    return in_currency(currency, open_kb().fx()) if currency and currency != "USD" else None
