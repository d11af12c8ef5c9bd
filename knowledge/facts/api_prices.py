"""LLM API list prices (LiteLLM's model price map, MIT), for "rent GPUs or pay the API per token?".

`data/llm_api_prices/model_prices_and_context_window.json` is a byte-identical mirror (its README: provenance). Only
the entries named by the reviewed alias table `data/llm_api_prices/model_aliases.csv` (API model id -> benchmarked
model) are loaded into the knowledge base (`api_prices`), so the 1.5 MB map is read once per build, never per answer.

Each row is flagged: `free` (a zero price: a free tier, or a provider listing it as free), `no_price` (the map
has the model but no price), `implausible` (input or output price more than 100x the median of that model's
priced rows: a unit slip in the map), or None. Flagged prices are shown, but never win.
"""

from __future__ import annotations

import csv
import json
import statistics

from knowledge.paths import DATA_DIR

__all__ = ["API_DIR", "IMPLAUSIBLE_RATIO", "SOURCE", "SOURCE_DATE", "SOURCE_URL", "api_cost_per_million", "tables"]

API_DIR = DATA_DIR / "llm_api_prices"
SOURCE = "LiteLLM model price map (BerriAI/litellm model_prices_and_context_window.json, MIT), mirrored 2026-07-24"
SOURCE_URL = "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json"
SOURCE_DATE = "2026-07-24"
IMPLAUSIBLE_RATIO = 100.0


def api_cost_per_million(row: dict, input_per_output: float) -> float | None:
    """USD per 1M output tokens at a workload mix: output price + `input_per_output` x input price."""
    if row["output_usd_per_million"] is None or row["input_usd_per_million"] is None:
        return None
    return row["output_usd_per_million"] + input_per_output * row["input_usd_per_million"]


def _price(entry: dict, key: str) -> float | None:
    value = entry.get(key)
    return float(value) * 1e6 if isinstance(value, int | float) else None


def _flag(row: dict, medians: dict[str, tuple[float, float]]) -> str | None:
    inp, out = row["input_usd_per_million"], row["output_usd_per_million"]
    if inp is None or out is None:
        return "no_price"
    if inp == 0 or out == 0:
        return "free"
    mid_in, mid_out = medians[row["model"]]
    if inp > IMPLAUSIBLE_RATIO * mid_in or out > IMPLAUSIBLE_RATIO * mid_out:
        return "implausible"
    return None


def tables() -> dict[str, list[dict]]:
    """`{"api_prices": rows}`: one row per reviewed alias, with its list prices in USD per 1M tokens."""
    with (API_DIR / "model_aliases.csv").open(encoding="utf-8", newline="") as handle:
        aliases = list(csv.DictReader(handle))
    with (API_DIR / "model_prices_and_context_window.json").open(encoding="utf-8") as handle:
        prices = json.load(handle)
    rows: list[dict] = []
    for alias in aliases:
        entry = prices.get(alias["api_model_id"])
        if not isinstance(entry, dict):
            continue  # an alias the map no longer lists (tests/test_api_prices.py keeps them in step)
        rows.append(
            {
                "api_model_id": alias["api_model_id"],
                "model": alias["model"],
                "provider": entry.get("litellm_provider") or alias["provider"],
                "input_usd_per_million": _price(entry, "input_cost_per_token"),
                "output_usd_per_million": _price(entry, "output_cost_per_token"),
                "alias_note": alias["note"] or None,
                "alias_source": alias["source"],
            }
        )
    medians: dict[str, tuple[float, float]] = {}
    for model in {r["model"] for r in rows}:
        priced = [r for r in rows if r["model"] == model and r["input_usd_per_million"] and r["output_usd_per_million"]]
        medians[model] = (
            statistics.median(r["input_usd_per_million"] for r in priced) if priced else 0.0,
            statistics.median(r["output_usd_per_million"] for r in priced) if priced else 0.0,
        )
    for row in rows:
        row["flag"] = _flag(row, medians)
    return {"api_prices": rows}
