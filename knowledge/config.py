"""gpubot's own environment variables, read in one place: `config()` (typed) and `raw()` (start-up strings).

The typed model is `knowledge.config_model.Config` (pydantic-settings: name, type, default, help; secrets are
`SecretStr`). `config()` returns it for the current environment: it is rebuilt only when one of its variables
changed (the cache is keyed on their current values), so a test's `monkeypatch.setenv` is seen at the next call
and a steady process validates once. An invalid value raises `ConfigError` naming the variable.

pydantic is imported only by `config()`: the few reads on the CLI's start-up path (where the knowledge base is,
whether answers are cached, the log level, the secrets to redact) use `raw(name)`, the plain string of one of the
model's variables, so a repeated `gpubot ask` or `gpubot history` starts without pydantic.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knowledge.config_model import Config

__all__ = ["CATALOG_URL_PREFIX", "NAMES", "ConfigError", "catalog_url", "config", "raw"]

# every variable of `Config` (a test checks this list against the model's fields)
NAMES = (
    "GPUBOT_HOME", "XDG_DATA_HOME", "DATABASE_URL", "GPUBOT_DB_BUSY_TIMEOUT", "GPUBOT_KB_REFRESH_SECONDS",
    "GPUBOT_ANSWER_CACHE", "GPUBOT_LOG_LEVEL", "GPUBOT_REFRESH_SOURCES", "GPUBOT_REFRESH_HOUR",
    "GPUBOT_DIGEST_MINUTE", "GPUBOT_SECRET_KEY", "GPUBOT_HTTP_READ_TIMEOUT", "GPUBOT_HTTP_MAX_CONNECTIONS",
    "GPUBOT_CLAIM_LEASE_SECONDS", "GPUBOT_CLAIM_TIMEOUT", "GPUBOT_IMPORT_MAX_ROWS",
)
CATALOG_URL_PREFIX = "GPUBOT_CATALOG_URL_"  # + a provider name, upper case: that provider's catalog URL

_lock = threading.Lock()
_cached: tuple[tuple[str | None, ...], Config] | None = None


class ConfigError(ValueError):
    """An environment variable holds an invalid value; the message names it and says what is expected."""


def raw(name: str) -> str | None:
    """The value of one of gpubot's variables (or of a Slack credential, `bot.settings`) as set, stripped; None
    when unset or empty."""
    if name not in NAMES and not name.startswith("SLACK_"):
        raise KeyError(f"{name} is not one of gpubot's variables (knowledge.config.NAMES)")
    value = os.environ.get(name, "").strip()
    return value or None


def catalog_url(provider: str) -> str | None:
    """GPUBOT_CATALOG_URL_<PROVIDER>: where the clock downloads that provider's catalog (None: the default)."""
    return os.environ.get(CATALOG_URL_PREFIX + provider.upper(), "").strip() or None


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
