"""Slash commands over HTTP while slow and silent clients hold connections open (issue 19).

    .venv/bin/python benchmarks/bench_slow_clients.py [--slow 400] [--requests 400] [--read-timeout 10]

Starts `gpubot serve --http` (one worker, 8 threads) against the loopback Slack stand-in, opens `--slow`
connections that send the headers of a POST (half of them also 3 bytes of a 1,000-byte body) and then nothing,
replaces each one the server closes (a sustained attack), and meanwhile sends signed `/gpu` requests from 4
keep-alive clients. Prints, without and with the slow clients: requests per second, p50/p99 latency, /healthz
latency, and how many slow connections were held open (sampled every 0.2 s) and cut off by the server. Not a test.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_http import QUESTIONS, client_loop, free_port, server_env  # noqa: E402
from tests.slack_standin import SlackStandIn  # noqa: E402

SLOW_BODY = (
    b'POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a'
)
SLOW_HEADERS = b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: appl"


class Attack:
    """`count` slow connections, each replaced as soon as the server closes it."""

    def __init__(self, port: int, count: int):
        self.port, self.count, self.stop = port, count, threading.Event()
        self.open: list[socket.socket] = []
        self.cut_off = 0
        self.samples: list[int] = []

    def _connect(self, n: int) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        sock.sendall(SLOW_BODY if n % 2 else SLOW_HEADERS)
        sock.setblocking(False)
        return sock

    def run(self) -> None:
        self.open = [self._connect(n) for n in range(self.count)]
        while not self.stop.is_set():
            for i, sock in enumerate(self.open):
                try:
                    if sock.recv(4096) == b"":
                        raise ConnectionResetError
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                sock.close()  # closed by the server (408 or no word): the attacker opens another
                self.cut_off += 1
                self.open[i] = self._connect(i)
            self.samples.append(len(self.open))
            time.sleep(0.2)
        for sock in self.open:
            sock.close()


def healthz_ms(port: int) -> float:
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/healthz")
    conn.getresponse().read()
    conn.close()
    return (time.perf_counter() - started) * 1000


def run_requests(port: int, slack: SlackStandIn, requests: int, clients: int = 4) -> dict:
    jobs = [QUESTIONS[n % len(QUESTIONS)] for n in range(requests)]
    results: list[dict] = []
    lock = threading.Lock()
    pool = [
        threading.Thread(target=client_loop, args=(port, slack, jobs[i::clients], results, lock))
        for i in range(clients)
    ]
    begin = time.time()
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    end = max(r["ack"] for r in results)
    latencies = sorted((r["ack"] - r["start"]) * 1000 for r in results)
    return {
        "rps": len(results) / (end - begin),
        "p50": statistics.median(latencies),
        "p99": latencies[min(len(latencies) - 1, int(0.99 * (len(latencies) - 1)))],
        "errors": sum(1 for r in results if r["status"] != 200),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=400)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--read-timeout", type=float, default=10.0, help="GPUBOT_HTTP_READ_TIMEOUT")
    args = parser.parse_args()
    gpubot = str(Path(sys.executable).with_name("gpubot"))
    with tempfile.TemporaryDirectory() as home, SlackStandIn() as slack:
        env = server_env(home, slack, None, {"GPUBOT_HTTP_READ_TIMEOUT": str(args.read_timeout)})
        subprocess.run([gpubot, "kb", "build"], env=env, check=True, capture_output=True)
        port = free_port()
        server = subprocess.Popen(
            [gpubot, "serve", "--http", "--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--threads", "8"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    healthz_ms(port)
                    break
                except OSError:
                    time.sleep(0.05)
            client_loop(port, slack, QUESTIONS * 2, [], threading.Lock())  # warm: auth.test, caches
            quiet = run_requests(port, slack, args.requests) | {"healthz_ms": healthz_ms(port)}
            attack = Attack(port, args.slow)
            attacker = threading.Thread(target=attack.run, daemon=True)
            attacker.start()
            time.sleep(1.0)
            loaded = run_requests(port, slack, args.requests)
            health = [healthz_ms(port) for _ in range(5)]
            time.sleep(args.read_timeout + 1)  # long enough for every first slow connection to be cut off
            attack.stop.set()
            attacker.join()
        finally:
            server.terminate()
            server.wait(timeout=15)
    print(
        f"without slow clients: {quiet['rps']:.0f} req/s, p50 {quiet['p50']:.1f} ms, p99 {quiet['p99']:.1f} ms, "
        f"/healthz {quiet['healthz_ms']:.1f} ms, errors {quiet['errors']}"
    )
    print(
        f"with {args.slow} slow clients held open: {loaded['rps']:.0f} req/s, p50 {loaded['p50']:.1f} ms, "
        f"p99 {loaded['p99']:.1f} ms, /healthz max {max(health):.1f} ms, errors {loaded['errors']}"
    )
    print(
        f"slow connections held open: {min(attack.samples)}-{max(attack.samples)}; cut off by the server: "
        f"{attack.cut_off} (read timeout {args.read_timeout:g} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
