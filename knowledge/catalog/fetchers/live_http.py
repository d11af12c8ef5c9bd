"""One bounded, conditional HTTP request for a live price source: a timeout, a byte cap and ETag / Last-Modified.

`get_bounded` sends `If-None-Match` / `If-Modified-Since` from the validators the source answered last time, and
reads the body in chunks, stopping with `FetchError` as soon as it passes `max_bytes` or the whole request passes
`deadline` seconds (a server that drips bytes slowly is cut as surely as one that never answers: httpx's own
timeouts bound each read, the deadline bounds their sum). A `304 Not Modified` answer comes back as
`Fetched(not_modified=True)` with no body: the caller keeps its data and records the check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

from knowledge.catalog.fetchers import FetchError

__all__ = ["Fetched", "Validators", "get_bounded"]


@dataclass(frozen=True, slots=True)
class Validators:
    """What the server said identifies its last body: sent back so that an unchanged body is not sent again."""

    etag: str | None = None
    last_modified: str | None = None

    def headers(self) -> dict[str, str]:
        out = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


@dataclass(frozen=True, slots=True)
class Fetched:
    """A response: its body (empty when not modified), the validators to send next time, and its size."""

    url: str
    body: bytes
    validators: Validators
    not_modified: bool = False
    seconds: float = 0.0


def get_bounded(
    client: httpx.Client,
    url: str,
    *,
    timeout: float,
    max_bytes: int,
    validators: Validators | None = None,
    method: str = "GET",
    json: dict | None = None,
    params: dict | None = None,
) -> Fetched:
    """One request, cut at `timeout` seconds in all and at `max_bytes` of body; raise `FetchError` naming the URL."""
    started = time.monotonic()
    headers = (validators or Validators()).headers() if method == "GET" else {}
    per_read = httpx.Timeout(timeout, connect=min(timeout, 10.0))
    try:
        with client.stream(method, url, headers=headers, json=json, params=params, timeout=per_read) as response:
            if response.status_code == 304:
                return Fetched(url, b"", validators or Validators(), True, time.monotonic() - started)
            if response.status_code != 200:
                raise FetchError(f"HTTP {response.status_code}", url=url)
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise FetchError(f"body of {int(declared):,} bytes is over the cap of {max_bytes:,}", url=url)
            body = _read(response, url, max_bytes, started + timeout)
            found = Validators(response.headers.get("ETag"), response.headers.get("Last-Modified"))
    except httpx.TimeoutException as exc:
        raise FetchError(f"no answer within {timeout:g} s ({type(exc).__name__})", url=url) from None
    except httpx.HTTPError as exc:
        raise FetchError(f"{type(exc).__name__}: {exc}", url=url) from None
    return Fetched(url, body, found, False, time.monotonic() - started)


def _read(response: httpx.Response, url: str, max_bytes: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes(65536):
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"body passed the cap of {max_bytes:,} bytes; stopped reading", url=url)
        if time.monotonic() > deadline:
            raise FetchError("body not complete within the time budget; stopped reading", url=url)
        chunks.append(chunk)
    return b"".join(chunks)
