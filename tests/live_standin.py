"""A stand-in for the live price sources: one real HTTP server on 127.0.0.1 serving bodies per path.

`LiveStandin.route(path, body)` serves `body` at `path` (any method) with a strong ETag and a Last-Modified, and
answers `304 Not Modified` to a matching `If-None-Match`; `hang(path)` makes a path accept the request and never
answer; `huge(path, size)` streams `size` bytes of body. `hits` counts requests per path and `conditional` the
304s. `url(path)` is the URL to put in GPUBOT_SOURCE_<NAME>_URL.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LAST_MODIFIED = "Wed, 02 Dec 2026 07:00:00 GMT"


class LiveStandin:
    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}
        self.hanging: set[str] = set()
        self.huge_sizes: dict[str, int] = {}
        self.fallback: bytes | None = None  # served for paths under a prefix with no body of their own
        self.fallback_prefix = "/"
        self.hits: Counter[str] = Counter()
        self.conditional: Counter[str] = Counter()
        self._stop = threading.Event()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                standin._answer(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                standin._answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> LiveStandin:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def route(self, path: str, body: bytes) -> None:
        self.hanging.discard(path)
        self.huge_sizes.pop(path, None)
        self.bodies[path] = body

    def hang(self, path: str) -> None:
        self.hanging.add(path)

    def huge(self, path: str, size: int) -> None:
        self.huge_sizes[path] = size

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        self.hits[path] += 1
        if path in self.hanging:
            self._stop.wait(30)  # accept, never answer (until the server stops)
            return
        if path in self.huge_sizes:
            return self._stream(handler, self.huge_sizes[path])
        body = self.bodies.get(path)
        if body is None and self.fallback is not None and path.startswith(self.fallback_prefix):
            body = self.fallback
        if body is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if handler.headers.get("If-None-Match") == etag:
            self.conditional[path] += 1
            handler.send_response(304)
            handler.send_header("ETag", etag)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("ETag", etag)
        handler.send_header("Last-Modified", LAST_MODIFIED)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def _stream(self, handler: BaseHTTPRequestHandler, size: int) -> None:
        """A body of `size` bytes, sent chunked with no Content-Length (the cap must count, not trust a header)."""
        handler.send_response(200)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b"[" * 65536
        sent = 0
        try:
            while sent < size and not self._stop.is_set():
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            return  # the client stopped reading: what the cap is for
        time.sleep(0)
