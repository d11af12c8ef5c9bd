"""What a TCO question asks beyond the offer: a job that must not be interrupted, a total budget, a job shorter
than a reservation's term (which options can run it)."""

from __future__ import annotations

import re

from handlers.common import money
from handlers.i18n import t
from handlers.models import Query, Tco
from handlers.tco_model import TERMS, convert
from knowledge.facts import rules as R

_NO_INTERRUPTIONS = re.compile(
    r"(can ?not|can't|cannot|must not|mustn't|never) be interrupted|no interruptions?|"
    r"uninterrupt|without interruption|不能中断|不可中断|不能被中断|不允许中断|不能停"
)


def no_interruptions(query: Query) -> bool:
    return bool(_NO_INTERRUPTIONS.search((query.text or "")[:2000].lower()))


def fits(option: Tco, query: Query, no_spot: bool) -> bool:
    """Can this option run the job: spot only where the job tolerates interruption, reserved only where the job
    lasts the term (a shorter job would pay for the rest of the term)."""
    if option.pricing == "spot":
        return not no_spot
    if option.pricing in TERMS and query.duration_hours:
        return query.duration_hours >= TERMS[option.pricing][1] * R.HOURS_PER_YEAR - 1e-6
    return True


def budget_hours(query: Query) -> float | None:
    return query.budget.hours if query.budget and query.budget.per == "total" else None


def budget_line(query: Query, best: Tco, fx: dict) -> str | None:
    """A total budget ("$5,000 for the month"): does the cheapest option fit, and by how much."""
    budget = query.budget
    if budget is None or budget.per != "total":
        return None
    cap = convert(budget.amount, budget.currency, best.currency, fx)
    key = "tco.budget_ok" if best.total <= cap + 1e-9 else "tco.budget_over"
    return t(
        key,
        query.language,
        cap=money(cap, best.currency),
        total=money(best.total, best.currency),
        diff=money(abs(cap - best.total), best.currency),
    )
