"""The HTTP server's front: requests are read whole, with a deadline, before any worker thread sees them.

gunicorn's ASGI worker reads every connection in one asyncio event loop, so a client that sends its headers or
body slowly (or never) costs a socket and a coroutine, not one of the threads that answer Slack. `wsgi_bridge`
turns the WSGI app (the request gate, Bolt, /healthz) into an ASGI app that buffers the body, bounded in size and
time, and only then runs the WSGI app in a thread pool of `threads` threads. `GuardedWorker` adds what gunicorn's
ASGI worker lacks: a deadline for the request headers and a cap on open connections per worker.

    GPUBOT_HTTP_READ_TIMEOUT      seconds a client has to send a request's headers, and then its body (default 10)
    GPUBOT_HTTP_MAX_CONNECTIONS   open connections per worker; more are closed at once (default 1000)

A request too slow to arrive gets 408 and its connection is closed; a body over the gate's limit 413, unread.
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


def read_timeout() -> float:
    return config().gpubot_http_read_timeout


def max_connections() -> int:
    return config().gpubot_http_max_connections


def wsgi_bridge(wsgi: Callable, *, threads: int, max_body: int, timeout: float | None = None) -> Callable:
    """An ASGI app that reads a request whole (at most `max_body` bytes, within `timeout` s) and then runs `wsgi`
    with it in a pool of `threads` threads."""
    pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="gpubot-http")
    timeout = timeout or read_timeout()

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
        body = bytearray()
        try:
            async with asyncio.timeout(timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":  # stopped sending (half-closed) or went away
                        await _plain(send, 400, "the body is shorter than its Content-Length")
                        return
                    body += message.get("body", b"")
                    if len(body) > max_body:
                        await _plain(send, 413, f"body over {max_body} bytes")
                        return
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            log.info("closed a request whose body did not arrive within %g s (%s)", timeout, _peer(scope))
            await _plain(send, 408, "the request body did not arrive in time")
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

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if self.worker.nr_conns > max_connections():
            log.warning("connection refused: %d open (GPUBOT_HTTP_MAX_CONNECTIONS)", self.worker.nr_conns - 1)
            transport.close()
            return
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
        super().connection_lost(exc)


class GuardedWorker(gasgi.ASGIWorker):
    """gunicorn's ASGI worker serving connections through `GuardedProtocol`."""

    def init_process(self) -> None:
        gasgi.ASGIProtocol = GuardedProtocol  # the name gasgi's server factory looks up
        super().init_process()
