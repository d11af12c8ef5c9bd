"""PNG charts of price history and of the digest's biggest movers (matplotlib, headless, thread-safe).

    render_history_png(points, "a100.png", title=None, sources=None) -> bytes   one line per provider/pricing
    digest_chart(digest) -> bytes | None                                          the biggest moves as bars

matplotlib is imported on first use only (never on the `gpubot ask` path), and only its object-oriented API is
used: a `Figure` with its own Agg canvas per chart, no pyplot and no global state, so charts can be rendered from
worker threads. One lock serialises the drawing itself (font caches are shared inside matplotlib); a chart takes
a fraction of a second.

Charts are 1000 x 560 px (dpi 100): wider than Slack's preview, with labels sized to stay legible there. Text is
English (the bundled fonts have no CJK glyphs); the Slack message beside a chart carries the summary in the
question's language. A history with a single snapshot per series has no line to draw: the chart shows the current
spread across regions instead and its title says so. No points: `ChartError`, never an empty chart.
"""

from __future__ import annotations

import io
import re
import textwrap
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from knowledge.errors import UserError

__all__ = [
    "ChartError",
    "alt_text",
    "chart_sources",
    "chart_title",
    "digest_chart",
    "digest_movers",
    "is_spread",
    "render_history_png",
]

WIDTH_IN, HEIGHT_IN, DPI = 10.0, 5.6, 100  # 1000 x 560 px
MAX_MOVERS = 12
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
LINESTYLES = {"on_demand": "-", "spot": "--", "reserved_1y": "-.", "reserved_3y": ":"}
PRICING_EN = {
    "on_demand": "on-demand",
    "spot": "spot",
    "reserved_1y": "1-year reserved",
    "reserved_3y": "3-year reserved",
}
CHEAPER, DEARER = "#2a9d8f", "#e76f51"
_LOCK = threading.Lock()
_NOT_IN_FONT = re.compile(r"[\u2e80-\uffff]+")  # CJK and beyond: not in the bundled DejaVu fonts


class ChartError(UserError, ValueError):
    """Nothing to draw (no data), or the chart could not be written."""


def _ascii(text: str) -> str:
    """Text the bundled fonts can draw: characters outside them dropped, spaces collapsed (line breaks kept)."""
    return "\n".join(" ".join(_NOT_IN_FONT.sub(" ", line).split()) for line in text.split("\n"))


def _left_margin(labels: Sequence[str], fontsize: float) -> float:
    """Room for the longest y tick label (its longest line), as a fraction of the width."""
    longest = max((len(line) for label in labels for line in label.split("\n")), default=10)
    return min(0.45, 0.025 + longest * fontsize * 0.85 / (WIDTH_IN * DPI))  # ~0.6 em per character


def _short_source(source: str, limit: int = 70) -> str:
    """A source fit for a chart: without the refresh boilerplate, a path shortened to its last two parts."""
    text = source.replace(" (refreshed with gpubot prices refresh)", "").removeprefix("bundled: ")
    if "/" in text and " " not in text:
        text = "/".join(text.rstrip("/").split("/")[-2:])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pricing(pricing: str) -> str:
    return PRICING_EN.get(pricing, pricing)


def _groups(points: Sequence) -> dict[tuple[str, str, str], list]:
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    for p in points:
        groups[p.key].append(p)
    for items in groups.values():
        items.sort(key=lambda p: (p.taken_at, p.seq))
    return groups


def _runs(items: Sequence) -> list[list]:
    """A series cut where its source changes (`Point.source_changed`)."""
    runs: list[list] = []
    for p in items:
        if not runs or getattr(p, "source_changed", False):
            runs.append([])
        runs[-1].append(p)
    return runs


def is_spread(points: Sequence) -> bool:
    """True when no series has two snapshots: the chart shows the spread across regions instead of lines."""
    return all(len(items) == 1 for items in _groups(points).values())


def chart_title(points: Sequence) -> str:
    """What the chart shows, e.g. "A100 spot: lowest price per GPU-hour per snapshot (aws, gcp)"."""
    if not points:
        raise ChartError("no price history to chart")
    gpus = " / ".join(dict.fromkeys(p.gpu for p in points))
    pricings = ", ".join(_pricing(p) for p in dict.fromkeys(p.pricing for p in points))
    providers = ", ".join(dict.fromkeys(p.provider for p in points))
    where = f" on {providers}" if len(set(p.provider for p in points)) <= 2 else ""
    if is_spread(points):
        day = max(p.taken_at for p in points).date().isoformat()
        return _ascii(f"{gpus} {pricings}{where}: one snapshot so far ({day}), spread across regions")
    return _ascii(f"{gpus} {pricings}{where}: lowest price per GPU-hour, per snapshot")


def chart_sources(points: Sequence) -> list[str]:
    """One short line per provider: its newest snapshot's source (and how many snapshots the chart covers)."""
    out = []
    for provider in dict.fromkeys(p.provider for p in points):
        mine = [p for p in points if p.provider == provider]
        bundled = [p for p in mine if p.snapshot_id is None]  # bundled weekly history: its own source line
        if bundled:
            first, last = min(p.taken_at for p in bundled), max(p.taken_at for p in bundled)
            out.append(
                _ascii(
                    f"{provider} to {last.date()}: GCP billing catalog via Cyclenerd pricing.yml "
                    f"(Apache-2.0), {len({p.taken_at for p in bundled})} weekly snapshots from "
                    f"{first.date()}"
                )
            )
            mine = [p for p in mine if p.snapshot_id is not None]
            if not mine:
                continue
        newest = max(mine, key=lambda p: (p.taken_at, p.seq))
        count = len({p.snapshot_id for p in mine})
        extra = f", {count} snapshots" if count > 1 else ""
        currency = f", converted from {newest.currency}" if newest.currency != "USD" else ""
        out.append(_ascii(f"{provider}: {_short_source(newest.source)}{extra}{currency}"))
    return out


def _figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _sources_line(sources: Sequence[str]) -> str:
    text = "Sources: " + "; ".join(_ascii(s) for s in sources)
    lines = textwrap.wrap(text, 150)
    return "\n".join(lines[:2]) + (" …" if len(lines) > 2 else "")


def _decorate(fig, ax, title: str, sources: Sequence[str]) -> None:
    title = _ascii(title)
    size = 13 if len(title) <= 95 else 11 if len(title) <= 115 else 9.5
    fig.text(0.01, 0.975, title, fontsize=size, fontweight="bold", ha="left", va="top", parse_math=False)
    fig.text(0.01, 0.92, _sources_line(sources), fontsize=8.5, color="#555555", ha="left", va="top", parse_math=False)
    ax.grid(True, alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)


def _save(fig, path_or_buffer: str | Path | IO[bytes] | None, title: str, description: str) -> bytes:
    buffer = io.BytesIO()
    metadata = {"Title": title, "Description": description[:1000], "Software": "gpubot (matplotlib Agg)"}
    fig.savefig(buffer, format="png", dpi=DPI, metadata=metadata)
    data = buffer.getvalue()
    if path_or_buffer is None:
        return data
    if isinstance(path_or_buffer, (str, Path)):
        try:
            Path(path_or_buffer).write_bytes(data)
        except OSError as exc:
            raise ChartError(f"could not write {path_or_buffer}: {exc}") from exc
    else:
        path_or_buffer.write(data)
    return data


def _money(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def _lines(fig, points: Sequence):
    groups = _groups(points)
    providers = list(dict.fromkeys(p.provider for p in points))
    gpus = list(dict.fromkeys(p.gpu for p in points))
    longest = max(len(f"{k[1]} {_pricing(k[2])} ({k[0]})") for k in groups)
    legend_size = 10 if longest <= 26 else 8.5
    ax = fig.add_axes((0.075, 0.12, 0.93 - 0.075 - 0.008 * longest * legend_size / 10 - 0.05, 0.72))
    markers = "osD^v<>"
    for (gpu, provider, pricing), items in groups.items():
        color = PALETTE[providers.index(provider) % len(PALETTE)]
        label = f"{provider} {_pricing(pricing)}" + (f" ({gpu})" if len(gpus) > 1 else "")
        runs = _runs(items)
        dense = len(items) > 40
        for n, run in enumerate(runs):  # one line per source: a change of source is never joined up
            ax.plot(
                [p.taken_at for p in run],
                [p.min_price_per_gpu_hour for p in run],
                color=color,
                linestyle=LINESTYLES.get(pricing, "-"),
                linewidth=1.6 if dense else 2.2,
                marker=markers[(gpus.index(gpu) + n) % len(markers)],
                markersize=2.5 if dense else 6,
                label=_ascii(label) if n == 0 else None,
            )
            if n:
                _source_change(ax, run[0])
        _mark_suspect(ax, items)
        last = items[-1]
        ax.annotate(
            _money(last.min_price_per_gpu_hour),
            (last.taken_at, last.min_price_per_gpu_hour),
            textcoords="offset points",
            xytext=(6, 4),
            fontsize=9,
            color=color,
            parse_math=False,
        )
    _time_axes(ax, legend_size)
    return ax


def _source_change(ax, first) -> None:
    """A dotted line where a series' source changes at point `first`, labelled with the new source."""
    ax.axvline(first.taken_at, color="#888888", linestyle=":", linewidth=1.2)
    ax.annotate(
        _ascii(f"source changes: {_short_source(first.source, 40)}"),
        (first.taken_at, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(-4, -4),
        textcoords="offset points",
        fontsize=8,
        color="#555555",
        ha="right",
        va="top",
        parse_math=False,
    )


def _mark_suspect(ax, items: Sequence) -> None:
    """Suspect points circled in red: kept and marked, never unmarked (issue 26)."""
    suspect = [p for p in items if getattr(p, "suspect", None)]
    if suspect:
        ax.scatter(
            [p.taken_at for p in suspect],
            [p.min_price_per_gpu_hour for p in suspect],
            s=90,
            facecolors="none",
            edgecolors="#d62728",
            linewidths=1.5,
            zorder=5,
            label=_ascii(f"suspect ({len(suspect)} points)") if suspect else None,
        )


def _time_axes(ax, legend_size: float) -> None:
    """Dates along x, USD per GPU-hour up y from 0, and the legend to the right."""
    from matplotlib import dates as mdates

    locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.margins(x=0.08, y=0.12)
    ax.set_ylabel("USD per GPU-hour (lowest offer)", fontsize=11)
    ax.set_xlabel("Snapshot taken (UTC)", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_ylim(bottom=0)
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize=legend_size,
        frameon=False,
        title="provider, pricing",
        title_fontsize=legend_size,
        handlelength=3.2,
    )


def _spread(fig, points: Sequence):
    rows = list(_groups(points).items())
    providers = list(dict.fromkeys(p.provider for p in points))
    gpus = list(dict.fromkeys(p.gpu for p in points))
    labels = []
    for (gpu, provider, pricing), items in rows:
        label = f"{provider} {_pricing(pricing)}" + (f" ({gpu})" if len(gpus) > 1 else "")
        labels.append(_ascii(f"{label}\n{len(items[-1].region_minima)} regions"))
    left = _left_margin(labels, 10)
    ax = fig.add_axes((left, 0.12, 0.95 - left, 0.72))
    for y, ((_, provider, _), items) in enumerate(rows):
        point = items[-1]
        color = PALETTE[providers.index(provider) % len(PALETTE)]
        prices = [price for _, price in point.region_minima]
        ax.scatter(prices, [y] * len(prices), s=46, color=color, alpha=0.55, edgecolors="none")
        region, low = point.region_minima[0]
        ax.scatter([low], [y], s=110, color=color, edgecolors="black", linewidths=0.8, zorder=3)
        ax.annotate(
            _ascii(f"{_money(low)} {region}"),
            (low, y),
            textcoords="offset points",
            xytext=(0, 9),
            fontsize=9,
            ha="center",
            parse_math=False,
        )
        if len(prices) > 1:
            top_region, high = point.region_minima[-1]
            ax.annotate(
                _ascii(f"{_money(high)} {top_region}"),
                (high, y),
                textcoords="offset points",
                xytext=(0, -15),
                fontsize=8,
                ha="center",
                color="#444444",
                parse_math=False,
            )
    ax.set_yticks(range(len(rows)), labels, fontsize=10)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.invert_yaxis()
    ax.margins(x=0.12)
    ax.set_xlim(left=0)
    ax.set_xlabel("USD per GPU-hour: each dot is one region's lowest offer (outlined: the cheapest)", fontsize=11)
    ax.tick_params(axis="x", labelsize=10)
    return ax


def _description(points: Sequence) -> str:
    """Alt text: what the chart shows in words."""
    parts = []
    runs = [(key, run) for key, items in _groups(points).items() for run in _runs(items)]
    for (gpu, provider, pricing), items in runs:  # one part per source: never one move across two
        first, last = items[0], items[-1]
        if len(items) == 1 and not is_spread(points):
            parts.append(
                f"{gpu} {_pricing(pricing)} on {provider}: {_money(last.min_price_per_gpu_hour)} on "
                f"{last.taken_at.date()} ({_short_source(last.source, 40)})"
            )
        elif len(items) == 1:
            parts.append(
                f"{gpu} {_pricing(pricing)} on {provider}: {_money(last.min_price_per_gpu_hour)} lowest "
                f"({last.cheapest_region}) to {_money(last.region_minima[-1][1])} across "
                f"{len(last.region_minima)} regions on {last.taken_at.date()}"
            )
        else:
            parts.append(
                f"{gpu} {_pricing(pricing)} on {provider}: {_money(first.min_price_per_gpu_hour)} on "
                f"{first.taken_at.date()} to {_money(last.min_price_per_gpu_hour)} on "
                f"{last.taken_at.date()} ({len(items)} snapshots)"
            )
    kind = "Strip chart of per-region lowest prices" if is_spread(points) else "Line chart of the lowest price"
    changes = sorted(
        {
            f"{p.provider} source changes on {p.taken_at.date()} (not joined up)"
            for p in points
            if getattr(p, "source_changed", False)
        }
    )
    flagged = sum(1 for p in points if getattr(p, "suspect", None))
    suspect = f" {flagged} points are marked suspect (ringed in red)." if flagged else ""
    text = f"{kind} per GPU-hour in USD. " + "; ".join(parts) + ". " + "; ".join(changes) + suspect
    return _ascii(text).strip()


def render_history_png(
    points: Sequence,
    path_or_buffer: str | Path | IO[bytes] | None = None,
    *,
    title: str | None = None,
    sources: Sequence[str] | None = None,
) -> bytes:
    """The history chart as PNG bytes (also written to a path or binary buffer when given).

    `points` are `knowledge.history.series.Point`s. One line per provider and pricing model (and GPU when several);
    with one snapshot per series, the spread across regions instead. Raises `ChartError` when `points` is empty.
    """
    points = list(points)
    if not points:
        raise ChartError("no price history to chart: record snapshots with `gpubot prices refresh` first")
    title = title or chart_title(points)
    sources = list(sources) if sources is not None else chart_sources(points)
    with _LOCK:
        fig = _figure()
        ax = _spread(fig, points) if is_spread(points) else _lines(fig, points)
        _decorate(fig, ax, title, sources)
        return _save(fig, path_or_buffer, title, _description(points))


def alt_text(points: Sequence) -> str:
    """What the history chart shows, in words (for Slack's alt text)."""
    return _description(points)


# --- the digest's biggest movers -------------------------------------------------------------------------------


def _since(digest) -> str:
    if digest.since:
        return digest.since[:10]
    olds = [p.old.taken_at for p in digest.providers if p.old is not None]
    return min(olds).date().isoformat() if olds else "the previous snapshot"


def _per_gpu(value: float | None, count: float) -> float:
    return (value or 0.0) / count if count else (value or 0.0)


def digest_movers(digest, top: int = MAX_MOVERS) -> list:
    """The digest's price changes with the largest moves (percent), largest first."""
    return sorted(digest.changed, key=lambda c: (-abs(c.change_pct or 0.0), c.key))[:top]


def _label_moves(ax, movers: list, values: list[float]) -> None:
    """Beside each bar: the change in percent and the price per GPU-hour before and after."""
    for y, (change, value) in enumerate(zip(movers, values, strict=True)):
        old = _per_gpu(change.old, change.gpu_count)
        new = _per_gpu(change.new, change.gpu_count)
        ax.annotate(
            f"{value:+.1f}%  {_money(old)} -> {_money(new)}/GPU-h",
            (value, y),
            textcoords="offset points",
            xytext=(5 if value >= 0 else -5, 0),
            fontsize=8.5,
            ha="left" if value >= 0 else "right",
            va="center",
            parse_math=False,
        )


def digest_chart(
    digest, path_or_buffer: str | Path | IO[bytes] | None = None, *, top: int = MAX_MOVERS
) -> bytes | None:
    """One PNG of the digest's biggest price moves (horizontal bars, percent), or None when nothing moved.

    `digest` is a `knowledge.history.snapshots.Digest` (already filtered to a subscription's GPUs, if any).
    """
    movers = digest_movers(digest, top)
    if not movers:
        return None
    since = _since(digest)
    title = _ascii(f"Biggest GPU price moves since {since} (top {len(movers)} of {len(digest.changed)})")
    from bot.citations import dataset_name  # a price list by dataset, never a server path

    sources = [_ascii(dataset_name(p.provider, p.new.source)) for p in digest.providers if p.changes]
    with _LOCK:
        fig = _figure()
        labels, values, colors = [], [], []
        for change in movers:
            labels.append(
                _ascii(
                    f"{change.gpu} {_pricing(change.pricing)} {change.provider} {change.instance_type} {change.region}"
                )[:58]
            )
            values.append(change.change_pct or 0.0)
            colors.append(CHEAPER if (change.change_pct or 0.0) < 0 else DEARER)
        left = _left_margin(labels, 9)
        ax = fig.add_axes((left, 0.1, 0.97 - left, 0.74))
        ys = list(range(len(movers)))
        ax.barh(ys, values, color=colors, height=0.65)
        ax.set_yticks(ys, labels, fontsize=9)
        ax.invert_yaxis()
        ax.axvline(0, color="#333333", linewidth=0.8)
        span = max(abs(v) for v in values) or 1.0
        room = 1.0 + 240 / ((0.97 - left) * WIDTH_IN * DPI - 240)  # the labels beside the bars need ~240 px
        ax.set_xlim(-span * room if min(values) < 0 else -span * 0.03, span * room if max(values) > 0 else span * 0.03)
        _label_moves(ax, movers, values)
        ax.set_xlabel("Price change (%) per instance type, region and pricing; green = cheaper", fontsize=10.5)
        ax.tick_params(axis="x", labelsize=10)
        _decorate(fig, ax, title, sources)
        description = _ascii(
            f"Bar chart of the {len(movers)} biggest GPU price changes since {since}: "
            + "; ".join(
                f"{c.provider} {c.instance_type} {c.region} {_pricing(c.pricing)} {c.change_pct or 0:+.1f}%"
                for c in movers[:6]
            )
            + "."
        )
        return _save(fig, path_or_buffer, title, description)
