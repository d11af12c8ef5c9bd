"""How a cheapest-offers answer orders and groups its lines (issue 26):

- "per hour for the whole instance" (整机): rank by the instance-hour price, not the GPU-hour price;
- sizes of one instance family at one per-GPU price in one place are one option ("n3-H100 x1/x2/x4/x8",
  "tpu-v5litepod x1/x4/x8"), headed by its first ranked size, instead of four lines of the same offer;
- "top N": the N asked for, at most `MAX_TOP` (one Slack table, one screen of text), saying so when the cap cut it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from handlers.models import Offer, Query

MAX_TOP = 50  # the most lines one answer lists, whatever "top N" asked for
_DIGITS = re.compile(r"\d+")
_DIGIT_SPLIT = re.compile(r"(\d+)")
_COUNT_SUFFIX = re.compile(r"(?<=[A-Za-z0-9])x\d+$")


def top(query: Query, default: int) -> int:
    """How many lines to list: the "top N" asked for (else `default`), at most `MAX_TOP`."""
    return min(query.top_n or default, MAX_TOP)


def top_facts(query: Query, shown: int, available: int) -> dict[str, int] | None:
    """`{"asked", "shown", "available", "cap"}` for a "top N" above the cap (the cap, or the options that exist, cut
    the list), else None."""
    if not query.top_n or query.top_n <= MAX_TOP:
        return None
    return {"asked": query.top_n, "shown": shown, "available": available, "cap": MAX_TOP}


def per_instance(query: Query) -> bool:
    """True when the question asks for the price of the whole instance per hour."""
    return "whole_instance" in query.flags  # read by handlers/parse/flags.py


def by_instance_hour(rows: Sequence[dict | Offer]) -> list[dict | Offer]:
    """Rows cheapest per instance-hour (USD) first, ties in their own order."""
    return sorted(rows, key=lambda r: r["price_per_hour_usd"] if isinstance(r, dict) else r.price_per_hour_usd)


def _group_key(item: Offer) -> tuple:
    return (
        item.provider,
        item.region,
        item.zone_label,
        item.pricing,
        item.term,
        item.gpu_variant or item.gpu,
        round(item.price_per_gpu_hour_usd, 4),
        _DIGITS.sub("#", _COUNT_SUFFIX.sub("", item.instance_type)),  # "scaleway_L4" is the x1 of "scaleway_L4x2"
        item.kind,
    )


def collapse(offers: Sequence[Offer]) -> list[Offer]:
    """One line per (provider, place, pricing, GPU, per-GPU price, instance naming pattern): the first ranked size,
    with every size of the group in `sizes` and a label in `size_label`. Order: the first member's position."""
    groups: dict[tuple, list[Offer]] = {}
    order: list[tuple] = []
    for item in offers:
        key = _group_key(item) if item.kind != "article" else (id(item),)
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(item)
    out = []
    for key in order:
        members = groups[key]  # in rank order: the first ranked size heads the line
        if len(members) == 1:
            out.append(members[0])
            continue
        head = members[0]
        out.append(
            head.model_copy(
                update={
                    "sizes": [m.instance_type for m in sorted(members, key=lambda o: (o.gpu_count, o.instance_type))],
                    "size_label": size_label(members),
                    "other_regions": max(m.other_regions for m in members),
                }
            )
        )
    return out


def size_label(members: Sequence[Offer]) -> str:
    """ "n3-H100 x1/x2/x4/x8" when the names differ only by a trailing GPU count, "Standard_NC24/48/96ads_A100_v4"
    or "1/2/4/8x_L4_SECURE" when by one number, else up to three names or the first and the counts
    ("hyperstack__1xH100_80GB__28__180 (x1/x2/x4/x8)")."""
    ordered = sorted(members, key=lambda m: (m.gpu_count, m.instance_type))
    counts = "/".join(f"x{m.gpu_count:g}" for m in ordered)
    bases = {_COUNT_SUFFIX.sub("", m.instance_type) for m in ordered}
    if len(bases) == 1:  # "scaleway_L4" and "scaleway_L4x2": one name with its counts
        return f"{bases.pop()} {counts}"
    parts = [_DIGIT_SPLIT.split(m.instance_type) for m in ordered]
    differ = {
        i
        for p in parts[1:]
        if len(p) == len(parts[0])
        for i, (a, b) in enumerate(zip(p, parts[0], strict=True))
        if a != b
    }
    at = next(iter(differ)) if len(differ) == 1 and all(len(p) == len(parts[0]) for p in parts) else None
    if at is not None:
        head, tail = "".join(parts[0][:at]), "".join(parts[0][at + 1 :])
        if not tail and all(float(p[at]) == m.gpu_count for p, m in zip(parts, ordered, strict=True)):
            return f"{head.rstrip('x-_ ') or head} {counts}"
        return head + "/".join(p[at] for p in parts) + tail  # "Standard_NC24/48/96ads_A100_v4"
    if len(ordered) <= 3:
        return "/".join(m.instance_type for m in ordered)  # "p5.4xlarge/p5.48xlarge"
    return f"{members[0].instance_type} ({counts})"
