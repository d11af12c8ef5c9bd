"""Open the knowledge base, building it first when it is missing, stale or damaged.

This sits above both the reader (`knowledge.kb.reader`) and the builder (`knowledge.kb.build`): the reader never
builds and
the builder never reads through `KB`, so neither imports the other.
"""

from __future__ import annotations

import logging
from pathlib import Path

from knowledge.kb.reader import KB, KnowledgeBaseError, damage_marker, marked_damaged
from knowledge.kb.schema import fingerprint
from knowledge.paths import kb_path

log = logging.getLogger("gpubot.kb")


def open_kb(path: Path | None = None, *, build_if_missing: bool = True, verify: bool = False) -> KB:
    """Open the knowledge base, building it first when it is missing, stale or corrupt (`verify`: check every
    page first, ~70 ms, for a long-running server).

    The knowledge base is a build artifact (bundled data plus the imports kept in the state database), so a
    damaged file is simply rebuilt, with a warning in the log. When a rebuild fails, a stale but readable
    knowledge base keeps serving (logged); with none to fall back on, `KnowledgeBaseError` says why.
    """
    path = path or kb_path()
    stale: KB | None = None
    damaged: KnowledgeBaseError | None = None
    if path.exists():
        try:
            kb = KB(path)
            reason = marked_damaged(path, kb._identity)
            if reason:
                kb.close()
                raise KnowledgeBaseError(f"knowledge base {path} was found damaged ({reason})")
            if verify:
                kb.verify()
            if kb.meta("fingerprint") == fingerprint() and imports_are_current(kb.meta("imports_version")):
                return kb
            stale = kb  # bundled data changed, or imports made or cancelled since (on any machine)
        except KnowledgeBaseError as exc:
            if not build_if_missing:
                raise
            damaged = exc
            log.warning("rebuilding the knowledge base: %s", exc)
    if not build_if_missing:
        if stale is not None:
            stale.close()
        raise KnowledgeBaseError(f"knowledge base {path} is {'stale' if stale else 'missing'}; run `gpubot kb build`")
    from knowledge.kb import build as builder  # here: opening a current one needs no builder

    try:
        builder.build(path)  # through the module, so that a test can replace `build.build`
    except Exception as exc:  # any build failure: serve the stale one if there is one, else say why
        if stale is not None:
            log.warning(
                "knowledge base %s could not be rebuilt (%s: %s); still using the one built at %s",
                path,
                type(exc).__name__,
                exc,
                stale.meta("built_at"),
            )
            return stale
        why = "is damaged" if damaged else "is missing"
        raise KnowledgeBaseError(f"knowledge base {path} {why} and could not be built: {exc}") from exc
    damage_marker(path).unlink(missing_ok=True)
    if stale is not None:
        stale.close()
    return KB(path)


def stored_imports_version() -> str | None:
    """The stored imports' version token: straight from a SQLite state file when possible (no SQLAlchemy), else
    through the state database; None when the state cannot be read."""
    from knowledge.catalog.imports_version import imports_version_quick

    try:
        quick = imports_version_quick()
        if quick is not None:
            return quick
        from knowledge.catalog.imports import imports_version

        return imports_version()
    except Exception:  # noqa: BLE001 - the state cannot be read: answer from the knowledge base we have
        return None


def imports_are_current(kb_version: str | None) -> bool:
    """Whether a knowledge base built at `kb_version` holds the stored imports (True when that cannot be told)."""
    current = stored_imports_version()
    return current is None or (kb_version or "0") == current
