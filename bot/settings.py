"""gpubot's configuration, read once from the environment into a frozen, typed `Settings`.

Every setting is an environment variable of the same name (upper case) and carries a help string
(`Settings.describe()` lists them). Secrets are `SecretStr`, so they never appear in a repr, a log line or a
traceback. Each run mode needs some settings; `Settings.require(mode)` names the missing ones:

    http    SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN   (`gpubot serve --http`, one workspace)
    http    SLACK_SIGNING_SECRET, SLACK_CLIENT_ID, SLACK_CLIENT_SECRET   (OAuth: any number of workspaces)
    socket  SLACK_APP_TOKEN, SLACK_BOT_TOKEN        (`gpubot serve --socket`)

OAuth (multi-workspace) mode is on when SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are both set: workspaces install
gpubot through GET /slack/install and each request uses its own workspace's bot token from the installation store;
SLACK_BOT_TOKEN is then not needed (and not used). Setting only one of the two is an error naming the other.

To add settings, add a field with a description and, if a mode needs it, list it in `REQUIRED`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import SettingsConfigDict

from knowledge.config_fields import error_text
from knowledge.config_model import Config
from knowledge.errors import UserError

__all__ = ["REQUIRED", "MissingSettingError", "Settings", "SettingsError", "load_settings"]

Mode = Literal["http", "http-oauth", "socket"]

# run mode -> settings it cannot start without (field names; the variables are their upper-case forms)
REQUIRED: dict[str, tuple[str, ...]] = {
    "http": ("slack_signing_secret", "slack_bot_token"),
    "http-oauth": ("slack_signing_secret", "slack_client_id", "slack_client_secret"),
    "socket": ("slack_app_token", "slack_bot_token"),
}
DEFAULT_SCOPES = (
    "commands,chat:write,app_mentions:read,im:history,files:write,users:read,"
    "channels:history,groups:history,mpim:history"  # the digest checks a channel for its own post before posting again
)


class SettingsError(UserError, ValueError):
    """The environment holds an invalid setting; the message names the variable."""


class MissingSettingError(SettingsError):
    """A setting the chosen mode needs is not set; the message names the variable."""


class Settings(Config):
    """gpubot's settings, from environment variables of the same name: the Slack credentials and server options
    here, and every variable of `knowledge.config_model.Config` (validated at start-up, so a bad one stops it)."""

    model_config = SettingsConfigDict(
        frozen=True, case_sensitive=False, extra="ignore", env_ignore_empty=True, populate_by_name=True
    )

    slack_bot_token: SecretStr | None = Field(
        None, description="Bot token (xoxb-...) from the Slack app's OAuth & Permissions page."
    )
    slack_signing_secret: SecretStr | None = Field(
        None, description="Signing secret from the Slack app's Basic Information page; verifies HTTP requests."
    )
    slack_app_token: SecretStr | None = Field(
        None, description="App-level token (xapp-...) with connections:write; needed for Socket Mode only."
    )
    slack_client_id: str | None = Field(
        None,
        description="Client ID from the Slack app's Basic Information page; with SLACK_CLIENT_SECRET it turns "
        "on OAuth (install in many workspaces).",
    )
    slack_client_secret: SecretStr | None = Field(
        None, description="Client secret from the Slack app's Basic Information page (OAuth mode)."
    )
    slack_scopes: str = Field(
        DEFAULT_SCOPES,
        description="Bot scopes the install link asks for (OAuth mode), comma-separated; keep them "
        "the same as manifest.yml's.",
    )
    slack_redirect_uri: str | None = Field(
        None,
        description="OAuth redirect URL, https://<host>/slack/oauth_redirect (OAuth mode; optional when the "
        "app has exactly one redirect URL).",
    )
    slack_state_expiration_seconds: int = Field(
        600,
        ge=30,
        le=86_400,
        description="How long an install link's OAuth state stays valid, in seconds.",
    )
    slack_api_url: str = Field(
        "https://slack.com/api/",
        description="Base URL of the Slack Web API (a stand-in or proxy for tests); always ends with a slash.",
    )
    port: int = Field(3000, ge=1, le=65535, description="HTTP port for `gpubot serve --http` (Heroku sets PORT).")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        "INFO",
        validation_alias=AliasChoices("GPUBOT_LOG_LEVEL", "LOG_LEVEL"),
        description="Log level (GPUBOT_LOG_LEVEL or LOG_LEVEL): DEBUG, INFO, WARNING, ERROR.",
    )

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        value = value.strip()
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        return value if value.endswith("/") else value + "/"

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @staticmethod
    def env_name(field: str) -> str:
        """The environment variable of a field."""
        return "GPUBOT_LOG_LEVEL" if field == "log_level" else field.upper()

    @property
    def oauth_enabled(self) -> bool:
        """Multi-workspace (OAuth) mode: SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are both set."""
        return bool(self.slack_client_id and self.secret("slack_client_secret"))

    def missing(self, mode: str) -> list[str]:
        """Environment variables `mode` needs that are not set."""
        if mode == "http" and (self.slack_client_id or self.slack_client_secret):
            mode = "http-oauth"  # one of the pair set: OAuth is meant, and the other one is missing
        return [self.env_name(name) for name in REQUIRED[mode] if not self.secret(name)]

    def require(self, mode: str) -> Settings:
        """Self, or `MissingSettingError` naming every variable `mode` needs that is not set."""
        missing = self.missing(mode)
        if missing:
            if mode == "http" and (self.slack_client_id or self.slack_client_secret):
                mode = "http OAuth"
            fields = type(self).model_fields
            helps = "; ".join(f"{name}: {(fields[name.lower()].description or '').rstrip('.')}" for name in missing)
            raise MissingSettingError(f"missing setting {', '.join(missing)} (needed for {mode} mode) -- {helps}")
        return self

    @classmethod
    def describe(cls) -> dict[str, str]:
        """Environment variable -> help string, for docs and `--help`."""
        return {cls.env_name(name): field.description or "" for name, field in cls.model_fields.items()}


def load_settings(**overrides: Any) -> Settings:
    """Read the environment once. An invalid value becomes `SettingsError` naming the variable (no traceback)."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError(error_text(exc, Settings.env_name)) from None


if __name__ == "__main__":  # python -m bot.settings: the README's table of every variable
    from knowledge.config_model import markdown_table

    print(markdown_table(Settings))
