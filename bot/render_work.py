"""Rendering of the `work` rows ($ per 1M output tokens): one text line per row, a Slack table, workload buttons.

The rows are `Answer.extra["work"]` (JSON contract) with their benchmark details in `extra["work_details"]`;
`bot/render.py` (text, via `templates/_work.txt.j2`) and `bot/slack/blocks/` (Slack) call in here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from handlers.common import money
from handlers.display import both, rate_note
from handlers.i18n import MESSAGES, t
from handlers.models import Answer, Query

__all__ = [
    "BRIEF_WORK_ROWS",
    "TEXT_WORK_ROWS_BESIDE_MLPERF",
    "WORK_ACTION",
    "brief_work",
    "work_blocks",
    "work_buttons",
    "work_line",
]

ATTRIBUTION_SHORT = (  # knowledge.facts.benchmarks.ATTRIBUTION in one line: title, link, commit, licence, modified
    'Spare Cores "sc-inspector-data" https://github.com/SpareCores/sc-inspector-data commit 804d3c71ddae, '
    "CC BY-SA 4.0 https://creativecommons.org/licenses/by-sa/4.0/, modified"
)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rstrip() + "…"
    return cut + ")" * max(0, cut.count("(") - cut.count(")"))


TEXT_WORK_ROWS_BESIDE_MLPERF = 3  # the CLI text with an MLPerf row beside them, within 1,500 characters
BRIEF_MLPERF_ROWS = 1
BRIEF_WORK_ROWS = 5  # the short answer (CLI text and Slack); --verbose and "Why" show every row with its benchmark

WORK_ACTION = "gpu_work_{n}"  # the "switch workload" buttons (handled by bot/slack/actions.refine)
_COLUMNS = {  # at most 6 short columns: fits a laptop's Slack window (the benchmark configuration is behind Why)
    "en": ("#", "Instance", "Region", "Per hour", "Tokens/s", "$ per 1M tokens"),
    "zh": ("#", "实例", "地域", "每小时", "token/s", "每百万token"),
}
_RIGHT = {0, 3, 4, 5}
_SWITCHES = (  # (label en, label zh, bench_workload, bench_step)
    ("Chat", "对话", "chat-256-128", "max_throughput"),
    ("RAG", "RAG", "rag-1024-256", "max_throughput"),
    ("Long context", "长上下文", "long-4096-512", "max_throughput"),
    ("Interactive (TTFT/TPOT)", "交互（延迟）", "chat-256-128", "synchronous"),
)


def _basis(row: dict, lang: str) -> str:
    """How the tokens/s figure was obtained, in the reader's language (the JSON keeps `basis` itself)."""
    if row["basis"] == "measured":
        return t("work.basis.measured", lang)
    if lang == "en":  # the English explanation names the reference model and the ratio
        return row["basis"]
    return t(f"work.basis.{'estimate_params' if 'parameter ratio' in row['basis'] else 'estimate_bandwidth'}", lang)


def _benchmark(row: dict, detail: dict, lang: str = "en") -> str:
    step = f"work.step.{row['strategy']}"
    parts = [
        f"{detail.get('framework')} {detail.get('framework_version')}",
        row["workload"],
        t(step, lang) if lang != "en" and step in MESSAGES else row["strategy"],
    ]
    if detail.get("concurrency") and row["strategy"] != "synchronous" and detail.get("framework") == "vllm":
        concurrency = t("work.concurrency", lang, c=detail["concurrency"], s=detail.get("max_num_seqs") or 0)
        parts[-1] += f" ({concurrency})"
    parts.append(row["quantization"] or "")
    if row["strategy"] == "synchronous" and detail.get("ttft_p50_ms") is not None:
        parts.append(
            f"TTFT p50 {detail['ttft_p50_ms']:,.0f} ms / p95 {detail['ttft_p95_ms']:,.0f} ms, "
            f"TPOT p50 {detail['tpot_p50_ms']:.1f} ms"
        )
    parts.append(t("work.run", lang, date=row["run_date"]))
    return ", ".join(p for p in parts if p)


def _gpus(row: dict, lang: str = "en") -> str:
    partial = row["gpus_used"] and row["gpus_used"] < row["gpu_count"]
    used = f" ({t('work.gpus_used', lang, n=row['gpus_used'])})" if partial else ""
    return f"{row['gpu_count']:g}x {row['gpu']}{used}"


def _price(row: dict, detail: dict, display: dict | None = None) -> str:
    shown = both(row["price_per_hour_usd"], display, "/h")  # "in CNY": also in yuan (handlers.display)
    if detail.get("currency") and detail["currency"] != "USD":
        shown = f"{money(detail['price_per_hour'], detail['currency'])}/h ≈ {shown}"
    return shown


def _per_million(row: dict, lang: str, mark: bool = True, display: dict | None = None) -> str:
    """ "$0.4390", or "$0.52 (estimate)" where tokens/s are not measured (the basis says how); "in CNY": also in
    yuan ("$0.4390 (≈ ¥3.18)")."""
    shown = both(row["usd_per_million_tokens"], display, said=f"${row['usd_per_million_tokens']:.4f}")
    return shown if row["basis"] == "measured" or not mark else f"{shown} ({t('work.estimate_mark', lang)})"


def work_line(
    row: dict,
    detail: dict,
    lang: str,
    source_no: Callable[[str, str], int | str],
    *,
    full: bool = True,
    mark: bool = True,
    display: dict | None = None,
) -> str:
    """One row on one line: where, price, tokens/s, $ per 1M tokens, its source; `full` (--verbose, "Why") adds
    the basis and the benchmark configuration with its own source; `mark`: say "estimate" on an estimated row
    (off when every row is one: the verdict says so)."""
    per_m = t("work.per_million", lang)
    head = (
        f"{row['provider']} {row['instance_type']} · {_gpus(row, lang)} · {row['region']} · "
        f"{t('pricing.' + row['pricing'], lang)} · {_price(row, detail, display)} · {row['tokens_per_s']:,.1f} tok/s → "
    )
    if not full:  # the pricing model is in the verdict
        short = head.replace(f" · {t('pricing.' + row['pricing'], lang)} · ", " · ", 1)  # per 1M: the verdict says
        latency = ""
        if row["strategy"] == "synchronous" and detail.get("ttft_p50_ms") is not None:  # what "interactive" asks
            latency = f" · TTFT p50 {detail['ttft_p50_ms']:,.0f} ms · TPOT p50 {detail['tpot_p50_ms']:.1f} ms"
        return f"{short}{_per_million(row, lang, mark, display)}{latency} [{source_no(row['source'], row['as_of'])}]"
    bench_path = row["benchmark_source"].split(":", 1)[-1]
    return (
        f"{head}{_per_million(row, lang, False, display)} {per_m} · {_basis(row, lang)}: "
        f"{_benchmark(row, detail, lang)} "
        f"({bench_path}) [{source_no(row['source'], row['as_of'])}]"
    )


def brief_work(answer: Answer, beside_mlperf: int = BRIEF_WORK_ROWS) -> Answer:
    """The short work answer: the first `BRIEF_WORK_ROWS` rows, the notes about the question itself (those before
    the formula note: which model was read, estimates), and only the sources of the rows shown; the formula,
    configuration and the other notes are counted as hidden (`extra["work_hidden"]`); what was left out and the
    benchmark data's attribution (its licence) stay,
    behind --verbose and "Why"."""
    rows = list(answer.extra.get("work") or [])
    details = list(answer.extra.get("work_details") or [])
    from knowledge.facts.benchmarks import ATTRIBUTION, SOURCE

    lang = answer.query.language
    formula = t("work.formula", lang)
    cut_at = answer.notes.index(formula) if formula in answer.notes else len(answer.notes)
    template = MESSAGES["work.not_orderable"].get(lang) or MESSAGES["work.not_orderable"]["en"]
    left_out = re.compile(".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", template)))
    rest = answer.notes[cut_at:]
    display = answer.extra.get("display_currency")
    rate = rate_note(display, lang) if display else None  # "in CNY": the rate, its source and date, stay in view
    kept = [n for n in rest if left_out.fullmatch(n) or n == rate]
    hidden = [n for n in rest if n not in kept]
    kept = [_cut(n, 96) for n in kept]  # how many and why, the full list behind --verbose
    notes = [*answer.notes[:cut_at], *kept]  # the question's notes, what was left out
    tuned = list(answer.extra.get("mlperf_serving") or [])
    shown = rows[: beside_mlperf if tuned else BRIEF_WORK_ROWS]  # `beside_mlperf`: the CLI text's 1,500 characters
    tuned_shown = tuned[:BRIEF_MLPERF_ROWS]  # MLPerf's rows beside the measured table: its cheapest (--verbose: all)
    keep = {(r["source"], r["as_of"]) for r in [*shown, *tuned_shown]}
    of_rows = {(r["source"], r["as_of"]) for r in [*rows, *tuned]}  # the rest (the benchmarks themselves) is kept
    sources = [s for s in answer.sources if (s.source, s.as_of) in keep or (s.source, s.as_of) not in of_rows]
    if ATTRIBUTION in rest:  # the benchmark's source line carries the licence's attribution (full: --verbose)
        sources = [s.model_copy(update={"source": ATTRIBUTION_SHORT}) if s.source == SOURCE else s for s in sources]
    extra = {
        **answer.extra,
        "work": shown,
        "work_details": details[: len(shown)],
        **({"mlperf_serving": tuned_shown} if tuned else {}),
        "work_more": max(0, len(rows) - len(shown)),
        "work_hidden": len(hidden),
    }
    said = " ".join(notes)  # a did-you-mean already in a note is not listed again (Slack: its buttons)
    suggestions = [] if all(x in said for x in answer.suggestions) else answer.suggestions
    return answer.model_copy(update={"notes": notes, "sources": sources, "extra": extra, "suggestions": suggestions})


def work_blocks(answer: Answer, source_no: Callable[[str, str], int | str], cell: Callable[[str], dict]) -> list[dict]:
    """The work rows as ONE Slack table block (header row + one row per instance type); `cell` makes a table cell
    (`bot.slack.blocks`, which calls this: Block Kit stays there)."""
    _cell = cell
    lang = answer.query.language
    display = answer.extra.get("display_currency")
    rows = [[_cell(c) for c in _COLUMNS[lang]]]
    for n, (row, detail) in enumerate(
        zip(answer.extra["work"], answer.extra.get("work_details") or [], strict=False), start=1
    ):
        cells = [
            str(n),
            f"{row['provider']} {row['instance_type']} · {_gpus(row, lang)}",
            row["region"],
            _price(row, detail, display),
            f"{row['tokens_per_s']:,.1f}",
            f"{_per_million(row, lang, display=display)} [{source_no(row['source'], row['as_of'])}]",
        ]
        rows.append([_cell(c) for c in cells])
    settings = [{"align": "right" if i in _RIGHT else "left", "is_wrapped": i == 1} for i in range(len(_COLUMNS[lang]))]
    return [{"type": "table", "column_settings": settings, "rows": rows}]


def work_buttons(
    query: Query, common: dict[str, Any], button: Callable[..., dict | None], encode_value: Callable[..., str | None]
) -> list[dict]:
    """Buttons that ask the same question for another workload (or the interactive step); `button` and
    `encode_value` are `bot.slack.blocks`' (which calls this)."""
    _button = button
    now = (query.bench_workload or "chat-256-128", query.bench_step or "max_throughput")
    buttons = []
    for n, (en, zh, workload, step) in enumerate(_SWITCHES):
        if (workload, step) == now or query.bench_step == "single_stream":
            continue
        value = encode_value(query, bench_workload=workload, bench_step=step, **common)
        buttons.append(_button(zh if query.language == "zh" else en, value, WORK_ACTION.format(n=n)))
    return [b for b in buttons if b is not None]
