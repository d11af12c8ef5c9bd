"""A loopback stand-in for the Slack Web API, for tests that must never reach slack.com.

What it mimics
--------------
A stdlib ``ThreadingHTTPServer`` on ``127.0.0.1:<random port>`` (background thread) that answers the way
``https://slack.com/api/`` does, so a real ``slack_sdk.WebClient(base_url=standin.base_url)`` or a Bolt
``App(client=...)`` can run unmodified (pattern from bolt-python's ``tests/mock_web_api_server``, see
/work/shared/SLACK.md section 1, but on port 0 so tests can run in parallel):

* API errors are HTTP 200 with ``{"ok": false, "error": "..."}``; 429s carry ``Retry-After``.
* Requests are accepted under ``/api/<method>`` and ``/<method>``; bodies may be JSON or form-encoded.
  Form fields holding JSON (``blocks``, ``attachments``, ``view``, ``files``, ``metadata``) are decoded.
* Every API method except ``oauth.*`` needs a token (``Authorization: Bearer ...`` or a ``token`` field),
  otherwise ``not_authed``; ``auth.test`` additionally needs an ``xoxb-`` token (else ``invalid_auth``).
  A token shaped ``xoxb-<TEAM_ID>-...`` (as issued by our ``oauth.v2.access``) authenticates as that team;
  ``xoxb-<ENTERPRISE_ID>-...`` is an Enterprise Grid org-wide install's token, and ``auth.teams.list`` answers the
  workspaces of ``orgs[enterprise_id]`` for it.
* ``/hooks/<name>`` plays a ``response_url`` (200, body ``ok``; 4xx with the error as text, e.g.
  ``invalid_blocks``; the 6th post to one URL gets 404 ``used_url``, Slack's 5-uses rule);
  ``/upload/<file_id>`` plays the upload URL handed out by ``files.getUploadURLExternal`` (stores the bytes,
  answers ``OK - <len>``).

Block Kit / message rules enforced (``invalid_blocks`` with an ``errors`` list of
``"<reason> [json-pointer:/blocks/N/...]"``, or HTTP 400 ``invalid_blocks`` on hooks)
---------------------------------------------------------------------------------------------
Sources: [DOC] docs.slack.dev/reference/block-kit/blocks (+ per-block pages), [SDK] slack_sdk
``models/blocks`` length constants, [SK] slackapi/slack-skills-plugin, [P] our product rule.

* blocks per message <= 50, per view (home/modal) <= 100 [DOC][SK]
* ``block_id`` <= 255 chars and unique within the message/view [SDK][DOC]
* block ``type`` one of section, divider, header, context, actions, image, table, rich_text, input,
  markdown, plus the newer ``data_table``, ``file``, ``video`` [DOC]; ``markdown`` only in messages [DOC]
* section: needs ``text`` or ``fields``; ``text.text`` 1..3000; ``fields`` <= 10 items of <= 2000 [SDK]
* header: ``plain_text`` only, <= 150 [DOC]
* context <= 10 elements; actions <= 25 elements [SDK]
* any ``action_id`` <= 255 [SDK], unique within the whole message [P] (Slack documents per-block
  uniqueness; pass ``action_id_scope="block"`` to check only that)
* button: text ``plain_text`` <= 75, ``value`` <= 2000, ``url`` <= 3000 [SDK]
* table [DOC table-block, blocks reference "Surfaces: Messages"]: messages only (never in a Home tab or modal),
  and in the message's ``attachments[].blocks``, as the docs' usage note says (a table in the top-level
  ``blocks`` is refused with ``invalid_blocks``, as reported by Slack users); ``rows`` 1..100, each
  row 1..20 cells, all rows the same width [DOC][P]; cells ``raw_text`` (non-empty string ``text``) or
  ``rich_text`` (with an ``elements`` array) only (``raw_number`` belongs to ``data_table``);
  ``column_settings`` <= 20 items, each ``null`` (skip a column) or ``{"align": left|center|right,
  "is_wrapped": bool}``; at most one table per message, counted over blocks and attachments together:
  ``invalid_attachments`` with ``only_one_table_allowed`` [SK]
* data_table: ``caption`` required, 2..101 rows, ``page_size`` 1..100 [changelog 2026-05-20]
* markdown blocks: <= 12000 chars cumulated over the message [SDK][SK]
* messages with ``blocks`` need a non-empty top-level ``text`` fallback -> ``missing_text`` [P][SDK warning]
* message ``text`` > 40000 chars -> ``msg_too_long`` (Slack's error code for this case) [DOC]
* ``chat.postMessage`` / ``chat.postEphemeral`` without text, blocks and attachments -> ``no_text``

``users.info`` tells roles like Slack does (``is_admin``, ``is_owner``, ``is_primary_owner``, ``is_restricted``):
``admins`` / ``owners`` / ``guests`` sets on the stand-in (``U_ADMIN`` and the installer are admins, ``U_OWNER``
owns the workspace, ``U_GUEST`` is a guest).

Programmable behaviour: ``fail``, ``rate_limit``, ``server_error`` (next N matching calls), ``delay``,
``refuse_block_type`` (Slack refusing a block type, ``invalid_blocks`` pointing at it).
Method names in these and in ``calls()``/``wait_for()`` may be ``fnmatch`` patterns (``"hooks/*"``).

Only the standard library is used.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Call", "Upload", "SlackStandIn", "validate_blocks", "check_message"]

# ----------------------------------------------------------------------------------------------------
# Block Kit validation (usable on its own: ``validate_blocks(blocks)`` -> list of error strings)
# ----------------------------------------------------------------------------------------------------

MAX_BLOCKS = {"message": 50, "view": 100}
MAX_MESSAGE_TEXT = 40_000
MAX_HOOK_USES = 5  # posts per response_url
MAX_MARKDOWN_TOTAL = 12_000
KNOWN_BLOCK_TYPES = frozenset(
    {
        "section",
        "divider",
        "header",
        "context",
        "actions",
        "image",
        "table",
        "rich_text",
        "input",
        "markdown",
        "data_table",
        "file",
        "video",
    }
)
TABLE_CELL_TYPES = frozenset({"raw_text", "rich_text"})
TABLE_ALIGNS = frozenset({"left", "center", "right"})
_JSON_FIELDS = ("blocks", "attachments", "view", "files", "metadata")


def _err(errors: list[str], reason: str, ptr: str) -> None:
    errors.append(f"{reason} [json-pointer:{ptr}]")


def _check_len(errors: list[str], value: Any, limit: int, ptr: str) -> None:
    if value is not None and (not isinstance(value, str) or len(value) > limit):
        _err(errors, f"must be a string of at most {limit} characters", ptr)


def _check_text_obj(errors: list[str], obj: Any, limit: int, ptr: str, plain_only: bool = False) -> None:
    allowed = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
    if not isinstance(obj, dict) or obj.get("type") not in allowed:
        _err(errors, f"must be a text object of type {' or '.join(allowed)}", ptr)
        return
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        _err(errors, "must be at least 1 character", ptr + "/text")
    elif len(text) > limit:
        _err(errors, f"must be at most {limit} characters", ptr + "/text")


def _check_element(errors: list[str], el: Any, ptr: str, action_ids: list[tuple[str, str]]) -> None:
    if not isinstance(el, dict) or not isinstance(el.get("type"), str):
        _err(errors, "element must be an object with a type", ptr)
        return
    if "action_id" in el:
        aid = el["action_id"]
        _check_len(errors, aid, 255, ptr + "/action_id")
        if isinstance(aid, str):
            action_ids.append((aid, ptr + "/action_id"))
    if el["type"] == "button":
        _check_text_obj(errors, el.get("text"), 75, ptr + "/text", plain_only=True)
        _check_len(errors, el.get("value"), 2000, ptr + "/value")
        _check_len(errors, el.get("url"), 3000, ptr + "/url")


def _check_list(errors: list[str], value: Any, lo: int, hi: int, ptr: str, what: str) -> list:
    if not isinstance(value, list):
        _err(errors, f"{what} must be an array", ptr)
        return []
    if not lo <= len(value) <= hi:
        _err(errors, f"{what} must have between {lo} and {hi} items (got {len(value)})", ptr)
    return value


def _check_table(errors: list[str], block: dict, ptr: str) -> None:
    rows = _check_list(errors, block.get("rows"), 1, 100, ptr + "/rows", "rows")
    widths = set()
    for r, row in enumerate(rows):
        cells = _check_list(errors, row, 1, 20, f"{ptr}/rows/{r}", "row")
        widths.add(len(cells))
        for c, cell in enumerate(cells):
            cptr = f"{ptr}/rows/{r}/{c}"
            if not isinstance(cell, dict) or cell.get("type") not in TABLE_CELL_TYPES:
                _err(errors, f"cell type must be one of {sorted(TABLE_CELL_TYPES)}", cptr)
            elif cell["type"] == "raw_text" and (not isinstance(cell.get("text"), str) or not cell["text"]):
                _err(errors, "raw_text cell needs a non-empty string text", cptr + "/text")
            elif cell["type"] == "rich_text" and not isinstance(cell.get("elements"), list):
                _err(errors, "rich_text cell needs an elements array", cptr + "/elements")
    if len(widths) > 1:
        _err(errors, f"all rows must have the same number of cells (got {sorted(widths)})", ptr + "/rows")
    if "column_settings" in block:
        settings = _check_list(errors, block["column_settings"], 0, 20, ptr + "/column_settings", "column_settings")
        for i, setting in enumerate(settings):
            sptr = f"{ptr}/column_settings/{i}"
            if setting is None:
                continue
            if not isinstance(setting, dict) or set(setting) - {"align", "is_wrapped"}:
                _err(errors, "a column setting is null or an object with align / is_wrapped", sptr)
            elif "align" in setting and setting["align"] not in TABLE_ALIGNS:
                _err(errors, f"align must be one of {sorted(TABLE_ALIGNS)}", sptr + "/align")
            elif "is_wrapped" in setting and not isinstance(setting["is_wrapped"], bool):
                _err(errors, "is_wrapped must be a boolean", sptr + "/is_wrapped")


def _check_block(errors: list[str], block: dict, ptr: str, surface: str, action_ids: list) -> None:
    btype = block["type"]
    if btype == "section":
        if "text" not in block and "fields" not in block:
            _err(errors, "section needs text or fields", ptr)
        if "text" in block:
            _check_text_obj(errors, block["text"], 3000, ptr + "/text")
        if "fields" in block:
            fields = _check_list(errors, block["fields"], 1, 10, ptr + "/fields", "fields")
            for i, f in enumerate(fields):
                _check_text_obj(errors, f, 2000, f"{ptr}/fields/{i}")
        if "accessory" in block:
            _check_element(errors, block["accessory"], ptr + "/accessory", action_ids)
    elif btype == "header":
        _check_text_obj(errors, block.get("text"), 150, ptr + "/text", plain_only=True)
    elif btype == "context":
        _check_list(errors, block.get("elements"), 1, 10, ptr + "/elements", "elements")
    elif btype == "actions":
        for i, el in enumerate(_check_list(errors, block.get("elements"), 1, 25, ptr + "/elements", "elements")):
            _check_element(errors, el, f"{ptr}/elements/{i}", action_ids)
    elif btype == "image":
        if not block.get("image_url") and not block.get("slack_file"):
            _err(errors, "image needs image_url or slack_file", ptr)
        if not isinstance(block.get("alt_text"), str) or not block["alt_text"]:
            _err(errors, "image needs alt_text", ptr + "/alt_text")
    elif btype == "table":
        if surface != "message":
            _err(errors, "table blocks are only allowed in messages", ptr)
        _check_table(errors, block, ptr)
    elif btype == "data_table":
        if not block.get("caption"):
            _err(errors, "data_table needs a caption", ptr + "/caption")
        _check_list(errors, block.get("rows"), 2, 101, ptr + "/rows", "rows")
        size = block.get("page_size", 5)
        if not isinstance(size, int) or not 1 <= size <= 100:
            _err(errors, "page_size must be between 1 and 100", ptr + "/page_size")
    elif btype == "markdown":
        if surface != "message":
            _err(errors, "markdown blocks are only allowed in messages", ptr)
        if not isinstance(block.get("text"), str) or not block["text"]:
            _err(errors, "markdown needs a non-empty text", ptr + "/text")
    elif btype == "input":
        _check_text_obj(errors, block.get("label"), 2000, ptr + "/label", plain_only=True)
        _check_element(errors, block.get("element"), ptr + "/element", action_ids)
    elif btype == "rich_text":
        _check_list(errors, block.get("elements"), 0, 10_000, ptr + "/elements", "elements")


def validate_blocks(blocks: Any, *, surface: str = "message", action_id_scope: str = "message") -> list[str]:
    """Return Slack-style error strings for ``blocks`` (empty list if valid).

    ``surface`` is ``"message"`` (<= 50 blocks) or ``"view"`` (<= 100 blocks);
    ``action_id_scope`` is ``"message"`` (our stricter rule) or ``"block"`` (Slack's documented rule).
    """
    errors: list[str] = []
    if not isinstance(blocks, list):
        _err(errors, "blocks must be an array", "/blocks")
        return errors
    limit = MAX_BLOCKS[surface]
    if len(blocks) > limit:
        _err(errors, f"no more than {limit} items allowed (got {len(blocks)})", "/blocks")
    block_ids: set[str] = set()
    message_action_ids: list[tuple[str, str]] = []
    tables = markdown_total = 0
    for i, block in enumerate(blocks):
        ptr = f"/blocks/{i}"
        if not isinstance(block, dict) or block.get("type") not in KNOWN_BLOCK_TYPES:
            btype = block.get("type") if isinstance(block, dict) else None
            _err(errors, f"unknown block type {btype!r}", ptr + "/type")
            continue
        if "block_id" in block:
            bid = block["block_id"]
            _check_len(errors, bid, 255, ptr + "/block_id")
            if isinstance(bid, str):
                if bid in block_ids:
                    _err(errors, f"duplicate block_id {bid!r}", ptr + "/block_id")
                block_ids.add(bid)
        block_action_ids: list[tuple[str, str]] = []
        _check_block(errors, block, ptr, surface, block_action_ids)
        _check_unique_action_ids(errors, block_action_ids)
        message_action_ids.extend(block_action_ids)
        if block["type"] == "table":
            tables += 1
            if tables == 2:
                _err(errors, "only_one_table_allowed: a message may contain at most one table block", ptr)
        if block["type"] == "markdown" and isinstance(block.get("text"), str):
            markdown_total += len(block["text"])
            if markdown_total > MAX_MARKDOWN_TOTAL and markdown_total - len(block["text"]) <= MAX_MARKDOWN_TOTAL:
                _err(errors, f"markdown blocks exceed {MAX_MARKDOWN_TOTAL} characters in total", ptr + "/text")
    if action_id_scope == "message":
        # Per-block duplicates were already reported; report only cross-block duplicates here.
        seen: dict[str, str] = {}
        for aid, ptr in message_action_ids:
            block_of = ptr.split("/")[2]
            if aid in seen and seen[aid] != block_of:
                _err(errors, f"duplicate action_id {aid!r} in message", ptr)
            seen.setdefault(aid, block_of)
    return errors


def _check_unique_action_ids(errors: list[str], action_ids: list[tuple[str, str]]) -> None:
    seen: set[str] = set()
    for aid, ptr in action_ids:
        if aid in seen:
            _err(errors, f"duplicate action_id {aid!r}", ptr)
        seen.add(aid)


def check_message(body: dict, *, action_id_scope: str = "message") -> tuple[str | None, list[str]]:
    """Apply the message rules to a chat/response_url body: ``(error_code or None, errors)``."""
    blocks, text = body.get("blocks"), body.get("text")
    if blocks is not None:
        errors = validate_blocks(blocks, surface="message", action_id_scope=action_id_scope)
        if errors and all(e.startswith("only_one_table_allowed") for e in errors):
            return "invalid_attachments", errors  # Slack's code for a second table
        for i, block in enumerate(blocks if isinstance(blocks, list) else []):
            if isinstance(block, dict) and block.get("type") == "table":
                _err(errors, "table blocks go in the message's attachments field", f"/blocks/{i}/type")
        if errors:
            return "invalid_blocks", errors
        if blocks and (not isinstance(text, str) or not text.strip()):
            return "missing_text", ["a message with blocks needs a non-empty top-level text fallback"]
    attachments = body.get("attachments")
    tables = sum(1 for b in blocks or [] if isinstance(b, dict) and b.get("type") == "table")
    if isinstance(attachments, list):
        for i, attachment in enumerate(attachments):
            inner = attachment.get("blocks") if isinstance(attachment, dict) else None
            if inner is None:
                continue
            errors = [
                e.replace("[json-pointer:/blocks", f"[json-pointer:/attachments/{i}/blocks")
                for e in validate_blocks(inner, surface="message", action_id_scope=action_id_scope)
            ]
            if errors:
                return "invalid_attachments", errors
            tables += sum(1 for b in inner if isinstance(b, dict) and b.get("type") == "table")
    if tables > 1:
        return "invalid_attachments", [f"only_one_table_allowed (got {tables} tables)"]
    if isinstance(text, str) and len(text) > MAX_MESSAGE_TEXT:
        return "msg_too_long", [f"text must be at most {MAX_MESSAGE_TEXT} characters (got {len(text)})"]
    return None, []


# ----------------------------------------------------------------------------------------------------
# Recorded data
# ----------------------------------------------------------------------------------------------------


@dataclass
class Call:
    """One request received by the stand-in."""

    method: str  # "chat.postMessage", "hooks/<name>", "upload/<file_id>"
    path: str  # HTTP path, e.g. "/api/chat.postMessage"
    headers: dict[str, str]  # lower-cased header names
    body: dict[str, Any]  # parsed body (query-string params merged in)
    raw: bytes
    time: float
    http_method: str = "POST"
    status: int = 200  # HTTP status the stand-in answered with
    response: Any = None  # the answer: a dict for API methods, a str for hooks/uploads
    errors: list[str] = field(default_factory=list)  # Block Kit errors, if any

    @property
    def ok(self) -> bool:
        if isinstance(self.response, dict):
            return self.status == 200 and bool(self.response.get("ok"))
        return self.status == 200


@dataclass
class Upload:
    """A file uploaded through files.getUploadURLExternal + upload URL + files.completeUploadExternal."""

    file_id: str
    filename: str
    title: str | None
    content: bytes
    channel_id: str | None
    thread_ts: str | None
    initial_comment: str | None
    channels: str | None = None


@dataclass
class _Rule:
    pattern: str
    kind: str  # "fail" | "rate_limit" | "server_error"
    remaining: int
    error: str = ""
    status: int | None = None
    retry_after: int = 0


# ----------------------------------------------------------------------------------------------------
# The server
# ----------------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server_version = "SlackStandIn/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # silence default request logging
        pass

    def _dispatch(self) -> None:
        self.server.standin._handle(self)  # type: ignore[attr-defined]

    do_GET = do_POST = do_PUT = do_DELETE = _dispatch


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # clients hanging up (timeout tests) are normal
            super().handle_error(request, client_address)


def _parse_body(raw: bytes) -> dict[str, Any]:
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
            return data if isinstance(data, dict) else {}
        except ValueError:
            return {}
    body: dict[str, Any] = dict(parse_qsl(text, keep_blank_values=True))
    for key in _JSON_FIELDS:
        if isinstance(body.get(key), str) and body[key][:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                body[key] = json.loads(body[key])
    return body


class SlackStandIn:
    """Loopback Slack Web API. Use as ``with SlackStandIn() as slack: ...`` or ``start()``/``stop()``."""

    bot_user_id = "U_BOT"
    bot_id = "B_BOT"
    app_id = "A_GPUBOT"
    installer_user_id = "U_INSTALLER"

    def __init__(
        self,
        *,
        team_id: str = "T0001",
        team: str = "gpubot-test",
        scopes: str = "commands,chat:write,app_mentions:read,im:history,im:write,files:write",
        oauth_codes: dict[str, str] | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        action_id_scope: str = "message",
    ) -> None:
        """``oauth_codes`` maps valid OAuth codes to team ids (default ``{"valid-code": "T0002"}``);
        ``client_id``/``client_secret``, when given, must match what oauth.v2.access receives."""
        self.team_id, self.team, self.scopes = team_id, team, scopes
        self.oauth_codes = dict(oauth_codes) if oauth_codes is not None else {"valid-code": "T0002"}
        self.client_id, self.client_secret = client_id, client_secret
        self.action_id_scope = action_id_scope
        # users.info roles (tests add to these): workspace admins, owners (also admins), guests; Slack locales
        self.admins: set[str] = {"U_ADMIN", self.installer_user_id}
        self.owners: set[str] = {"U_OWNER"}
        self.guests: set[str] = {"U_GUEST"}
        self.locales: dict[str, str] = {}
        # Enterprise Grid: org id -> the workspaces its org-wide app is granted to (``auth.teams.list``)
        self.orgs: dict[str, list[str]] = {}
        self._refused_types: dict[str, int] = {}
        self._hook_uses: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._calls: list[Call] = []
        self._rules: list[_Rule] = []
        self._delays: dict[str, float] = {}
        self._pending_files: dict[str, dict[str, Any]] = {}
        self._uploads: list[Upload] = []
        self._ts = 1_700_000_000_000_000  # microseconds; formatted as "1700000000.000100"
        self._counter = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = self.base_url = ""

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> SlackStandIn:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.standin = self  # type: ignore[attr-defined]
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = self.url + "/api/"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="slack-standin", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()  # wakes up delayed answers
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> SlackStandIn:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def hook_url(self, name: str) -> str:
        """A loopback ``response_url``; posts to it are recorded as method ``hooks/<name>``."""
        return f"{self.url}/hooks/{name}"

    # -- inspection ---------------------------------------------------------------------------------

    def calls(self, method: str | None = None) -> list[Call]:
        """Recorded calls in arrival order, optionally filtered by method name or fnmatch pattern."""
        with self._lock:
            return [c for c in self._calls if method is None or fnmatchcase(c.method, method)]

    def wait_for(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Call]:
        """Poll until at least ``count`` calls of ``method`` arrived; return them all."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.calls(method)
            if len(found) >= count:
                return found
            if time.monotonic() >= deadline:
                got = [f"{c.method} -> {c.status}" for c in self.calls()]
                raise AssertionError(
                    f"expected {count} call(s) of {method!r} within {timeout}s, got {len(found)}; received: {got}"
                )
            time.sleep(0.01)

    def messages(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Bodies of successful chat.postMessage calls (in order), each with the assigned ``ts`` added."""
        out = []
        for c in self.calls("chat.postMessage"):
            if not c.ok:
                continue
            if channel is None or channel in (c.body.get("channel"), c.response.get("channel")):
                out.append({**c.body, "ts": c.response["ts"]})
        return out

    def uploads(self) -> list[Upload]:
        """Files whose upload was completed with files.completeUploadExternal."""
        with self._lock:
            return list(self._uploads)

    def clear(self) -> None:
        """Forget recorded calls and uploads (programmed failures and delays are kept)."""
        with self._lock:
            self._calls.clear()
            self._uploads.clear()

    # -- programmable behaviour ---------------------------------------------------------------------

    def fail(self, method: str, error: str = "not_in_channel", times: int = 1, status: int | None = None) -> None:
        """Next ``times`` calls answer ``{"ok": false, "error": error}`` (HTTP 200; hooks: 404 + error text)."""
        self._add_rule(_Rule(method, "fail", times, error=error, status=status))

    def rate_limit(self, method: str, retry_after: int = 0, times: int = 1) -> None:
        """Next ``times`` calls answer HTTP 429 ``ratelimited`` with ``Retry-After: retry_after``."""
        self._add_rule(_Rule(method, "rate_limit", times, error="ratelimited", status=429, retry_after=retry_after))

    def server_error(self, method: str, status: int = 500, times: int = 1) -> None:
        """Next ``times`` calls answer HTTP ``status`` (e.g. 500/503)."""
        self._add_rule(_Rule(method, "server_error", times, error="internal_error", status=status))

    def refuse_block_type(self, block_type: str, times: int = 1) -> None:
        """The next ``times`` messages (chat.* or response_url) holding a ``block_type`` block are refused with
        ``invalid_blocks`` pointing at that block, as Slack does for a block a workspace or surface does not take
        (e.g. ``table`` where tables are not available)."""
        with self._lock:
            self._refused_types[block_type] = self._refused_types.get(block_type, 0) + times

    def _refusal(self, body: dict) -> list[str]:
        """Errors for a programmed block-type refusal (consumes one), or []."""
        places = [("/blocks", body.get("blocks"))]
        attachments = body.get("attachments")
        if isinstance(attachments, list):
            places += [
                (f"/attachments/{n}/blocks", a.get("blocks")) for n, a in enumerate(attachments) if isinstance(a, dict)
            ]
        with self._lock:
            for where, blocks in places:
                for i, block in enumerate(blocks if isinstance(blocks, list) else []):
                    btype = block.get("type") if isinstance(block, dict) else None
                    if self._refused_types.get(btype, 0) > 0:
                        self._refused_types[btype] -= 1
                        return [f"unsupported type: {btype} [json-pointer:{where}/{i}/type]"]
        return []

    def delay(self, method: str, seconds: float) -> None:
        """Sleep ``seconds`` before answering every matching call (0 removes the delay)."""
        with self._lock:
            if seconds > 0:
                self._delays[method] = seconds
            else:
                self._delays.pop(method, None)

    def _add_rule(self, rule: _Rule) -> None:
        with self._lock:
            self._rules.append(rule)

    def _take_rule(self, method: str) -> _Rule | None:
        with self._lock:
            for rule in self._rules:
                if rule.remaining > 0 and fnmatchcase(method, rule.pattern):
                    rule.remaining -= 1
                    self._rules = [r for r in self._rules if r.remaining > 0]
                    return rule
        return None

    # -- request handling ---------------------------------------------------------------------------

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("Content-Length") or 0)
        raw = req.rfile.read(length) if length else b""
        split = urlsplit(req.path)
        path = split.path
        if path.startswith("/hooks/") or path.startswith("/upload/"):
            method = path[1:]
        else:
            method = path.removeprefix("/api/").lstrip("/")
        body = dict(parse_qsl(split.query, keep_blank_values=True))
        if not method.startswith("upload/"):
            body.update(_parse_body(raw))
        headers = {k.lower(): v for k, v in req.headers.items()}
        call = Call(method, path, headers, body, raw, time.time(), http_method=req.command)

        try:
            status, payload, extra_headers = self._answer(call)
        except Exception as exc:  # a bug in the stand-in must not look like a network problem
            status, payload, extra_headers = 500, {"ok": False, "error": f"standin_bug: {exc!r}"}, {}
        call.status, call.response = status, payload
        with self._lock:
            self._calls.append(call)
            delays = [s for p, s in self._delays.items() if fnmatchcase(method, p)]
        if delays:
            self._stopping.wait(max(delays))

        if isinstance(payload, dict):
            data, ctype = json.dumps(payload).encode(), "application/json; charset=utf-8"
        else:
            data, ctype = str(payload).encode(), "text/plain; charset=utf-8"
        try:
            req.send_response(status)
            req.send_header("Content-Type", ctype)
            req.send_header("Content-Length", str(len(data)))
            for k, v in extra_headers.items():
                req.send_header(k, v)
            req.end_headers()
            req.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _answer(self, call: Call) -> tuple[int, Any, dict[str, str]]:
        is_api = not call.method.startswith(("hooks/", "upload/"))
        rule = self._take_rule(call.method)
        if rule is not None:
            headers = {"Retry-After": str(rule.retry_after)} if rule.kind == "rate_limit" else {}
            if is_api:
                return rule.status or 200, {"ok": False, "error": rule.error}, headers
            return rule.status or 404, rule.error, headers
        if call.method.startswith("hooks/"):
            return self._hook(call)
        if call.method.startswith("upload/"):
            return self._upload(call)

        token = self._token(call)
        if not call.method.startswith("oauth.") and not token:
            return 200, {"ok": False, "error": "not_authed"}, {}
        handler = getattr(self, "_api_" + call.method.replace(".", "_"), None)
        result = handler(call) if handler else {}
        headers = {}
        if call.method == "auth.test" and "error" not in result:
            headers["x-oauth-scopes"] = self.scopes
        call.errors = result.pop("errors", [])
        if "error" in result:
            payload = {"ok": False, **result}
            if call.errors:
                payload["errors"] = call.errors
                payload["response_metadata"] = {"messages": call.errors}
            return 200, payload, headers
        return 200, {"ok": True, **result}, headers

    @staticmethod
    def _token(call: Call) -> str | None:
        auth = call.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip() or None
        return call.body.get("token") or None

    def _next_ts(self) -> str:
        with self._lock:
            self._ts += 100
            return f"{self._ts // 1_000_000}.{self._ts % 1_000_000:06d}"

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}{self._counter:06d}"

    def _team_of(self, token: str) -> str:
        m = re.match(r"xoxb-([TE][A-Z0-9]+)-", token)
        return m.group(1) if m else self.team_id

    @staticmethod
    def _dm_channel(user: str) -> str:
        return "D" + user[1:] if user[:1] in ("U", "W") else user

    def _message_error(self, call: Call, require_content: bool = True) -> dict[str, Any] | None:
        b = call.body
        if not b.get("channel"):
            return {"error": "channel_not_found"}
        if require_content and not (b.get("text") or b.get("blocks") or b.get("attachments")):
            return {"error": "no_text"}
        error, errors = check_message(b, action_id_scope=self.action_id_scope)
        if not error and (errors := self._refusal(b)):
            error = "invalid_blocks"
        return {"error": error, "errors": errors} if error else None

    def _message(self, call: Call, ts: str) -> dict[str, Any]:
        b = call.body
        msg = {"type": "message", "text": b.get("text", ""), "user": self.bot_user_id, "bot_id": self.bot_id, "ts": ts}
        for key in ("blocks", "attachments", "thread_ts", "metadata"):
            if key in b:
                msg[key] = b[key]
        return msg

    # -- API methods (return the payload without "ok"; include "error" to fail) --------------------

    def _api_auth_test(self, call: Call) -> dict[str, Any]:
        token = self._token(call) or ""
        if not token.startswith("xoxb-"):
            return {"error": "invalid_auth"}
        team_id = self._team_of(token)
        team = self.team if team_id == self.team_id else team_id.lower()
        return {
            "url": f"https://{team}.slack.com/",
            "team": team,
            "user": "gpubot",
            "team_id": team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _api_auth_teams_list(self, call: Call) -> dict[str, Any]:
        """The workspaces an org-wide app is granted to (an org token ``xoxb-E...``); a workspace token: its own."""
        team_id = self._team_of(self._token(call) or "")
        teams = self.orgs.get(team_id, [] if team_id.startswith("E") else [team_id])
        return {"teams": [{"id": t, "name": t.lower()} for t in teams], "response_metadata": {"next_cursor": ""}}

    def _api_chat_postMessage(self, call: Call) -> dict[str, Any]:
        if err := self._message_error(call):
            return err
        ts = self._next_ts()
        return {"channel": self._dm_channel(call.body["channel"]), "ts": ts, "message": self._message(call, ts)}

    def _api_chat_postEphemeral(self, call: Call) -> dict[str, Any]:
        if not call.body.get("user"):
            return {"error": "user_not_in_channel"}
        if err := self._message_error(call):
            return err
        return {"message_ts": self._next_ts()}

    def _api_chat_update(self, call: Call) -> dict[str, Any]:
        if not call.body.get("ts"):
            return {"error": "message_not_found"}
        if err := self._message_error(call, require_content=False):
            return err
        ts = call.body["ts"]
        return {
            "channel": call.body["channel"],
            "ts": ts,
            "text": call.body.get("text", ""),
            "message": self._message(call, ts),
        }

    def _api_chat_delete(self, call: Call) -> dict[str, Any]:
        if not call.body.get("channel"):
            return {"error": "channel_not_found"}
        if not call.body.get("ts"):
            return {"error": "message_not_found"}
        return {"channel": call.body["channel"], "ts": call.body["ts"]}

    def _api_conversations_open(self, call: Call) -> dict[str, Any]:
        if call.body.get("channel"):
            return {"channel": {"id": call.body["channel"]}, "no_op": True, "already_open": True}
        users = [u for u in str(call.body.get("users", "")).split(",") if u]
        if not users:
            return {"error": "users_list_not_supplied"}
        cid = self._dm_channel(users[0]) if len(users) == 1 else "G" + "".join(u[1:4] for u in users)
        return {"channel": {"id": cid}}

    def _api_conversations_history(self, call: Call) -> dict[str, Any]:
        """The channel's messages posted through this stand-in, newest first (metadata when asked for)."""
        cid = call.body.get("channel")
        if not cid:
            return {"error": "channel_not_found"}
        oldest = float(call.body.get("oldest") or 0)
        with_metadata = str(call.body.get("include_all_metadata", "")).lower() in ("1", "true")
        found = []
        for message in reversed(self.messages(cid)):
            if float(message["ts"]) <= oldest:
                continue
            item = {"type": "message", "ts": message["ts"], "text": message.get("text", ""), "bot_id": self.bot_id}
            if with_metadata and message.get("metadata"):
                item["metadata"] = message["metadata"]
            found.append(item)
        limit = int(call.body.get("limit") or 100)
        return {"messages": found[:limit], "has_more": len(found) > limit}

    def _api_conversations_replies(self, call: Call) -> dict[str, Any]:
        """A thread's messages posted through this stand-in, oldest first (metadata when asked for)."""
        cid, ts = call.body.get("channel"), str(call.body.get("ts") or "")
        if not cid or not ts:
            return {"error": "thread_not_found" if cid else "channel_not_found"}
        with_metadata = str(call.body.get("include_all_metadata", "")).lower() in ("1", "true")
        found = []
        for message in self.messages(cid):
            if message["ts"] != ts and message.get("thread_ts") != ts:
                continue
            item = {"type": "message", "ts": message["ts"], "text": message.get("text", ""), "bot_id": self.bot_id}
            if message.get("thread_ts"):
                item["thread_ts"] = message["thread_ts"]
            if with_metadata and message.get("metadata"):
                item["metadata"] = message["metadata"]
            found.append(item)
        limit = int(call.body.get("limit") or 100)
        return {"messages": found[:limit], "has_more": len(found) > limit}

    def _api_conversations_info(self, call: Call) -> dict[str, Any]:
        cid = call.body.get("channel")
        if not cid:
            return {"error": "channel_not_found"}
        return {
            "channel": {
                "id": cid,
                "name": cid.lower(),
                "is_channel": cid[0] == "C",
                "is_im": cid[0] == "D",
                "is_private": cid[0] in "DG",
                "is_member": True,
                "is_archived": False,
            }
        }

    def _api_users_info(self, call: Call) -> dict[str, Any]:
        uid = call.body.get("user")
        if not uid:
            return {"error": "user_not_found"}
        name = uid.lower()
        owner = uid in self.owners
        return {
            "user": {
                "id": uid,
                "team_id": self.team_id,
                "name": name,
                "real_name": name.title(),
                "tz": "UTC",
                "is_bot": uid == self.bot_user_id,
                "locale": self.locales.get(uid, "en-US"),
                "is_admin": owner or uid in self.admins,
                "is_owner": owner,
                "is_primary_owner": owner and uid == min(self.owners),
                "is_restricted": uid in self.guests,
                "is_ultra_restricted": False,
                "profile": {"display_name": name, "real_name": name.title()},
            }
        }

    def _api_views_publish(self, call: Call) -> dict[str, Any]:
        view = call.body.get("view")
        if not call.body.get("user_id"):
            return {"error": "user_not_found"}
        if not isinstance(view, dict) or view.get("type") not in ("home", "modal"):
            return {"error": "invalid_arguments"}
        errors = validate_blocks(view.get("blocks", []), surface="view", action_id_scope=self.action_id_scope)
        if errors:
            return {"error": "invalid_blocks", "errors": errors}
        return {"view": {**view, "id": self._next_id("V"), "team_id": self.team_id, "app_id": self.app_id}}

    def _api_oauth_v2_access(self, call: Call) -> dict[str, Any]:
        client_id, client_secret = call.body.get("client_id"), call.body.get("client_secret")
        auth = call.headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            try:
                client_id, _, client_secret = base64.b64decode(auth[6:]).decode().partition(":")
            except ValueError:
                return {"error": "invalid_client_id"}
        if not client_id or (self.client_id is not None and client_id != self.client_id):
            return {"error": "invalid_client_id"}
        if not client_secret or (self.client_secret is not None and client_secret != self.client_secret):
            return {"error": "bad_client_secret"}
        team_id = self.oauth_codes.get(call.body.get("code", ""))
        if team_id is None:
            return {"error": "invalid_code"}
        return {
            "access_token": f"xoxb-{team_id}-{self._next_id('')}",
            "token_type": "bot",
            "scope": self.scopes,
            "bot_user_id": self.bot_user_id,
            "app_id": self.app_id,
            "team": {"id": team_id, "name": self.team if team_id == self.team_id else team_id.lower()},
            "enterprise": None,
            "is_enterprise_install": False,
            "authed_user": {"id": self.installer_user_id},
        }

    def _api_apps_connections_open(self, call: Call) -> dict[str, Any]:
        return {"url": "ws://127.0.0.1:1/"}

    def _api_files_getUploadURLExternal(self, call: Call) -> dict[str, Any]:
        filename, length = call.body.get("filename"), call.body.get("length")
        if not filename or not str(length or "").isdigit():
            return {"error": "invalid_arguments"}
        file_id = self._next_id("F")
        with self._lock:
            self._pending_files[file_id] = {"filename": filename, "length": int(length), "content": None}
        return {"upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def _upload(self, call: Call) -> tuple[int, str, dict[str, str]]:
        file_id = call.method.split("/", 1)[1]
        with self._lock:
            pending = self._pending_files.get(file_id)
            if pending is None:
                return 404, "file_not_found", {}
            pending["content"] = call.raw
        return 200, f"OK - {len(call.raw)}", {}

    def _api_files_completeUploadExternal(self, call: Call) -> dict[str, Any]:
        files = call.body.get("files")
        if not isinstance(files, list) or not files:
            return {"error": "invalid_arguments"}
        b, done = call.body, []
        with self._lock:
            for f in files:
                pending = self._pending_files.get(f.get("id")) if isinstance(f, dict) else None
                if pending is None or pending["content"] is None:
                    return {"error": "file_not_found"}
            for f in files:
                pending = self._pending_files.pop(f["id"])
                up = Upload(
                    f["id"],
                    pending["filename"],
                    f.get("title"),
                    pending["content"],
                    b.get("channel_id"),
                    b.get("thread_ts"),
                    b.get("initial_comment"),
                    b.get("channels"),
                )
                self._uploads.append(up)
                done.append(
                    {"id": up.file_id, "title": up.title or up.filename, "name": up.filename, "size": len(up.content)}
                )
        return {"files": done}

    def _hook(self, call: Call) -> tuple[int, str, dict[str, str]]:
        with self._lock:  # Slack: a response_url takes at most 5 posts (within 30 minutes)
            uses = self._hook_uses[call.method] = self._hook_uses.get(call.method, 0) + 1
        if uses > MAX_HOOK_USES:
            return 404, "used_url", {}
        error, errors = check_message(call.body, action_id_scope=self.action_id_scope)
        if not error and (errors := self._refusal(call.body)):
            error = "invalid_blocks"
        if error:
            call.errors = errors
            return 400, error, {}
        return 200, "ok", {}
