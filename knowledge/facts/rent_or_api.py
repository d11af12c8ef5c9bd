"""Rent GPUs or pay an API per token: API list prices against the measured self-hosted cost, and the break-even.

For one model and one workload mix (`input_per_output`: input tokens per output token of the benchmark workload,
chat-256-128 -> 2), per 1M output tokens:

- an API costs `A = output price + input_per_output x input price` (LiteLLM list prices, `api_prices`);
- a rented instance at full load costs `R` (`knowledge.facts.work.rank`: measured tokens/s x catalog price);
  at utilisation `u` (the share of the hours it is busy) it costs `R / u`, since the hours are paid either way;
- so renting wins above `u* = R / A`; `u* >= 1` means the API is cheaper at any load.

Prices flagged in `api_prices` (free, no price, implausible) are shown but never win, and get no break-even. A stated
usage (tokens a day, read as output tokens) gives both monthly costs: the API at `A`, and renting as many instances
as that usage needs around the clock (730 hours a month).
"""

from __future__ import annotations

import math

__all__ = ["HOURS_PER_MONTH", "MIX", "api_rows", "monthly", "verdict"]

MIX = {"chat-256-128": 256 / 128, "rag-1024-256": 1024 / 256, "long-4096-512": 4096 / 512}
HOURS_PER_MONTH = 730.0
DAYS_PER_MONTH = HOURS_PER_MONTH / 24


def api_rows(kb, model: str, input_per_output: float, rental_usd_per_million: float | None) -> list[dict]:
    """The model's API prices, cheapest usable first (flagged ones last), each with its cost per 1M output tokens
    and its break-even utilisation against the cheapest rental."""
    rows = []
    for r in kb.rows("SELECT * FROM api_prices WHERE model = ?", (model,)):
        cost = None
        if r["input_usd_per_million"] is not None and r["output_usd_per_million"] is not None:
            cost = r["output_usd_per_million"] + input_per_output * r["input_usd_per_million"]
        usable = r["flag"] is None and cost is not None and cost > 0
        break_even = rental_usd_per_million / cost if usable and rental_usd_per_million and cost else None
        rows.append(
            r
            | {
                "usd_per_million_output": None if cost is None else round(cost, 6),
                "break_even_utilisation": None if break_even is None else round(break_even, 6),
                "renting_can_win": break_even is not None and break_even < 1,
                "usable": usable,
            }
        )
    return sorted(rows, key=lambda r: (not r["usable"], r["usd_per_million_output"] or 0.0, r["api_model_id"]))


def verdict(api: list[dict], rentals: list[dict]) -> dict:
    """{"cheapest_api", "cheapest_rental", "break_even_utilisation", "api_cheaper_at_any_load"} (None when missing)."""
    usable = [a for a in api if a["usable"]]
    best_api = usable[0] if usable else None
    best_rent = rentals[0] if rentals else None
    ratio = None
    if best_api and best_rent:
        ratio = best_rent["usd_per_million_tokens"] / best_api["usd_per_million_output"]
    return {
        "cheapest_api": best_api,
        "cheapest_rental": best_rent,
        "break_even_utilisation": None if ratio is None else round(ratio, 6),
        "api_cheaper_at_any_load": ratio is not None and ratio >= 1,
    }


def monthly(tokens_per_day: float, best_api: dict | None, rentals: list[dict]) -> dict:
    """Monthly cost of a stated usage: the cheapest usable API, and the cheapest way to rent for it."""
    tokens = tokens_per_day * DAYS_PER_MONTH
    api = None if best_api is None else tokens / 1e6 * best_api["usd_per_million_output"]
    best = None
    for r in rentals:
        capacity = r["tokens_per_s"] * 86400  # output tokens a day at full load
        count = max(1, math.ceil(tokens_per_day / capacity))
        cost = count * r["price_per_hour_usd"] * HOURS_PER_MONTH
        if best is None or cost < best["usd_per_month"]:
            best = {
                "provider": r["provider"],
                "instance_type": r["instance_type"],
                "instances": count,
                "utilisation": round(tokens_per_day / (count * capacity), 4),
                "usd_per_month": round(cost, 2),
            }
    return {
        "tokens_per_day": tokens_per_day,
        "tokens_per_month": round(tokens),
        "api_usd_per_month": None if api is None else round(api, 2),
        "api": None if best_api is None else best_api["api_model_id"],
        "rent": best,
    }
