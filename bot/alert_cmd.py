"""price alerts: add, list, remove, and check (post the ones that fired, once each)

    gpubot alert add "H100 spot on aws below 2.50" --channel C123 [--team T1] [--json]
    gpubot alert list [--team T1] [--channel C123] [--json]
    gpubot alert remove ID [--team T1]
    gpubot alert check [--post] [--json]      the clock runs `check --post` after every refresh

Slack: `/gpu alert H100 spot below 2.50`, `/gpu alert A100 on aws below 1.2 per GPU-hour`,
`H100竞价低于每卡每小时2美元时提醒我`, `/gpu alerts`, `/gpu alert remove N` (`alert_reply`). An alert belongs to its
workspace and channel; anyone in the channel may add or remove the channel's alerts.

Posting (`check_and_post`) follows the digest's protocol (`bot.slack.digest`): each firing is claimed in the state
database before the post and recorded after (`knowledge.state.alerts`), so two clocks or workers post it once; a retry
after a crash first looks for the earlier post in the channel (message metadata `gpubot_alert`) and never posts
twice; when the channel cannot be read it records the firing `unverified` and does not post it again.
Exit codes: 0 done; 1 nothing found (remove) or a post failed or is unverified (check); 2 bad input.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from knowledge.state.alerts import Claim, Due

__all__ = ["AlertReport", "add_alert", "add_arguments", "alert_reply", "check_and_post", "run"]

log = logging.getLogger("gpubot.alerts")
STALE_CLAIM = dt.timedelta(minutes=30)
EVENT_TYPE = "gpubot_alert"


@dataclass(slots=True)
class AlertResult:
    alert_id: int
    team: str
    channel: str
    status: str  # posted | due (dry run) | already_sent | already_failed | already_unverified | in_progress | failed
    # | unverified (an earlier attempt may have posted; the channel could not be checked: not posted again)
    price: float
    threshold: float
    detail: str | None = None
    message_ts: str | None = None


@dataclass(slots=True)
class AlertReport:
    results: list[AlertResult] = field(default_factory=list)

    def of(self, status: str) -> list[AlertResult]:
        return [r for r in self.results if r.status == status]

    def as_json(self) -> dict:
        return {
            "results": [asdict(r) for r in self.results],
            "posted": len(self.of("posted")),
            "due": len(self.of("due")),
            "failed": len(self.of("failed")),
            "unverified": len(self.of("unverified")),
        }

    def lines(self) -> list[str]:
        return [
            f"#{r.alert_id} {r.team}/{r.channel} {r.status} at ${r.price:.4f} (threshold ${r.threshold:.4f})"
            + (f": {r.detail}" if r.detail else "")
            for r in self.results
        ]


def _usd_per_cny(kb) -> float:
    """The exchange rate of providers.yaml, as built into the knowledge base (every build has its `fx` table)."""
    return float(kb.fx()["usd_per_cny"])


def add_alert(
    text: str,
    team: str | None,
    channel: str,
    kb,
    *,
    created_by: str | None = None,
    now: dt.datetime | None = None,
    currency: str | None = None,
):
    """Parse and store an alert: (alert, cheapest offer now). Raises AlertParseError or AlertError. `currency`: the
    channel's or CLI's currency preference, the alert's currency when the text names none ("below 10" in a CNY
    channel is ¥10; every figure of the alert is then shown in it with its USD twin)."""
    from handlers.parse import Vocabulary
    from handlers.parse.alert import parse_alert
    from knowledge.state import alerts

    parsed = parse_alert(text, Vocabulary.from_kb(kb))
    if not parsed.named_currency and currency in ("USD", "CNY"):
        parsed = replace(parsed, currency=currency)
    query = parsed.query
    usd = parsed.amount if parsed.currency == "USD" else parsed.amount * _usd_per_cny(kb)
    spec = alerts.AlertSpec(
        tuple(query.gpus),
        query.pricing or "on_demand",
        query.gpu_count,
        tuple(query.providers),
        tuple(query.regions),
        parsed.allow_vgpu,
        parsed.stock,
    )
    return alerts.create_alert(
        team or "default",
        channel,
        text,
        spec,
        threshold_usd=usd,
        amount=parsed.amount,
        currency=parsed.currency,
        language=query.language,
        kb=kb,
        created_by=created_by,
        now=now,
    )


def _message(due) -> dict:
    from bot.citations import public_source
    from bot.slack import blocks
    from handlers.alerts import fired_message, ranking_query

    value = blocks.encode_value(ranking_query(due.alert), shown=0)  # "More results": the top 10, privately
    offer = {**due.offer, "source": public_source(due.offer.get("source") or "", due.alert.language, limit=1)}
    return fired_message(
        due.alert, offer, due.price, due.previous_price, due.previous_at, value, blocks.ACTION_IDS["more"]
    )


def check_and_post(
    client_for_team: Callable[[str], Any] | None = None,  # team -> its slack_sdk WebClient
    *,
    kb=None,
    now: dt.datetime | None = None,
    post: bool = True,
    stale_after: dt.timedelta = STALE_CLAIM,
    on_posted: Callable[[AlertResult], None] | None = None,
) -> AlertReport:
    """Check every alert against the knowledge base and post each one that fired (once, across processes).

    `post=False` is a dry run: it reports what is due and writes nothing. `on_posted` is called after a post,
    before it is recorded (the tests raise there to simulate a crash between post and record).
    """
    from knowledge.state import alerts

    report = AlertReport()
    if not alerts.list_alerts():
        return report
    due_list = _due(kb, now, record=post)
    if due_list and post and client_for_team is None:
        from bot.slack.digest import clients_by_team

        client_for_team = clients_by_team()
    for due in due_list:
        alert = due.alert
        result = AlertResult(alert.id, alert.team, alert.channel, "due", due.price, alert.threshold_usd)
        report.results.append(result)
        if not post:
            continue
        claim = alerts.claim_firing(due, now=now, stale_after=stale_after)
        if isinstance(claim, str):
            result.status = claim if claim == "in_progress" else f"already_{claim}"
            continue
        result.status = "failed"
        _fire(client_for_team, _Firing(due, claim, now), result, on_posted)  # type: ignore[arg-type]
    return report


def _due(kb, now: dt.datetime | None, *, record: bool) -> list[Due]:
    """The alerts due now (`knowledge.state.alerts.evaluate`), over `kb` or the knowledge base opened for this."""
    from knowledge.kb.opener import open_kb
    from knowledge.state import alerts

    own = kb is None
    kb = kb or open_kb()
    try:
        return alerts.evaluate(kb.current(), now, record=record)
    finally:
        if own:
            kb.close()


@dataclass(frozen=True, slots=True)
class _Firing:
    """One due alert whose post this run has claimed (`claim_firing`) at `now`."""

    due: Due
    claim: Claim
    now: dt.datetime | None


def _fire(
    client_for_team: Callable[[str], Any],
    firing: _Firing,
    result: AlertResult,
    on_posted: Callable[[AlertResult], None] | None,
) -> None:
    """Post a claimed alert and record the outcome in `result`; a failure is this alert's only."""
    from slack_sdk.errors import SlackApiError

    from bot.slack.digest import CHANNEL_ERRORS, PERMANENT_ERRORS
    from knowledge.state import alerts

    alert, claim, now = firing.due.alert, firing.claim, firing.now
    try:
        _deliver(client_for_team(alert.team), firing, result, on_posted)
    except SlackApiError as exc:
        error = (exc.response.get("error") if exc.response is not None else None) or "HTTP error"
        retryable = error not in PERMANENT_ERRORS and claim.attempts < alerts.MAX_ATTEMPTS
        alerts.finish_firing(claim, "failed", error=error, retryable=retryable, now=now)
        if not retryable:
            alerts.disarm(alert.id, alert.generation)  # wait for the next crossing instead of retrying
        result.detail = error + ("" if retryable else " (not retried)")
        if error in CHANNEL_ERRORS:
            result.detail += "; invite the bot to the channel"
        log.warning("alert #%s to %s/%s failed: %s", alert.id, alert.team, alert.channel, error)
    except Exception as exc:  # one alert's surprise must not block the others
        log.exception("alert #%s to %s/%s failed", alert.id, alert.team, alert.channel)
        alerts.finish_firing(
            claim,
            "failed",
            error=f"{type(exc).__name__}: {exc}"[:500],
            retryable=claim.attempts < alerts.MAX_ATTEMPTS,
            now=now,
        )
        result.detail = f"{type(exc).__name__}: {exc}"


def _deliver(client, firing: _Firing, result: AlertResult, on_posted: Callable[[AlertResult], None] | None) -> None:
    """Post the alert, unless an earlier attempt's post is found (or cannot be ruled out); then disarm it."""
    from bot.earlier_post import find_earlier_post
    from bot.slack.digest import _ensure_rate_limit_retries
    from knowledge.state import alerts

    due, claim, now = firing.due, firing.claim, firing.now
    alert = due.alert
    _ensure_rate_limit_retries(client)
    payload = {"team": alert.team, "alert_id": alert.id, "generation": alert.generation}
    earlier, unknown = (
        find_earlier_post(client, alert.channel, EVENT_TYPE, payload) if claim.attempts > 1 else (None, None)
    )
    if unknown:  # an earlier attempt may have posted: never post blindly again; say so
        result.status, result.detail = "unverified", f"{unknown}; not posted again (check the channel)"
        alerts.finish_firing(claim, "unverified", error=unknown[:500], now=now)
        alerts.disarm(alert.id, alert.generation)
        log.warning(
            "alert #%s to %s/%s not verified, not posted again: %s", alert.id, alert.team, alert.channel, unknown
        )
        return
    if earlier:
        result.status, result.message_ts = "already_sent", earlier
        result.detail = "found in the channel (posted by an earlier attempt)"
    else:
        response = client.chat_postMessage(
            channel=alert.channel,
            unfurl_links=False,
            unfurl_media=False,
            **_message(due),
            metadata={"event_type": EVENT_TYPE, "event_payload": payload},
        )
        result.status, result.message_ts = "posted", response.get("ts")
        if on_posted is not None:
            on_posted(result)
    alerts.finish_firing(claim, "sent", message_ts=result.message_ts, now=now)
    alerts.disarm(alert.id, alert.generation)


# --- Slack -------------------------------------------------------------------------------------------------------


def alert_reply(cmd, team: str, channel: str, user: str | None, lang: str, kb) -> dict:
    """The private reply to `/gpu alert ...`, `/gpu alerts`, `/gpu alert remove N` and "…时提醒我"."""
    from bot.slack import blocks
    from handlers.alerts import created_text, list_text, phrase
    from handlers.parse.alert import AlertParseError
    from knowledge.state import alerts
    from knowledge.state import settings_store as store

    if cmd.action == "list":
        return blocks.text_message(list_text(alerts.list_alerts(team, channel), lang))
    if cmd.action == "remove":
        number = cmd.value.strip().lstrip("#")
        if not number.isdigit():
            return blocks.text_message(phrase("remove_usage", lang))
        done = alerts.remove_alert(team, int(number), channel)
        return blocks.text_message(phrase("removed" if done else "not_found", lang, id=int(number)))
    if not cmd.value.strip():
        return blocks.text_message(phrase("usage", lang))
    try:
        currency = store.get_settings(team, channel).get("currency")  # `/gpu set currency CNY`
        alert, offer = add_alert(cmd.value, team, channel, kb, created_by=user, currency=currency)
    except (AlertParseError, alerts.AlertError) as exc:
        return blocks.text_message(f"{exc}" if isinstance(exc, AlertParseError) else f"{exc}.\n{phrase('usage', lang)}")
    return blocks.text_message(created_text(alert, offer) + "\n" + phrase("invite", alert.language))


# --- command line ------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="alert_command", required=True)
    add = sub.add_parser("add", help="watch a price: post to a channel when it drops to a threshold")
    add.add_argument("text", help='e.g. "H100 spot on aws below 2.50" (USD per GPU-hour unless a currency is given)')
    add.add_argument("--channel", required=True, help="Slack channel id to post to")
    add.add_argument("--team", default="default", help="Slack workspace (team) id")
    add.add_argument("--currency", choices=("USD", "CNY"), help="the threshold's currency when the text names none")
    add.add_argument("--json", action="store_true")
    show = sub.add_parser("list", help="list alerts")
    show.add_argument("--team")
    show.add_argument("--channel")
    show.add_argument("--json", action="store_true")
    remove = sub.add_parser("remove", help="remove an alert")
    remove.add_argument("id", type=int)
    remove.add_argument("--team", help="only if it belongs to this workspace")
    check = sub.add_parser("check", help="check every alert now; --post posts the ones that fired")
    check.add_argument("--post", action="store_true", help="post to Slack (needs SLACK_BOT_TOKEN or OAuth)")
    check.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from handlers.alerts import created_text, list_text
    from handlers.parse.alert import AlertParseError
    from knowledge.state import alerts

    if args.alert_command == "list":
        found = alerts.list_alerts(args.team, args.channel)
        if args.json:
            sys.stdout.write(json.dumps({"alerts": [a.as_json() for a in found]}, ensure_ascii=False, indent=2) + "\n")
        else:
            print(list_text(found, "en", every_channel=not args.channel))
        return 0
    if args.alert_command == "remove":
        done = _remove(args.id, args.team)
        print(f"removed alert #{args.id}" if done else f"no alert #{args.id}", file=sys.stdout if done else sys.stderr)
        return 0 if done else 1
    if args.alert_command == "check":
        try:
            report = check_and_post(post=args.post)
        except RuntimeError as exc:  # no Slack token
            print(f"gpubot: {exc}", file=sys.stderr)
            return 2
        if args.json:
            sys.stdout.write(json.dumps(report.as_json(), ensure_ascii=False, indent=2) + "\n")
        else:
            print("\n".join(report.lines()) or "no alert fired")
        return 1 if report.of("failed") or report.of("unverified") else 0  # unverified: someone should look
    from knowledge.kb.opener import open_kb

    kb = open_kb()
    try:
        alert, offer = add_alert(args.text, args.team, args.channel, kb, currency=args.currency)
    except (AlertParseError, alerts.AlertError) as exc:
        print(f"gpubot: {exc}", file=sys.stderr)
        return 2
    finally:
        kb.close()
    if args.json:
        sys.stdout.write(
            json.dumps(
                {"alert": alert.as_json(), "offer": offer, "below_now": not alert.armed}, ensure_ascii=False, indent=2
            )
            + "\n"
        )
    else:
        print(created_text(alert, offer))
    return 0


def _remove(alert_id: int, team: str | None) -> bool:
    from knowledge.state import alerts

    found = alerts.get_alert(alert_id)
    if found is None or (team is not None and found.team != team):
        return False
    return alerts.remove_alert(found.team, alert_id)
