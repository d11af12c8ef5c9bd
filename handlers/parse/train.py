"""Text -> the issue-27 fields of a `Query`: the MLPerf Training benchmark (train_cost), a usage (rent_or_api).

`refine(query, text)` runs after the main parser and `handlers.parse.work.refine`. The intents themselves come from
the cue phrases of `knowledge/data/lexicon/intents.json` ("cost to fine tune", "self host", "自己部署") through the
ordered rules of `handlers.parse.intent`; here:

- a training or fine-tuning question that asks for a cost and names a model ("how much to pretrain Llama 3.1 8B on
  B200", "训练Llama 3.1 8B要花多少钱") becomes `train_cost` too;
- `train_cost` reads the benchmark: the model named, resolved against the MLPerf Training benchmarks
  (`knowledge/data/mlperf/training_benchmarks.csv`, on the name ladder of `knowledge.names`); a name that does not
  resolve becomes a `NameIssue(kind="model")` with did-you-mean, never a silent guess;
- `rent_or_api` reads the usage: "50M tokens a day", "1B tokens per month", "每天5000万token".
"""

from __future__ import annotations

import re
from functools import cache

from handlers.models import NameIssue, Query
from handlers.parse.work import model_mention, resolve_model
from knowledge import names as nm
from knowledge.facts.mlperf import inference_models, training_benchmarks

__all__ = ["benchmark_aliases", "mlperf_inference_model", "refine", "usage_per_day"]

_COST = re.compile(
    r"\b(?:cost|costs|price|priced|how much|spend|dollars?|usd|budget|cheapest|cheaper)\b|\$|"
    r"多少钱|成本|花费|费用|价格|花多少|要花|多少",
    re.IGNORECASE,
)
_FLUX = re.compile(r"\bflux(?:\.?\s?1)?\b", re.IGNORECASE)
_BENCH_ID = re.compile(r"\b(llama31_8b|llama2_70b_lora|llama31_405b|flux1)\b", re.IGNORECASE)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
          "万": 1e4, "百万": 1e6, "千万": 1e7, "亿": 1e8}  # fmt: skip
_PER = {"day": 1.0, "daily": 1.0, "天": 1.0, "日": 1.0, "month": 1 / 30.4, "monthly": 1 / 30.4, "月": 1 / 30.4,
        "hour": 24.0, "小时": 24.0}  # fmt: skip
_USAGE_EN = re.compile(
    r"(\d+(?:[.,]\d+)?)\s*(k|thousand|m|mn|million|b|bn|billion)?\s*(?:output\s+)?tokens?\s*"
    r"(?:a|an|per|each|every|/)\s*(day|month|hour)|(\d+(?:[.,]\d+)?)\s*(k|m|b|million|billion)?\s*tokens?\s*(daily|monthly)",
    re.IGNORECASE,
)
_USAGE_ZH = re.compile(
    r"每(天|日|月|小时)\s*(\d+(?:\.\d+)?)\s*(万|百万|千万|亿)?\s*(?:个)?\s*(?:tokens?|词元)", re.IGNORECASE
)


@cache
def benchmark_aliases() -> dict[str, str]:
    """alias -> MLPerf Training benchmark id, for the names ladder."""
    names: dict[str, str] = {}
    for b in training_benchmarks():
        for alias in (b.benchmark, b.name, *b.aliases):
            names.setdefault(alias.lower(), b.benchmark)
    return names


@cache
def _inference_aliases() -> list[tuple[re.Pattern, str]]:
    """(alias as a whole-word pattern, MLPerf model id), longest first ("llama 2 70b 99.9" before "llama 2 70b")."""
    pairs = [(a.strip(), m) for m, r in inference_models().items() for a in r["aliases"].split("|") if a.strip()]
    pairs.sort(key=lambda p: -len(p[0]))
    return [(re.compile(r"(?<![\w.])" + re.escape(a).replace(r"\ ", r"[\s_-]*") + r"(?![\w])"), m) for a, m in pairs]


def mlperf_inference_model(text: str) -> str | None:
    """The MLPerf Inference model a text names ("Llama 2 70B" -> "llama2-70b-99"), or None."""
    low = text.lower()
    return next((m for pattern, m in _inference_aliases() if pattern.search(low)), None)


def usage_per_day(text: str) -> float | None:
    """Tokens a day from a stated usage ("50M tokens a day", "每天5000万token"), or None."""
    if found := _USAGE_EN.search(text):
        number, scale, per = (
            (found.group(1), found.group(2), found.group(3)) if found.group(1) else found.group(4, 5, 6)
        )
        value = float(number.replace(",", "")) * _SCALE.get((scale or "").lower(), 1.0)
        return value * _PER[per.lower()]
    if found := _USAGE_ZH.search(text):
        return float(found.group(2)) * _SCALE.get(found.group(3) or "", 1.0) * _PER[found.group(1)]
    return None


def _benchmark(query: Query, text: str) -> tuple[str | None, NameIssue | None]:
    """(benchmark id, None), (None, issue) for a model that is not an MLPerf benchmark, or (None, None)."""
    if found := _BENCH_ID.search(text):
        return found.group(1).lower(), None
    if _FLUX.search(text):
        return "flux1", None
    mention = model_mention(text)
    if mention is None:
        return None, None
    resolved = nm.resolve(mention[1], benchmark_aliases(), kind="model")
    if isinstance(resolved, nm.Resolved):
        return resolved.name, None
    candidates = resolved.candidates if isinstance(resolved, nm.Ambiguous) else resolved.suggestions
    status = "ambiguous" if isinstance(resolved, nm.Ambiguous) else "unknown"
    return None, NameIssue(kind="model", text=mention[0], status=status, candidates=list(candidates)[:3])


def refine(query: Query, text: str) -> Query:
    """The query with the train_cost / rent_or_api fields read (pure)."""
    training = query.workload in ("training", "fine_tuning") or query.intent == "train_cost"
    if (
        query.intent in ("price", "tco", "cheapest", "recommend", "unknown", "work")
        and training
        and _COST.search(text)
        and (model_mention(text) or _FLUX.search(text) or _BENCH_ID.search(text))
    ):
        query = query.model_copy(update={"intent": "train_cost"})
    if query.intent == "train_cost":
        benchmark, issue = _benchmark(query, text)
        issues = [i for i in query.issues if i.kind != "model"] + ([issue] if issue else [])
        return query.model_copy(update={"train_benchmark": benchmark, "issues": issues, "model": None})
    if query.intent == "work" and query.model is None and (found := mlperf_inference_model(text)):
        issues = [i for i in query.issues if i.kind != "model"]  # named: a model MLPerf Inference measured
        return query.model_copy(update={"mlperf_model": found, "issues": issues})
    if query.intent == "rent_or_api":
        update: dict = {"tokens_per_day": usage_per_day(text)}
        if query.model is None and (mention := model_mention(text)):  # "rent or api phi 4": the model named
            resolved = resolve_model(mention[1])
            if isinstance(resolved, nm.Resolved):
                update["model"] = resolved.name
            elif not any(i.kind == "model" for i in query.issues):
                candidates = resolved.candidates if isinstance(resolved, nm.Ambiguous) else resolved.suggestions
                status = "ambiguous" if isinstance(resolved, nm.Ambiguous) else "unknown"
                issue = NameIssue(kind="model", text=mention[0], status=status, candidates=list(candidates)[:3])
                update["issues"] = [*query.issues, issue]
        return query.model_copy(update=update)
    return query
