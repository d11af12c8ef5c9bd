"""A suspect price in words (issue 26): "suspect: 3.7x below the median of this instance type across 21 regions
($2.98/h)" / "存疑：…". The reason is data from `knowledge.catalog.anomalies`; the phrases are in phrases.json."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common import money
from handlers.i18n import t


def suspect_text(reason: Mapping[str, Any] | None, lang: str = "en") -> str:
    """ "suspect: spot equals on-demand ($55.04/h)", or "" for a price that is not suspect."""
    if not reason:
        return ""
    code = reason.get("code")
    if code == "below_median":
        why = t(
            "suspect.below_median",
            lang,
            ratio=reason["ratio"],
            regions=reason["regions"],
            median=money(reason["median"]),
        )
    else:
        what = t("suspect.spot" if code == "spot_not_below" else "suspect.commitment", lang)
        how = t("suspect.equal" if reason.get("equal") else "suspect.above", lang)
        why = t("suspect.vs_on_demand", lang, what=what, how=how, on_demand=money(reason["on_demand"]))
    return t("suspect.mark", lang, why=why)
