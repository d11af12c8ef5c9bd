"""No secret in any log, at any level: every log record is redacted when it is made.

slack_sdk logs whole request and response bodies at DEBUG (`oauth.v2.access`: the code, the client secret and
the new bot token), and an exception message can carry a token. `install()` wraps the logging record factory, so
every record of every logger (gpubot's, slack_sdk's, Bolt's, gunicorn's) has its message, arguments and
traceback text redacted before any handler or formatter sees it:

- Slack tokens (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxe-`, `xapp-` ...), `Bearer` and `Basic` credentials;
- the values of fields named like secrets (`code`, `client_secret`, `access_token`, `refresh_token`, `token`,
  `signing_secret`, `state` ...) in dict reprs, JSON, query strings and headers;
- the configured secrets themselves (signing secret, client secret, bot and app tokens, GPUBOT_SECRET_KEY).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

MASK = "[redacted]"
SECRET_VARIABLES = (
    "SLACK_SIGNING_SECRET",
    "SLACK_CLIENT_SECRET",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "GPUBOT_SECRET_KEY",
)
_TOKEN = re.compile(r"\bx(?:ox[a-z]|app)(?:\.x[a-z]+)?-[A-Za-z0-9._-]+")
_AUTH = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_FIELDS = (
    "code",
    "client_secret",
    "access_token",
    "refresh_token",
    "bot_token",
    "user_token",
    "token",
    "bot_refresh_token",
    "user_refresh_token",
    "signing_secret",
    "app_token",
    "secret",
    "state",
    "slack_signing_secret",
    "slack_client_secret",
    "slack_bot_token",
    "slack_app_token",
)
_NAMES = "|".join(sorted(_FIELDS, key=len, reverse=True))
# a quoted key ('code': ..., "code": ...) or key=value (query strings, form bodies); not prose ("status code: 500")
_FIELD = re.compile(
    rf"""(?P<key>(?:(?P<q>['"])(?:{_NAMES})(?P=q)\s*[:=]|\b(?:{_NAMES})=)\s*)"""
    r"""(?P<quote>\[?\s*['"]?)(?P<value>[^'"&,;\s})\]]+)""",
    re.IGNORECASE,
)
_secrets: set[str] = set()
_installed = False


def redact(text: str) -> str:
    text = _FIELD.sub(lambda m: f"{m.group('key')}{m.group('quote')}{MASK}", text)
    text = _AUTH.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _TOKEN.sub(MASK, text)
    for secret in _secrets:
        text = text.replace(secret, MASK)
    return text


def add_secrets(values: Iterable[str | None]) -> None:
    _secrets.update(v for v in values if v and len(v) >= 6)


def install(secrets: Iterable[str | None] = ()) -> None:
    """Redact every log record from now on (idempotent; `secrets` are added to the literal values redacted)."""
    global _installed
    add_secrets(secrets)
    if _installed:
        return
    _installed = True
    make = logging.getLogRecordFactory()

    def factory(*args, **kwargs) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: leave it to logging to report
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(factory)
