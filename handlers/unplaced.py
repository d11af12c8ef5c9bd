"""Offers of the asked cloud whose accelerator name could not be placed (`gpu_recognised` = 0): an answer says how
many there are and shows one name, so "no offers" never hides rows the bot could not read
("5 spheron offers under names I could not place, e.g. A6000_PCIE_LOW_RAM")."""

from __future__ import annotations

from handlers.i18n import t
from handlers.models import Query
from knowledge.kb.reader import KB


def unplaced_note(kb: KB, query: Query, pricing: str) -> str | None:
    """One note per asked provider with unrecognised offers at `pricing`, joined; None when there are none."""
    if not query.providers:
        return None
    marks = ", ".join("?" * len(query.providers))
    rows = kb.rows(
        "SELECT provider, accelerator, COUNT(*) AS n FROM offers WHERE gpu_recognised = 0 AND kind = 'catalog' "
        f"AND pricing = ? AND provider IN ({marks}) GROUP BY provider, accelerator ORDER BY provider, n DESC, "
        "accelerator",
        [pricing, *query.providers],
    )
    by_provider: dict[str, list[dict]] = {}
    for row in rows:
        by_provider.setdefault(row["provider"], []).append(row)
    notes = [
        t(
            "unplaced.note",
            query.language,
            count=sum(r["n"] for r in names),
            provider=provider,
            example=names[0]["accelerator"],
        )
        for provider, names in by_provider.items()
    ]
    return " ".join(notes) or None
