"""The fields of gpubot's own environment variables (pydantic only): name, type, constraints, default, help.

`knowledge.config_model.Config` reads them from the environment (pydantic-settings); `validate` checks values
already read, without pydantic-settings' sources (the CLI's start-up: `knowledge.config.get` and `check`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from knowledge.config_defaults import DEFAULTS as D
from knowledge.config_defaults import ConfigError

__all__ = ["Fields", "error_text", "validate"]

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


class Fields(BaseModel):
    """gpubot's variables: each field is the variable of the same name (upper case), its type, default and help."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    gpubot_home: Path | None = Field(
        None,
        description="Folder for the knowledge base, caches and the SQLite state "
        "(default: $XDG_DATA_HOME/gpubot, else ~/.local/share/gpubot).",
    )
    xdg_data_home: Path | None = Field(
        None,
        description="Per-user data folder; GPUBOT_HOME defaults to its gpubot subfolder.",
    )
    database_url: SecretStr | None = Field(
        None,
        description="State database URL (default: SQLite state.db in GPUBOT_HOME; postgresql://... to share "
        "between machines; postgres:// is accepted).",
    )
    gpubot_db_busy_timeout: float = Field(
        D["GPUBOT_DB_BUSY_TIMEOUT"],
        ge=0,
        description="Seconds a write waits for another process's lock on the SQLite state database.",
    )
    gpubot_kb_refresh_seconds: float = Field(
        D["GPUBOT_KB_REFRESH_SECONDS"],
        ge=0,
        description="How often a server checks whether its knowledge base is behind the stored imports, in seconds.",
    )
    gpubot_answer_cache: int = Field(
        D["GPUBOT_ANSWER_CACHE"],
        ge=0,
        description="Answers kept per knowledge base in a server (0: none, and the CLI keeps no printed answers).",
    )
    gpubot_log_level: LogLevel | None = Field(
        None,
        description="Log level: DEBUG, INFO, WARNING, ERROR, CRITICAL (default: WARNING for the CLI, INFO for "
        "servers; LOG_LEVEL is read too by `gpubot serve`).",
    )
    gpubot_refresh_sources: str | None = Field(
        None,
        description="Comma-separated sources the clock refreshes: bundled clouds (daily) and live sources aws_spot, "
        "aws_price_list, oci, runpod, vast (each on its own cadence) (default: every bundled cloud).",
    )
    gpubot_refresh_hour: int = Field(
        D["GPUBOT_REFRESH_HOUR"], ge=0, le=23, description="UTC hour of the clock's daily price refresh."
    )
    gpubot_digest_minute: int = Field(
        D["GPUBOT_DIGEST_MINUTE"], ge=0, le=59, description="Minute of each hour the clock posts due digests."
    )
    gpubot_secret_key: SecretStr | None = Field(
        None,
        description="Fernet key that encrypts workspaces' bot tokens in the state database (OAuth mode); "
        "`new,old` to rotate (encrypts with new, reads both; then `gpubot db rotate-key`).",
    )
    gpubot_http_read_timeout: float = Field(
        D["GPUBOT_HTTP_READ_TIMEOUT"],
        gt=0,
        description="Seconds a client has to send a request's headers, and then its body.",
    )
    gpubot_http_max_connections: int = Field(
        D["GPUBOT_HTTP_MAX_CONNECTIONS"],
        gt=0,
        description="Open connections per HTTP worker; more are closed at once.",
    )
    gpubot_claim_lease_seconds: float = Field(
        D["GPUBOT_CLAIM_LEASE_SECONDS"],
        gt=0,
        description="How long a worker's claim on a Slack event lasts before another may take it over.",
    )
    gpubot_claim_timeout: float = Field(
        D["GPUBOT_CLAIM_TIMEOUT"],
        gt=0,
        description="Seconds the ack waits for the state database to claim an event before answering without it.",
    )
    gpubot_import_max_rows: int = Field(
        D["GPUBOT_IMPORT_MAX_ROWS"],
        ge=1,
        description="Most rows (lines after the header) a catalog file may have (`gpubot kb import`, refreshes).",
    )

    @field_validator("gpubot_log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value


def validate(values: Mapping[str, str]) -> Fields:
    """The fields of the variables set ({"GPUBOT_ANSWER_CACHE": "0"}, as the environment holds them), or
    `ConfigError` naming each invalid one; the others keep their defaults."""
    try:
        return Fields.model_validate({name.lower(): value for name, value in values.items()})
    except ValidationError as exc:
        raise ConfigError(error_text(exc)) from None


def error_text(exc: ValidationError, env_name: Callable[[str], str] = str.upper) -> str:
    """'invalid setting NAME: what is wrong (is 'value'); ...' (secret values and URLs are never shown)."""
    problems = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "?"
        value = error.get("input")
        hidden = any(word in field for word in ("secret", "token", "url", "key"))
        shown = f" (is {value!r})" if isinstance(value, str) and not hidden else ""
        problems.append(f"{env_name(field)}: {error['msg']}{shown}")
    return "invalid setting " + "; ".join(problems)
