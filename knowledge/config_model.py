"""The settings model of gpubot's own environment variables (pydantic-settings); read it through `knowledge.config`.

The fields (each the variable of the same name, upper case, with its type, default and help text) are
`knowledge.config_fields.Fields`; this model reads them from the environment. Empty values count as unset.
`load()` turns a validation error into one `ConfigError` line naming every bad variable.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from knowledge.config_defaults import CATALOG_URL_PREFIX, SOURCE_URL_FORM, ConfigError
from knowledge.config_fields import Fields, error_text

__all__ = ["Config", "describe", "load", "markdown_table"]


class Config(Fields, BaseSettings):
    """gpubot's settings, from environment variables of the same name (the fields: `knowledge.config_fields`)."""

    model_config = SettingsConfigDict(frozen=True, case_sensitive=False, extra="ignore", env_ignore_empty=True)

    def secret(self, name: str) -> str | None:
        """The plain value of a field, secret or not (None when unset)."""
        value = getattr(self, name)
        if value is None or isinstance(value, str):
            return value
        return value.get_secret_value() if isinstance(value, SecretStr) else str(value)


def load() -> Config:
    """The model of the current environment, or `ConfigError` naming each invalid variable (no traceback)."""
    try:
        return Config()
    except ValidationError as exc:
        raise ConfigError(error_text(exc)) from None


def describe(model: type[BaseSettings] = Config) -> list[tuple[str, str, str]]:
    """(variable, meaning, default) of every variable of `model` (the first field of a variable wins), and the
    GPUBOT_CATALOG_URL_<NAME> family; for README and `--help`."""
    env_name: Callable[[str], str] = getattr(model, "env_name", str.upper)
    rows, seen = [], set()
    for name, field in model.model_fields.items():
        variable = env_name(name)
        if variable in seen:
            continue
        seen.add(variable)
        default = "" if field.default is None else str(field.default)
        rows.append((variable, field.description or "", default))
    rows.append(
        (
            CATALOG_URL_PREFIX + "<NAME>",
            "Catalog URL the clock downloads for provider NAME, e.g. "
            "GPUBOT_CATALOG_URL_NEBIUS (default: the provider's published catalog, "
            "knowledge/data/catalog_urls.csv).",
            "",
        )
    )
    rows.append(
        (
            SOURCE_URL_FORM.format("<NAME>"),
            "URL a live price source is fetched from, NAME in AWS_SPOT, AWS_PRICE_LIST, AZURE, OCI, RUNPOD, VAST "
            "(default: the vendor's public endpoint, README 'Live sources'); for tests and air-gapped mirrors.",
            "",
        )
    )
    return rows


def markdown_table(model: type[BaseSettings] = Config) -> str:
    """The README table of `model`'s variables (README.md holds the one of `bot.settings.Settings`)."""
    lines = ["| variable | meaning | default |", "|---|---|---|"]
    for name, meaning, default in describe(model):
        shown = f"`{default}`" if default else "unset"
        lines.append(f"| `{name}` | {meaning.replace('|', '/')} | {shown} |")
    return "\n".join(lines)
