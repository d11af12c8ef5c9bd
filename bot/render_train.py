"""Rendering of the issue-27 answers: training cost (MLPerf Training), MLPerf serving rows, rent or API.

The rows are the JSON contract (`Answer.extra`): `train_cost` / `train_cost_estimates` / `train_cost_unpriced`,
`mlperf_serving`, `rent_or_api` (`api`, `rentals`, `mlperf`). `text_lines` gives one text line per row (the CLI and
the Slack fallback: `bot/render.py` through `templates/answer.txt.j2`); `table_blocks` gives ONE Slack table (Slack
allows one per message: the measured rows, or the API prices) plus mrkdwn sections for the rest; `switch_buttons`
the buttons that ask the same question for another workload or pricing model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.slack.escape import slack_escape
from handlers.display import both
from handlers.i18n import t
from handlers.models import Answer, Query

__all__ = ["TABLE_KEYS", "switch_buttons", "table_blocks", "text_lines"]

TABLE_KEYS = ("train_cost", "train_cost_estimates", "train_cost_unpriced", "mlperf_serving", "rent_or_api")
SourceNo = Callable[[str, str], int | str]
_RENTALS_SHOWN = 10  # the JSON keeps every measured rental


def _train_cells(row: dict, lang: str, source_no: SourceNo, display: dict | None = None) -> list[str]:
    measured = row["basis"] == "measured"
    minutes = t("train.minutes", lang, m=row["minutes"])
    if measured:
        minutes = t("train.runs", lang, m=row["minutes"], lo=row["min_minutes"], hi=row["max_minutes"], n=row["runs"])
    basis = t("train.row_measured", lang, benchmark=row["benchmark"], target=row["quality_target"],
              framework=row["framework"], url=row["results_url"]) if measured else (
        row["basis"] if lang == "en" else t("train.row_estimate", lang, reference=row["reference"], ratio=row["ratio"])
    )  # fmt: skip
    return [
        row["provider"],
        row["instance_type"],
        f"{row['nodes']} x {row['gpus_per_node']:g} {row['gpu']}",
        row["region"],
        both(row["price_per_hour_usd"], display, "/h"),  # "in CNY": also in yuan (handlers.display)
        minutes,
        f"{row['gpu_hours']:,.1f}",
        both(row["cost_usd"], display),
        basis,
        f"[{source_no(row['source'], row['as_of'])}] [1]",
    ]


def _serving_cells(row: dict, lang: str, source_no: SourceNo, display: dict | None = None) -> list[str]:
    return [
        row["provider"],
        row["instance_type"],
        f"{row['gpus_used']:g}/{row['gpu_count']:g} {row['gpu']}",
        row["region"],
        both(row["price_per_hour_usd"], display, "/h"),
        t("serving.tokens", lang, tps=row["tokens_per_s"], per_gpu=row["tokens_per_s_per_gpu"]),
        _exact(row["usd_per_million_tokens"], display, 4),
        t(
            "serving.row",
            lang,
            scenario=row["scenario"],
            precision=row["precision"],
            id=row["result_id"],
            model=row["mlperf_model"],
            software=row["software"],
        ),  # fmt: skip
        f"[{source_no(row['source'], row['as_of'])}]",
    ]


def _short_serving(row: dict, lang: str) -> str:
    return t("serving.row_short", lang, scenario=row["scenario"], precision=row["precision"], id=row["result_id"])


def _break_even(row: dict, lang: str) -> str:
    if row["break_even_utilisation"] is None:
        return "—"
    if not row["renting_can_win"]:
        return t("api.never", lang, u=row["break_even_utilisation"])
    return f"{row['break_even_utilisation']:.0%}"


def _exact(usd: float, display: dict | None, digits: int) -> str:
    """ "$0.4390" with `digits` decimals, and "in CNY" its yuan ("$0.4390 (≈ ¥3.18)")."""
    return both(usd, display, said=f"${usd:.{digits}f}")


def _api_cells(row: dict, lang: str, display: dict | None = None) -> list[str]:
    cost = row["usd_per_million_output"]
    flag = t(f"api.flag.{row['flag']}", lang) if row["flag"] else ""
    return [
        row["provider"],
        row["api_model_id"],
        "—" if row["input_usd_per_million"] is None else _exact(row["input_usd_per_million"], display, 3),
        "—" if row["output_usd_per_million"] is None else _exact(row["output_usd_per_million"], display, 3),
        "—" if cost is None else _exact(cost, display, 4),
        _break_even(row, lang),
        flag,
    ]


_PREFIX = {  # text lines: the main table is numbered, the others carry a letter ("M1." an MLPerf serving row)
    "train.estimate_heading": "E",
    "train.unpriced_heading": "U",
    "serving.heading": "M",
    "api.rent_heading": "R",
}


Section = tuple[str, str, list[str], list[list[str]]]  # (text prefix, heading, columns, rows)


def _section(heading: str, columns: str, rows: list[list[str]], lang: str, **values: Any) -> Section:
    return _PREFIX.get(heading, ""), t(heading, lang, **values), t(columns, lang).split("|"), rows


def _sections(answer: Answer, lang: str, source_no: SourceNo) -> list[Section]:
    """Every table the answer carries, in the order shown."""
    extra = answer.extra
    display = extra.get("display_currency")  # "in CNY": every figure also in yuan
    out: list[Section] = []
    if extra.get("train_cost"):
        rows = [_train_cells(r, lang, source_no, display) for r in extra["train_cost"]]
        out.append(_section("train.measured_heading", "train.columns", rows, lang))
    if extra.get("train_cost_estimates"):
        rows = [_train_cells(r, lang, source_no, display) for r in extra["train_cost_estimates"]]
        out.append(_section("train.estimate_heading", "train.columns", rows, lang))
    if extra.get("train_cost_unpriced"):
        rows = [
            [u["system"], t("train.minutes", lang, m=u["minutes"]), u["reason"], u["results_url"]]
            for u in extra["train_cost_unpriced"]
        ]
        out.append(_section("train.unpriced_heading", "train.unpriced_columns", rows, lang))
    if extra.get("mlperf_serving"):
        rows = [_serving_cells(r, lang, source_no, display) for r in extra["mlperf_serving"]]
        out.append(_section("serving.heading", "serving.columns", rows, lang))
    if rent := extra.get("rent_or_api"):
        rows = [_api_cells(r, lang, display) for r in rent["api"]]
        out.append(_section("api.heading", "api.columns", rows, lang, mix=rent["input_per_output"]))
        rentals = [
            [r["provider"], r["instance_type"], both(r["price_per_hour_usd"], display, "/h"),
             f"{r['tokens_per_s']:,.1f}", _exact(r["usd_per_million_tokens"], display, 4), r["basis_label"],
             f"[{source_no(r['source'], r['as_of'])}]"]
            for r in rent["rentals"][:_RENTALS_SHOWN]
        ]  # fmt: skip
        if rentals:
            out.append(_section("api.rent_heading", "api.rent_columns", rentals, lang))
    return out


def text_lines(answer: Answer, source_no: SourceNo, short: bool = False) -> list[str]:
    """Every table of the answer as text: a heading, then one numbered line per row. `short` (a work answer's
    short text): the MLPerf rows beside the measured table keep their scenario, precision and result id
    (the heading keeps the MLCommons label)."""
    lang = answer.query.language
    lines: list[str] = []
    for prefix, heading, _columns, rows in _sections(answer, lang, source_no):
        lines.append(heading)
        if short and answer.query.intent == "work" and answer.extra.get("mlperf_serving"):
            served = answer.extra["mlperf_serving"]
            rows = [
                [*r[:5], f"{s['tokens_per_s']:,.0f} tok/s", r[6], _short_serving(s, lang), r[8]]
                for r, s in zip(rows, served, strict=False)
            ]
        for n, cells in enumerate(rows, start=1):
            lines.append(f"{prefix}{n}. " + " · ".join(c for c in cells if c))
    return lines


def table_blocks(
    answer: Answer, source_no: SourceNo, cell: Callable[[str], dict], text: Callable[[str], list], *, table: bool = True
) -> list[dict]:
    """The first table as a Slack table block (`table`: one per message, so False when the answer has another),
    the others as mrkdwn sections (`text`)."""
    lang = answer.query.language
    blocks: list[dict] = []
    for n, (_prefix, heading, columns, rows) in enumerate(_sections(answer, lang, source_no)):
        if n == 0 and table:
            blocks += text(f"*{slack_escape(heading)}*")
            cells = [[cell(c) for c in columns]] + [[cell(c) for c in r] for r in rows[:99]]
            settings = [{"is_wrapped": i >= len(columns) - 3} for i in range(len(columns))]
            blocks.append({"type": "table", "column_settings": settings, "rows": cells})
        else:
            listed = "\n".join(f"{i}. " + " · ".join(c for c in r if c) for i, r in enumerate(rows[:20], 1))
            blocks += text(f"*{slack_escape(heading)}*\n" + slack_escape(listed))
    return blocks


def switch_buttons(
    query: Query, common: dict[str, Any], button: Callable[..., dict | None], encode_value: Callable[..., str | None]
) -> list[dict]:
    """The other pricing model (train_cost), the other workloads (rent_or_api), as `bot.slack.blocks` buttons."""
    from bot.render_work import work_buttons

    lang = query.language
    buttons: list[dict | None] = []
    if query.intent in ("train_cost", "rent_or_api"):
        other = "spot" if (query.pricing or "on_demand") == "on_demand" else "on_demand"
        label = t("slack.btn.spot" if other == "spot" else "slack.btn.on_demand", lang)
        buttons.append(button(label, encode_value(query, **common), "gpu_toggle_pricing"))
    if query.intent == "rent_or_api":
        buttons += work_buttons(query, common, button, encode_value)
    return [b for b in buttons if b is not None]
