"""price history of a GPU: the lowest price per GPU-hour per snapshot, as text, JSON or a PNG chart

    gpubot history GPU [--provider P] [--region R] [--pricing on_demand|spot|reserved_1y|reserved_3y]
                       [--since DATE] [--json] [--png FILE] [--lang zh]

For each provider and pricing model, one point per recorded snapshot (`gpubot prices refresh` records them): the
lowest price per GPU-hour over the matching offers (a bare family such as `A100` covers its variants), the median,
the number of offers and which offer was cheapest. `--json` prints `{"history": [{"provider", "gpu", "pricing",
"taken_at", "source", "min_price_per_gpu_hour", "median_price_per_gpu_hour", "offers", "cheapest":
{"instance_type", "region"}}]}`; `--png FILE` writes a line chart (one snapshot only: the spread across regions).
Providers without history first get their bundled catalog as the starting point, as the digest does. The `gcp`
series starts with the bundled weekly GCP history (2022-02 to 2026-07, `knowledge.history.bundled`); each point says
its `series` and the first point after a change of source says `source_changed` (`segments` lists the runs). The
printed output of a repeated question about unchanged data is reused (`bot.history_cache`).

Exit codes: 0 history shown; 1 no matching history (nothing written); 2 bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

__all__ = ["add_arguments", "run"]


def _date(text: str) -> str:
    try:
        (dt.date.fromisoformat if len(text) == 10 else dt.datetime.fromisoformat)(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("gpu", help="GPU family or variant, e.g. A100, 'A100 80GB', H100, L4")
    parser.add_argument("--provider", action="append", default=[], help="only this provider (repeatable)")
    parser.add_argument("--region", action="append", default=[], help="only this region (repeatable)")
    parser.add_argument(
        "--pricing",
        choices=("on_demand", "spot", "reserved_1y", "reserved_3y"),
        help="one pricing model (default: every one recorded)",
    )
    parser.add_argument("--since", type=_date, help="only snapshots taken on or after this date (YYYY-MM-DD)")
    parser.add_argument("--json", action="store_true", help="print the points as JSON")
    parser.add_argument("--png", metavar="FILE", help="write a chart (PNG, 1000x560)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the text output")


def _argv(args: argparse.Namespace) -> list[str] | None:
    """The arguments that decide the output (None: not cacheable, e.g. `--png` writes a file)."""
    if args.png:
        return None
    return [
        "history",
        args.gpu,
        *[f"p={p}" for p in args.provider],
        *[f"r={r}" for r in args.region],
        f"pricing={args.pricing}",
        f"since={args.since}",
        f"json={args.json}",
        f"lang={args.lang}",
    ]


def run(args: argparse.Namespace) -> int:
    from bot import history_cache

    argv = _argv(args)
    cached = history_cache.cache_file(argv) if argv else None
    if cached is not None and cached.exists():  # the same question about the same data: ~0.1 s instead of ~1 s
        sys.stdout.write(cached.read_text(encoding="utf-8"))
        return 0
    code, output = _run(args)
    if code == 0 and argv:
        history_cache.keep(argv, output)
    return code


def _run(args: argparse.Namespace) -> tuple[int, str]:
    """(exit code, what was written to stdout)."""
    import contextlib

    from knowledge.history import baselines
    from knowledge.kb.opener import open_kb

    providers = [p.strip().lower() for p in args.provider if p.strip()]
    baselines.ensure(providers)  # the one write, before reading: the bundled catalogs as the starting points
    with contextlib.closing(open_kb()) as kb:
        if args.json and not args.png:
            output = _json_output(args, providers, kb)
            if output is not None:
                sys.stdout.write(output)
                return 0, output
        return _answer(args, providers, kb)


def _json_output(args: argparse.Namespace, providers: list[str], kb) -> str | None:
    """`--json` for points that exist, straight from the series (no models, no renderer: a CLI start stays
    short); None when there are none or the name is not known (the full answer then says what is missing)."""
    from knowledge.history.reader import state_reader
    from knowledge.history.series import UnknownGpu, series, to_json

    try:
        points = series(
            args.gpu.strip(),
            provider=providers or None,
            region=[r.strip() for r in args.region if r.strip()] or None,
            pricing=args.pricing,
            since=args.since,
            kb=kb,
            reader=state_reader(),
        )
    except (UnknownGpu, ValueError):
        return None
    return json.dumps(to_json(points), ensure_ascii=False, indent=2) + "\n" if points else None


def _answer(args: argparse.Namespace, providers: list[str], kb) -> tuple[int, str]:
    from bot.render import render_text
    from handlers.history import history_points, summarize
    from handlers.models import Query
    from knowledge.history.reader import state_reader
    from knowledge.history.snapshots import HistoryError

    query = Query(
        text=f"{args.gpu} price history",
        intent="history",
        gpus=[args.gpu.strip()],
        providers=providers,
        regions=[r.strip() for r in args.region if r.strip()],
        pricing=args.pricing,
        language=args.lang,
    )
    try:
        points, notes, families = history_points(query, kb, since=args.since, reader=state_reader())
    except (HistoryError, ValueError) as exc:
        print(f"gpubot: {exc}", file=sys.stderr)
        return 2, ""
    if points:  # the series' spelling of the GPU ("a100-80gb" -> "A100 80GB")
        query = query.model_copy(update={"gpus": list(dict.fromkeys(p.gpu for p in points))})
    answer = summarize(query, points, since=args.since, families=families)
    if notes:
        answer = answer.model_copy(update={"notes": [*notes, *answer.notes]})
    if not points:
        if args.json:
            sys.stdout.write(json.dumps({"history": [], "message": answer.title}, ensure_ascii=False) + "\n")
        print(render_text(answer).rstrip(), file=sys.stderr if args.json else sys.stdout)
        if args.png:
            print(f"gpubot: no chart written: nothing to draw ({args.png} not created)", file=sys.stderr)
        return 1, ""
    if args.json:
        from knowledge.history.series import to_json

        output = json.dumps(to_json(points), ensure_ascii=False, indent=2) + "\n"
    else:
        output = render_text(answer)
    sys.stdout.write(output)
    if args.png:
        from bot.charts import ChartError, is_spread, render_history_png

        try:
            data = render_history_png(points, args.png)
        except ChartError as exc:
            print(f"gpubot: {exc}", file=sys.stderr)
            return 2, output
        what = "the spread across regions (only one snapshot so far)" if is_spread(points) else "the price history"
        print(f"wrote {args.png}: {what}, {len(data)} bytes", file=sys.stderr if args.json else sys.stdout)
    return 0, output
