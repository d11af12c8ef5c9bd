"""Functions over 60 lines (issue 29 item 4): split where a name explains the part. The count of bot/, handlers/
and knowledge/ may not grow past MAX_LONG; lower it as long functions are split (target: at most 10).

A function's length is `end_lineno - lineno + 1` of its `def` (decorators not counted, nested functions counted
on their own as well as inside their parent), read from the source with ast.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "handlers", "knowledge")
LIMIT = 60  # lines per function
MAX_LONG = 0  # functions over LIMIT today; lower it, never raise it


def long_functions(source: str, name: str = "<source>") -> list[tuple[str, int]]:
    """("file:line function", lines) of every function of `source` longer than LIMIT lines."""
    return [
        (f"{name}:{node.lineno} {node.name}", node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > LIMIT
    ]


def _project() -> list[tuple[str, int]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found += long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    return sorted(found, key=lambda item: -item[1])


def test_no_more_long_functions_than_allowed():
    found = _project()
    listed = "\n".join(f"{lines:4d}  {where}" for where, lines in found)
    assert len(found) <= MAX_LONG, f"{len(found)} functions over {LIMIT} lines (at most {MAX_LONG}):\n{listed}"


def _function(body_lines: int, *, is_async: bool = False, indent: str = "") -> str:
    head = f"{indent}{'async ' if is_async else ''}def f():\n"
    return head + "".join(f"{indent}    x = {i}\n" for i in range(body_lines))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (_function(LIMIT - 1), []),  # def line + 59: exactly 60 lines, allowed
        (_function(LIMIT), [("<source>:1 f", LIMIT + 1)]),  # 61 lines
        (_function(LIMIT, is_async=True), [("<source>:1 f", LIMIT + 1)]),  # async functions count too
        ("class C:\n" + _function(LIMIT, indent="    "), [("<source>:2 f", LIMIT + 1)]),  # methods
        (  # a nested long function is listed, and so is its parent
            "def outer():\n" + _function(LIMIT, indent="    ") + "    return f\n",
            [("<source>:1 outer", LIMIT + 3), ("<source>:2 f", LIMIT + 1)],
        ),
        ("@decorator\n" + _function(LIMIT - 1), []),  # the decorator line is not the function's
    ],
)
def test_length_is_counted_from_def_to_last_line(source, expected):
    assert long_functions(source) == expected
