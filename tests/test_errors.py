"""One error root (issue 29): every exception class the project defines derives from `knowledge.errors.GpubotError`
(read from the source with ast, so a class in a module no test imports is still seen), and the reply phrase each
one names exists in English and Chinese."""

from __future__ import annotations

import ast
import builtins
import functools
from pathlib import Path

from handlers.i18n import t
from knowledge.errors import GpubotError, UserError, reply_phrase

ROOT = Path(__file__).resolve().parents[1]
BUILTIN_EXCEPTIONS = {
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
}


@functools.cache
def _classes() -> dict[str, tuple[str, list[str], list[str]]]:
    """class name -> (where, its bases' names, the phrases it sets), for every class of bot/, handlers/, knowledge/
    (read when a test first asks, not at collection)."""
    out = {}
    for package in ("bot", "handlers", "knowledge"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
                    phrases = [
                        s.value.value
                        for s in node.body
                        if isinstance(s, ast.Assign | ast.AnnAssign)
                        and isinstance(s.value, ast.Constant)
                        and "phrase" in ast.unparse(s.targets[0] if isinstance(s, ast.Assign) else s.target)
                    ]
                    out[node.name] = (f"{path.relative_to(ROOT)}:{node.lineno}", bases, phrases)
    return out


def _root_path(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """Every ancestor name of a project class (built-in exceptions included), by the names of its bases."""
    classes = _classes()
    if name in seen or name not in classes:
        return set()
    ancestors = set(classes[name][1])
    for base in classes[name][1]:
        ancestors |= _root_path(base, seen | {name})
    return ancestors


def test_every_exception_class_derives_from_gpubot_error():
    classes = _classes()
    exceptions = {
        name
        for name in classes
        if name in ("GpubotError",) or _root_path(name) & (BUILTIN_EXCEPTIONS | {"GpubotError"})
    }
    assert len(exceptions) >= 18  # the scan sees them (17 classes when the root was added, and the root)
    outside = sorted(f"{classes[n][0]} {n}" for n in exceptions - {"GpubotError"} if "GpubotError" not in _root_path(n))
    assert outside == []


def test_what_a_user_can_fix_is_a_user_error_with_its_reply_phrase():
    from bot.settings import MissingSettingError
    from knowledge.catalog.reader import CatalogError
    from knowledge.config_defaults import ConfigError
    from knowledge.history.series import UnknownGpu
    from knowledge.kb.reader import KnowledgeBaseError
    from knowledge.state.settings_store import SettingError

    for cls in (MissingSettingError, CatalogError, ConfigError, UnknownGpu, SettingError):
        assert issubclass(cls, UserError) and issubclass(cls, ValueError | RuntimeError)
    assert not issubclass(KnowledgeBaseError, UserError) and issubclass(KnowledgeBaseError, GpubotError)
    key, values = reply_phrase(CatalogError("prices.csv", "no Price column", line=1))
    assert key == "error.user" and t(key, "en", **values).startswith("That cannot be done: prices.csv, line 1")
    key, values = reply_phrase(KnowledgeBaseError("kb.db is truncated"))
    assert t(key, "zh", **values) == "知识库不可用（kb.db is truncated）；运行 gpubot 的管理员可以重建它。"
    assert reply_phrase(ZeroDivisionError("x")) == ("error.internal", {})


def test_every_reply_phrase_an_error_names_exists_in_both_languages():
    named = {GpubotError.phrase, UserError.phrase} | {p for _, _, phrases in _classes().values() for p in phrases}
    assert "error.kb" in named
    for key in named:
        for lang in ("en", "zh"):
            assert t(key, lang, detail="x") != key, f"{key} has no {lang} text"


def test_every_catch_all_says_why_it_catches_all():
    """`except Exception` only where a request or job must not die, each with its reason on the line (issue 29):
    a catch-all without one is either narrowed to what it expects or explained. One that undoes and re-raises
    (a bare `raise` last) catches nothing."""
    unexplained = []
    for package in ("bot", "handlers", "knowledge"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, ast.ExceptHandler):
                    continue
                caught = ast.unparse(node.type) if node.type is not None else "BaseException"
                cleanup = isinstance(node.body[-1], ast.Raise) and node.body[-1].exc is None  # undoes, re-raises
                if caught in ("Exception", "BaseException") and not cleanup:
                    line = lines[node.lineno - 1]
                    if "#" not in line.split("except", 1)[1]:
                        unexplained.append(f"{path.relative_to(ROOT)}:{node.lineno}: {line.strip()}")
    assert unexplained == [], "\n".join(unexplained)
