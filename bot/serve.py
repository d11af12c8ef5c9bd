"""serve: run the Slack app, over HTTP (gunicorn) or Socket Mode.

    gpubot serve --http [--port PORT] [--host 127.0.0.1] [--behind-proxy] [--workers N] [--threads 8]
    gpubot serve --socket

HTTP mode serves every Slack request (slash commands, events, buttons) on `POST /slack/events` with signature
verification on, `GET /healthz` (JSON: is the knowledge base there and how fresh it is, and `state`: `ok`,
`read-only` or `unavailable`; 503 unless both are fine, so a load balancer drains the worker), and 404 elsewhere. In
OAuth mode (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET set) it also serves `GET /slack/install` (a redirect to
Slack's consent page carrying the client id, the scopes and a fresh state, which is also set as a cookie) and
`GET /slack/oauth_redirect` (checks the state, exchanges the code with `oauth.v2.access`, stores the
installation in the state database); the redirect URL to register in the Slack app is
`https://<host>/slack/oauth_redirect`. It runs
under gunicorn (`bot.http_server`: an asyncio worker reads each request whole, with a deadline, and only then
hands it to one of `--threads` threads, so slow or silent clients cannot hold the threads): the master opens
(and if needed builds) the knowledge base and warms the pipeline once, the workers fork from it and each reopen
their own read-only SQLite connection (a connection must not cross a fork). Socket Mode needs no public URL: it
connects out with SLACK_APP_TOKEN. At start it warns when the state files are readable by others or bot tokens
would be stored unencrypted (GPUBOT_SECRET_KEY unset in OAuth mode).

Settings come from the environment (`bot.settings`); a missing one is one line on stderr and exit code 2.
Heavy imports happen inside `run()` so that `gpubot ask` stays fast.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from slack_bolt import App

    from bot.settings import Settings
    from knowledge.kb.live import LiveKB

SLACK_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
WARM_UP_QUESTIONS = ("cheapest A100 spot", "price of p4d.24xlarge")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", action="store_true", help=f"serve Slack's requests on POST {SLACK_PATH} (gunicorn)")
    mode.add_argument("--socket", action="store_true", help="connect to Slack with Socket Mode (no public URL)")
    parser.add_argument("--port", type=int, help="HTTP port (default: $PORT, else 3000)")
    parser.add_argument(
        "--host",
        help="HTTP interface to bind (default: 127.0.0.1, only this machine: put a proxy in front; 0.0.0.0 with "
        "--behind-proxy)",
    )
    parser.add_argument(
        "--behind-proxy",
        action="store_true",
        help="a reverse proxy or load balancer (Heroku's router, nginx on another host) forwards every request: "
        "bind 0.0.0.0 unless --host says otherwise, and cap connections per worker, not per client address",
    )
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes (default: 1)")
    parser.add_argument("--threads", type=int, default=8, help="threads per HTTP worker (default: 8)")


def run(args: argparse.Namespace) -> int:
    from bot.settings import SettingsError, load_settings

    mode = "http" if args.http else "socket"
    try:
        settings = load_settings().require(mode)
    except SettingsError as exc:
        print(f"gpubot serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from bot.installations import SecretKeyError, cipher

    try:
        cipher()  # a malformed GPUBOT_SECRET_KEY stops the start, before any token is stored or read
    except SecretKeyError as exc:
        print(f"gpubot serve: {exc}", file=sys.stderr)
        return 2
    _check_secrets_at_rest(settings)
    from knowledge.kb.live import CurrentKB, LiveKB
    from knowledge.kb.reader import KB

    live = LiveKB(tolerate_missing=True)  # builds it when missing or stale: once, before any worker starts
    try:
        live.refresh()  # catch up with prices imported elsewhere (the shared state) before serving
    except Exception:  # serve what we have (or "unavailable"), keep trying in the background, /healthz says why
        logging.getLogger("gpubot").exception("knowledge base refresh failed at start-up")
    kb = CurrentKB(live)
    from sqlalchemy.exc import SQLAlchemyError

    from bot.slack.app import build_app

    try:
        kb_view = cast(KB, kb)  # CurrentKB stands in for a KB, attribute for attribute
        app = build_app(settings, kb_view, oauth=settings.oauth_enabled and mode == "http")
    except (RuntimeError, SQLAlchemyError) as exc:  # OAuth stores unavailable: a missing dependency, no database
        print(f"gpubot serve: OAuth mode cannot start: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    _warm_up(kb)
    live.warm = _warm_up  # each rebuilt knowledge base too, before it is swapped in
    if mode == "socket":
        return _serve_socket(app, live, settings)
    port = args.port or settings.port
    return _serve_http(
        make_wsgi(app, kb, settings.secret("slack_signing_secret") or ""),  # empty: every request refused
        live,
        host=args.host or ("0.0.0.0" if args.behind_proxy else "127.0.0.1"),
        port=port,
        behind_proxy=args.behind_proxy,
        workers=args.workers,
        threads=args.threads,
        log_level=settings.log_level,
    )


def _serve_socket(app: App, live: LiveKB, settings: Settings) -> int:
    """Connect with Socket Mode and serve until the process is stopped; 1 when Slack cannot be reached."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    live.start()
    logging.getLogger("gpubot").info("gpubot connecting with Socket Mode")
    handler = SocketModeHandler(app, app_token=settings.secret("slack_app_token"))
    failure = socket_mode_failure(handler.connect, settings.slack_api_url)
    if failure:
        print(f"gpubot serve: {failure}", file=sys.stderr)
        return 1
    threading.Event().wait()
    return 0


def _check_secrets_at_rest(settings) -> None:
    """Warn when the state files are readable by others, or when bot tokens would be stored unencrypted."""
    from bot.log_redaction import SECRET_VARIABLES, install
    from knowledge.state.db import loose_modes

    install(settings.secret(name.lower()) for name in SECRET_VARIABLES if name.lower() in type(settings).model_fields)
    log = logging.getLogger("gpubot")
    for warning in loose_modes():
        log.warning("state files should be private: %s", warning)
    if settings.oauth_enabled and not settings.secret("gpubot_secret_key"):
        log.warning("GPUBOT_SECRET_KEY is not set: workspaces' bot tokens are stored unencrypted in the state database")
    if settings.oauth_enabled:
        _check_tokens_decrypt(log)


def _check_tokens_decrypt(log: logging.Logger) -> None:
    """Say at start how many stored tokens no key of GPUBOT_SECRET_KEY opens (their workspaces would reinstall)."""
    from bot.installations import undecryptable_tokens
    from knowledge.state import db as state

    try:
        bad = undecryptable_tokens(state.engine())
    except Exception as exc:  # noqa: BLE001 - the state is unreachable now: the first request says so
        log.warning("could not check the stored tokens: %s", exc)
        return
    if bad:
        log.error(
            "%d stored token%s do%s not decrypt with GPUBOT_SECRET_KEY: those workspaces would have to reinstall; "
            "set GPUBOT_SECRET_KEY=new,old with the key they were stored with (then `gpubot db rotate-key`)",
            bad,
            "" if bad == 1 else "s",
            "es" if bad == 1 else "",
        )


def _warm_up(kb) -> None:
    """Answer a few questions once so that the parser's vocabulary and the kb's caches exist before forking."""
    from bot.pipeline import answer

    for question in WARM_UP_QUESTIONS:
        answer(question, kb)


def health(kb) -> dict[str, Any]:
    """What /healthz reports: the knowledge base's build time and, per provider, its newest price date; or, when the
    knowledge base cannot be read (damaged, being rebuilt), `ok: false` and why."""
    import sqlite3

    from knowledge.kb.reader import KnowledgeBaseError

    try:
        providers = {
            r["provider"]: r["as_of"]
            for r in kb.rows("SELECT provider, MAX(as_of) AS as_of FROM offers GROUP BY provider ORDER BY provider")
        }
        offers = kb.rows("SELECT COUNT(*) AS n FROM offers")[0]["n"]
        return {
            "ok": True,
            "kb": {
                "built_at": kb.meta("built_at"),
                "schema_version": kb.meta("schema_version"),
                "offers": offers,
                "newest_price_by_provider": providers,
            },
        }
    except (KnowledgeBaseError, sqlite3.DatabaseError) as exc:
        return {"ok": False, "kb": {"error": str(exc)}}


def socket_mode_failure(connect: Callable[[], Any], api_url: str) -> str | None:
    """`connect()` (Socket Mode's first connection), or the one line saying what could not be reached and why
    (no traceback, no library warning)."""
    from slack_sdk.errors import SlackApiError

    try:
        connect()
    except SlackApiError as exc:
        return f"Slack refused the Socket Mode connection ({exc.response.get('error')}): check SLACK_APP_TOKEN"
    except Exception as exc:  # URLError, timeouts, DNS: the network
        reason = getattr(exc, "reason", None) or exc
        return f"cannot reach Slack at {api_url} to open a Socket Mode connection ({reason})"
    return None


def make_wsgi(app, kb, signing_secret: str) -> Callable[[dict, Callable], Iterable[bytes]]:
    """The WSGI application: the request gate then Bolt on POST /slack/events, /healthz, 404 for anything else."""
    from slack_bolt.adapter.wsgi import SlackRequestHandler

    from bot import request_gate
    from bot.slack.oauth import INSTALL_PATH, REDIRECT_PATH
    from knowledge.state import claims
    from knowledge.state import db as state
    from knowledge.state.presence import health as state_health

    def seen_before(key: str) -> bool:  # bounded in time: a locked state database never holds up the ack
        # a request the database cannot record (PostgreSQL down) is let in only while it is seconds old: a replay
        # of it later, to any worker, is refused (the other workers could not have recognised it)
        stamp = key.split(":")[1]
        fresh = stamp.isdigit() and abs(time.time() - int(stamp)) <= request_gate.UNRECORDED_WINDOW_SECONDS
        return not claims.claim(key, hold=False, if_unrecorded=fresh)

    slack = SlackRequestHandler(app, path=SLACK_PATH)
    oauth_paths = (INSTALL_PATH, REDIRECT_PATH) if app.oauth_flow is not None else ()

    def wsgi(environ: dict, start_response: Callable) -> Iterable[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "GET")
        if path == SLACK_PATH and method == "POST":
            environ["HTTP_X_GPUBOT_ARRIVED"] = repr(time.monotonic())  # the ack budget runs from here (issue 24)
            refusal = request_gate.check(environ, signing_secret, seen_before=seen_before)
            if refusal is not None:  # nothing reaches Bolt, nothing is answered
                logging.getLogger("gpubot.http").info("refused a request: %s (%s)", refusal.status, refusal.reason)
                return _reply(start_response, refusal.status, refusal.reason.encode(), "text/plain")
            return slack(environ, start_response)
        if path in oauth_paths and method == "GET":
            return slack(environ, start_response)
        if path == HEALTH_PATH and method in ("GET", "HEAD"):
            report = health(kb)
            report["state"] = state_health(
                state.engine
            )  # ok | read-only | unavailable: writes cannot be made -> drained
            report["ok"] = report["ok"] and report["state"] == "ok"
            status = "200 OK" if report["ok"] else "503 Service Unavailable"
            return _reply(start_response, status, json.dumps(report).encode(), "application/json")
        if path in (SLACK_PATH, HEALTH_PATH, *oauth_paths):
            return _reply(start_response, "405 Method Not Allowed", b"Method Not Allowed", "text/plain")
        return _reply(start_response, "404 Not Found", b"Not Found", "text/plain")

    return wsgi


def _reply(start_response: Callable, status: str, body: bytes, content_type: str) -> list[bytes]:
    start_response(status, [("Content-Type", f"{content_type}; charset=utf-8"), ("Content-Length", str(len(body)))])
    return [body]


def _serve_http(
    wsgi, live, *, host: str, port: int, workers: int, threads: int, log_level: str, behind_proxy: bool = False
) -> int:
    from gunicorn.app.base import BaseApplication

    from bot import http_server, request_gate

    http_server.per_client_cap = not behind_proxy  # behind a proxy every connection comes from the proxy

    def post_fork(server, worker) -> None:  # each worker gets its own connections: none may cross a fork
        from knowledge.kb.reader import KB
        from knowledge.state import db as state

        if live.available:
            kb = live.get()
            kb.conn = KB(kb.path).conn
        live.start()  # threads do not survive a fork: each worker watches for newer prices itself
        try:
            state.engine().dispose(close=False)  # pooled state connections opened by the master stay the master's
        except Exception:  # the database is unreachable now: the first request that needs it will say so
            logging.getLogger("gpubot").exception("could not reset the state database pool in a worker")

    options = {
        "bind": f"{host}:{port}",
        "workers": max(1, workers),
        "worker_class": "bot.http_server.GuardedWorker",  # reads requests whole in an event loop: slow clients
        "worker_connections": http_server.max_connections(),  # cost a socket, never a thread
        "threads": 1,  # the worker's own; the app's threads are the bridge's pool below
        "preload_app": True,
        "post_fork": post_fork,
        "timeout": 30,
        "graceful_timeout": 10,
        "keepalive": 5,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": log_level.lower(),
        "proc_name": "gpubot",
        "control_socket_disable": True,  # gunicorn 23+: no ~/.gunicorn/*.ctl shared by every server on the host
    }

    class Server(BaseApplication):
        def load_config(self) -> None:
            for key, value in options.items():
                if key in self.cfg.settings:  # older gunicorns lack some settings (control_socket_disable)
                    self.cfg.set(key, value)

        def load(self):
            return http_server.wsgi_bridge(
                wsgi,
                threads=threads,
                max_body=request_gate.MAX_BODY_BYTES,
                refuse_early=functools.partial(request_gate.headers_refusal, slack_path=SLACK_PATH),
            )

    logging.getLogger("gpubot").info("gpubot serving Slack on http://%s:%s%s", host, port, SLACK_PATH)
    try:
        Server().run()
    except SystemExit as exc:  # gunicorn's arbiter exits through sys.exit
        return int(exc.code or 0)
    return 0
