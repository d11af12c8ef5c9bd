"""The names and defaults of gpubot's own environment variables (stdlib only; the model is `config_model`)."""

from __future__ import annotations

from typing import Any

from knowledge.errors import UserError

__all__ = ["CATALOG_URL_PREFIX", "DEFAULTS", "FREE_TEXT", "NAMES", "SOURCE_URL_FORM", "ConfigError"]

# every variable of `Config` -> its default (the model's field defaults are these; a test checks the two agree)
DEFAULTS: dict[str, Any] = {  # float, int or None: each field of `Config` says which
    "GPUBOT_HOME": None,
    "XDG_DATA_HOME": None,
    "DATABASE_URL": None,
    "GPUBOT_DB_BUSY_TIMEOUT": 30.0,
    "GPUBOT_KB_REFRESH_SECONDS": 30.0,
    "GPUBOT_ANSWER_CACHE": 512,
    "GPUBOT_LOG_LEVEL": None,
    "GPUBOT_REFRESH_SOURCES": None,
    "GPUBOT_REFRESH_HOUR": 5,
    "GPUBOT_DIGEST_MINUTE": 5,
    "GPUBOT_SECRET_KEY": None,
    "GPUBOT_HTTP_READ_TIMEOUT": 10.0,
    "GPUBOT_HTTP_MAX_CONNECTIONS": 1000,
    "GPUBOT_CLAIM_LEASE_SECONDS": 60.0,
    "GPUBOT_CLAIM_TIMEOUT": 0.5,
    "GPUBOT_IMPORT_MAX_ROWS": 100_000,
}
NAMES = tuple(DEFAULTS)
# variables any text is valid for (paths, URLs, keys, lists): `check()` need not look at them
FREE_TEXT = frozenset({"GPUBOT_HOME", "XDG_DATA_HOME", "DATABASE_URL", "GPUBOT_REFRESH_SOURCES", "GPUBOT_SECRET_KEY"})
CATALOG_URL_PREFIX = "GPUBOT_CATALOG_URL_"  # + a provider name, upper case: that provider's catalog URL
SOURCE_URL_FORM = "GPUBOT_SOURCE_{}_URL"  # a live source's name, upper case (AWS_SPOT): where it is fetched from


class ConfigError(UserError, ValueError):
    """An environment variable holds an invalid value; the message names it and says what is expected."""
