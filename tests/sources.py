"""The project's own modules (bot/, handlers/, knowledge/) for the static checks that read the source with ast
(test_layers, test_errors, test_function_size, test_one_way, test_i18n, test_config): each file read and parsed once
per test process, when a test first asks (parsing all of them costs ~0.5 s of CPU; at import, every xdist worker
paid it while collecting)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "handlers", "knowledge")


def files(*packages: str) -> list[Path]:
    """Every module of `packages` (default: all three), package by package, sorted within each."""
    return [path for package in packages or PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


@functools.cache
def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@functools.cache
def tree(path: Path) -> ast.Module:
    """The parsed module; shared by every check, so never modify it."""
    return ast.parse(text(path), str(path))
