"""The HTTP server's front: requests are read whole, with a deadline, before any worker thread sees them.

gunicorn's ASGI worker reads every connection in one asyncio event loop, so a client that sends its headers or
body slowly (or never) costs a socket and a coroutine, not one of the threads that answer Slack. `wsgi_bridge`
turns the WSGI app (the request gate, Bolt, /healthz) into an ASGI app that buffers the body, bounded in size and
time, and only then runs the WSGI app in a thread pool of `threads` threads. `GuardedWorker` adds what gunicorn's
ASGI worker lacks: a deadline for the request headers and a cap on open connections per worker.

    GPUBOT_HTTP_READ_TIMEOUT      seconds a client has to send a request's headers, and then its body (default 10)
    GPUBOT_HTTP_MAX_CONNECTIONS   open connections per worker; more are closed at once (default 1000)
    MAX_CONNECTIONS_PER_CLIENT    open connections per client address per worker (100), unless behind a declared
                                  proxy (`gpubot serve --behind-proxy`: every connection comes from the proxy)
    MAX_BUFFERED_BYTES            bytes of not yet verified request bodies a worker holds at once (8 MB); a body
                                  that would go over gets 503 and its connection is closed; each connection's
                                  unread bytes are bounded too (CONNECTION_BUFFER_BYTES, 64 KB; gunicorn's: 256 KB)

A request too slow to arrive gets 408 and its connection is closed; a body over the gate's limit 413, unread. A
POST to the Slack path whose signature headers are missing, malformed or stale gets 401 before its body is read
(`bot.request_gate.headers_refusal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from gunicorn.asgi import protocol as _protocol
from gunicorn.workers import gasgi

from knowledge.config import config

log = logging.getLogger("gpubot.http")
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 1000
MAX_CONNECTIONS_PER_CLIENT = 100
MAX_BUFFERED_BYTES = 8 * 1024 * 1024
CONNECTION_BUFFER_BYTES = 64 * 1024  # read from a socket before reading pauses until the app takes it
per_client_cap = True  # off behind a declared proxy (set by `gpubot serve --behind-proxy` before the fork)


def read_timeout() -> float:
    return config().gpubot_http_read_timeout


def max_connections() -> int:
    return config().gpubot_http_max_connections


def wsgi_bridge(
    wsgi: Callable,
    *,
    threads: int,
    max_body: int,
    timeout: float | None = None,
    refuse_early: Callable[[str, str, dict[str, str]], tuple[int, str] | None] | None = None,
) -> Callable:
    """An ASGI app that reads a request whole (at most `max_body` bytes, within `timeout` s, all bodies together at
    most MAX_BUFFERED_BYTES) and then runs `wsgi` with it in a pool of `threads` threads. `refuse_early(method,
    path, headers)` may refuse a request from its headers alone, before its body is read: (status, reason)."""
    pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="gpubot-http")
    timeout = timeout or read_timeout()
    buffered = [0]  # bytes of bodies being read now, every connection of this worker (one event loop: no lock)

    async def app(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", ())]
        length = next((v for k, v in headers if k == "content-length"), None)
        if length is not None and length.isascii() and length.isdigit() and int(length) > max_body:
            await _plain(send, 413, f"body over {max_body} bytes")
            return
        early = refuse_early(scope["method"], scope["path"], dict(headers)) if refuse_early else None
        if early is not None:  # unsigned, malformed or stale: refused before a byte of its body is held
            await _plain(send, *early)
            return
        body = bytearray()
        try:
            async with asyncio.timeout(timeout):
                refusal = await _read_body(receive, body, max_body, buffered)
        except TimeoutError:
            log.info("closed a request whose body did not arrive within %g s (%s)", timeout, _peer(scope))
            refusal = (408, "the request body did not arrive in time")
        finally:
            buffered[0] -= len(body)
        if refusal is not None:
            await _plain(send, *refusal)
            return
        environ = _environ(scope, headers, bytes(body))
        loop = asyncio.get_running_loop()
        status, response_headers, chunks = await loop.run_in_executor(pool, _call, wsgi, environ)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response_headers],
            }
        )
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    return app


async def _read_body(receive: Callable, body: bytearray, max_body: int, buffered: list[int]) -> tuple[int, str] | None:
    """Read the body into `body` (counted in `buffered`); why it is refused, or None."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":  # stopped sending (half-closed) or went away
            return 400, "the body is shorter than its Content-Length"
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > max_body:
            return 413, f"body over {max_body} bytes"
        if buffered[0] + len(chunk) > MAX_BUFFERED_BYTES:
            log.warning("refused a request body: %d bytes of bodies held already", buffered[0])
            return 503, "too many request bodies in flight; try again"
        body += chunk
        buffered[0] += len(chunk)
        if not message.get("more_body"):
            return None


def _call(wsgi: Callable, environ: dict) -> tuple[int, list[tuple[str, str]], list[bytes]]:
    started: dict = {}

    def start_response(status: str, headers: list, exc_info=None):
        started["status"], started["headers"] = int(status.split(" ", 1)[0]), headers
        return lambda data: chunks.append(data)

    chunks: list[bytes] = []
    result: Iterable[bytes] = wsgi(environ, start_response)
    try:
        chunks.extend(result)
    finally:
        if hasattr(result, "close"):
            result.close()
    return started.get("status", 500), started.get("headers", []), chunks


def _environ(scope: dict, headers: list[tuple[str, str]], body: bytes) -> dict:
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": scope.get("root_path", ""),
        "PATH_INFO": scope["path"],
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": str(client[0]),
        "REMOTE_PORT": str(client[1]),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    for name, value in headers:
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            environ[key] = value
        else:
            key = f"HTTP_{key}"
            environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


async def _plain(send: Callable, status: int, text: str) -> None:
    body = text.encode()
    with contextlib.suppress(Exception):  # the client may be gone already
        await _send_plain(send, status, body)


async def _send_plain(send: Callable, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"connection", b"close"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _peer(scope: dict) -> str:
    client = scope.get("client") or ("?", 0)
    return f"{client[0]}:{client[1]}"


class GuardedProtocol(_protocol.ASGIProtocol):
    """gunicorn's ASGI connection with a header deadline and the worker's connection cap."""

    _header_timer: asyncio.TimerHandle | None = None

    _client: str | None = None  # the address counted in the worker's per-client tally

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._max_buffer_size = CONNECTION_BUFFER_BYTES  # gunicorn's 256 KB x every slow sender adds up
        if self.worker.nr_conns > max_connections():
            log.warning("connection refused: %d open (GPUBOT_HTTP_MAX_CONNECTIONS)", self.worker.nr_conns - 1)
            transport.close()
            return
        if per_client_cap:
            peer = transport.get_extra_info("peername")
            client = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            tally: dict[str, int] = self.worker.__dict__.setdefault("gpubot_clients", {})
            if tally.get(client, 0) >= MAX_CONNECTIONS_PER_CLIENT:
                log.warning("connection refused: %s has %d open already", client, tally[client])
                transport.close()
                return
            tally[client] = tally.get(client, 0) + 1
            self._client = client
        self._arm_header_deadline(read_timeout())

    def _arm_header_deadline(self, seconds: float) -> None:
        self._cancel_header_deadline()
        self._header_timer = self.worker.loop.call_later(seconds, self._headers_too_slow)

    def _cancel_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        log.info("closed a connection whose request headers did not arrive in time")
        self.transport.close()

    def _on_headers_complete(self):
        self._cancel_header_deadline()
        return super()._on_headers_complete()

    def _arm_keepalive_timer(self) -> None:  # between requests: idle for keepalive, then the headers' deadline
        super()._arm_keepalive_timer()
        self._arm_header_deadline(float(self.cfg.keepalive or 0) + read_timeout())

    def eof_received(self):
        """A client that stops sending mid-body (half-closes) still gets its 400: keep the write side open."""
        receiver = getattr(self, "_body_receiver", None)
        if receiver is not None and getattr(self, "_current_request", None) is not None:
            receiver.signal_disconnect()
            return True
        return None

    def connection_lost(self, exc) -> None:
        self._cancel_header_deadline()
        if self._client is not None:
            tally = self.worker.__dict__.get("gpubot_clients", {})
            tally[self._client] = tally.get(self._client, 1) - 1
            if tally[self._client] <= 0:
                tally.pop(self._client, None)
            self._client = None
        super().connection_lost(exc)


class GuardedWorker(gasgi.ASGIWorker):
    """gunicorn's ASGI worker serving connections through `GuardedProtocol`, and stopping as soon as it is told to
    (gunicorn's checks a flag once a second: every deploy and restart waited for it)."""

    _serving: asyncio.Task | None = None

    def init_process(self) -> None:
        gasgi.ASGIProtocol = GuardedProtocol  # the name gasgi's server factory looks up
        super().init_process()

    async def _serve(self) -> None:
        self._serving = asyncio.current_task()
        await super()._serve()

    def _wake(self) -> None:
        """End the serving loop's one-second sleep, once: gunicorn's loop takes the cancellation as its cue to shut
        down (gracefully on SIGTERM: in-flight requests still finish). A signal during start-up, or a second one
        during the shutdown, is left to gunicorn's own checks."""
        task, self._serving = self._serving, None
        if task is not None and getattr(self, "servers", None):  # past start-up: only the loop's sleep is left
            task.cancel()

    def handle_exit_signal(self) -> None:
        super().handle_exit_signal()
        self._wake()

    def handle_quit_signal(self) -> None:
        super().handle_quit_signal()
        self._wake()
