"""One way from words to answer (issue 23): the question's text is read in `handlers/parse/` only, and the intent is
decided there only. Static checks over the source (ast), so a new module that re-reads the text or re-decides the
intent fails here, naming the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


# --- no matching of the question's words outside the parser -------------------------------------------------------
# The question's raw text is (a) `.text` of a Query or of a Slack payload (`query`, `cmd`, `message`, ... or a
# parameter annotated `Query`/`SlashCommand`/`Message`), (b) a parameter handed to the parser or to an answering
# entry point (`understand(text, kb)`: that `text` is the question), and (c) any variable bound from those, trimmed
# or sliced. Matching it is a regular expression applied to it, a str method that inspects it, or an `in`/`==`
# test against it (a keyword list).
HOLDERS = {"query", "q", "parsed", "applied", "asked", "cmd", "command", "message", "event", "alert"}
HOLDER_TYPES = {"Query", "SlashCommand", "Message"}
INTO_PARSER = {"understand", "understood", "parse", "answer", "answer_text", "answer_text_with", "message_for"}
INSPECT = {"lower", "upper", "casefold", "startswith", "endswith", "find", "rfind", "index", "rindex", "count"}
INSPECT |= {"split", "rsplit", "partition", "rpartition", "splitlines", "isdigit", "isalpha", "isascii", "isspace"}
TRIM = {"strip", "lstrip", "rstrip"}
REGEX = {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _callee(call: ast.Call) -> str | None:
    return getattr(call.func, "attr", None) or getattr(call.func, "id", None)


def _is_raw(e: ast.AST, raw: set[str], holders: set[str]) -> bool:
    """`e` is the question's raw text: a name bound from it, `<holder>.text`, or either trimmed, sliced, str()'d."""
    if isinstance(e, ast.Name):
        return e.id in raw
    if isinstance(e, ast.Attribute) and e.attr == "text" and isinstance(e.value, ast.Name):
        return e.value.id in holders
    if isinstance(e, ast.Subscript):
        return _is_raw(e.value, raw, holders)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in TRIM:
        return _is_raw(e.func.value, raw, holders)
    if isinstance(e, ast.Call) and _callee(e) in ("str", "scan_text"):
        return _callee(e) == "scan_text" or any(_is_raw(a, raw, holders) for a in e.args)
    return isinstance(e, ast.BoolOp) and any(_is_raw(v, raw, holders) for v in e.values)


def _matches(source: str) -> list[tuple[int, str, str]]:
    """(line, function, how) for every match of the question's raw text in one module's source."""
    found = []
    for fn in _functions(ast.parse(source)):
        args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
        holders = HOLDERS | {
            a.arg
            for a in args
            if a.annotation is not None
            and any(isinstance(n, ast.Name) and n.id in HOLDER_TYPES for n in ast.walk(a.annotation))
        }
        raw: set[str] = set()

        def is_raw(e: ast.AST, raw: set[str] = raw, holders: set[str] = holders) -> bool:
            return _is_raw(e, raw, holders)

        names = {a.arg for a in args}
        for node in ast.walk(fn):  # (b) a parameter that goes into the parser is the question
            if isinstance(node, ast.Call) and _callee(node) in INTO_PARSER and node.args:
                raw |= {n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name) and n.id in names}
        for _ in range(3):  # (c) bound from it
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and is_raw(node.value):
                    raw |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in INSPECT and is_raw(node.func.value):
                    found.append((node.lineno, fn.name, f".{node.func.attr}()"))
                elif node.func.attr in REGEX and not is_raw(node.func.value) and any(map(is_raw, node.args)):
                    found.append((node.lineno, fn.name, f"regex .{node.func.attr}()"))
            tests = isinstance(node, ast.Compare) and any(
                isinstance(op, ast.In | ast.NotIn | ast.Eq) for op in node.ops
            )
            if tests and any(is_raw(x) for x in [node.left, *node.comparators]):  # type: ignore[attr-defined]
                found.append((node.lineno, fn.name, "keyword test"))
    return found


PLANTED = [  # each a way a module could re-read the words; the check must see every one
    "def f(query):\n    return 'not' in query.text\n",
    "import re\ndef f(query):\n    return re.search(r'except (\\w+)', query.text)\n",
    "def f(cmd, kb):\n    if cmd.text.strip().lower() in ('help', '?'):\n        return None\n",
    "def f(text, kb):\n    if text.lower() == 'help':\n        return None\n    return understand(text, kb)\n",
    "def f(text, kb):\n    words = text.strip()[:200]\n    return 'spot' in words or answer(text, kb)\n",
    "import re\n_P = re.compile('x')\ndef f(q: Query):\n    low = q.text\n    return _P.findall(low)\n",
    "def f(query):\n    return scan_text(query).startswith('why')\n",
    "def f(message):\n    return [w for w in message.text.split() if w]\n",
]
CLEAN = [  # what edges legitimately do with the text: trim it, hand it to the parser, quote it in a log line
    "def f(text, kb):\n    return understand(text.strip(), kb)\n",
    "def f(query):\n    log.warning('failed %r', query.text[:200])\n    return query.intent == 'help'\n",
    "def f(text):\n    return text.lower() in ('a', 'b')\n",  # a parameter named text that is no question
]


@pytest.mark.parametrize("source", PLANTED)
def test_the_check_sees_a_planted_reading_of_the_words(source):
    assert _matches(source), source


@pytest.mark.parametrize("source", CLEAN)
def test_the_check_lets_the_text_pass_through(source):
    assert _matches(source) == [], source


def test_no_module_outside_the_parser_matches_the_question_text():
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{line} {function}() {how}"
        for path in OUTSIDE
        for line, function, how in _matches(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "match the words in handlers/parse/ and put what they say on the Query:\n" + "\n".join(
        offenders
    )
