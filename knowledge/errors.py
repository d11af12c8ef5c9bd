"""The one root of every exception gpubot defines, and what a reply to it says.

- `GpubotError`: something gpubot raises on purpose; `phrase` is the key (knowledge/data/phrases.json) of the
  reply an edge gives for it, with the exception's text as `{detail}`
  - `UserError`: what the person asking (or the operator configuring) can fix: a bad question, setting, file or
    value; the message says what to change. `ConfigError`, `SettingsError` (`MissingSettingError`),
    `SecretKeyError`, `SettingError`, `AlertParseError`, `AlertError`, `CatalogError`, `NotFiniteError`,
    `ValueTooLongError`, `ChartError`, `UnknownGpu`
  - the rest, which only an operator or a retry mends: `KnowledgeBaseError`, `HistoryError`, `StateBusyError`,
    `FetchError`, `LexiconError`

Each keeps the built-in base it had (`ValueError`, `RuntimeError`) as a second base, so `except ValueError` still
sees a bad value. `tests/test_errors.py` checks that every exception class in the project derives from
`GpubotError`, and that every reply phrase named here exists in both languages.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["GpubotError", "UserError", "reply_phrase"]


class GpubotError(Exception):
    """The root: every exception gpubot defines derives from it."""

    phrase: ClassVar[str] = "error.internal"


class UserError(GpubotError):
    """What the user can fix; the message says what to change."""

    phrase: ClassVar[str] = "error.user"


def reply_phrase(exc: BaseException) -> tuple[str, dict[str, str]]:
    """(phrase key, its values) of the reply to `exc`: its own phrase for a `GpubotError`, else the apology."""
    if isinstance(exc, GpubotError):
        return exc.phrase, {"detail": str(exc)}
    return GpubotError.phrase, {}
