"""Price fetchers: live sources turned into rows in SkyPilot's catalog format, with an injected `httpx.Client`.

Every fetcher takes the client as an argument (tests pass `httpx.MockTransport`), sets timeouts, retries transport
errors, HTTP 5xx and 429 (honouring `Retry-After`) with exponential backoff, and raises `FetchError` naming the
page or URL that failed. A fetch either returns everything or raises: callers record a snapshot only after a
complete fetch, so a failure half-way leaves the previous snapshot serving.

- `azure`: the Azure Retail Prices API (public, no authentication, paged JSON).
- `download`: a catalog file from a URL to a local file (for `gpubot prices refresh --catalog URL`).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx

from knowledge.errors import GpubotError

__all__ = ["DEFAULT_TIMEOUT", "FetchError", "download", "get_with_retries", "new_client"]

log = logging.getLogger("gpubot.fetchers")

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
USER_AGENT = "gpubot/0.1 (GPU cloud price history; httpx)"
MAX_DOWNLOAD_BYTES = 200 * 1024 * 1024
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_sleep = time.sleep  # looked up at call time, so tests can replace it


class FetchError(GpubotError, RuntimeError):
    """A live price source failed or returned malformed data; the message names the page or URL."""

    def __init__(self, message: str, *, url: str | None = None, page: int | None = None):
        where = []
        if page is not None:
            where.append(f"page {page}")
        if url:
            where.append(url)
        super().__init__(f"{' '.join(where)}: {message}" if where else message)
        self.url, self.page = url, page


def new_client(**kwargs) -> httpx.Client:
    """An `httpx.Client` with gpubot's timeouts, user agent and redirects followed."""
    kwargs.setdefault("timeout", DEFAULT_TIMEOUT)
    kwargs.setdefault("follow_redirects", True)
    kwargs.setdefault("headers", {"User-Agent": USER_AGENT})
    return httpx.Client(**kwargs)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def get_with_retries(
    client: httpx.Client,
    url: str,
    *,
    params: dict | None = None,
    retries: int = 4,
    backoff: float = 1.0,
    max_wait: float = 60.0,
    sleep: Callable[[float], None] | None = None,
    page: int | None = None,
    stream_to: Path | None = None,
) -> httpx.Response:
    """GET `url`, retrying transport errors, 5xx and 429 up to `retries` times; raise `FetchError` at the end.

    The wait is `Retry-After` when the server sends one (capped at `max_wait`), else `backoff * 2**attempt` plus
    jitter. Other 4xx answers are not retried. With `stream_to`, the body is written to that file.
    """
    last = "no attempt"
    for attempt in range(retries + 1):
        wait = min(max_wait, backoff * 2**attempt + random.uniform(0, backoff / 2))
        try:
            if stream_to is None:
                response = client.get(url, params=params)
            else:
                with client.stream("GET", url, params=params) as response:
                    if response.status_code == 200:
                        _save(response, stream_to, url)
                        return response
                    response.read()
        except httpx.TransportError as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if response.status_code == 200:
                return response
            last = f"HTTP {response.status_code}"
            if response.status_code not in RETRY_STATUS:
                raise FetchError(f"{last} (not retried)", url=str(response.request.url), page=page)
            if (after := _retry_after(response)) is not None:
                wait = min(max_wait, after)
        if attempt < retries:
            log.warning("fetch %s failed (%s); retry %d/%d in %.1f s", url, last, attempt + 1, retries, wait)
            (sleep or _sleep)(wait)
    raise FetchError(f"failed after {retries + 1} attempts ({last})", url=url, page=page)


def _save(response: httpx.Response, path: Path, url: str) -> None:
    size = 0
    with path.open("wb") as handle:
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_DOWNLOAD_BYTES:
                raise FetchError(f"larger than {MAX_DOWNLOAD_BYTES // 2**20} MB", url=url)
            handle.write(chunk)


def download(url: str, dest: Path, client: httpx.Client | None = None, **retry_options) -> Path:
    """Download `url` to `dest` (a temporary file the caller owns), with timeouts and retries."""
    if not url.startswith(("http://", "https://")):
        raise FetchError("only http(s) URLs can be downloaded", url=url)
    own = client is None
    client = client or new_client()
    try:
        get_with_retries(client, url, stream_to=dest, **retry_options)
    except FetchError:
        dest.unlink(missing_ok=True)
        raise
    except httpx.HTTPError as exc:  # e.g. a read error while streaming the body
        dest.unlink(missing_ok=True)
        raise FetchError(f"{type(exc).__name__}: {exc}", url=url) from None
    finally:
        if own:
            client.close()
    return dest
