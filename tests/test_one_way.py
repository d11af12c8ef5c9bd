"""One way from words to answer (issue 23): the question's text is read in `handlers/parse/` only, and the intent is
decided there only. Static checks over the source (ast), so a new module that re-reads the text or re-decides the
intent fails here, naming the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARSE = ROOT / "handlers" / "parse"
SOURCES = [p for pkg in ("bot", "handlers", "knowledge") for p in sorted((ROOT / pkg).rglob("*.py"))]
OUTSIDE = [p for p in SOURCES if PARSE not in p.parents]

# The knowledge base's full-text searches take the question as their search string (`common.scan_text`): the
# pitfalls and checklist search (FTS + fuzzy title match) and the errata scoring (a seed erratum's own question).
# They are searches, not readings of the words; each call site is listed, so a new one fails this test.
SEARCHES = {
    ("handlers/pitfalls.py", "relevant"),
    ("handlers/pitfalls.py", "handle"),
    ("handlers/checklist.py", "handle"),
    ("handlers/spec.py", "_scores"),
}
LOGS = {"bot/pipeline.py", "bot/slack/history.py"}  # the text quoted in a log line, never matched


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _reads(path: Path) -> list[tuple[int, str, str]]:
    """(line, function, what) for every read of a query's text and every call of `scan_text` in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for fn in _functions(tree):
        for node in ast.walk(fn):
            named = isinstance(node, ast.Attribute) and node.attr == "text" and isinstance(node.value, ast.Name)
            if named and ("query" in node.value.id or node.value.id in ("q", "applied", "parsed")):
                found.append((node.lineno, fn.name, f"{node.value.id}.text"))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "scan_text":
                found.append((node.lineno, fn.name, "scan_text()"))
    return found


def test_no_module_outside_the_parser_reads_the_question_text():
    offenders = []
    for path in OUTSIDE:
        rel = path.relative_to(ROOT).as_posix()
        for line, function, what in _reads(path):
            if rel in LOGS or (rel, function) in SEARCHES or (rel, function) == ("handlers/common.py", "scan_text"):
                continue
            offenders.append(f"{rel}:{line} {function}() reads {what}")
    assert not offenders, "read the words in handlers/parse/ and put what they say on the Query:\n" + "\n".join(
        offenders
    )


def test_the_search_sites_still_exist():
    """The allowance above is exact: each listed search site still calls `scan_text` (stale entries fail)."""
    for rel, function in SEARCHES:
        assert any(f == function for _, f, _ in _reads(ROOT / rel)), (rel, function)


def _decides_intent(node: ast.AST) -> bool:
    """`x.model_copy(update={"intent": ...})`, `Query(intent=...)` or `choose(...)`."""
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
    if name == "model_copy":
        return any(
            isinstance(k.value, ast.Dict)
            and any(isinstance(key, ast.Constant) and key.value == "intent" for key in k.value.keys)
            for k in node.keywords
        )
    if name == "Query":
        return any(k.arg == "intent" for k in node.keywords)
    return name == "choose"


# Places that name an intent without reading any words: a command or a click says which (no decision is made).
NAMED = {
    "bot/slack/actions.py",  # a button: "Show pitfalls", "Work: this pick"
    "bot/digest_cmd.py",  # `gpubot digest`
    "bot/history_cmd.py",  # `gpubot history`
    "bot/slack/home.py",  # App Home's help
    "bot/slack/slash.py",  # `/gpu help` and an empty `/gpu`
    "bot/slack/answering.py",  # a message that is only a mention: help
    "handlers/digest.py",  # the scheduled digest's own question
    "handlers/alerts.py",  # an alert's stored target, priced as "cheapest"
}


def test_the_intent_is_decided_in_one_place():
    """Only the parser decides an intent from words; elsewhere an intent is only named by a command or a click."""
    places = {}
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits = [n.lineno for n in ast.walk(tree) if _decides_intent(n)]
        if hits:
            places[rel] = hits
    outside = {rel for rel in places if not rel.startswith("handlers/parse/")}
    assert outside <= NAMED, sorted(outside - NAMED)
    assert {rel for rel in places if rel.startswith("handlers/parse/")} <= {
        "handlers/parse/entry.py",  # the Query, with the intent `intent.choose` gives
        "handlers/parse/reroute.py",  # its corrections: words (reroute), then the knowledge base (settle)
        "handlers/parse/work.py",  # a benchmarked model's $ per 1M tokens
        "handlers/parse/train.py",  # a training run (MLPerf) or rent-or-API question (issue 27)
    }
