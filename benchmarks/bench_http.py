"""Slash-command round trip over real HTTP: `gpubot serve --http --workers 1` against the loopback Slack stand-in.

    .venv/bin/python benchmarks/bench_http.py [--requests 400] [--clients 4] [--threads 8] [--workers 1]
                                              [--postgres]

Starts the stand-in Slack Web API and the server (one gunicorn worker), fires signed `/gpu ...` requests from a
few concurrent clients (threads, each with its own keep-alive `http.client` connection), and prints p50/p90/p99
latency in ms (time until the user has the answer: the HTTP ack when it carries the answer, else the answer's
arrival at the response_url), requests per second, how many answers came inside the ack, and the server's peak
RSS (VmHWM from /proc). Not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.slack_standin import SlackStandIn  # noqa: E402

SECRET = "bench-secret"
WORKING = "Looking that up"
QUESTIONS = ["cheapest A100 spot", "price of p4d.24xlarge", "最便宜的H100按需实例", "cheapest 8x H100 on aws"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def signed_slash(slack: SlackStandIn, text: str) -> tuple[bytes, dict[str, str], str]:
    hook = f"bench-{uuid.uuid4().hex[:10]}"
    body = urlencode(
        {
            "team_id": "T0001",
            "channel_id": "C0BENCH",
            "channel_name": "bench",
            "user_id": "U_BENCH",
            "command": "/gpu",
            "text": text,
            "response_url": slack.hook_url(hook),
            "trigger_id": "1",
        }
    )
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": sig,
    }
    return body.encode(), headers, hook


def peak_rss_kb(pid: int) -> dict[int, int]:
    """VmHWM (peak resident set) of a process and its children, in kB."""
    out: dict[int, int] = {}
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    out[p] = int(line.split()[1])
        except OSError:
            pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children (gunicorn's master and workers), in seconds."""
    total = 0.0
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    ticks = os.sysconf("SC_CLK_TCK")
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        except (OSError, IndexError, ValueError):
            pass
    return total


def client_loop(port: int, slack: SlackStandIn, jobs: list[str], results: list, lock: threading.Lock) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for text in jobs:
        body, headers, hook = signed_slash(slack, text)
        started = time.time()
        conn.request("POST", "/slack/events", body=body, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        acked = time.time()
        in_ack = WORKING not in raw.decode()  # the ack carried the answer, not "Looking that up…"
        with lock:
            results.append({"status": response.status, "start": started, "ack": acked, "hook": hook, "in_ack": in_ack})
    conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--threads", type=int, default=8, help="gunicorn threads per worker")
    parser.add_argument("--workers", type=int, default=1, help="gunicorn worker processes")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="keep the state (handled events, settings) in a throwaway PostgreSQL server",
    )
    args = parser.parse_args()
    database = None
    if args.postgres:
        from tests.pgserver import PostgresServer

        database = PostgresServer().start()
    try:
        return _run(args, database.url if database else None)
    finally:
        if database:
            database.stop()


def measure(
    *,
    requests: int = 400,
    clients: int = 4,
    threads: int = 8,
    workers: int = 1,
    database_url: str | None = None,
    questions: list[str] | None = None,
    warm_questions: list[str] | None = None,
    server_cmd: list[str] | None = None,
    env_extra: dict[str, str] | None = None,
) -> dict:
    """Start the server, fire the signed requests, stop it; return the figures (latencies in ms).

    `questions` are asked round-robin (default QUESTIONS); `server_cmd` replaces `gpubot serve ...` (everything
    after the executable is appended: --http --host --port --workers --threads), for what-if variants."""
    questions = questions or QUESTIONS
    gpubot = str(Path(sys.executable).with_name("gpubot"))
    with tempfile.TemporaryDirectory() as home, SlackStandIn() as slack:
        env = server_env(home, slack, database_url, env_extra)
        subprocess.run([gpubot, "kb", "build"], env=env, check=True, capture_output=True)
        port = free_port()
        started = time.time()
        command = [
            *(server_cmd or [gpubot, "serve"]),
            "--http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--threads",
            str(threads),
        ]
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _wait_until_healthy(server, port)
            startup = time.time() - started
            warm: list = []
            client_loop(port, slack, warm_questions or QUESTIONS * 2, warm, threading.Lock())  # auth.test, caches
            slack.clear()
            load = _load(port, slack, [questions[n % len(questions)] for n in range(requests)], clients, server.pid)
            rss = peak_rss_kb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=15)
            server.stderr.close()
    return _figures(load, startup, rss, server.pid)


def server_env(home: str, slack: SlackStandIn, database_url: str | None, extra: dict[str, str] | None) -> dict:
    """The server's environment: a fresh home, the stand-in Slack, no SLACK_* variable of this shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env.update(
        GPUBOT_HOME=home,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_BOT_TOKEN="xoxb-bench",
        SLACK_API_URL=slack.base_url,
        GPUBOT_LOG_LEVEL="WARNING",
        **(extra or {}),
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _wait_until_healthy(server: subprocess.Popen, port: int) -> None:
    """Until GET /healthz answers 200; RuntimeError with the server's last words if it exits first."""
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
        if server.poll() is not None:
            raise RuntimeError(f"the server did not start:\n{server.stderr.read().decode()[-3000:]}")


@dataclass(frozen=True)
class _Load:
    """The measured requests (each with start, ack and done times), the server's CPU seconds and the wall span."""

    results: list[dict]
    cpu_used: float
    seconds: float


def _load(port: int, slack: SlackStandIn, jobs: list[str], clients: int, pid: int) -> _Load:
    """`jobs` shared out among `clients` concurrent clients; a deferred answer is done when its hook is called."""
    per_client = [jobs[i::clients] for i in range(clients)]
    results: list[dict] = []
    lock = threading.Lock()
    pool = [threading.Thread(target=client_loop, args=(port, slack, chunk, results, lock)) for chunk in per_client]
    cpu_before = cpu_seconds(pid)
    begin = time.time()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    cpu_used = cpu_seconds(pid) - cpu_before
    deferred = [r for r in results if not r["in_ack"]]
    for r in deferred:
        call = slack.wait_for(f"hooks/{r['hook']}", timeout=30)[0]
        r["done"] = call.time
    end = max([r["ack"] for r in results] + [r["done"] for r in deferred])
    for r in results:
        r.setdefault("done", r["ack"])
    return _Load(results, cpu_used, end - begin)


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def _figures(load: _Load, startup: float, rss: dict[int, int], server_pid: int) -> dict:
    """The figures of one measurement (latencies in ms)."""
    results = load.results
    latencies = sorted((r["done"] - r["start"]) * 1000 for r in results)
    acks = sorted((r["ack"] - r["start"]) * 1000 for r in results)
    in_ack = sum(1 for r in results if r["in_ack"])
    return {
        "startup_s": startup,
        "p50": statistics.median(latencies),
        "p90": _pct(latencies, 90),
        "p99": _pct(latencies, 99),
        "max": latencies[-1],
        "ack_p50": statistics.median(acks),
        "ack_p99": _pct(acks, 99),
        "in_ack": in_ack,
        "requests": len(results),
        "errors": sum(1 for r in results if r["status"] != 200),
        "rps": len(results) / load.seconds,
        "server_cpu_ms_per_request": 1000 * load.cpu_used / max(1, len(results)),
        "rss_mb": {("master" if pid == server_pid else f"worker {pid}"): kb / 1024 for pid, kb in sorted(rss.items())},
    }


def _run(args: argparse.Namespace, database_url: str | None) -> int:
    try:
        m = measure(
            requests=args.requests,
            clients=args.clients,
            threads=args.threads,
            workers=args.workers,
            database_url=database_url,
        )
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    state = "PostgreSQL" if database_url else "SQLite"
    print(
        f"gpubot serve --http, {args.workers} worker(s) x {args.threads} threads, state in {state}; "
        f"{args.requests} signed /gpu requests from {args.clients} keep-alive clients; "
        f"questions: {', '.join(QUESTIONS)}"
    )
    print(f"{'metric':38} {'value':>12}")
    rows = [
        ("server start-up to /healthz (s)", f"{m['startup_s']:.2f}"),
        ("answer round trip p50 (ms)", f"{m['p50']:.1f}"),
        ("answer round trip p90 (ms)", f"{m['p90']:.1f}"),
        ("answer round trip p99 (ms)", f"{m['p99']:.1f}"),
        ("answer round trip max (ms)", f"{m['max']:.1f}"),
        ("HTTP ack p50 / p99 (ms)", f"{m['ack_p50']:.1f} / {m['ack_p99']:.1f}"),
        ("answers inside the ack", f"{m['in_ack']}/{m['requests']}"),
        ("non-200 responses", str(m["errors"])),
        ("requests per second", f"{m['rps']:.1f}"),
        ("server CPU per request (ms)", f"{m['server_cpu_ms_per_request']:.2f}"),
    ]
    rows += [(f"peak RSS {role} (MB)", f"{mb:.1f}") for role, mb in m["rss_mb"].items()]
    for label, value in rows:
        print(f"{label:38} {value:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
