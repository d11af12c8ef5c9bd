"""Rendering of the `work` rows ($ per 1M output tokens): one text line per row, a Slack table, workload buttons.

The rows are `Answer.extra["work"]` (JSON contract) with their benchmark details in `extra["work_details"]`;
`bot/render.py` (text, via `templates/_work.txt.j2`) and `bot/slack/blocks/` (Slack) call in here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from handlers.common import money
from handlers.i18n import MESSAGES, t
from handlers.models import Answer, Query

__all__ = ["WORK_ACTION", "work_blocks", "work_buttons", "work_line"]

WORK_ACTION = "gpu_work_{n}"  # the "switch workload" buttons (handled by bot/slack/actions.refine)
_COLUMNS = {
    "en": (
        "#",
        "Provider",
        "Instance",
        "GPUs",
        "Region",
        "Per hour",
        "Tokens/s",
        "$ per 1M tokens",
        "Basis",
        "Benchmark",
        "Source",
    ),
    "zh": ("#", "云厂商", "实例规格", "GPU", "地域", "每小时", "token/s", "每百万token", "依据", "基准测试", "来源"),
}
_RIGHT = {0, 3, 5, 6, 7}
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


def _price(row: dict, detail: dict) -> str:
    shown = f"{money(row['price_per_hour_usd'])}/h"
    if detail.get("currency") and detail["currency"] != "USD":
        shown = f"{money(detail['price_per_hour'], detail['currency'])}/h ≈ {shown}"
    return shown


def work_line(row: dict, detail: dict, lang: str, source_no: Callable[[str, str], int | str]) -> str:
    """One row on one line: where, price, measured tokens/s, $ per 1M tokens, basis, benchmark, both sources."""
    per_m = t("work.per_million", lang)
    bench_path = row["benchmark_source"].split(":", 1)[-1]
    return (
        f"{row['provider']} {row['instance_type']} · {_gpus(row, lang)} · {row['region']} · "
        f"{t('pricing.' + row['pricing'], lang)} · {_price(row, detail)} · {row['tokens_per_s']:,.1f} tok/s → "
        f"${row['usd_per_million_tokens']:.4f} {per_m} · {_basis(row, lang)}: {_benchmark(row, detail, lang)} "
        f"({bench_path}) [{source_no(row['source'], row['as_of'])}]"
    )


def work_blocks(answer: Answer, source_no: Callable[[str, str], int | str], cell: Callable[[str], dict]) -> list[dict]:
    """The work rows as ONE Slack table block (header row + one row per instance type); `cell` makes a table cell
    (`bot.slack.blocks`, which calls this: Block Kit stays there)."""
    _cell = cell
    lang = answer.query.language
    rows = [[_cell(c) for c in _COLUMNS[lang]]]
    for n, (row, detail) in enumerate(
        zip(answer.extra["work"], answer.extra.get("work_details") or [], strict=False), start=1
    ):
        cells = [
            str(n),
            row["provider"],
            row["instance_type"],
            _gpus(row, lang),
            row["region"],
            _price(row, detail),
            f"{row['tokens_per_s']:,.1f}",
            f"${row['usd_per_million_tokens']:.4f}",
            _basis(row, lang),
            _benchmark(row, detail, lang),
            f"[{source_no(row['source'], row['as_of'])}] [1]",
        ]
        rows.append([_cell(c) for c in cells])
    settings = [
        {"align": "right" if i in _RIGHT else "left", "is_wrapped": i in (2, 8, 9)} for i in range(len(_COLUMNS[lang]))
    ]
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
