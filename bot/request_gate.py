"""The gate in front of Bolt: a request to POST /slack/events is read, checked and either refused or passed on.

Nothing reaches the Slack app unless it is a well-formed, correctly signed, fresh Slack request:

    no or unreadable Content-Length      411 / 400      body over MAX_BODY_BYTES      413 (the body is not read)
    body shorter than its length         400            not UTF-8                     400
    content type not form or JSON        415            timestamp missing, not a number, more than 5 minutes off,
                                                        signature missing or wrong    401
    a form request (slash command, button) seen before with the same timestamp and signature (a replay)   401
    form without command/payload, slash command without team/channel/user/response_url, payload not a JSON object,
    JSON body not an object, an event callback without its event                                          400

The signature scheme is Slack's (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`, 5-minute window; SLACK.md §1.3).
Events need no replay record: they are deduplicated by `event_id` (a Slack retry is signed afresh anyway).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qs

MAX_BODY_BYTES = 1024 * 1024
MAX_SKEW_SECONDS = 300
FORM, JSON = "application/x-www-form-urlencoded", "application/json"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: str
    reason: str


def _refuse(status: str, reason: str) -> Refusal:
    return Refusal(status, reason)


def check(environ: dict, signing_secret: str, *, now: float | None = None,
          seen_before=None) -> Refusal | None:
    """Refuse the request (a `Refusal`) or let it through (None, with `environ["wsgi.input"]` re-wound)."""
    length_header = environ.get("CONTENT_LENGTH")
    if not length_header:
        return _refuse("411 Length Required", "Content-Length is required")
    try:
        length = int(length_header)
    except ValueError:
        return _refuse("400 Bad Request", "unreadable Content-Length")
    if length < 0:
        return _refuse("400 Bad Request", "unreadable Content-Length")
    if length > MAX_BODY_BYTES:
        return _refuse("413 Content Too Large", f"body over {MAX_BODY_BYTES} bytes")
    content_type = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()
    if content_type not in (FORM, JSON):
        return _refuse("415 Unsupported Media Type", "content type must be form-encoded or JSON")
    try:
        raw = environ["wsgi.input"].read(length) if length else b""
    except (OSError, ValueError):
        return _refuse("400 Bad Request", "the body could not be read")
    if len(raw) != length:
        return _refuse("400 Bad Request", "the body is shorter than its Content-Length")
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        return _refuse("400 Bad Request", "the body is not UTF-8")

    timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
    signature = environ.get("HTTP_X_SLACK_SIGNATURE", "")
    if not timestamp.isdigit() or not signature.startswith("v0="):
        return _refuse("401 Unauthorized", "missing or malformed signature headers")
    if abs((now or time.time()) - int(timestamp)) > MAX_SKEW_SECONDS:
        return _refuse("401 Unauthorized", "stale timestamp")
    expected = "v0=" + hmac.new(signing_secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        return _refuse("401 Unauthorized", "invalid signature")

    problem = _shape_problem(body, content_type)
    if problem:
        return _refuse("400 Bad Request", problem)
    if content_type == FORM and seen_before is not None and seen_before(f"slack-signature:{timestamp}:{signature}"):
        return _refuse("401 Unauthorized", "replayed request")
    environ["wsgi.input"] = io.BytesIO(raw)
    environ["CONTENT_LENGTH"] = str(length)
    return None


def _shape_problem(body: str, content_type: str) -> str | None:
    """What is missing from a verified body for it to be a Slack request, or None."""
    if content_type == FORM:
        fields = {key: values[0] for key, values in parse_qs(body, keep_blank_values=True).items()}
        if "payload" in fields:  # buttons, views
            try:
                payload = json.loads(fields["payload"])
            except ValueError:
                return "payload is not JSON"
            return None if isinstance(payload, dict) else "payload is not a JSON object"
        if "ssl_check" in fields:
            return None
        if not fields.get("command"):
            return "neither a slash command nor an interaction payload"
        missing = [name for name in ("team_id", "channel_id", "user_id", "response_url") if not fields.get(name)]
        return f"slash command without {', '.join(missing)}" if missing else None
    try:
        data = json.loads(body)
    except ValueError:
        return "the body is not JSON"
    if not isinstance(data, dict) or not data.get("type"):
        return "the body is not a Slack event envelope"
    if data["type"] == "event_callback" and not isinstance(data.get("event"), dict):
        return "an event callback without its event"
    return None
