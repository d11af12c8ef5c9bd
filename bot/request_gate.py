"""The gate in front of Bolt: a request to POST /slack/events is read, checked and either refused or passed on.

Nothing reaches the Slack app unless it is a well-formed, correctly signed, fresh Slack request:

    no or unreadable Content-Length      411 / 400      body over MAX_BODY_BYTES      413 (the body is not read)
    body shorter than its length         400            not UTF-8                     400
    content type not form or JSON        415            timestamp missing, not a number, more than 5 minutes off,
                                                        signature missing or wrong    401
    a form request (slash command, button) seen before with the same timestamp and signature (a replay), or
    one the state database cannot record against replays (PostgreSQL down) that is over
    UNRECORDED_WINDOW_SECONDS old: no worker could recognise it as a replay                               401
    form without command/payload, slash command without team/channel/user/response_url, payload not a JSON object,
    JSON body not an object, an event callback without its event, JSON nested too deeply, a field Bolt reads
    with the wrong type (`actions` not a list of objects, `user` not an object, an event's `text` not a string),
    a view submission whose view lacks its type, id or callback_id (or whose state is not an object)       400

The timestamp must be 1 to 12 ASCII digits (not `²`, Arabic-Indic digits or 400 digits).

The signature scheme is Slack's (`v0=` HMAC-SHA256 of `v0:{timestamp}:{body}`, 5-minute window; SLACK.md §1.3).
Events need no replay record: they are deduplicated by `event_id` (a Slack retry is signed afresh anyway).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

MAX_BODY_BYTES = 1024 * 1024
MAX_SKEW_SECONDS = 300
UNRECORDED_WINDOW_SECONDS = 5  # a form request the state cannot record is let in only while this fresh
FORM, JSON = "application/x-www-form-urlencoded", "application/json"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: str
    reason: str


def _refuse(status: str, reason: str) -> Refusal:
    return Refusal(status, reason)


def check(environ: dict, signing_secret: str, *, now: float | None = None, seen_before=None) -> Refusal | None:
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
    refusal = signature_headers_problem(timestamp, signature, now)
    if refusal is not None:
        return refusal
    expected = "v0=" + hmac.new(signing_secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        return _refuse("401 Unauthorized", "invalid signature")

    problem = _shape_problem(body, content_type)
    if problem:
        return _refuse("400 Bad Request", problem)
    if content_type == FORM and seen_before is not None and seen_before(f"slack-signature:{timestamp}:{signature}"):
        return _refuse("401 Unauthorized", "replayed request (or one that cannot be recorded against replays now)")
    environ["wsgi.input"] = io.BytesIO(raw)
    environ["CONTENT_LENGTH"] = str(length)
    return None


_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


def signature_headers_problem(timestamp: str, signature: str, now: float | None = None) -> Refusal | None:
    """What is wrong with the signature headers alone (missing, malformed, stale), or None: checked before the
    body is read (`headers_refusal`) and again with it (`check`)."""
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12) or not _SIGNATURE.fullmatch(
        signature
    ):
        return _refuse("401 Unauthorized", "missing or malformed signature headers")
    if abs((now or time.time()) - int(timestamp)) > MAX_SKEW_SECONDS:
        return _refuse("401 Unauthorized", "stale timestamp")
    return None


def headers_refusal(method: str, path: str, headers: dict[str, str], *, slack_path: str) -> tuple[int, str] | None:
    """(status, reason) refusing a POST to the Slack path from its headers, before its body is read (nothing is
    buffered for a request that could never be verified), or None."""
    if method != "POST" or path != slack_path:
        return None
    problem = signature_headers_problem(
        headers.get("x-slack-request-timestamp", ""), headers.get("x-slack-signature", "")
    )
    return (int(problem.status.split()[0]), problem.reason) if problem else None


def _shape_problem(body: str, content_type: str) -> str | None:
    """What is missing from a verified body for it to be a Slack request, or None."""
    if content_type == FORM:
        fields = {key: values[0] for key, values in parse_qs(body, keep_blank_values=True).items()}
        if "payload" in fields:  # buttons, views
            try:
                payload = json.loads(fields["payload"])
            except (ValueError, RecursionError):
                return "payload is not JSON (or nested too deeply)"
            return _interaction_problem(payload) if isinstance(payload, dict) else "payload is not a JSON object"
        if "ssl_check" in fields:
            return None
        if not fields.get("command"):
            return "neither a slash command nor an interaction payload"
        missing = [name for name in ("team_id", "channel_id", "user_id", "response_url") if not fields.get(name)]
        return f"slash command without {', '.join(missing)}" if missing else None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return "the body is not JSON (or nested too deeply)"
    if not isinstance(data, dict) or not isinstance(data.get("type"), str) or not data["type"]:
        return "the body is not a Slack event envelope"
    if data["type"] == "event_callback" and not isinstance(data.get("event"), dict):
        return "an event callback without its event"
    if data["type"] == "event_callback":
        return _typed(data, _ENVELOPE) or _typed(data["event"], _EVENT)
    return _typed(data, _ENVELOPE)


# the fields Bolt and gpubot read without checking their type -> the types they must have when present
_TEXT, _OBJECT, _EITHER = (str,), (dict,), (str, dict)
_ENVELOPE = {
    "type": _TEXT,
    "team_id": _TEXT,
    "enterprise_id": _TEXT,
    "api_app_id": _TEXT,
    "event_id": _TEXT,
    "authorizations": (list,),
}
_EVENT = {
    "type": _TEXT,
    "text": _TEXT,
    "ts": _TEXT,
    "thread_ts": _TEXT,
    "event_ts": _TEXT,
    "channel": _EITHER,
    "channel_type": _TEXT,
    "subtype": _TEXT,
    "bot_id": _TEXT,
    "user": _EITHER,
}
_INTERACTION = {
    "type": _TEXT,
    "actions": (list,),
    "team": _OBJECT,
    "user": _OBJECT,
    "channel": _OBJECT,
    "container": _OBJECT,
    "view": _OBJECT,
    "message": _OBJECT,
    "enterprise": _OBJECT,
    "trigger_id": _TEXT,
    "response_url": _TEXT,
    "api_app_id": _TEXT,
}
_INNER = {
    "id": _TEXT,
    "name": _TEXT,
    "channel_id": _TEXT,
    "message_ts": _TEXT,
    "ts": _TEXT,
    "thread_ts": _TEXT,
    "action_id": _TEXT,
    "block_id": _TEXT,
    "value": _TEXT,
    "action_ts": _TEXT,
    "type": _TEXT,
}


def _typed(data: dict, fields: Mapping[str, tuple[type, ...]]) -> str | None:
    """The first field of `data` that is there with the wrong type (objects: their ids too), or None."""
    for name, types in fields.items():
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, types):
            return f"{name} has the wrong type"
        inner = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
        for item in inner:
            if not isinstance(item, dict):
                return f"{name} holds something other than objects"
            if _typed(item, _INNER):
                return f"{name} has a field of the wrong type"
    return None


def _interaction_problem(payload: dict) -> str | None:
    """What makes a signed interaction payload unusable (Bolt would fail on it), or None."""
    if not isinstance(payload.get("type"), str):
        return "payload without a type"
    if payload["type"] in ("view_submission", "view_closed"):  # Bolt and the form handler read these unchecked
        view = payload.get("view")
        if not isinstance(view, dict) or not all(isinstance(view.get(k), str) for k in ("type", "id", "callback_id")):
            return "a view payload without its view's type, id and callback_id"
        state = view.get("state")
        if state is not None and not (isinstance(state, dict) and isinstance(state.get("values", {}), dict)):
            return "a view whose state is not an object"
    return _typed(payload, _INTERACTION)
