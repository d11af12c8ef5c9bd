"""price-change digest: show it, post it to subscribed channels, manage subscriptions

    gpubot digest [--since DATE] [--json] [--threshold PCT] [--gpus H100,A100] [--provider P] [--lang zh]
    gpubot digest --post [--due-only]        post to every subscribed channel, once per channel and local day
    gpubot digest subscribe --channel C123 [--team T1] [--hour 9] [--tz Asia/Shanghai] [--gpus H100,A100]
                            [--threshold 1] [--quiet] [--no-charts] [--lang zh]
    gpubot digest unsubscribe --channel C123 [--team T1]
    gpubot digest list [--team T1] [--json]

The digest itself and its posting are Slack's (`bot.slack.digest`: `digest_answer`, `post_digests`); this module
is the command line and the subscription functions it shares with the Slack app (`subscribe`, `unsubscribe`,
`list_subscriptions`, from `knowledge.state.subscriptions`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from bot.slack.digest import clients_by_team, post_digests

__all__ = ["add_arguments", "list_subscriptions", "run", "subscribe", "unsubscribe"]


def subscribe(team: str | None, channel: str, **options):
    """Subscribe a channel (see `knowledge.state.subscriptions.subscribe` for the options); returns the subscription."""
    from knowledge.state import subscriptions

    return subscriptions.subscribe(team or subscriptions.DEFAULT_TEAM, channel, **options)


def unsubscribe(team: str | None, channel: str) -> bool:
    """Remove a channel's subscription; False when it had none."""
    from knowledge.state import subscriptions

    return subscriptions.unsubscribe(team or subscriptions.DEFAULT_TEAM, channel)


def list_subscriptions(team: str | None = None, *, active_only: bool = False):
    """Subscriptions of one team (or all)."""
    from knowledge.state import subscriptions

    return subscriptions.list_subscriptions(team, active_only=active_only)


# --- command line ----------------------------------------------------------------------------------------------


def _date(text: str) -> dt.date | dt.datetime:
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _csv_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", type=_date, help="changes since this date (default: the previous snapshot)")
    parser.add_argument("--json", action="store_true", help="list every change as JSON")
    parser.add_argument("--post", action="store_true", help="post to every subscribed channel (once per day)")
    parser.add_argument("--due-only", action="store_true", help="with --post: only channels whose hour has come")
    parser.add_argument("--threshold", type=float, default=None, help="smallest price move to list, in %% (1)")
    parser.add_argument("--gpus", type=_csv_list, default=[], help="only these GPU families, e.g. H100,A100")
    parser.add_argument("--provider", action="append", default=[], help="only this provider (repeatable)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the text output")
    parser.add_argument("--currency", choices=("USD", "CNY"), help="also show prices in this currency (CNY)")
    sub = parser.add_subparsers(dest="digest_command", metavar="{subscribe,unsubscribe,list}")

    add = sub.add_parser("subscribe", help="subscribe a channel to the daily digest")
    add.add_argument("--channel", required=True, help="Slack channel id, e.g. C0123456789")
    add.add_argument("--team", default=None, help="Slack team id (default: 'default', the single workspace)")
    add.add_argument("--hour", type=int, default=None, help="local hour of the daily post, 0-23 (9)")
    add.add_argument("--tz", default=None, help="IANA timezone of that hour, e.g. Asia/Shanghai (UTC)")
    add.add_argument("--gpus", type=_csv_list, default=None, help="GPU families of interest (default: all)")
    add.add_argument("--threshold", type=float, default=None, help="smallest price move to report, in %% (1)")
    add.add_argument(
        "--quiet",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="post nothing on days without changes (default: a one-line 'no changes')",
    )
    add.add_argument(
        "--charts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="attach a chart of the biggest movers (default: on)",
    )
    add.add_argument("--lang", dest="sub_lang", choices=("en", "zh"), default=None, help="language of the post")

    remove = sub.add_parser("unsubscribe", help="stop a channel's digest")
    remove.add_argument("--channel", required=True)
    remove.add_argument("--team", default=None)

    show = sub.add_parser("list", help="list subscriptions")
    show.add_argument("--team", default=None)
    show.add_argument("--json", dest="list_json", action="store_true", help="as JSON")


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def run(args: argparse.Namespace) -> int:
    from knowledge.history.snapshots import HistoryError

    try:
        if args.digest_command == "subscribe":
            found = subscribe(
                args.team,
                args.channel,
                hour=args.hour,
                timezone=args.tz,
                gpus=args.gpus,
                threshold_pct=args.threshold,
                charts=args.charts,
                quiet=args.quiet,
                language=args.sub_lang,
            )
            print(
                f"subscribed {found.team}/{found.channel}: daily at {found.hour:02d}:00 {found.timezone}, "
                f"GPUs {', '.join(found.gpus) or 'all'}, threshold {found.threshold_pct:g}%, "
                f"{'quiet' if found.quiet else 'one line when nothing changed'}"
            )
            return 0
        if args.digest_command == "unsubscribe":
            done = unsubscribe(args.team or "default", args.channel)
            print(f"unsubscribed {args.channel}" if done else f"{args.channel} was not subscribed")
            return 0 if done else 1
        if args.digest_command == "list":
            subs = list_subscriptions(args.team)
            if args.list_json:
                _print_json({"subscriptions": [s.as_json() for s in subs]})
            else:
                for s in subs:
                    state = "active" if s.active else f"off ({s.disabled_reason})"
                    print(
                        f"{s.team}/{s.channel}: {s.hour:02d}:00 {s.timezone}, GPUs {', '.join(s.gpus) or 'all'}, "
                        f"threshold {s.threshold_pct:g}%, quiet={s.quiet}, charts={s.charts}, "
                        f"lang={s.language}, {state}"
                    )
                if not subs:
                    print("no subscriptions")
            return 0
        if args.post:
            report = post_digests(clients_by_team(), due_only=args.due_only)  # fails before claiming a channel
            if args.json:
                _print_json(report.as_json())
            else:
                print("\n".join(report.lines()) or "no subscriptions")
            return 1 if report.failed or report.of("unverified") else 0  # unverified: someone should look
        return _show(args)
    except (ValueError, HistoryError, RuntimeError) as exc:
        print(f"gpubot: {exc}", file=sys.stderr)
        return 2


def _show(args: argparse.Namespace) -> int:
    from bot.render import render_text
    from handlers.digest import matches_gpus, summarize
    from handlers.models import Query
    from knowledge.history import snapshots as history
    from knowledge.history.snapshots import Digest
    from knowledge.state.subscriptions import resolve_gpus

    history.ensure_baselines()
    threshold = 1.0 if args.threshold is None else args.threshold
    if threshold < 0:
        raise ValueError("--threshold must not be negative")
    digest = history.diff_since(since=args.since, threshold_pct=threshold, provider_names=args.provider or None)
    if args.gpus:
        gpus = resolve_gpus(args.gpus)
        digest = digest.filtered(matches_gpus(gpus))
        digest = Digest(digest.providers, digest.threshold_pct, digest.since, gpus)
    if args.json:
        _print_json(digest.to_json())
    else:
        display = None
        if args.currency and args.currency != "USD":  # the knowledge base's one rate (providers.yaml)
            from handlers.display import in_currency
            from knowledge.kb.opener import open_kb

            display = in_currency(args.currency, open_kb().fx())
        query = Query(intent="digest", language=args.lang, currency=args.currency)
        sys.stdout.write(render_text(summarize(digest, query, display=display)))
    return 0
