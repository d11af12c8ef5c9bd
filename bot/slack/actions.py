"""Buttons: share / spot <-> on-demand / more results / show pitfalls / did-you-mean / switch workload / why /
post a history chart.

The query travels in the button value (`bot.slack.blocks.encode_value`); a button changes one field (`refine`) and
answers again with the channel's *current* settings (what they filled in is reset first: `asked`). On a threaded
reply the answer goes in that thread; a private answer is replaced; share posts publicly first and deletes the
private answer only when that worked (`bot.slack.delivery.share`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.slack import blocks
from bot.slack.answering import Answerer
from bot.slack.delivery import share
from bot.slack.payloads import Click
from handlers import defaults, ranking
from handlers.models import Query
from knowledge.state.db import claim_event, release_event

__all__ = ["MAX_TOP", "asked", "refine", "register"]

log = logging.getLogger("gpubot.slack")

MAX_TOP = ranking.MAX_TOP  # "more results" never asks for more rows than one answer lists
REFINE_ACTIONS = re.compile(r"^gpu_(toggle_pricing|more_results|show_pitfalls|suggest_\d+|work_\d+)$")
_NAME_FIELDS = {"gpu": "gpus", "provider": "providers", "region": "regions", "instance_type": "instance_types"}


def refine(action_id: str, query: Query, extra: dict[str, Any]) -> Query:
    """The query a button asks for: one field changed."""
    if action_id == blocks.ACTION_IDS["toggle"]:
        return query.model_copy(update={"pricing": "on_demand" if query.pricing == "spot" else "spot"})
    if action_id == blocks.ACTION_IDS["more"]:
        shown = int(extra.get("shown") or query.top_n or 5)
        return query.model_copy(update={"top_n": min(shown + 10, MAX_TOP)})
    if action_id == blocks.ACTION_IDS["pitfalls"]:
        return query.model_copy(update={"intent": "pitfalls"})
    if action_id.startswith("gpu_work_"):  # switch the benchmark workload of a "work" answer (bot/render_work.py)
        return query.model_copy(update={k: extra[k] for k in ("bench_workload", "bench_step") if extra.get(k)})
    if action_id.startswith("gpu_suggest_") and query.intent in ("train_cost", "rent_or_api"):  # issue 27
        field = "train_benchmark" if query.intent == "train_cost" else "model"
        return query.model_copy(
            update={field: str(extra["pick"]), "issues": [i for i in query.issues if i.kind != "model"]}
        )
    if action_id.startswith("gpu_suggest_") and extra.get("kind") == "model":  # a benchmarked model picked
        issues = [i for i in query.issues if i.kind != "model"]
        return query.model_copy(update={"model": str(extra["pick"]), "issues": issues, "intent": "work"})
    if action_id.startswith("gpu_suggest_"):
        kind, pick, replaces = extra.get("kind", "gpu"), str(extra["pick"]), extra.get("replaces", "")
        field = _NAME_FIELDS.get(kind, "gpus")
        names = [n for n in getattr(query, field) if n != replaces and n != pick]
        issues = [i for i in query.issues if not (i.kind == kind and (i.text == replaces or pick in i.candidates))]
        return query.model_copy(update={field: [*names, pick], "issues": issues})
    return query


def asked(query: Query, extra: dict, changed: Query | None = None) -> Query:
    """The question as asked: what the channel's settings filled in is reset, so that they apply afresh."""
    return defaults.undo_defaults(changed or query, extra.get("d") or (), unless_changed_from=query)


def answered_again(answerer: Answerer, click: Click, respond: Any, **options: Any) -> tuple[Query, dict] | None:
    """(query, message): the clicked answer's question asked again, as a message only the clicker sees (Share and
    Why build on it); None when the button's query could not be read (the clicker was told)."""
    parsed = button_query(answerer, click, respond)
    if parsed is None:
        return None
    query, extra = parsed
    message = answerer.message_for_query(
        asked(query, extra), shareable=False, where=click.where, team=click.team, channel=click.channel, **options
    )
    return query, message


def button_query(answerer: Answerer, click: Click, respond: Any) -> tuple[Query, dict] | None:
    """The question a button carries; an unreadable one gets the apology (privately) and None."""
    try:
        return blocks.decode_value(click.value)
    except ValueError:
        log.warning("button with an unreadable value (%s)", click.where)
    answerer.respond(respond, click.where, response_type="ephemeral", replace_original=False, **blocks.error_message())
    return None


def register(app: App, answerer: Answerer) -> None:
    """One listener per kind of button."""

    @app.action("history_post_chart")
    def on_history_chart(ack, body: dict, action: dict, client: WebClient, respond) -> None:
        ack()
        post_chart(answerer, Click.of(body, action), client, respond)

    @app.action(blocks.ACTION_IDS["share"])
    def on_share(ack, body: dict, action: dict, respond, client: WebClient) -> None:
        ack()
        click = Click.of(body, action)
        if (answered := answered_again(answerer, click, respond, shared_by=click.user)) is not None:
            query, message = answered
            share(client, respond, click, message, query.language)  # public first, then delete

    @app.action(REFINE_ACTIONS)
    def on_refine(ack, body: dict, action: dict, respond, client: WebClient) -> None:
        ack()
        refined(answerer, Click.of(body, action), respond, client)

    @app.action(blocks.ACTION_IDS["why"])
    def on_why(ack, body: dict, action: dict, respond, client: WebClient) -> None:
        """ "Why": the same answer with every pitfall, rule and detail the short one left out, to whoever clicked
        (in the thread of a threaded answer)."""
        ack()
        click = Click.of(body, action)
        if (answered := answered_again(answerer, click, respond, verbose=True)) is None:
            return
        in_thread = click.thread() and not click.channel.startswith("D") and not click.is_ephemeral
        if not (in_thread and ephemeral_in_thread(client, click, answered[1])):
            answerer.respond(respond, click.where, response_type="ephemeral", replace_original=False, **answered[1])


def refined(answerer: Answerer, click: Click, respond: Any, client: WebClient | None = None) -> None:
    """The answer with one field changed: replacing a private answer, in the DM, or privately in its thread."""
    parsed = button_query(answerer, click, respond)
    if parsed is None:
        return
    query, extra = parsed
    query = asked(query, extra, refine(click.action_id, query, extra))

    def message(shareable: bool) -> dict[str, Any]:
        return answerer.message_for_query(
            query, shareable=shareable, where=click.where, team=click.team, channel=click.channel
        )

    if click.is_ephemeral:  # a private answer: replace it
        answerer.respond(respond, click.where, response_type="ephemeral", replace_original=True, **message(True))
    elif click.channel.startswith("D"):  # a DM: answer in the conversation (in the thread of a threaded reply)
        answerer.respond(
            respond, click.where, response_type="in_channel", replace_original=False, **click.thread(), **message(False)
        )
    elif click.thread() and client is not None and ephemeral_in_thread(client, click, message(True)):
        pass  # someone else's answer in a thread: privately, in that thread (response_url ignores thread_ts)
    else:  # someone else's answer in a channel: a private answer for whoever clicked
        answerer.respond(
            respond, click.where, response_type="ephemeral", replace_original=False, **click.thread(), **message(True)
        )


def ephemeral_in_thread(client: WebClient, click: Click, message: dict[str, Any]) -> bool:
    """chat.postEphemeral with the thread's ts (Slack honours thread_ts there, not on a response_url); False when
    Slack refused it (the caller answers through the response_url instead)."""
    from slack_sdk.errors import SlackApiError

    try:
        client.chat_postEphemeral(
            channel=click.channel, user=click.user or "", thread_ts=click.thread().get("thread_ts"), **message
        )
        return True
    except SlackApiError as exc:
        log.info("private answer in the thread refused (%s): %s", exc.response.get("error"), click.where)
        return False


def post_chart(answerer: Answerer, click: Click, client: WebClient, respond: Any) -> None:
    """ "Post chart": the history chart uploaded in the channel (once per message, on the chart worker); the
    private summary is deleted when it worked, else the failure is said privately."""
    parsed = button_query(answerer, click, respond)
    if parsed is None:
        return
    query, extra = parsed
    key = f"history-chart:{click.team}:{click.channel}:{click.message_ts}"
    if not claim_event(key):  # a double click: one chart
        return

    def work() -> None:
        from bot.slack.delivery import plain_error

        result = answerer.post_chart(
            client, click.channel, click.container_thread_ts, asked(query, extra), notify_failure=False
        )
        if result["ok"]:
            answerer.respond(respond, click.where, delete_original=True)
            return
        release_event(key)  # not posted: the button works again (e.g. after `/invite @gpubot`)
        text = plain_error(result["error"], f"<#{click.channel}>", query.language)
        answerer.respond(
            respond,
            click.where,
            response_type="ephemeral",
            replace_original=False,
            text=text,
            blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
        )

    answerer.in_background(click.where, work)
