"""Text -> the "work" fields of a `Query`: which benchmarked model, which benchmark workload and step.

`refine(query, text)` runs after the main parser (`handlers.parse`). It turns a question about the cost of the
work ("cost per million tokens for Llama 3.1 8B", "$/token for a 70B model", "每百万token成本最低") into the
`work` intent, and reads:

- the model: a family word ("llama", typos too) with its version and size ("llama3.1 8b", "Llama-3.1-8B-Instruct",
  "phi 4", "qwen 0.5b"), resolved against the benchmarked models (`knowledge/data/benchmarks/models.csv`) on the
  name ladder of `knowledge.names`; what does not resolve becomes a `NameIssue(kind="model")` with did-you-mean;
- the workload: chat (default), `rag`, `long context`;
- the step: max throughput (default; `batch`, `offline`), synchronous (`interactive`, `latency`, TTFT/TPOT) or
  llama.cpp single stream (`llama.cpp`, `single stream`, or a model only llama.cpp measured).
"""

from __future__ import annotations

import re
from functools import cache

from handlers.models import NameIssue, Query
from knowledge import names as nm
from knowledge.facts.benchmarks import models

__all__ = ["model_mention", "refine", "resolve_model"]

_COST = re.compile(
    r"per\s*(?:1\s*m|one\s+million|a\s+million|million|1,?000,?000|mtok|m)\s*(?:output\s+|generated\s+)?tok(?:en)?s?\b"
    r"|\$\s*/\s*(?:1\s*m\s*|m\s*)?tok|\$\s*per\s*(?:1\s*m\s*)?tok|/\s*(?:1\s*m|m)\s*tok|\b(?:cost|price|dollars?|usd)\s+"
    r"(?:per|a|/)\s*tok|\bper[\s-]token\b|\btokens?\s+per\s+(?:dollar|\$)|\btok(?:en)?s?\s*/\s*s\b|"
    r"\btokens?\s+per\s+second|百万\s*tokens?|百万词元|每\s*(?:个|千)?\s*tokens?|tokens?\s*(?:成本|价格|费用|单价)"
    r"|词元成本|每\s*token",
    re.IGNORECASE,
)
_SERVE = re.compile(r"\b(?:serv(?:e|es|ing)|inference|host(?:ing)?|deploy(?:ing)?)\b|推理|部署|上线", re.IGNORECASE)
_CHEAP = re.compile(r"cheap|lowest|least expensive|cost|最便宜|最低|最省|成本|便宜", re.IGNORECASE)
_ADVICE = re.compile(r"\b(?:recommend\w*|suggest\w*|advice|advise)\b|推荐|建议", re.IGNORECASE)
_RAG = re.compile(r"\brag\b|retrieval|检索增强|检索", re.IGNORECASE)
_LONG = re.compile(r"long[\s-]*(?:context|prompts?|input)|\blong\b|长上下文|长文本|长输入", re.IGNORECASE)
_SYNC = re.compile(
    r"interactive|latency|synchronous|one user|single user|\bttft\b|\btpot\b|first token|"
    r"交互|延迟|时延|首字|首token|单用户|同步",
    re.IGNORECASE,
)
_BATCH = re.compile(r"\bbatch|offline|max(?:imum)?\s+throughput|saturat|离线|批量|批处理|最大吞吐|满载", re.IGNORECASE)
_SINGLE = re.compile(r"llama\.?cpp|single[\s-]*stream|\bgguf\b|单流", re.IGNORECASE)

_TOKEN = re.compile(r"[a-z]+\d*(?:\.\d+)?|\d+(?:\.\d+)?[bm]?")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)?$")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([bm])$")
_GLUED = re.compile(r"^([a-z]+)(\d+(?:\.\d+)?)?$")
_NOISE = frozenset({"instruct", "it", "chat", "hf", "model", "gguf", "bnb", "4bit"})
_OTHER_FAMILIES = frozenset(
    {
        "mistral",
        "mixtral",
        "deepseek",
        "falcon",
        "yi",
        "gpt",
        "olmo",
        "granite",
        "codellama",
        "starcoder",
        "vicuna",
        "baichuan",
        "chatglm",
        "glm",
        "internlm",
        "minicpm",
        "command",
        "dbrx",
        "grok",
        "nemotron",
        "jamba",
        "tinyllama",
        "opt",
        "bloom",
        "pythia",
        "solar",
        "zephyr",
        "stablelm",
        "mpt",
        "kimi",
        "ernie",
        "hunyuan",
    }
)


@cache
def _aliases() -> dict[str, str]:
    """alias -> model name, for the names ladder (vLLM-measured names win over a llama.cpp name)."""
    names: dict[str, str] = {}
    for m in sorted(models(), key=lambda m: m.benchmark != "vllm_serving"):
        for alias in (m.name, m.model, m.model.rsplit("/", 1)[-1], *m.aliases):
            names.setdefault(alias.lower(), m.name)
    return names


@cache
def _families() -> frozenset[str]:
    return frozenset(m.family for m in models())


def _family(word: str) -> str | None:
    """The model family a word names ("llama", a typo "lamma"), an unmeasured family ("mistral"), or None."""
    if word in _families() or word in _OTHER_FAMILIES:
        return word
    if len(word) >= 4:
        from rapidfuzz import fuzz  # rapidfuzz loads only when a name is not found exactly

        best = max(_families(), key=lambda f: fuzz.ratio(word, f))
        if fuzz.ratio(word, best) >= 80:
            return best
    return None


def is_model_family(word: str) -> bool:
    """Whether a word names a model family ("llama", "qwen", "resnet"), so it is never read as a cloud."""
    return _family(word) is not None


def model_mention(text: str) -> tuple[str, str, float | None] | None:
    """(mention as typed, the same with the family spelled right, size in B) of the first model named, or None."""
    low = text.lower().replace("_", " ")
    toks = list(_TOKEN.finditer(low))
    for i, tok in enumerate(toks):
        glued = _GLUED.match(tok.group())
        family = _family(glued.group(1)) if glued else None
        if glued is None or family is None:
            continue
        parts, size, end = [family + (glued.group(2) or "")], None, tok.end()
        for nxt in toks[i + 1 : i + 5]:
            word = nxt.group()
            if low[end : nxt.start()].strip(" -/.") or word in _NOISE:
                break
            if sized := _SIZE.match(word):
                size = float(sized.group(1)) / (1000 if sized.group(2) == "m" else 1)
                parts.append(word)
                end = nxt.end()
                break
            if not _VERSION.match(word):
                break
            parts.append(word)
            end = nxt.end()
        if size is not None or len(parts) > 1:
            return text[tok.start() : end], " ".join(parts), size
    return None


def resolve_model(mention: str) -> nm.Resolution:
    return nm.resolve(mention, _aliases(), kind="model")


def _step(text: str) -> str | None:
    if _SINGLE.search(text):
        return "single_stream"
    if _SYNC.search(text):
        return "synchronous"
    return "max_throughput" if _BATCH.search(text) else None


def _workload(text: str) -> str | None:
    if _RAG.search(text):
        return "rag-1024-256"
    return "long-4096-512" if _LONG.search(text) else None


def refine(query: Query, text: str) -> Query:
    """The query, turned into the `work` intent when it asks for the cost of serving a model (pure)."""
    cost = bool(_COST.search(text))
    if not cost and not _SERVE.search(text):
        return query
    mention = model_mention(text)
    found = resolve_model(mention[1]) if mention else None
    resolved = found if isinstance(found, nm.Resolved) else None
    work = (cost and query.intent not in ("compare", "tco", "rent_or_api", "train_cost")) or (
        resolved is not None
        and bool(_CHEAP.search(text))
        and not _ADVICE.search(text)
        and query.intent in ("recommend", "cheapest", "price", "unknown")
    )
    if not work:  # another intent: it still carries the benchmarked model named (recommend/compare use it)
        return query.model_copy(update={"model": resolved.name}) if resolved is not None else query
    update: dict = {"intent": "work", "bench_workload": _workload(text) or "chat-256-128", "bench_step": _step(text)}
    if resolved is not None:
        update["model"] = resolved.name
        if next(m for m in models() if m.name == resolved.name).benchmark == "llama_bench":
            update["bench_step"] = "single_stream"
    elif mention and isinstance(found, (nm.Ambiguous, nm.Unknown)):  # a mention not Resolved: always one of these
        candidates = found.candidates if isinstance(found, nm.Ambiguous) else found.suggestions
        status = "ambiguous" if isinstance(found, nm.Ambiguous) else "unknown"
        update["issues"] = [
            *query.issues,
            NameIssue(kind="model", text=mention[0], status=status, candidates=list(candidates)[:3]),
        ]
    if mention and mention[2] and not query.model_size_b:
        update["model_size_b"] = mention[2]
    update["bench_step"] = update["bench_step"] or "max_throughput"
    return query.model_copy(update=update)
