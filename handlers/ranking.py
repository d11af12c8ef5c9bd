"""How a cheapest-offers answer orders and groups its lines (issue 26):

- "per hour for the whole instance" (整机): rank by the instance-hour price, not the GPU-hour price;
- sizes of one instance family at one per-GPU price in one place are one option ("n3-H100 x1/x2/x4/x8",
  "tpu-v5litepod x1/x4/x8"), headed by its first ranked size, instead of four lines of the same offer;
- "top N": the N asked for, at most `MAX_TOP` (one Slack table, one screen of text), saying so when the cap cut it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from handlers.models import Offer, Query
from knowledge.kb.groups import COUNT_SUFFIX as _COUNT_SUFFIX
from knowledge.kb.groups import line_key

MAX_TOP = 50  # the most lines one answer lists, whatever "top N" asked for
_DIGIT_SPLIT = re.compile(r"(\d+)")
T = TypeVar("T", bound=dict | Offer)


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


def _get(item: dict | Offer, key: str) -> Any:
    return item[key] if isinstance(item, dict) else getattr(item, key)


_KEY_FIELDS = ("provider", "region", "zone_label", "pricing", "term", "gpu_variant", "gpu", "price_per_gpu_hour_usd",
               "instance_type", "kind")  # fmt: skip  # `knowledge.kb.groups.line_key`'s arguments
_ROW_KEY, _OFFER_KEY = operator.itemgetter(*_KEY_FIELDS), operator.attrgetter(*_KEY_FIELDS)


def _group_key(item: dict | Offer) -> tuple:
    return line_key(*(_ROW_KEY(item) if isinstance(item, dict) else _OFFER_KEY(item)))  # also stored at build


def groups(items: Sequence[T]) -> list[list[T]]:
    """The lines of a ranking: items (offers, or offer rows) of one provider, place, pricing, GPU, per-GPU price
    and instance naming pattern together, in rank order, each group at its first member's position."""
    found: dict[tuple, list[T]] = {}
    for item in items:
        key = _group_key(item) if _get(item, "kind") != "article" else (id(item),)
        found.setdefault(key, []).append(item)
    return list(found.values())


def line(head: Offer, members: Sequence[dict | Offer]) -> Offer:
    """The one line of a group (`groups`): its first ranked size, with every size in `sizes`, a label in
    `size_label` and the most other regions of any member."""
    if len(members) == 1:
        return head
    return head.model_copy(
        update={
            "sizes": [_get(m, "instance_type") for m in sorted(members, key=_size_order)],
            "size_label": size_label(members),
            "other_regions": max(_get(m, "other_regions") for m in members),
        }
    )


def collapse(offers: Sequence[Offer]) -> list[Offer]:
    """One line per (provider, place, pricing, GPU, per-GPU price, instance naming pattern) (`groups`, `line`).
    Order: the first member's position."""
    return [line(members[0], members) for members in groups(offers)]


def _size_order(item: dict | Offer) -> tuple:
    return _get(item, "gpu_count"), _get(item, "instance_type")


_MOST_PARTS = 8  # values of a name's differing part shown in one line (GCP's TPU v5p sizes: 94)


def size_label(members: Sequence[dict | Offer]) -> str:
    """ "n3-H100 x1/x2/x4/x8" when the names differ only by a trailing GPU count, "Standard_NC24/48/96ads_A100_v4"
    or "1/2/4/8x_L4_SECURE" when by one number, else up to three names or the first and the counts
    ("hyperstack__1xH100_80GB__28__180 (x1/x2/x4/x8)")."""
    ordered = sorted(members, key=_size_order)
    names = [_get(m, "instance_type") for m in ordered]
    counts = "/".join(f"x{_get(m, 'gpu_count'):g}" for m in ordered)
    bases = {_COUNT_SUFFIX.sub("", name) for name in names}
    if len(bases) == 1:  # "scaleway_L4" and "scaleway_L4x2": one name with its counts
        return f"{bases.pop()} {counts}"
    parts = [_DIGIT_SPLIT.split(name) for name in names]
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
        if not tail and all(float(p[at]) == _get(m, "gpu_count") for p, m in zip(parts, ordered, strict=True)):
            return f"{head.rstrip('x-_ ') or head} {counts}"
        shown = [p[at] for p in parts]  # "Standard_NC24/48/96ads_A100_v4"
        if len(shown) > _MOST_PARTS:  # "tpu-v5p-8/16/32/64/128/256/…/12288": the first ones and the last
            shown = [*shown[: _MOST_PARTS - 2], "…", shown[-1]]
        return head + "/".join(shown) + tail
    if len(ordered) <= 3:
        return "/".join(names)  # "p5.4xlarge/p5.48xlarge"
    return f"{_get(members[0], 'instance_type')} ({counts})"
