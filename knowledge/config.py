"""gpubot's own environment variables, read in one place: `config()` (typed) and `raw()` (start-up strings).

The typed model is `knowledge.config_model.Config` (pydantic-settings: name, type, default, help; secrets are
`SecretStr`). `config()` returns it for the current environment: it is rebuilt only when one of its variables
changed (the cache is keyed on their current values), so a test's `monkeypatch.setenv` is seen at the next call
and a steady process validates once. An invalid value raises `ConfigError` naming the variable.

pydantic is imported only by `config()`, so the CLI's start-up stays without it: reads on that path use `raw(name)`
(the plain string of a variable: where the knowledge base is, the secrets to redact) or `get(name)` (the typed
value: the default, from `DEFAULTS`, while the variable is unset; else the model's), and `check()` validates the
environment only when a variable that can be invalid is set.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from knowledge.config_defaults import CATALOG_URL_PREFIX, DEFAULTS, FREE_TEXT, NAMES, SOURCE_URL_FORM, ConfigError

if TYPE_CHECKING:
    from knowledge.config_model import Config

__all__ = [
    "CATALOG_URL_PREFIX",
    "DEFAULTS",
    "FREE_TEXT",
    "NAMES",
    "ConfigError",
    "catalog_url",
    "check",
    "config",
    "get",
    "raw",
    "source_url",
]

_lock = threading.Lock()
_cached: tuple[tuple[str | None, ...], Config] | None = None


def raw(name: str) -> str | None:
    """The value of one of gpubot's variables (or of a Slack credential, `bot.settings`) as set, stripped; None
    when unset or empty."""
    if name not in NAMES and not name.startswith("SLACK_"):
        raise KeyError(f"{name} is not one of gpubot's variables (knowledge.config.NAMES)")
    value = os.environ.get(name, "").strip()
    return value or None


def get(name: str) -> Any:
    """The typed value of one of gpubot's variables: its default while unset (no pydantic), else the model's."""
    return DEFAULTS[name] if raw(name) is None else getattr(config(), name.lower())


def check() -> None:
    """`ConfigError` when a variable holds an invalid value; validates only if one that can be invalid is set."""
    if any(raw(name) is not None for name in NAMES if name not in FREE_TEXT):
        config()


def catalog_url(provider: str) -> str | None:
    """GPUBOT_CATALOG_URL_<PROVIDER>: where the clock downloads that provider's catalog (None: the default)."""
    return os.environ.get(CATALOG_URL_PREFIX + provider.upper(), "").strip() or None


def source_url(name: str) -> str | None:
    """GPUBOT_SOURCE_<NAME>_URL: where a live price source (aws_spot, runpod, ...) is fetched from (None: default)."""
    return os.environ.get(SOURCE_URL_FORM.format(name.upper()), "").strip() or None


def config() -> Config:
    """The settings of the current environment (validated once per set of values); `ConfigError` when invalid."""
    global _cached
    key = tuple(os.environ.get(name) for name in NAMES)
    cached = _cached
    if cached is not None and cached[0] == key:
        return cached[1]
    from knowledge.config_model import load

    with _lock:
        value = load()
        _cached = (key, value)
    return value
