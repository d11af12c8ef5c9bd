"""gpubot's own environment variables, read in one place: `config()` (typed) and `raw()` (start-up strings).

The typed model is `knowledge.config_model.Config` (pydantic-settings: name, type, default, help; secrets are
`SecretStr`). `config()` returns it for the current environment: it is rebuilt only when one of its variables
changed (the cache is keyed on their current values), so a test's `monkeypatch.setenv` is seen at the next call
and a steady process validates once. An invalid value raises `ConfigError` naming the variable.

pydantic-settings is imported only by `config()`, so the CLI's start-up stays without it: reads on that path use
`raw(name)` (the plain string of a variable: where the knowledge base is, the secrets to redact) or `get(name)` (the
typed value: the default, from `DEFAULTS`, while the variable is unset; else validated by the fields model,
`knowledge.config_fields`, with pydantic alone), and `check()` validates the variables set, the same way, only when
one that can be invalid is set.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from knowledge.config_defaults import CATALOG_URL_PREFIX, DEFAULTS, FREE_TEXT, NAMES, SOURCE_URL_FORM, ConfigError

if TYPE_CHECKING:
    from knowledge.config_fields import Fields
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
    "fields",
    "get",
    "raw",
    "source_url",
]

_lock = threading.Lock()
# "fields" / "config" -> (the variables' values it was validated for, the model)
_cached: dict[str, tuple[tuple[str | None, ...], Any]] = {}
M = TypeVar("M")


def raw(name: str) -> str | None:
    """The value of one of gpubot's variables (or of a Slack credential, `bot.settings`) as set, stripped; None
    when unset or empty."""
    if name not in NAMES and not name.startswith("SLACK_"):
        raise KeyError(f"{name} is not one of gpubot's variables (knowledge.config.NAMES)")
    value = os.environ.get(name, "").strip()
    return value or None


def get(name: str) -> Any:
    """The typed value of one of gpubot's variables: its default while unset (no pydantic), else the fields'."""
    return DEFAULTS[name] if raw(name) is None else getattr(fields(), name.lower())


def check() -> None:
    """`ConfigError` when a variable holds an invalid value; validates only if one that can be invalid is set."""
    if any(raw(name) is not None for name in NAMES if name not in FREE_TEXT):
        fields()


def catalog_url(provider: str) -> str | None:
    """GPUBOT_CATALOG_URL_<PROVIDER>: where the clock downloads that provider's catalog (None: the default)."""
    return os.environ.get(CATALOG_URL_PREFIX + provider.upper(), "").strip() or None


def source_url(name: str) -> str | None:
    """GPUBOT_SOURCE_<NAME>_URL: where a live price source (aws_spot, runpod, ...) is fetched from (None: default)."""
    return os.environ.get(SOURCE_URL_FORM.format(name.upper()), "").strip() or None


def fields() -> Fields:
    """The variables set, validated by the fields model (pydantic, none of pydantic-settings' sources imported);
    `ConfigError` when one is invalid (the same message as `config()`'s)."""
    from knowledge.config_fields import validate

    return _current("fields", lambda: validate({name: os.environ[name] for name in NAMES if os.environ.get(name)}))


def config() -> Config:
    """The settings of the current environment (validated once per set of values); `ConfigError` when invalid."""
    from knowledge.config_model import load

    return _current("config", load)


def _current(kind: str, build: Callable[[], M]) -> M:
    """The model `build` returns for the current values of the variables, built again only when one changed."""
    key = tuple(os.environ.get(name) for name in NAMES)
    cached = _cached.get(kind)
    if cached is not None and cached[0] == key:
        return cached[1]
    with _lock:
        value = build()
        _cached[kind] = (key, value)
    return value
