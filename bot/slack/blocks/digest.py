"""The daily digest as a message people read (issue 24): a header with the verdict ("GPU prices since 2026-11-30:
14 cheaper, 3 dearer; biggest: L4 spot on AWS -27.0%"), at most five moves as section fields, the price lists
compared by dataset and date (never a path), and a note that the full list is in the thread; the thread reply
holds every group and move. Everything shown was decided by `handlers.digest.summarize` (`extra["digest"]`).

    digest_message(answer) -> {"text", "blocks"}     the channel post
    digest_thread(answer) -> {"text", "blocks"}|None the rest, posted in the post's thread (None: nothing more)
    digest_notice(answer, next_refresh) -> message   nothing to compare yet: when the next refresh is due
"""

from __future__ import annotations

from typing import Any

from bot.citations import dataset_name
from bot.slack.blocks.base import plain_header, section, sections
from bot.slack.escape import cut, slack_escape, slack_inline
from bot.slack.limits import fit_blocks
from bot.slack.phrases import phrase
from handlers.models import Answer

__all__ = ["MOVES_IN_VIEW", "digest_message", "digest_notice", "digest_thread"]

MOVES_IN_VIEW = 5


def _facts(answer: Answer) -> dict[str, Any]:
    return dict(answer.extra.get("digest") or {})


def _datasets_context(facts: dict, lang: str) -> list[dict]:
    names = [
        f"{slack_escape(dataset_name(d['provider'], d['source'], lang))} ({slack_escape(d['date'])})"
        for d in facts.get("datasets") or []
    ]
    if not names:
        return []
    text = cut(f"*{phrase('digest.compared', lang)}:* " + " · ".join(names), 3000)
    return [{"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}]


def _move_field(move: dict, lang: str) -> dict:
    arrow = ":small_red_triangle_down:" if move["pct"] < 0 else ":small_red_triangle:"
    old, new = move["prices"]
    price = f"{old} → {new}"  # per instance-hour, each with its unit (handlers.digest)
    text = f"{arrow} *{slack_inline(move['what'])}* {move['pct']:+.1f}%\n{slack_escape(move['where'])}: {price}"
    return {"type": "mrkdwn", "text": cut(text, 2000)}


def digest_message(answer: Answer, *, in_thread: bool = True) -> dict[str, Any]:
    """The channel post: verdict, at most five moves, what was counted, the datasets compared (`in_thread`: the
    rest follows in the thread, and the post says so)."""
    lang = answer.query.language
    facts = _facts(answer)
    headline = facts.get("headline") or answer.title
    blocks: list[dict] = [plain_header(headline)]  # the whole verdict (at most 150 characters)
    moves = list(facts.get("moves") or [])[:MOVES_IN_VIEW]
    if moves:
        blocks.append({"type": "section", "fields": [_move_field(m, lang) for m in moves]})
    groups = list(facts.get("group_lines") or [])
    if groups:
        blocks.append(section("\n".join(f"• {slack_escape(line)}" for line in groups[:3])))
    rest = max(0, len(groups) - 3) + max(0, len(facts.get("moves") or []) - MOVES_IN_VIEW)
    notes = [slack_escape(n) for n in answer.notes]
    if in_thread and rest > 0:
        notes.append(phrase("digest.in_thread", lang))
    if notes:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": cut(" ".join(notes), 3000)}]})
    blocks += _datasets_context(facts, lang)
    text = slack_escape(headline)
    if moves:
        text += "\n" + "\n".join(f"• {slack_escape(m['line'])}" for m in moves)
    return {"text": text, "blocks": fit_blocks(blocks, lang=lang)}


def digest_thread(answer: Answer) -> dict[str, Any] | None:
    """The full list for the post's thread: every group, then every one of the biggest moves; None when the post
    already shows everything."""
    lang = answer.query.language
    facts = _facts(answer)
    groups = list(facts.get("group_lines") or [])
    moves = list(facts.get("moves") or [])
    if len(groups) <= 3 and len(moves) <= MOVES_IN_VIEW:
        return None
    body = "\n".join(f"• {slack_escape(line)}" for line in groups)
    if moves:
        body += f"\n\n*{phrase('digest.moves', lang)}*\n" + "\n".join(
            f"{n}. {slack_escape(m['line'])}" for n, m in enumerate(moves, start=1)
        )
    blocks = [section(f"*{slack_escape(phrase('digest.full_list', lang))}*"), *sections(body)]
    return {"text": phrase("digest.full_list", lang), "blocks": fit_blocks(blocks, lang=lang)}


def digest_notice(answer: Answer, next_refresh: str) -> dict[str, Any]:
    """Nothing to compare yet (one snapshot, or none): said privately, with when the next refresh is due."""
    lang = answer.query.language
    facts = _facts(answer)
    key = "digest.none_yet" if facts.get("state") == "no_history" else "digest.one_snapshot"
    text = phrase(key, lang, next=next_refresh)
    blocks = [section(slack_escape(text)), *_datasets_context(facts, lang)]
    return {"text": slack_escape(text), "blocks": fit_blocks(blocks, lang=lang)}
