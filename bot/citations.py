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
from knowledge.catalog.freshness import imported

__all__ = ["cite_pitfall", "dataset_name", "is_internal", "public_answer", "public_source", "scrub"]

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
    (
        r"SpareCores/sc-inspector-data|Spare Cores sc-inspector-data",
        "Spare Cores sc-inspector-data (CC BY-SA 4.0)",
        "https://github.com/SpareCores/sc-inspector-data",
    ),
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


_URL = re.compile(r"https?://\S+")


def is_internal(text: str) -> bool:
    """True when `text` cites something only this repository's keepers can open (a file name inside a web address,
    `https://…/spot.json`, is the address: anyone can open it)."""
    return bool(_INTERNAL.search(_URL.sub(" ", text)))


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
        cloud = re.search(r"catalogs/v\d+/([a-z]+)/", source)
        parts.append(f"{found[0]} ({cloud.group(1)}) {found[1]}" if cloud else f"{found[0]} {found[1]}")
    parts += [w for w in (_seed_words(m, lang) for m in _SEED.finditer(source)) if w]
    for match in _ISSUE.finditer(source):
        repo = _REPOS[match.group(1)]
        parts.append(f"{repo}#{match.group(2)} https://github.com/{repo}/issues/{match.group(2)}")
    for match in _ADDRESS.finditer(source):
        address = match.group(1).rstrip(".")
        if not is_internal("https://" + address) and not any(address in p for p in parts):
            parts.append("https://" + address)
    return list(dict.fromkeys(parts))


@cache
def _pitfall_citations() -> dict[str, dict[str, str]]:
    """Pitfall id -> its public title and link (`knowledge/data/public_citations.csv`), for the pitfalls whose
    own source cites only this repository's notes."""
    import csv

    from knowledge.paths import DATA_DIR

    with open(DATA_DIR / "public_citations.csv", encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def cite_pitfall(pitfall_id: str, source: str, lang: str = "en") -> str:
    """A caveat's source in words: its public title and link when one is recorded, else `public_source`."""
    row = _pitfall_citations().get(pitfall_id)
    if row:
        return f"{row['title_zh' if lang == 'zh' else 'title_en']} {row['url']}"
    return public_source(source, lang)


def public_source(source: str, lang: str = "en", limit: int = 3) -> str:
    """The words a user sees for `source`: itself when it names nothing internal, else what in it can be opened
    (at most `limit` items), else "gpubot's reviewed data" (its own curation, said as such)."""
    source = " ".join((source or "").split())
    if not source:
        return t("cite.unknown", lang)
    if imported(source):  # a file an admin imported: said as such, never as gpubot's own notes or by its path
        return t("cite.imported", lang)
    if not is_internal(source) and (not _catalog(source) or "@" not in source):  # no path, no commit: as it is
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


_INLINE_SOURCE = re.compile(  # a catalog source quoted inside a sentence ("… per SkyPilot catalog … @00148f2 (…)")
    r"(?:SkyPilot catalog|Alibaba ECS DescribePrice via|Tencent CVM InquiryPriceRunInstances via|"
    r"Google Cloud Billing Catalog via|ec2instances\.info via|AWS Spot Instance Advisor feed via)"
    r"[^,;()]*?@[0-9a-f]{7,}(?: \((?:[^()]|\([^()]*\))*\))?"
)
_CORRECTION_ID = re.compile(r"\((?:(?:S[0-2]|X)-\d{2}(?:…\d{2})?,? ?)+(?:seed (S[0-2]))?\)")
_ERRATA = re.compile(r";? ?\berrata (?:§[\d.]+|(?:S[0-2]|X)-\d{2})(?:[,…] ?(?:S[0-2]|X)?-?\d{2})*")
_SOURCES_TAIL = re.compile(r"((?:Sources?|来源)[:：] ?)([^\n]+)$")


_FILE = re.compile(r"(?:knowledge/[\w/.-]*|\b[\w-]+(?:\.[\w-]+)*\.(?:csv|json|ya?ml|md)\b)")


def _seed_words(match: re.Match, lang: str) -> str:
    seed = match.group(1) or match.group(3)
    title = _seed_titles().get(seed)
    if not title:
        return ""
    section = match.group(2)
    if section:
        return t("cite.seed_section", lang, title=title, section=section.rstrip("."))
    return t("cite.seed", lang, title=title)


_PAREN = re.compile(r"([(（])([^()（）]*)([)）])")
_BARE_ID = re.compile(r"[,，;；]? ?\b(?:S[0-2]|X)-\d{2}\b")


def _public_paren(lang: str):
    def replace(match: re.Match) -> str:
        inner = match.group(2)
        if not is_internal(inner):
            return match.group(0)
        words = public_source(inner, lang)
        return "" if words == t("cite.curated", lang) else f"{match.group(1)}{words}{match.group(3)}"

    return replace


def scrub(text: str, lang: str = "en") -> str:
    """A sentence of an answer with the sources it quotes in words (`public_source`): catalog paths and commits,
    erratum ids, `seed S0 §5`, files of this repository."""
    if not is_internal(text) and not _INLINE_SOURCE.search(text):
        return text
    text = _INLINE_SOURCE.sub(lambda m: public_source(m.group(0), lang, limit=1), text)

    def seed(match: re.Match) -> str:
        title = _seed_titles().get(match.group(1) or "")
        return f"({t('cite.seed', lang, title=title)})" if title else ""

    text = _CORRECTION_ID.sub(seed, text)
    text = _ERRATA.sub("", text)
    text = _SOURCES_TAIL.sub(lambda m: m.group(1) + public_source(m.group(2), lang), text)
    text = _PAREN.sub(_public_paren(lang), text)
    text = _BARE_ID.sub("", text)
    text = _SEED.sub(lambda m: _seed_words(m, lang), text)
    # tidied before and after the files are named: "x .csv" tidied to "x.csv" is a file name too (idempotent)
    text = _FILE.sub(t("cite.curated", lang), _tidy(text))
    return _tidy(text)


def _tidy(text: str) -> str:
    return re.sub(r"(?<=\S)\s+([,.;)])", r"\1", text).replace("()", "").rstrip()


def public_answer(answer):
    """`answer` with every sentence it shows (lines, notes, details, TCO assumptions) scrubbed of internal
    citations: what the short text and Slack show. The JSON and `--verbose` keep the original."""
    lang = answer.query.language

    def clean(items: list[str]) -> list[str]:
        return [scrub(x, lang) for x in items]

    extra = dict(answer.extra)
    if extra.get("details"):
        extra["details"] = clean(list(extra["details"]))
    update = {
        "lines": clean(answer.lines),
        "notes": clean(answer.notes),
        "extra": extra,
        "rules": [r.model_copy(update={"explain": scrub(r.explain, lang)}) for r in answer.rules],
        "pitfalls": [
            p.model_copy(update={"body": scrub(p.body, lang), "title": scrub(p.title, lang)}) for p in answer.pitfalls
        ],
        "recommendations": [r.model_copy(update={"reason": scrub(r.reason, lang)}) for r in answer.recommendations],
    }
    if answer.tco is not None:
        update["tco"] = answer.tco.model_copy(update={"assumptions": clean(answer.tco.assumptions)})
    if answer.tco_options:
        update["tco_options"] = [x.model_copy(update={"assumptions": clean(x.assumptions)}) for x in answer.tco_options]
    return answer.model_copy(update=update)
