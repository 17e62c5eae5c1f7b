"""Servers compared for ``companion serve`` (docs/server.md): the same tournament room
(``bench/room.py``) against each candidate, on this machine.

    python -m bench.server_candidates [--streams 1000 --slow 200 --idle 200 --seconds 15]

- ``uvicorn``: ``companion serve`` itself (uvicorn + h11, the ASGI front of companion/web/asgi.py: streams
  on the event loop, Flask through a2wsgi's thread pool, the per-address caps and header deadline);
- ``hypercorn``: the same ASGI front on Hypercorn 0.17+ (pure Python, h11), its own timeouts;
- ``waitress``: the server before: waitress with 48 threads, every stream holding one
  (``connection_limit=200``, ``channel_timeout=120``), as ``companion serve`` ran it.

``python -m bench.server_candidates serve NAME --port P --data-dir D`` runs one candidate
(what the comparison starts as a subprocess). hypercorn and waitress are dev dependencies only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CANDIDATES = ("uvicorn", "hypercorn", "waitress")


def _app(data_dir: str):
    from companion.runtime import Runtime
    from companion.web.app import create_app

    runtime = Runtime.open(data_dir=data_dir, gpio="off")
    app = create_app(runtime=runtime)
    runtime.start()  # as companion serve: the clock runner ticks
    return app


def serve(name: str, port: int, data_dir: str) -> int:
    if name == "waitress":
        import waitress

        from companion.cli.serve import limit_malloc_arenas

        limit_malloc_arenas()
        app = _app(data_dir)
        server = waitress.create_server(app, host="127.0.0.1", port=port, threads=48, ident="companion",
                                        channel_timeout=120, connection_limit=200,
                                        clear_untrusted_proxy_headers=True)
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        return 0
    if name == "hypercorn":
        import asyncio

        from hypercorn.asyncio import serve as hserve
        from hypercorn.config import Config

        from companion.web.asgi import Front, Limits
        from companion.web.server import raise_open_files_limit

        raise_open_files_limit()
        app = _app(data_dir)
        cfg = Config()
        cfg.bind = [f"127.0.0.1:{port}"]
        cfg.accesslog = None
        cfg.backlog = 2048
        cfg.keep_alive_timeout = 5
        # not read_timeout: it closes an open event stream too (its client sends nothing after the request)
        front = Front(app, Limits(), threads=16)
        asyncio.run(hserve(front, cfg))
        return 0
    raise SystemExit(f"unknown candidate {name}")


def _start(name: str, port: int, data_dir: Path):
    if name == "uvicorn":
        argv = [sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1", "--port", str(port),
                "--gpio", "off", "--no-qr", "--data-dir", str(data_dir)]
    else:
        argv = [sys.executable, "-m", "bench.server_candidates", "serve", name, "--port", str(port),
                "--data-dir", str(data_dir)]
    env = dict(os.environ)
    env.pop("COMPANION_SSE_HEARTBEAT", None)
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def compare(streams: int, slow: int, idle: int, seconds: float, names=CANDIDATES) -> list[dict]:
    from bench import bench_server as bs
    from bench import room

    out = []
    for name in names:
        d = Path(tempfile.mkdtemp(prefix=f"companion-{name}-"))
        token = bs._token(d)
        port = bs._free_port()
        proc = _start(name, port, d)
        host = f"127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if room.Client(host, None, 2).call("GET", "/healthz")[0] == 200:
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{name} did not start")
                time.sleep(0.05)
            rss_idle = room.rss_mb(proc.pid)
            r = room.flood(host, proc.pid, token, streams=streams, slow=slow, idle=idle, seconds=seconds,
                           open_timeout=20)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.append({"server": name, "rss_idle": rss_idle, "streams_ready": r["streams_ready"],
                    "streams": streams, "post_p50": room.pct(r["post_ms"], 50), "post_p95": room.pct(r["post_ms"], 95),
                    "posts": len(r["post_ms"]), "post_fail": r["post_fail"], "fan_p95": room.pct(r["fan_ms"], 95),
                    "fan_missing": r["fan_missing"], "health_fail": r["health_fail"],
                    "health_p95": room.pct(r["health_ms"], 95), "rss_peak": r["rss_peak"],
                    "cpu": r["server_cpu"], "recovered_ms": r["recovered_ms"],
                    "nuisance_reopened": r["nuisance_reopened"]})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.server_candidates")
    sub = p.add_subparsers(dest="cmd")
    s = sub.add_parser("serve")
    s.add_argument("name", choices=CANDIDATES[1:])
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--data-dir", required=True)
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--slow", type=int, default=200)
    p.add_argument("--idle", type=int, default=200)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--only", action="append", choices=CANDIDATES)
    args = p.parse_args(argv)
    if args.cmd == "serve":
        return serve(args.name, args.port, args.data_dir)
    rows = compare(args.streams, args.slow, args.idle, args.seconds, tuple(args.only or CANDIDATES))
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
