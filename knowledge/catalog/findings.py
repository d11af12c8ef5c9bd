"""What the knowledge base found while reading catalogs: accelerator names it could not place, memory readings and
conflicts, corrected quirks, `0.00` spot prices and rows without a region (`catalog_notes` table, built by
`knowledge.kb.loading.catalog_notes`). Shown in an import's summary and by `gpubot kb stats`."""

from __future__ import annotations

import sqlite3
from typing import Any

SHOWN = 10  # names listed in one summary line


def summary_lines(notes: list[dict]) -> list[str]:
    """Lines for an import summary: "3 accelerator names not recognised: X, Y, Z (kept under their own names)"."""
    lines: list[str] = []
    unknown = [n for n in notes if n["kind"] == "unrecognised"]
    if unknown:
        names = ", ".join(f"{n['text']} ({n['rows']} rows)" for n in unknown[:SHOWN])
        more = f" and {len(unknown) - SHOWN} more" if len(unknown) > SHOWN else ""
        lines.append(
            f"{len(unknown)} accelerator name{'s' if len(unknown) != 1 else ''} not recognised: {names}"
            f"{more} (kept under their own names, never mapped to a GPU model)"
        )
    lines += [n["text"] for n in notes if n["kind"] in ("zero_spot", "no_region")]
    lines += [n["text"] for n in notes if n["kind"] == "identity"]
    return lines


def findings(kb: Any) -> dict:
    """`gpubot kb stats` keys: unrecognised accelerator names per provider, and the other findings."""
    try:
        rows = kb.rows(
            "SELECT provider, kind, text, rows FROM catalog_notes WHERE kind != '' ORDER BY provider, kind, text"
        )
    except sqlite3.OperationalError:  # a knowledge base built before the table existed
        return {}
    unknown: dict[str, list[str]] = {}
    other: list[str] = []
    for row in rows:
        if row["kind"] == "unrecognised":
            unknown.setdefault(row["provider"], []).append(f"{row['text']} ({row['rows']} rows)")
        else:
            other.append(
                row["text"] if row["text"].startswith(row["provider"]) else f"{row['provider']}: {row['text']}"
            )
    return {"unrecognised_accelerators": unknown, "catalog_findings": other}
