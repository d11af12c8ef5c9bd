"""The App Home tab: what gpubot answers, how fresh its data is, the sections other features add (this workspace's
digest subscriptions: `digest_home_section`) and the workspace defaults."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from bot.slack.blocks.base import render, section, sections
from bot.slack.escape import slack_escape
from bot.slack.limits import fit_blocks
from bot.slack.phrases import phrase

__all__ = ["digest_home_section", "home_view"]


def home_view(
    lang: str,
    help_lines: list[str],
    built_at: str | None,
    freshness: list[dict],
    extra_sections: Iterable[dict] = (),
    settings_sections: Iterable[dict] = (),
) -> dict[str, Any]:
    """The App Home tab: what gpubot answers, how fresh its data is, sections other features add (digest
    subscriptions) and the workspace defaults (`freshness` rows: `{"provider", "sources": [{"source", "as_of",
    "n"}]}`)."""
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": phrase("home.title", lang)}}]
    blocks.append(section(f"*{phrase('home.can_do', lang)}*"))
    blocks += sections(render("slack_home.md.j2", lang, lines=help_lines))
    blocks.append({"type": "divider"})
    blocks.append(section(f"*{phrase('home.freshness', lang)}*"))
    blocks += sections(render("slack_freshness.md.j2", lang, built_at=built_at or "?", providers=freshness))
    blocks.append({"type": "divider"})
    blocks.append(section(f"*{phrase('home.digests', lang)}*"))
    extra = list(extra_sections)
    blocks += extra or [section(phrase("home.no_digests", lang))]
    settings = list(settings_sections)
    if settings:
        blocks.append({"type": "divider"})
        blocks += settings
    return {"type": "home", "blocks": fit_blocks(blocks, surface="view", lang=lang)}


def digest_home_section(lang: str, subscriptions: Iterable[Any]) -> list[dict]:
    """App Home: this workspace's digest subscriptions, one line per channel."""
    lines = []
    for sub in subscriptions:
        parts = [
            phrase("digest.line", lang, hour=sub.hour, tz=sub.timezone),
            phrase("digest.gpus", lang, gpus=", ".join(sub.gpus)) if sub.gpus else phrase("digest.all_gpus", lang),
            phrase("digest.threshold", lang, pct=f"{sub.threshold_pct:g}"),
        ]
        if sub.quiet:
            parts.append(phrase("digest.quiet", lang))
        if not sub.active:
            parts.append(phrase("digest.off", lang, reason=sub.disabled_reason or "?"))
        channel = f"<#{sub.channel}>" if re.fullmatch(r"[CGD][A-Z0-9]+", sub.channel) else slack_escape(sub.channel)
        lines.append(f"• {channel}: " + slack_escape(" · ".join(parts)))
    if not lines:
        return []
    return [
        *sections("\n".join(lines)),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": phrase("home.digest_hint", lang)}]},
    ]
