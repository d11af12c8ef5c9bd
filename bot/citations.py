"""Sources named so a user can open them (issue 24): the words an answer shows for a source, never a file of this
repository.

    public_source(source, lang) -> str     "SkyPilot catalog (AWS) https://github.com/skypilot-org/skypilot-catalog"
    dataset_name(provider, source, lang)   a price list a digest compared: "AWS: SkyPilot catalog ..."

A source string in the knowledge base says where a figure came from for the people who keep the data: catalog
paths and commits, `seed S0 §5`, `errata S0-12 (...)`, `PEERS.md §3 (skypilot#1819)`, `knowledge/data/...`,
`gpu_specs.csv (...)`. What a user sees keeps what they can open (public addresses, GitHub issues, the seed
article's title and section) and drops the rest; `--json` and `--verbose` keep the internal ids.
"""

from __future__ import annotations

import re
from functools import cache

from handlers.i18n import t

__all__ = ["dataset_name", "is_internal", "public_source"]

_CATALOGS = (  # (pattern in the source, title, public link)
    (r"sugarlxn/skypilot-catalog", "skypilot-catalog (sugarlxn fork)", "https://github.com/sugarlxn/skypilot-catalog"),
    (r"skypilot-org/skypilot-catalog", "SkyPilot catalog", "https://github.com/skypilot-org/skypilot-catalog"),
    (
        r"Cyclenerd/google-cloud-pricing-cost-calculator",
        "Google Cloud Billing Catalog",
        "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator",
    ),
    (r"tsaol/aws-gpu|ec2instances\.info", "ec2instances.info", "https://instances.vantage.sh/"),
    (
        r"alexei-led/spotinfo|Spot Instance Advisor",
        "AWS Spot Instance Advisor",
        "https://aws.amazon.com/ec2/spot/instance-advisor/",
    ),
    (r"SpareCores/sc-inspector-data", "Spare Cores benchmarks", "https://github.com/SpareCores/sc-inspector-data"),
    (
        r"Azure Retail Prices|prices\.azure\.com",
        "Azure Retail Prices API",
        "https://prices.azure.com/api/retail/prices",
    ),
)
_ISSUE = re.compile(r"\b(skypilot|bolt-python|bolt-js|python-slack-sdk)#(\d+)")
_REPOS = {
    "skypilot": "skypilot-org/skypilot",
    "bolt-python": "slackapi/bolt-python",
    "bolt-js": "slackapi/bolt-js",
    "python-slack-sdk": "slackapi/python-slack-sdk",
}
_SEED = re.compile(r"\b(?:seeds?\s+)?(S[0-2])\s*§\s*([0-9.一二三四五六七八九十]+)|\bseeds?\s+(S[0-2])\b")
_ADDRESS = re.compile(
    r"(?:https?://)?((?:[a-z0-9-]+\.)+(?:com|org|net|io|ai|dev|info|cn|fi|art|jp|sh)(?:/[^\s,;)'\"]*)?)"
)
_PATH = re.compile(r"(?:^|[\s(])(?:/|[A-Za-z]:\\|~/)[^\s]*")
_INTERNAL = re.compile(
    r"PEERS\.md|README\.md|knowledge/|catalogs/README|\.csv\b|\.json\b|\.ya?ml\b|\.md\b|§|\berrata\b|"
    r"\b(?:S[0-2]|X)-\d{2}\b|seed_errata"
)


def is_internal(text: str) -> bool:
    """True when `text` cites something only this repository's keepers can open."""
    return bool(_INTERNAL.search(text))


@cache
def _seed_titles() -> dict[str, str]:
    """S0, S1, S2 -> the seed article's title (its first line; `knowledge/data/seeds/00N_*.txt`)."""
    from knowledge.paths import DATA_DIR

    titles = {}
    for path in sorted((DATA_DIR / "seeds").glob("00[0-9]_*.txt")):
        first = path.read_text(encoding="utf-8").strip().splitlines()[0].strip()
        titles[f"S{int(path.name[:3])}"] = first
    return titles


def _catalog(source: str) -> tuple[str, str] | None:
    for pattern, title, link in _CATALOGS:
        if re.search(pattern, source):
            return title, link
    return None


def _public_parts(source: str, lang: str) -> list[str]:
    parts: list[str] = []
    found = _catalog(source)
    if found:
        parts.append(f"{found[0]} {found[1]}")
    for match in _SEED.finditer(source):
        seed = match.group(1) or match.group(3)
        title = _seed_titles().get(seed)
        if title:
            section = match.group(2)
            parts.append(
                t("cite.seed_section", lang, title=title, section=section.rstrip("."))
                if section
                else t("cite.seed", lang, title=title)
            )
    for match in _ISSUE.finditer(source):
        repo = _REPOS[match.group(1)]
        parts.append(f"{repo}#{match.group(2)} https://github.com/{repo}/issues/{match.group(2)}")
    for match in _ADDRESS.finditer(source):
        address = match.group(1).rstrip(".")
        if not is_internal(address) and not any(address in p for p in parts):
            parts.append("https://" + address)
    return list(dict.fromkeys(parts))


def public_source(source: str, lang: str = "en", limit: int = 3) -> str:
    """The words a user sees for `source`: itself when it names nothing internal, else what in it can be opened
    (at most `limit` items), else "gpubot's reviewed data" (its own curation, said as such)."""
    source = " ".join((source or "").split())
    if not source:
        return t("cite.unknown", lang)
    if not is_internal(source) and not _catalog(source):
        return source
    if _PATH.search(source) and not _catalog(source):  # a file on the server (an import): never its path
        return t("cite.imported", lang)
    parts = _public_parts(source, lang)[:limit]
    return "; ".join(parts) if parts else t("cite.curated", lang)


def dataset_name(provider: str, source: str, lang: str = "en") -> str:
    """A price list by its dataset: "AWS: SkyPilot catalog https://..." (an imported file: "imported price list")."""
    from handlers.brief import provider_label

    name = {"aws": "AWS", "gcp": "GCP", "oci": "OCI"}.get(provider, provider_label(provider, lang))
    raw = " ".join((source or "").split())
    if _catalog(raw):
        return f"{name}: {public_source(raw, lang, limit=1)}"
    if raw.startswith(("http://", "https://")):
        return f"{name}: {raw}"
    if _PATH.search(raw) or is_internal(raw) or not raw:
        return f"{name}: {t('cite.imported', lang)}"
    return f"{name}: {raw}"
