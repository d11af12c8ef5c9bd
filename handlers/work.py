"""work: the cost of the work, dollars per million output tokens, from measured LLM inference benchmarks.

Pure over (Query, KB): the ranking comes from `knowledge.facts.work.rank` (benchmark tokens/s x catalog prices). The
`work` rows are `Answer.extra["work"]` (the JSON contract), their benchmark details `extra["work_details"]` (same
order); `bot/render_work.py` renders both as text and as a Slack table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from handlers import work_mlperf
from handlers.display import both, for_query
from handlers.i18n import t
from handlers.models import Answer, Query, Source
from knowledge.facts import work, work_datasheet
from knowledge.facts.benchmarks import ATTRIBUTION, SOURCE, SOURCE_DATE, ModelEntry, models


def _t(key: str, lang: str, **values: object) -> str:
    return t(f"work.{key}", lang, **values)


@dataclass(frozen=True)
class _Asked:
    """What the question is read as: the model measured (None: estimated from `size`), the benchmark's workload,
    step and pricing, and the notes and suggestions saying how the question was read."""

    model: ModelEntry | None
    size: float | None
    workload: str
    step: str
    pricing: str
    notes: list[str]
    suggestions: list[str]

    @property
    def name(self) -> str:
        return self.model.name if self.model else f"{self.size:g}B"

    def labels(self, lang: str) -> dict[str, str]:
        """The workload, step and pricing as the reply names them."""
        shown = self.workload if self.step != "single_stream" else work.SINGLE_STREAM_WORKLOAD
        return {
            "workload": shown,
            "step": t(f"work.step.{self.step}", lang),
            "pricing": t(f"pricing.{self.pricing}", lang),
        }


def handle(query: Query, kb) -> Answer:
    """work <model> [rag|long context] [batch|interactive] [spot]: $ per 1M output tokens, measured benchmarks

    e.g. `cost per million tokens for Llama 3.1 8B`, `$/token for a 70B model`, `Llama 3.1 8B 每百万token成本`."""
    if (tuned_only := work_mlperf.only(query, kb)) is not None:  # a model only MLPerf Inference measured (issue 27)
        return tuned_only
    asked = _asked(query)
    if isinstance(asked, Answer):
        return asked
    found, by_datasheet, skipped = _ranked(query, kb, asked)
    notes = list(asked.notes)
    if budget_note := _within_budget(found, query, kb):  # measured or estimated rows, like cheapest
        notes.insert(0, budget_note)
    if not found.rows:
        return _none_found(query, kb, asked, found, skipped, notes)
    title = _title(query, asked, found, notes, skipped if by_datasheet else None)
    return _ranking_answer(query, kb, asked, found, title, notes)


def _asked(query: Query) -> _Asked | Answer:
    """The model, size and benchmark step the question asks about; an `Answer` naming the measured models when the
    model asked is unknown (or its size far outside anything measured)."""
    lang = query.language
    step = query.bench_step or "max_throughput"
    notes: list[str] = []
    suggestions: list[str] = []
    for issue in query.issues:
        if issue.kind == "model":
            notes.append(
                _t("unknown_model", lang, text=issue.text)
                + (" " + _t("did_you_mean", lang, candidates=", ".join(issue.candidates)) if issue.candidates else "")
            )
            suggestions += issue.candidates
    model = work.entry(query.model)
    size = query.model_size_b if query.model_size_b and 0.01 <= query.model_size_b <= 2000 else None
    if model is None and size:
        nearest, same = work.nearest_model(size, "llama_bench" if step == "single_stream" else "vllm_serving")
        if same:
            model = nearest
            notes.append(_t("read_as", lang, size=size, model=nearest.name, params=nearest.params_b))
    if model is None and not size:
        if suggestions or query.model_size_b:  # an unknown name, or a size far outside anything measured
            measured = ", ".join(m.name for m in models())
            title = notes[0] if notes else _t("unknown_model", lang, text=f"{query.model_size_b:g}B")
            return Answer(
                query=query,
                title=title,
                notes=[_t("which", lang, models=measured)],
                suggestions=suggestions,
                sources=[Source(source=SOURCE, as_of=SOURCE_DATE)],
                extra={"work": [], "work_details": []},
            )
        # a row of the bundled knowledge/data/benchmarks/models.csv: entry() finds it by construction
        model = cast(ModelEntry, work.entry("Llama-3.1-8B"))
        notes.append(_t("default_model", lang, model=model.name))
    if model is not None:
        wanted = "llama_bench" if step == "single_stream" else "vllm_serving"
        if model.benchmark == "llama_bench":
            step = "single_stream"
        elif wanted != model.benchmark:
            model = work.sibling(model, wanted) or model
            if model.benchmark != wanted:
                notes.append(_t("not_single", lang, model=model.name))
                step = "max_throughput"
    workload, pricing = query.bench_workload or "chat-256-128", query.pricing or "on_demand"
    return _Asked(model, size, workload, step, pricing, notes, suggestions)


def _ranked(query: Query, kb, asked: _Asked) -> tuple[work.Ranking, bool, list[str]]:
    """The measured ranking; when nothing measured matches the GPUs asked, their datasheet estimates instead (then
    True), with a line per reason some of the GPU's machines got none."""
    model, step, workload, pricing = asked.model, asked.step, asked.workload, asked.pricing
    found = work.rank(
        kb,
        model=model,
        size_b=asked.size,
        workload=workload,
        step=step,
        pricing=pricing,
        providers=query.providers,
        regions=query.regions,
        gpus=query.gpus,
        instance_types=query.instance_types,
    )
    _honour_exclusions(found, query)
    if found.rows or not query.gpus or model is None or query.instance_types:
        return found, False, []
    estimated = work_datasheet.rank_by_datasheet(
        kb,
        model=model,
        gpus=query.gpus,
        workload=workload,
        step=step,
        pricing=pricing,
        providers=query.providers,
        regions=query.regions,
    )
    _honour_exclusions(estimated, query)
    skipped = _skipped_lines(estimated.skipped, model, query, query.language)
    if not estimated.rows:
        return found, False, skipped
    found.rows, found.details = estimated.rows, estimated.details
    return found, True, skipped


def _none_found(query: Query, kb, asked: _Asked, found: work.Ranking, skipped: list[str], notes: list[str]) -> Answer:
    """Nothing priced: where the model was measured, the GPUs it was measured on, and why the GPU asked has no
    estimate."""
    lang, labels = query.language, asked.labels(query.language)
    lines = [_t("measured_on", lang, model=asked.name, where=", ".join(found.measured_on) or "—")]
    if query.gpus and asked.model is not None:
        priced = work.rank(kb, model=asked.model, workload=asked.workload, step=asked.step, pricing=asked.pricing)
        gpus = ", ".join(sorted({r["gpu"] for r in priced.rows})) or "—"
        lines.append(_t("measured_gpus", lang, model=asked.name, gpus=gpus))
    lines += skipped  # the GPU's priced machines, and why none has an estimate
    if excluded_note := _not_orderable(found.excluded, labels["pricing"], lang):
        notes.append(excluded_note)
    return Answer(
        query=query,
        title=_t("none", lang, model=asked.name, **labels),
        lines=lines,
        notes=[*notes, ATTRIBUTION],
        suggestions=asked.suggestions,
        sources=[Source(source=SOURCE, as_of=SOURCE_DATE)],
        extra={"work": [], "work_details": [], "excluded": found.excluded},
    )


def _title(query: Query, asked: _Asked, found: work.Ranking, notes: list[str], skipped: list[str] | None) -> str:
    """The title naming the cheapest row; appends to `notes` what kind of figure it is (`skipped`: the rows are
    datasheet estimates for the GPUs asked, and these lines say which machines got none)."""
    lang, best = query.language, found.rows[0]
    values = {
        "provider": best["provider"],
        "instance": best["instance_type"],
        "usd": best["usd_per_million_tokens"],
        "tps": best["tokens_per_s"],
        "price": best["price_per_hour_usd"],
        **asked.labels(lang),
    }
    model = asked.model
    if skipped is not None and model is not None:  # estimates by datasheet: only ever made with a model
        notes.append(_t("gpu_estimate", lang, model=model.name, where=", ".join(found.measured_on)))
        notes += skipped
        return _t("gpu_estimate_title", lang, model=model.name, gpus=", ".join(query.gpus), **values)
    if model is None:
        notes.append(_t("estimate", lang))
        return _t("estimate_title", lang, size=asked.size, **values)
    if model.note:
        notes.append(f"{model.name}: {model.note}.")
    return _t("title", lang, model=model.name, **values)


def _row_notes(found: work.Ranking, asked: _Asked, lang: str) -> list[str]:
    """The notes under a ranking: the formula, GPUs left idle, the benchmark's configuration, prices from two
    sources, what cannot be ordered or priced, and the benchmark's attribution."""
    notes = [_t("formula", lang)]
    if under := sum(1 for r in found.rows if (r["gpus_used"] or 0) < r["gpu_count"] - 1e-6):
        notes.append(_t("under_used", lang, n=under))
    notes.append(_t("single", lang) if asked.step == "single_stream" else _t("config", lang))
    if two := [r for r in found.rows if r.get("other_prices")]:
        first = two[0]
        notes.append(
            _t(
                "two_sources",
                lang,
                n=len(two),
                instance=first["instance_type"],
                region=first["region"],
                reason=first["price_trust_reason"],
            )
        )
    pricing = asked.labels(lang)["pricing"]
    if excluded_note := _not_orderable(found.excluded, pricing, lang):
        notes.append(excluded_note)
    if found.unpriced:
        notes.append(_t("unpriced", lang, pricing=pricing, where=", ".join(found.unpriced)))
    return [*notes, ATTRIBUTION]


def _ranking_answer(query: Query, kb, asked: _Asked, found: work.Ranking, title: str, notes: list[str]) -> Answer:
    """The ranking as an `Answer`, its sources (the benchmark's, then each row's price source) and MLPerf's tuned
    figures for the model beside it."""
    sources = [Source(source=SOURCE, as_of=SOURCE_DATE)]
    for row in found.rows:
        source = Source(source=row["source"], as_of=row["as_of"])
        if source not in sources:
            sources.append(source)
    model = asked.model
    tuned, tuned_notes, tuned_sources = (
        work_mlperf.beside(kb, query, model.name, asked.pricing) if model else ([], [], [])
    )
    return Answer(
        query=query,
        title=title,
        notes=notes + _row_notes(found, asked, query.language) + tuned_notes,
        suggestions=asked.suggestions,
        sources=sources + [s for s in tuned_sources if s not in sources],
        extra={"work": found.rows, "work_details": found.details, "excluded": found.excluded, "mlperf_serving": tuned},
    )


_SHOWN_SKIPPED = 4  # machines named per reason an estimate was not made (the count says the rest)


def _skipped_lines(skipped: dict[str, list[str]], model, query: Query, lang: str) -> list[str]:
    """One line per reason the GPU's priced machines got no estimate, naming a few of them."""
    out = []
    for why in ("other_count", "far", "too_small", "no_variant"):
        names = [n for n in skipped.get(why, []) if n.split()[0] not in query.exclude_providers]
        if not names:
            continue
        more = f" (+{len(names) - _SHOWN_SKIPPED})" if len(names) > _SHOWN_SKIPPED else ""
        out.append(
            _t(
                f"skipped.{why}",
                lang,
                n=len(names),
                gpus=", ".join(query.gpus),
                machines=", ".join(names[:_SHOWN_SKIPPED]) + more,
                model=model.name,
                need=work.weights_gb(model),
            )
        )
    return out


def _honour_exclusions(found, query: Query) -> None:
    """Leave out the rows of what the question ruled out ("except gcp": handlers.constraints)."""
    from handlers.constraints import excludes, kept

    if excludes(query):
        pairs = [(r, d) for r, d in zip(found.rows, found.details, strict=True) if kept(r, query)]
        found.rows, found.details = [r for r, _ in pairs], [d for _, d in pairs]


def _within_budget(found, query: Query, kb) -> str | None:
    """Keep the rows within the question's hourly cap ("under $1/hour", "每卡每小时不超过2美元"), like cheapest does
    (`brief.budget_cap`, `brief.budget_note`); the note says the cap and how many it removed. A total budget filters
    nothing here."""
    from handlers import brief

    cap = brief.budget_cap(query, kb.fx())
    if cap is None:
        return None
    per_gpu = cap[0] == "price_per_gpu_hour_usd"

    def hourly(row: dict) -> float:
        return (
            row["price_per_hour_usd"] / row["gpu_count"]
            if per_gpu and row.get("gpu_count")
            else row["price_per_hour_usd"]
        )

    pairs = [(r, d) for r, d in zip(found.rows, found.details, strict=True) if hourly(r) <= cap[1]]
    removed, total = len(found.rows) - len(pairs), len(found.rows)
    found.rows, found.details = [r for r, _ in pairs], [d for _, d in pairs]
    return brief.budget_note(query, removed, total)


def _not_orderable(excluded: list[dict], pricing: str, lang: str) -> str | None:
    """How many measured instance types were left out because they cannot be ordered at this pricing, and why."""
    if not excluded:
        return None
    items = "; ".join(f"{', '.join(e['instance_types'])}: {e['reason']}" for e in excluded)
    return _t("not_orderable", lang, n=sum(e["count"] for e in excluded), pricing=pricing, items=items)


def serving_lines(kb, query: Query, *, gpus: list[str] | None = None, pricing: str | None = None) -> list[str]:
    """For recommend and compare: measured $ per 1M output tokens of the GPUs/instances asked when the question is
    about serving (and says so); the training path says its cost per run is a datasheet estimate."""
    lang = query.language
    if query.workload in ("training", "fine_tuning"):
        return [_t("training", lang)]
    if query.workload != "inference" and not query.model:
        return []
    gpus = list(gpus if gpus is not None else query.gpus)
    found = work.cost_per_token(
        kb,
        model=query.model,
        model_size_b=query.model_size_b,
        gpus=gpus,
        instance_types=query.instance_types,
        pricing=pricing or query.pricing,
    )
    if found is None:
        what = query.model or (f"{query.model_size_b:g}B" if query.model_size_b else " / ".join(gpus) or "?")
        return [_t("serving_none", lang, what=what)]
    best: dict[str, dict] = {}
    for row in found["rows"]:  # cheapest first: keep the first row per GPU (or per instance type asked)
        best.setdefault(row["instance_type"] if query.instance_types else row["gpu"], row)
    display = for_query(query, kb)  # "in CNY": both currencies
    items = "; ".join(
        _t(
            "serving_item",
            lang,
            what=what,
            usd=both(r["usd_per_million_tokens"], display, said=f"${r['usd_per_million_tokens']:.4f}"),
            provider=r["provider"],
            instance=r["instance_type"],
            tps=r["tokens_per_s"],
            price=both(r["price_per_hour_usd"], display, said=f"${r['price_per_hour_usd']:.2f}"),
        )
        for what, r in best.items()
    )
    asked = query.instance_types or gpus
    missing = [a for a in asked if a not in best and a.split()[0] not in best]
    if missing:
        items += "; " + ", ".join(missing) + (": 未实测" if lang == "zh" else ": not measured")
    return [
        _t(
            "serving",
            lang,
            model=found["model"],
            pricing=t(f"pricing.{pricing or query.pricing or 'on_demand'}", lang),
            items=items,
        )
    ]
