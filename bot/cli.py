"""The `gpubot` command line: the same engine as the Slack app, without Slack.

    gpubot ask "cheapest A100 spot" [--json] [--verbose]  answer a question (--verbose: every pitfall and rule)
    gpubot parse ["TEXT"] [--json]                 show the parsed query (no TEXT: one question per stdin line)
    gpubot kb build | stats                        (re)build or describe the knowledge base
    gpubot kb import PATH --provider NAME          add a catalog in SkyPilot's format for any cloud

Other commands (serve, digest, prices, history, db) are registered by their own modules in `COMMANDS`.
Heavy modules are imported only by the command that needs them, so `gpubot ask` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence

os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # no entry-point scan at start-up (~20 ms)

# command name -> module exposing add_arguments(parser) and run(args) -> int
COMMANDS: dict[str, str] = {
    "serve": "bot.serve",
    "digest": "bot.digest_cmd",
    "prices": "bot.prices_cmd",
    "history": "bot.history_cmd",
    "clock": "bot.clock",
    "db": "bot.db_cmd",
    "alert": "bot.alert_cmd",
}


def _print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _open_kb():
    from knowledge.kb.opener import open_kb

    return open_kb()


_APOLOGIES = ("Sorry", "抱歉", "The knowledge base is unavailable", "知识库不可用")  # never kept


def _answer_cache_file(text: str, as_json: bool | str, kb=None):
    """Where the printed answer to `text` is kept for the current knowledge base, or None when there is none
    (`kb`: the knowledge base just opened, whose stored fingerprint `open_kb` made the bundled data's: not
    computed again over every data file).

    People ask the same question many times a day; the answer is a pure function of the question and the
    knowledge-base file (bundled data, imports), so the printed output is reused while that file is the same file
    (inode, size, mtime) built from the same bundled data, by the same code (`knowledge.code_version`). Only
    intents that read nothing else are kept (`handlers.cache.CACHEABLE`; never digest or history).
    `GPUBOT_ANSWER_CACHE=0` turns it off.
    """
    import hashlib

    from knowledge.config import raw
    from knowledge.kb.reader import _identity
    from knowledge.kb.schema import fingerprint
    from knowledge.paths import home, kb_path

    if raw("GPUBOT_ANSWER_CACHE") == "0" or not kb_path().exists():
        return None
    from knowledge.code_version import code_version
    from knowledge.kb.opener import stored_imports_version

    # the imports too: an import or cancellation on another machine moves it without touching this file; and the
    # code: an upgrade never prints an answer the replaced code computed
    key = hashlib.sha256(
        f"{as_json}\0{text}\0{_identity(kb_path())}\0{kb.meta('fingerprint') if kb else fingerprint()}\0"
        f"{stored_imports_version()}\0"
        f"{code_version()}".encode()
    ).hexdigest()
    return home() / "cache" / "answers" / f"{key[:32]}.out"


PREF_FLAGS = ("providers", "regions", "pricing", "currency", "language", "budget")  # as `/gpu set KEY VALUE`


def _prefs(args: argparse.Namespace, kb) -> dict | None:
    """The preferences given as flags, validated like Slack settings; None (after saying why) when invalid."""
    from bot.pipeline import prefs_from
    from knowledge.state.settings_store import SettingError

    raw = {key: getattr(args, key, None) for key in PREF_FLAGS}
    try:
        return dict(prefs_from(raw, kb))
    except SettingError as exc:
        hint = f" (did you mean {', '.join(exc.suggestions)}?)" if exc.suggestions else ""
        print(f"gpubot: --{exc.key or 'option'}: {exc}{hint}", file=sys.stderr)
        return None


def cmd_ask(args: argparse.Namespace) -> int:
    text = " ".join(args.text).strip()
    flags = [f"{key}={getattr(args, key)}" for key in PREF_FLAGS if getattr(args, key, None)]
    key_text = "\0".join([text, *flags])
    mode = f"{args.json}{'v' if args.verbose else ''}"  # the verbose text is another printed answer
    from bot import disk_cache  # bounded: least recently used out, by count and bytes

    cached = _answer_cache_file(key_text, mode)
    kept_output = disk_cache.read(cached) if cached is not None else None
    if kept_output is not None:
        sys.stdout.write(kept_output)
        return 0

    from bot.pipeline import answer_text_with
    from bot.render import answer_json, render_text
    from handlers.cache import CACHEABLE

    kb = _open_kb()
    prefs = _prefs(args, kb) if flags else {}
    if prefs is None:
        return 2
    result = answer_text_with(text, kb, prefs)
    from knowledge.numbers import finite  # never Infinity/NaN in the JSON (a derived value that overflowed: null)

    output = (
        json.dumps(finite(answer_json(result, args.verbose)), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        if args.json
        else render_text(result, args.verbose)
    )
    sys.stdout.write(output)
    kept = _answer_cache_file(key_text, mode, kb)  # the knowledge base may have been (re)built just now
    live = any(o.fetched_at for o in result.offers)  # "spot 12 min ago" is true only now: never printed again
    if kept is not None and result.query.intent in CACHEABLE and not result.title.startswith(_APOLOGIES) and not live:
        disk_cache.keep(kept, output)  # a cache is an optimisation: never fails a question
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from bot.pipeline import understand

    kb = _open_kb()
    texts = [" ".join(args.text)] if args.text else (line.rstrip("\n") for line in sys.stdin)
    for text in texts:
        query = understand(text, kb).model_dump(mode="json")
        if args.json or not args.text:
            sys.stdout.write(json.dumps(query, ensure_ascii=False) + "\n")
        else:
            _print_json(query)
    return 0


def cmd_kb(args: argparse.Namespace) -> int:
    from knowledge.catalog.reader import CatalogError

    if args.kb_command == "build":
        from knowledge.kb.build import build

        report = build()
        print(
            f"built {report['path']}: {report['offers']} offers from {report['catalog_rows']} catalog rows, "
            f"{report['price_terms']} price terms, {report['spot_risk']} spot-risk rows in {report['seconds']} s "
            f"({len(report['skipped'])} catalog figures skipped as non-prices)"
        )
        return 0
    if args.kb_command == "import":
        from knowledge.catalog.importer import import_catalog

        try:
            report = import_catalog(
                args.path,
                args.provider,
                hosts=args.hosts,
                currency=args.currency,
                usd_per_unit=args.usd_per_unit,
                source=args.source,
                as_of=args.as_of,
            )
        except (CatalogError, ValueError) as exc:
            print(f"gpubot: import failed: {exc}\nThe knowledge base was not changed.", file=sys.stderr)
            return 2
        print(
            f"imported {report['rows']} rows for {report['provider']}: {report['offers']} offers "
            f"({report['duplicates']} exact duplicate rows ignored, {len(report['skipped'])} figures skipped)"
        )
        for note in report["skipped"][:20]:
            print(f"  skipped {note}")
        for line in import_summary(report.get("notes", [])):
            print(f"  {line}")
        return 0
    kb = _open_kb()
    stats = {
        "path": str(kb.path),
        "built_at": kb.meta("built_at"),
        "offers_by_provider": {
            r["provider"]: r["n"]
            for r in kb.rows("SELECT provider, COUNT(*) n FROM offers GROUP BY provider ORDER BY provider")
        },
        "catalog_rows": kb.rows("SELECT COUNT(*) n FROM catalog_rows")[0]["n"],
        "gpus": len(kb.rows("SELECT name FROM gpus")),
        **catalog_findings(kb),
    }
    from knowledge.catalog.offer_checks import stats as check_stats

    stats.update(check_stats(kb))  # catalog quirks corrected, availability, zones, the GCP two-source cross-check
    _print_json(stats)
    return 0


def import_summary(notes: list[dict]) -> list[str]:
    """What an import tolerated or could not place, one line each (issue 14)."""
    from knowledge.catalog.findings import summary_lines

    return summary_lines(notes)


def catalog_findings(kb) -> dict:
    from knowledge.catalog.findings import findings

    return findings(kb)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (a command name), that command alone: argparse's set-up costs
    ~1 ms per sub-parser (gettext looks for translations each time) and every module would be imported."""
    parser = argparse.ArgumentParser(prog="gpubot", description="Where to rent GPUs: prices, specs, advice.")
    sub = parser.add_subparsers(dest="command", required=True)
    builders = {"ask": _add_ask, "parse": _add_parse, "kb": _add_kb}
    for name in (*builders, *COMMANDS):
        if only not in (None, name):
            continue
        if name in builders:
            builders[name](sub)
        else:
            _add_command(sub, name)
    return parser


def _add_ask(sub) -> None:
    ask = sub.add_parser("ask", help="answer a question (English or Chinese)")
    ask.add_argument("text", nargs="+", help='the question, e.g. "cheapest A100 spot"')
    ask.add_argument("--json", action="store_true", help="print the JSON contract instead of text")
    ask.add_argument(
        "--verbose",
        action="store_true",
        help="also print every pitfall, rule and detail (the short answer keeps one caveat)",
    )
    ask.add_argument("--providers", help="only these clouds, e.g. aws,gcp (like `/gpu set providers`)")
    ask.add_argument("--regions", help="only these regions, e.g. us-east-1,eu-west-1")
    ask.add_argument("--pricing", help="on_demand, spot, reserved_1y or reserved_3y when the question names none")
    ask.add_argument("--currency", help="USD or CNY for totals and converted prices")
    ask.add_argument("--language", help="en or zh (a question in Chinese is always answered in Chinese)")
    ask.add_argument(
        "--budget",
        help='an hourly cap, as in a question: "2 USD/GPU-hour" or "15 CNY" (per GPU-hour), "$20/hour" (the machine)',
    )
    ask.set_defaults(func=cmd_ask)


def _add_parse(sub) -> None:
    parse = sub.add_parser("parse", help="show how a question is understood")
    parse.add_argument("text", nargs="*", help="the question; without it, read one per line from stdin")
    parse.add_argument("--json", action="store_true", help="one JSON object per line")
    parse.set_defaults(func=cmd_parse)


def _add_kb(sub) -> None:
    kb = sub.add_parser("kb", help="the knowledge base")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True)
    kb_sub.add_parser("build", help="rebuild it from the bundled data and imported catalogs")
    kb_sub.add_parser("stats", help="describe it")
    imp = kb_sub.add_parser("import", help="import a catalog file in SkyPilot's format")
    imp.add_argument("path", help="catalog CSV (SkyPilot format, any column order)")
    imp.add_argument("--provider", required=True, help="provider id, e.g. aws or lambda")
    imp.add_argument("--hosts", help="host-VM rows priced separately (like gcp_host_vms.csv)")
    imp.add_argument("--currency", help="vendor currency the USD prices were converted from (e.g. CNY)")
    imp.add_argument("--usd-per-unit", type=float, help="USD per unit of --currency used in the conversion")
    imp.add_argument("--source", help="where the file came from (shown with every price)")
    imp.add_argument("--as-of", help="date of the prices (default: today)")
    kb.set_defaults(func=cmd_kb)


def _add_command(sub, name: str) -> None:
    command = importlib.import_module(COMMANDS[name])
    sub_parser = sub.add_parser(name, help=(command.__doc__ or name).strip().splitlines()[0])
    command.add_arguments(sub_parser)
    sub_parser.set_defaults(func=command.run)


class _Brief(logging.Formatter):
    """Log lines for people at a terminal: one line each, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"gpubot: {record.getMessage()}"


def _configure_logging() -> None:
    from bot.log_redaction import SECRET_VARIABLES, install
    from knowledge.config import check, get, raw

    install(raw(name) for name in SECRET_VARIABLES)  # no token, code or secret in any log line
    check()  # a bad variable stops every command at once (validated, with pydantic, only when one is set)
    root = logging.getLogger()
    if not root.handlers:  # a host application (or a test) may have configured logging already
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Brief())
        root.addHandler(handler)
        root.setLevel(get("GPUBOT_LOG_LEVEL") or "WARNING")


def main(argv: Sequence[str] | None = None) -> int:
    from knowledge.config import ConfigError

    try:
        _configure_logging()
    except ConfigError as exc:
        print(f"gpubot: {exc}", file=sys.stderr)
        return 2
    argv = list(sys.argv[1:] if argv is None else argv)
    named = argv[0] if argv and argv[0] in ("ask", "parse", "kb", *COMMANDS) else None
    args = build_parser(named).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the outermost edge of a command: a clear message, never a traceback
        from knowledge.errors import GpubotError
        from knowledge.state.presence import state_error_text

        if isinstance(exc, GpubotError):  # raised on purpose: its message says what went wrong (and what to do)
            print(f"gpubot: {exc}", file=sys.stderr)
            return 2
        if state_error_text(exc):  # gone, read-only, full, locked, unreachable: one line, nothing was changed
            print(f"gpubot: {state_error_text(exc)}", file=sys.stderr)
            return 2
        logging.getLogger("gpubot").debug("unexpected error", exc_info=True)
        print(f"gpubot: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
