"""Read-only access to the knowledge base: small query functions over one SQLite connection.

`KB(path)` opens a built knowledge base read-only (`knowledge.kb.opener.open_kb` builds it first when it is missing,
stale or damaged). Queries return plain dicts with the columns of their table; handlers turn them into models.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TypedDict, TypeVar, Unpack

from knowledge.errors import GpubotError

T = TypeVar("T")

REQUIRED_TABLES = ("meta", "gpus", "gpu_specs", "offers", "providers", "fx", "price_terms")  # every build has them
log = logging.getLogger("gpubot.kb")
_MEMORY = re.compile(
    r"^(?P<family>.+?)(?:\s+(?P<form>SXM|PCIe|NVL|OAM))?(?:\s+(?P<memory>\d+(?:\.\d+)?)\s*GB)?$", re.IGNORECASE
)
_FORMS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL", "oam": "OAM"}


class KnowledgeBaseError(GpubotError, RuntimeError):
    """The knowledge base is missing, corrupt or could not be built."""

    phrase = "error.kb"


def _identity(path: Path) -> str:
    """Which file is at `path` (inode, size, modification time): a rebuild is another file."""
    st = path.stat()
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def damage_marker(path: Path) -> Path:
    return path.with_name(path.name + ".damaged")


def marked_damaged(path: Path, identity: str | None) -> str | None:
    """Why the knowledge-base file with `identity` was found damaged by a query, or None (not marked)."""
    try:
        marked, _, reason = damage_marker(path).read_text(encoding="utf-8").partition("\n")
    except OSError:
        return None
    return (reason.strip() or "damaged") if identity and marked == identity else None


@dataclass(frozen=True, slots=True)
class GpuRef:
    """A GPU as a query names it: a family ("A100"), optionally one memory variant ("A100 80GB") and one form
    factor ("H100 PCIe", "A100 SXM 80GB": `gpu_form_factor` of the offers, knowledge.catalog.identity)."""

    family: str
    memory_gb: float | None = None
    form_factor: str | None = None

    @classmethod
    def parse(cls, name: str) -> GpuRef:
        match = _MEMORY.match(name.strip())
        if match and (match.group("form") or match.group("memory")):
            form = _FORMS.get((match.group("form") or "").lower())
            return cls(match.group("family"), float(match.group("memory")) if match.group("memory") else None, form)
        return cls(name.strip())

    def __str__(self) -> str:
        return " ".join(
            p for p in (self.family, self.form_factor, f"{self.memory_gb:g}GB" if self.memory_gb else "") if p
        )


def gpu_refs(gpus: Iterable[str], variants: Iterable[str] = ()) -> list[GpuRef]:
    """The refs of a query's GPUs, each narrowed to the form factor the question names ("cheapest H100 PCIe")."""
    forms = {ref.family: ref for ref in map(GpuRef.parse, variants) if ref.form_factor}
    refs = []
    for ref in map(GpuRef.parse, gpus):
        variant = forms.get(ref.family)
        refs.append(GpuRef(ref.family, ref.memory_gb or variant.memory_gb, variant.form_factor) if variant else ref)
    return refs


class OfferFilters(TypedDict, total=False):
    """The filters of `KB.offers` (and `split_orderable`, `excluded`) as one dict, passed on as `**filters`."""

    gpus: Iterable[GpuRef]
    pricing: str | None
    providers: Iterable[str]
    regions: Iterable[str]
    instance_types: Iterable[str]
    gpu_count: float | None
    min_memory_gb: float | None
    kinds: Iterable[str]
    orderable: bool | None
    gpu_kind: str | None  # only GPU families of this kind ("gpu": not TPUs or other accelerators)


class KB:
    """The knowledge base, opened read-only."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            self._identity = _identity(Path(path))
            self._check_shape()
        except sqlite3.DatabaseError as exc:
            raise KnowledgeBaseError(f"knowledge base {path} is unreadable ({exc}); run `gpubot kb build`") from exc

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """The one cache of values derived from this knowledge base: built once, released with the KB object.

        A rebuilt or re-imported knowledge base is a new `KB` with an empty memo, so nothing derived from old
        prices outlives them. Handlers and edges keep per-KB state here rather than in module-level caches."""
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = build()
        return memo[key]

    def _check_shape(self) -> None:
        """Cheap signs of a damaged file (a few microseconds): shorter than its own header says, or tables missing.

        Damage inside a page is found by `verify()` (a full check, ~70 ms) or by the first query that reads it."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        size = Path(self.path).stat().st_size
        if size < pages * page_size:
            raise KnowledgeBaseError(
                f"knowledge base {self.path} is truncated ({size} of {pages * page_size} bytes); run `gpubot kb build`"
            )
        tables = {row[0] for row in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [name for name in REQUIRED_TABLES if name not in tables]
        if missing:
            raise KnowledgeBaseError(
                f"knowledge base {self.path} lacks table(s) {', '.join(missing)}; run `gpubot kb build`"
            )

    def verify(self) -> None:
        """Read every page (`PRAGMA quick_check`); KnowledgeBaseError when any is damaged."""
        try:
            problems = [row[0] for row in self.conn.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            raise KnowledgeBaseError(
                f"knowledge base {self.path} is corrupt ({'; '.join(problems)[:300]}); run `gpubot kb build`"
            )

    def close(self) -> None:
        self.conn.close()

    def current(self) -> KB:
        """This knowledge base (a live stand-in returns whichever one is current)."""
        return self

    def rows(self, sql: str, params: Sequence | dict = ()) -> list[dict]:
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples zipped with the column names: twice as fast as dict(sqlite3.Row)
        try:
            cursor.execute(sql, params)
            columns = [d[0] for d in cursor.description or ()]
            return [dict(zip(columns, row, strict=True)) for row in cursor]
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)
            raise

    def _damaged(self, exc: sqlite3.DatabaseError) -> None:
        """A query failed because the file is damaged (not because the SQL is wrong): mark it (`kb.db.damaged`,
        naming this very file), so that the next `open_kb` or `LiveKB` refresh rebuilds it; KnowledgeBaseError."""
        text = str(exc).lower()
        if not any(
            sign in text
            for sign in (
                "malformed",
                "not a database",
                "disk i/o",
                "unable to open",
                "file is encrypted",
                "database corrupt",
            )
        ):
            return
        marked = ""
        try:
            if _identity(Path(self.path)) == self._identity:  # still the file we opened, not a newer build
                damage_marker(Path(self.path)).write_text(f"{self._identity}\n{exc}\n", encoding="utf-8")
                marked = "; it is rebuilt on next use"
        except OSError:
            pass
        log.error("knowledge base %s is damaged: %s%s", self.path, exc, marked)
        raise KnowledgeBaseError(
            f"knowledge base {self.path} is damaged ({exc}){marked or '; run `gpubot kb build`'}"
        ) from exc

    def _execute(self, sql: str, params: Sequence | dict = ()) -> list[sqlite3.Row]:
        """Rows of a query (sqlite3.Row), with a damaged file reported as such (see `_damaged`)."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)
            raise

    def meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            self._damaged(exc)
            raise
        return row[0] if row else None

    # --- names -------------------------------------------------------------------------------------------------

    @cached_property
    def gpu_names(self) -> dict[str, str]:
        """Every name a GPU family goes by (lower-cased) -> the family's knowledge-base name."""
        names: dict[str, str] = {}
        for row in self._execute("SELECT name, aliases, spec_models FROM gpus"):
            for alias in [row["name"], *json.loads(row["aliases"]), *json.loads(row["spec_models"])]:
                names.setdefault(alias.lower(), row["name"])
        for row in self._execute("SELECT accelerator, gpu FROM offer_gpu_names ORDER BY rowid"):
            names.setdefault(row["accelerator"].lower(), row["gpu"])
            names.setdefault(row["gpu"].lower(), row["gpu"])
        return names

    @cached_property
    def gpu_kinds(self) -> dict[str, str]:
        kinds = {row["name"]: row["kind"] for row in self._execute("SELECT name, kind FROM gpus")}
        for row in self._execute("SELECT gpu, gpu_kind FROM offer_gpu_kinds ORDER BY rowid"):
            kinds.setdefault(row["gpu"], row["gpu_kind"])
        return kinds

    @cached_property
    def providers(self) -> dict[str, dict]:
        return {row["id"]: row for row in self.rows("SELECT * FROM providers")}

    @cached_property
    def provider_names(self) -> dict[str, str]:
        """alias (lower-cased) -> provider id"""
        names: dict[str, str] = {}
        for pid, row in self.providers.items():
            for alias in [
                pid,
                row.get("name_en") or pid,
                row.get("name_zh") or pid,
                *json.loads(row["aliases"] or "[]"),
            ]:
                names.setdefault(alias.lower(), pid)
        return names

    @cached_property
    def regions(self) -> dict[str, set[str]]:
        """region id -> providers that have offers there"""
        regions: dict[str, set[str]] = {}
        for row in self._execute("SELECT DISTINCT region, provider FROM offers WHERE kind != 'article'"):
            regions.setdefault(row["region"], set()).add(row["provider"])
        return regions

    @cached_property
    def instance_types(self) -> dict[str, str]:
        """instance type (lower-cased) -> its spelling in the knowledge base"""
        return {
            row[0].lower(): row[0]
            for row in self._execute("SELECT instance_type FROM offer_instance_types ORDER BY rowid")
        }

    # --- offers ------------------------------------------------------------------------------------------------

    def offers(
        self,
        *,
        gpus: Iterable[GpuRef] = (),
        pricing: str | None = None,
        providers: Iterable[str] = (),
        regions: Iterable[str] = (),
        instance_types: Iterable[str] = (),
        gpu_count: float | None = None,
        min_memory_gb: float | None = None,
        kinds: Iterable[str] = ("catalog", "pricing"),
        limit: int | None = None,
        order: str = "price_per_gpu_hour_usd, provider, instance_type, region, zone_label IS NOT NULL, zone",
        orderable: bool | None = None,
        gpu_kind: str | None = None,
    ) -> list[dict]:
        """Offers matching every given filter, cheapest per GPU-hour (USD) first.

        `orderable=True` keeps only offers that can be ordered at their pricing model
        (`knowledge.catalog.availability`),
        `False` only those that cannot; `None` (the default) keeps both."""
        where, params = self.offer_where(
            gpus=gpus,
            pricing=pricing,
            providers=providers,
            regions=regions,
            instance_types=instance_types,
            gpu_count=gpu_count,
            min_memory_gb=min_memory_gb,
            kinds=kinds,
            orderable=orderable,
            gpu_kind=gpu_kind,
        )
        sql = f"SELECT * FROM offers WHERE {' AND '.join(where)} ORDER BY {order}"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self.rows(sql, params)

    def excluded(self, **filters: Unpack[OfferFilters]) -> list[dict]:
        """[{"reason", "availability", "count"}]: offers matching `filters` (as for `offers`) that cannot be ordered
        at their pricing model, plus catalog rows listed without any price, grouped by reason, most first."""
        return left_out(self, filters)

    def unpriced_rows(self, filters: OfferFilters) -> list[dict]:
        """Catalog rows matching `filters` (GPUs, providers, regions, instance types) listed without any price."""
        if "unpriced" not in self.table_names:
            return []
        where, params = ["availability IN ('spot_only', 'reservation_only', 'preview')"], []
        refs = list(filters.get("gpus") or ())
        if refs:
            where.append(f"gpu IN ({','.join('?' * len(refs))})")
            params += [ref.family for ref in refs]
        for column, names in (("provider", filters.get("providers")), ("region", filters.get("regions")),
                              ("instance_type", filters.get("instance_types"))):  # fmt: skip
            values = list(names or ())
            if values:
                where.append(f"{column} IN ({','.join('?' * len(values))})")
                params += values
        return self.rows(f"SELECT availability, availability_reason FROM unpriced WHERE {' AND '.join(where)}", params)

    @cached_property
    def table_names(self) -> set[str]:
        return {row[0] for row in self._execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def offer_where(
        self,
        *,
        gpus: Iterable[GpuRef] = (),
        pricing: str | None = None,
        providers: Iterable[str] = (),
        regions: Iterable[str] = (),
        instance_types: Iterable[str] = (),
        gpu_count: float | None = None,
        min_memory_gb: float | None = None,
        kinds: Iterable[str] = ("catalog", "pricing"),
        orderable: bool | None = None,
        gpu_kind: str | None = None,
    ) -> tuple[list[str], list]:
        """(SQL conditions, their params) of the offers matching every given filter (see `offers`)."""
        kinds = list(kinds)
        where, params = [f"kind IN ({','.join('?' * len(kinds))})"], list[object](kinds)
        if kinds == ["article"]:  # a literal, so that the partial index `offers_articles` serves it
            where, params = ["kind = 'article'"], []
        if orderable is not None:
            from knowledge.catalog.availability import NOT_ORDERABLE

            marks = ",".join("?" * len(NOT_ORDERABLE))
            where.append(f"COALESCE(availability, 'orderable') {'NOT IN' if orderable else 'IN'} ({marks})")
            params += sorted(NOT_ORDERABLE)
        gpu_clauses = []
        for ref in gpus:
            clause, values = "gpu = ?", list[object]([ref.family])
            if ref.memory_gb:
                clause, values = clause + " AND ABS(gpu_memory_gb - ?) < 0.6", [*values, ref.memory_gb]
            if ref.form_factor:
                clause, values = clause + " AND gpu_form_factor = ?", [*values, ref.form_factor]
            gpu_clauses.append(f"({clause})")
            params += values
        if gpu_clauses:
            where.append("(" + " OR ".join(gpu_clauses) + ")")
        if gpu_kind:
            families = sorted(name for name, kind in self.gpu_kinds.items() if kind == gpu_kind)
            where.append(f"gpu IN ({','.join('?' * len(families))})")
            params += families
        for column, names in (("provider", providers), ("region", regions), ("instance_type", instance_types)):
            chosen = list(names)
            if chosen:
                where.append(f"{column} IN ({','.join('?' * len(chosen))})")
                params += chosen
        if pricing:
            where.append("pricing = ?")
            params.append(pricing)
        if gpu_count:
            where.append("ABS(gpu_count - ?) < 1e-6")
            params.append(gpu_count)
        if min_memory_gb:
            where.append("gpu_memory_gb >= ?")
            params.append(min_memory_gb)
        return where, params

    def price_terms(self, instance_type: str, region: str | None = None) -> list[dict]:
        sql = "SELECT * FROM price_terms WHERE instance_type = ?"
        params: list = [instance_type]
        if region:
            sql += " AND region = ?"
            params.append(region)
        return self.rows(sql + " ORDER BY region, term", params)

    def spot_risk(self, instance_type: str, region: str | None = None) -> list[dict]:
        """Interruption buckets, newest first, for one instance type (optionally one region)."""
        sql = "SELECT * FROM spot_risk WHERE instance_type = ?"
        params: list = [instance_type]
        if region:
            sql += " AND region = ?"
            params.append(region)
        return self.rows(sql + " ORDER BY as_of DESC, region", params)

    def spot_risk_buckets(self, provider: str) -> list[dict]:
        """How a provider's spot interruption buckets are spread over its (instance type, region) pairs, from the
        newest snapshot of each source: `bucket`, `n`, `source`, `as_of`, in bucket order (least interrupted first).
        Empty when nothing is known of that provider's interruptions."""
        sql = (
            "SELECT bucket, bucket_index, count(*) AS n, source, as_of FROM spot_risk r WHERE provider = ? AND as_of ="
            " (SELECT max(as_of) FROM spot_risk WHERE provider = r.provider) GROUP BY bucket, source, as_of"
            " ORDER BY bucket_index"
        )
        return self.rows(sql, [provider])

    def fx(self) -> dict:
        """The exchange-rate row (read once per KB; a copy, so a caller cannot change the memo)."""
        return dict(self.memo("fx", lambda: self.rows("SELECT * FROM fx LIMIT 1")[0]))


def left_out(kb: KB, filters: OfferFilters) -> list[dict]:
    """`KB.excluded` of `kb` (a KB, or one that narrows its `offer_where`: `handlers.constraints.Narrowed`), counted
    in SQL: from the counts stored at build (`knowledge.kb.groups`) when no region is asked for and nothing is
    narrowed, else from the offers."""
    from knowledge.catalog.availability import excluded_counts

    unorderable: OfferFilters = {**filters, "orderable": False}
    where, params = kb.offer_where(**unorderable)
    summarised = getattr(type(kb), "offer_where", None) is KB.offer_where and "offer_left_out" in kb.table_names
    if summarised and not filters.get("regions"):  # counted at build, per instance type
        rows = kb.rows(
            "SELECT availability, availability_reason, SUM(n) AS n FROM offer_left_out "
            f"WHERE {' AND '.join(where)} GROUP BY availability, availability_reason",
            params,
        )
        return excluded_counts([*rows, *kb.unpriced_rows(filters)])
    rows = kb.rows(  # the rows found in the covering index `offers_ranking` first: only theirs are read
        "SELECT availability, availability_reason, COUNT(*) AS n FROM offers WHERE rowid IN "
        f"(SELECT rowid FROM offers WHERE {' AND '.join(where)}) GROUP BY availability, availability_reason",
        params,
    )
    return excluded_counts([*rows, *kb.unpriced_rows(filters)])
