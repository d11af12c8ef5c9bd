"""The shape of the code (issue 17): layers bot -> handlers -> knowledge, no import cycles, Slack libraries only
under bot/, no module over 500 lines; inside knowledge/, each package imports only what its __init__'s docstring
says (issue 29), and allows nothing it does not use.

Imports are read from the source (ast), inside functions too: a cycle hidden in a function body is still a cycle.
"""

from __future__ import annotations

import ast
import functools
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "handlers", "knowledge")
MAX_LINES = 500


def _files() -> dict[str, Path]:
    """module name -> file, for every module of the three packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


FILES = _files()


def _imported(module: str, path: Path) -> set[str]:
    """Every dotted name `module` imports (for `from a import b`: both `a` and `a.b`), relative ones resolved."""
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


@functools.cache
def _imports() -> dict[str, set[str]]:
    """module -> what it imports, for every module (read when a test first asks, not at collection)."""
    return {module: _imported(module, path) for module, path in FILES.items()}


def _graph(with_migrations: bool = False) -> dict[str, set[str]]:
    """Project module -> the project modules it imports (Alembic's migration scripts are loaded by path, apart)."""
    keep = {m for m in FILES if with_migrations or ".migrations" not in m}
    return {m: {t for t in _imports()[m] if t in keep and t != m} for m in keep}


def test_the_analysis_sees_imports_inside_functions():
    # knowledge.kb.opener imports the builder only when it must build: still an edge of the graph
    assert "knowledge.kb.build" in _graph()["knowledge.kb.opener"]
    assert "knowledge.kb.reader" in _graph()["handlers.cheapest"]


def test_no_import_cycles():
    try:
        graphlib.TopologicalSorter(_graph()).prepare()
    except graphlib.CycleError as exc:
        pytest.fail("import cycle: " + " -> ".join(exc.args[1]))


@pytest.mark.parametrize(("lower", "upper"), [("knowledge", ("bot", "handlers")), ("handlers", ("bot",))])
def test_nothing_imports_upward(lower, upper):
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in _graph(with_migrations=True).items()
        if m.split(".")[0] == lower
        for t in targets
        if t.split(".")[0] in upper
    )
    assert upward == []


def test_slack_libraries_only_under_bot():
    outside = sorted(
        f"{m} imports {name}"
        for m, names in _imports().items()
        if not m.startswith("bot")
        for name in names
        if name.split(".")[0] in ("slack_bolt", "slack_sdk")
    )
    assert outside == []
    assert any(name.startswith("slack_bolt") for name in _imports()["bot.slack.app"])  # the check can see them


def _lines() -> dict[str, int]:
    return {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines()) for path in FILES.values()}


def test_no_module_over_500_lines():
    """Every module of bot/, handlers/ and knowledge/ (issue 17: the last six were split on 2026-12-02)."""
    lines = _lines()
    assert len(lines) > 150  # the scan sees the packages
    assert sorted(f"{name}: {n} lines" for name, n in lines.items() if n > MAX_LINES) == []


def test_one_language_detector():
    """Chinese is recognised in one place (`handlers.language`); no module keeps its own CJK range."""
    import re as _re

    pattern = _re.compile(r"\\u4e00|\\\\u4e00|\u4e00-")
    owners = [
        str(path.relative_to(ROOT))
        for package in ("bot", "handlers", "knowledge")
        for path in (ROOT / package).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    # knowledge/facts/pitfalls.py tokenises Chinese words for full-text search; it does not pick a language
    assert "handlers/language.py" in owners
    assert set(owners) <= {"handlers/language.py", "knowledge/facts/pitfalls.py"}, owners


# modules that write the state database (or the knowledge-base file) or open it for writing: edges use them
STATE_WRITERS = (
    "knowledge.state.db",
    "knowledge.history.snapshots",  # record_snapshot, ensure_baselines
    "knowledge.history.baselines",
    "knowledge.state.subscriptions",
    "knowledge.state.settings_store",
    "knowledge.state.settings_audit",
    "knowledge.state.alerts",
    "knowledge.state.claims",
    "knowledge.catalog.imports",
    "knowledge.catalog.importer",
    "knowledge.kb.build",
    "knowledge.kb.opener",
    "sqlalchemy",
    "alembic",
)


def test_handlers_import_nothing_that_writes_state():
    """Handlers are pure (issue 17): the price history comes through an injected `knowledge.history.reader`
    reader, never from the state database's writers (a fake reader in tests/test_history_reader.py proves it)."""
    found = sorted(
        f"{m} imports {name}"
        for m, names in _imports().items()
        if m.split(".")[0] == "handlers"
        for name in names
        if any(name == w or name.startswith(w + ".") for w in STATE_WRITERS)
    )
    assert found == []
    assert "knowledge.history.reader" in _imports()["handlers.history"]  # the check sees lazy imports


# --- the knowledge packages' own rules (their __init__ docstrings) ---------------------------------------------

KNOWLEDGE_PACKAGES = ("catalog", "kb", "history", "facts", "state")


def _package_of(module: str) -> str | None:
    """'top' for knowledge's top-level modules, the package name inside knowledge/, None outside knowledge."""
    parts = module.split(".")
    if parts[0] != "knowledge":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in KNOWLEDGE_PACKAGES else "top"


def _rules(package: str) -> tuple[set[str], dict[str, set[str]]]:
    """(what every module of `package` may import, {module: what else it may}) from the last docstring line of
    the package's __init__: `Imports: top, facts, state; importer also kb, history`."""
    init = ROOT / "knowledge" / ("__init__.py" if package == "top" else f"{package}/__init__.py")
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    line = doc.strip().splitlines()[-1]
    assert line.startswith("Imports: "), f"{init}: the docstring's last line says what the package may import"
    allowed, *exceptions = (part.strip() for part in line.removeprefix("Imports: ").split(";"))
    extra = {}
    for item in exceptions:
        module, _, names = item.partition(" also ")
        extra[module.strip()] = {n.strip() for n in names.split(",")}
    return {n.strip() for n in allowed.split(",")}, extra


@pytest.mark.parametrize("package", ["top", *KNOWLEDGE_PACKAGES])
def test_each_knowledge_package_imports_only_what_its_docstring_allows(package):
    allowed, extra = _rules(package)
    assert allowed <= {"top", *KNOWLEDGE_PACKAGES} and "top" in allowed
    broken, used = [], set()
    for module, targets in _graph(with_migrations=True).items():
        if _package_of(module) != package:
            continue
        short = module.split(".")[-1] if package == "top" else module.split(".")[2] if module.count(".") > 1 else ""
        for target in targets:
            other = _package_of(target)
            if other is None or other == package:
                continue
            if other in allowed or other in extra.get(short, set()):
                used.add((short, other) if other not in allowed else ("", other))
            else:
                broken.append(f"{module} -> {target}")
    assert broken == []
    unused = [f"{m} also {p}" for m, names in extra.items() for p in names if (m, p) not in used]
    assert unused == [], "the docstring allows an import nobody makes: keep the rules honest"
