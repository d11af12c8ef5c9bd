"""Find the pitfalls that matter for a question: SQLite full-text search plus the query's structure.

A pitfall's relevance is the sum of
- full-text relevance (FTS5, trigram tokenizer so Chinese text matches too) of the question's words against the
  pitfall's titles, bodies and keywords in both languages,
- keyword hits (a curated keyword of the pitfall appears in the question; catches two-character Chinese words
  the trigram index cannot see),
- tag matches with the parsed query: its GPUs, providers, pricing model and topic words,
- similarity to the pitfall's own title (someone asking for it by name),
- a small bonus for severity, so that among equals the costly trap comes first.
A pitfall tagged for other providers than the ones asked about is pushed down.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from dataclasses import dataclass

TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "spot": ("spot", "preemptible", "竞价", "抢占"),
    "interruption": ("interrupt", "reclaim", "中断", "回收"),
    "checkpoint": ("checkpoint", "检查点", "断点"),
    "reserved": ("reserved", "reservation", "commit", "savings plan", "预留", "包年", "包月"),
    "lock_in": ("lock-in", "lock in", "锁定"),
    "egress": ("egress", "transfer", "bandwidth cost", "出网", "流量", "传输"),
    "storage": ("storage", "disk", "ebs", "存储", "云盘"),
    "hidden_costs": ("hidden", "cost", "隐性", "隐藏", "费用"),
    "vgpu": ("vgpu", "virtual gpu", "slice", "虚拟", "分片", "切分"),
    "mig": ("mig",),
    "kubernetes": ("kubernetes", "k8s", "pod", "容器"),
    "driver": ("driver", "驱动"),
    "cuda": ("cuda",),
    "compliance": ("compliance", "gdpr", "等保", "合规"),
    "data_residency": ("residency", "locali", "本地化", "数据出境"),
    "quota": ("quota", "配额"),
    "availability": ("availability", "capacity", "stock", "库存", "可用"),
    "billing": ("billing", "billed", "invoice", "计费", "账单"),
    "pricing_data": ("price list", "list price", "wrong price", "价格表"),
    "benchmark": ("benchmark", "throughput", "基准", "吞吐"),
    "memory": ("memory", "vram", "显存"),
    "interconnect": ("nvlink", "nvswitch", "pcie", "interconnect", "互联"),
    "network": ("network", "infiniband", "rdma", "网络"),
    "specs": ("spec", "tflops", "fp8", "fp32", "参数", "规格", "算力"),
    "procurement": ("procure", "purchase", "buy", "采购", "购买"),
}
SEVERITY_BONUS = {"high": 0.6, "medium": 0.3, "low": 0.0}
_FTS_TOKEN = re.compile(r"[a-z0-9][a-z0-9.\-]{2,}|[\u4e00-\u9fff]{3,}")


@dataclass(frozen=True, slots=True)
class Scored:
    row: dict
    score: float


def every_cloud(kb) -> list[dict]:
    """The pitfalls that concern every cloud (`tags.all_clouds`), in file order."""
    return [row for row in _rows(kb) if row["tags"].get("all_clouds")]


def _rows(kb) -> list[dict]:
    """The pitfall rows decoded, once per knowledge base (`KB.memo`)."""
    return kb.memo("pitfalls.rows", lambda: _decoded(kb))


def _decoded(kb) -> list[dict]:
    from rapidfuzz import utils

    out = []
    for row in kb.rows("SELECT * FROM pitfalls"):
        row = dict(row)
        row["tags"] = json.loads(row["tags"])
        row["keywords"] = json.loads(row["keywords"])
        row["erratum_ids"] = json.loads(row["erratum_ids"] or "[]")
        # titles as the similarity test reads them, processed once per knowledge base rather than per question
        row["_titles"] = tuple(utils.default_process(row[k]) for k in ("title_en", "title_zh"))
        row["_keywords_lower"] = tuple((k.lower(), 1.5 + 0.2 * min(len(k), 10)) for k in row["keywords"])
        out.append(row)
    return out


def topics_in(text: str) -> set[str]:
    lowered = text.lower()
    return {topic for topic, words in TOPIC_WORDS.items() if any(word in lowered for word in words)}


def _fts_scores(kb, text: str) -> dict[str, float]:
    tokens = sorted(set(_FTS_TOKEN.findall(text.lower())))
    if not tokens:
        return {}
    expression = " OR ".join('"' + token.replace('"', "") + '"' for token in tokens[:24])
    try:
        rows = kb.rows(
            "SELECT id, bm25(pitfalls_fts) AS rank FROM pitfalls_fts WHERE pitfalls_fts MATCH ? ORDER BY rank",
            (expression,),
        )
    except sqlite3.OperationalError:  # a query the FTS syntax rejects: fall back to the other signals
        return {}
    return {row["id"]: min(4.0, -row["rank"]) for row in rows}


def search(
    kb,
    text: str,
    *,
    gpus: tuple[str, ...] | list[str] = (),
    providers: tuple[str, ...] | list[str] = (),
    pricing: str | None = None,
    topics: set[str] | None = None,
    limit: int = 5,
) -> list[Scored]:
    """Pitfalls ranked by relevance to a question and its parsed fields; only those with some relevance.

    Kept per knowledge base for the last few hundred questions (answers that recommend something search on every
    ask, with the same arguments when the same question comes again)."""
    key = (text, tuple(gpus), tuple(providers), pricing, tuple(sorted(topics or ())), limit)
    memo: dict = kb.memo("pitfalls.search", dict)
    found = memo.get(key)
    if found is None:
        found = _search(kb, text, gpus=gpus, providers=providers, pricing=pricing, topics=topics, limit=limit)
        if len(memo) >= 256:
            with contextlib.suppress(StopIteration, RuntimeError):  # another thread may be at it too
                memo.pop(next(iter(memo)), None)
        memo[key] = found
    return list(found)


def _search(kb, text: str, *, gpus, providers, pricing, topics, limit: int) -> list[Scored]:
    lowered = text.lower()
    topics = set(topics or ()) | topics_in(text)
    if pricing == "spot":
        topics |= {"spot", "interruption"}
    elif pricing in ("reserved_1y", "reserved_3y"):
        topics |= {"reserved", "lock_in"}
    from rapidfuzz import fuzz, utils

    processed = utils.default_process(text)
    families = {g.split()[0].upper() for g in gpus}
    fts = _fts_scores(kb, text)
    scored = []
    for row in _rows(kb):
        tags = row["tags"]
        score = fts.get(row["id"], 0.0)
        title = max(fuzz.token_set_ratio(processed, t) for t in row["_titles"])
        if title >= 70:  # the question names the pitfall itself
            score += (title - 60) / 10
        score += sum(weight for k, weight in row["_keywords_lower"] if k in lowered)
        score += 2.0 * len(topics & set(tags.get("topics", ())))
        if pricing and pricing in tags.get("pricing", ()):
            score += 2.0
        tagged_gpus = {g.split()[0].upper() for g in tags.get("gpus", ())}
        score += 2.5 * len(families & tagged_gpus)
        tagged_providers = set(tags.get("providers", ()))
        if providers and tagged_providers:
            score += 2.5 * len(set(providers) & tagged_providers) - (0 if set(providers) & tagged_providers else 3.0)
        if score <= 0.5:
            continue
        scored.append(Scored(row, score + SEVERITY_BONUS.get(row["severity"], 0.0)))
    scored.sort(key=lambda s: (-s.score, s.row["id"]))
    return scored[:limit]


def keyword_vocabulary(kb) -> list[str]:
    """Every pitfall keyword and title, for did-you-mean when nothing matches."""
    words: set[str] = set()
    for row in _rows(kb):
        words.update(row["keywords"])
    return sorted(words)
