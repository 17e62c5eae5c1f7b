"""Lighthouse on a fresh box: not part of `make test` nor `make bench` (a run takes minutes), the figures of
docs/benchmarks-notes.md ("Pages that do not jump"). The guard in `make test` is
tests/browser/test_layout_shift.py, which reads the pages' own layout-shift entries.

    LIGHTHOUSE=/path/to/node_modules/.bin/lighthouse python -m bench.lighthouse [--out DIR] [--runs N]

Lighthouse comes from the npm registry, installed outside the repository (``npm install lighthouse@12`` in
a folder of its own); Chromium is Debian's (``CHROME_PATH``, default /usr/bin/chromium). The box is the real
``companion serve`` on 127.0.0.1 on a new data folder, with one match of each game (four players, nothing
recorded), seen as a phone that did not sign in (the viewer: what Lighthouse sees from a first visit). Pages:
each game's match page, its TV (``/m/<id>/display``), the tables' page (``/tournament``) and the home, on
Lighthouse's mobile profile (a mid-range phone, 4x slower CPU, a slow 4G network, simulated); the TVs also on
its desktop profile at 1280 x 720. With ``--runs N`` each page is measured N times and the median printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GAMES = ["web-of-power", "richelieu", "rome-is-burning", "conquest-italy"]
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
AUDITS = ("cumulative-layout-shift", "uses-text-compression", "unminified-javascript")


def lighthouse(binary, url, out, desktop=False):
    args = [binary, url, "--quiet", "--output=json", f"--output-path={out}",
            "--only-categories=performance,accessibility", "--chrome-flags=--headless --no-sandbox"]
    if desktop:  # the TV: a desktop profile (no CPU or network throttling of a phone), at 1280 x 720
        args += ["--preset=desktop", "--screenEmulation.width=1280", "--screenEmulation.height=720",
                 "--screenEmulation.deviceScaleFactor=1"]
    env = dict(os.environ, CHROME_PATH=os.environ.get("CHROME_PATH", "/usr/bin/chromium"))
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}: {p.stderr[-2000:]}")
    doc = json.loads(Path(out).read_text())
    a = doc["audits"]
    return {"cls": a["cumulative-layout-shift"]["numericValue"],
            "perf": round(doc["categories"]["performance"]["score"] * 100),
            "a11y": round(doc["categories"]["accessibility"]["score"] * 100),
            "compressed": a["uses-text-compression"]["score"] == 1,
            "minified": a["unminified-javascript"]["score"] == 1,
            "lcp_ms": round(a["largest-contentful-paint"]["numericValue"]),
            "tbt_ms": round(a["total-blocking-time"]["numericValue"]),
            "bytes": a["total-byte-weight"]["numericValue"],
            "requests": len(a["network-requests"]["details"]["items"])}


def median(runs):
    keys = runs[0].keys()
    return {k: (statistics.median(r[k] for r in runs) if isinstance(runs[0][k], (int, float))
                and not isinstance(runs[0][k], bool) else runs[0][k]) for k in keys}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="folder for Lighthouse's JSON reports (default: a temporary one)")
    ap.add_argument("--runs", type=int, default=1, help="runs of each page (the median is printed)")
    ap.add_argument("--only", default=None, help="comma-separated page names to measure (default: all)")
    o = ap.parse_args(argv)
    binary = os.environ.get("LIGHTHOUSE") or "lighthouse"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.browser.trackers_kit import organiser_api
    from tests.web.serverproc import Server

    out = Path(o.out or tempfile.mkdtemp(prefix="lighthouse-"))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lighthouse-box-") as tmp:
        server = Server(Path(tmp) / "data")
        try:
            api = organiser_api(server)
            mids = {g: api.create(g, PLAYERS) for g in GAMES}
            pages = [(g, f"/m/{mids[g]}", False) for g in GAMES]
            pages += [(f"tv {g}", f"/m/{mids[g]}/display", False) for g in GAMES]
            pages += [(f"tv {g} desktop", f"/m/{mids[g]}/display", True) for g in GAMES]
            pages += [("tournament", "/tournament", False), ("home", "/", False)]
            if o.only:
                want = set(o.only.split(","))
                pages = [p for p in pages if p[0] in want]
            print("| page | CLS | perf | a11y | compressed | minified | LCP ms | TBT ms | KB | requests |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for name, path, desktop in pages:
                runs = [lighthouse(binary, server.url + path, out / f"{name.replace(' ', '_')}-{i}.json", desktop)
                        for i in range(o.runs)]
                r = median(runs)
                print(f"| {name} | {r['cls']:.3f} | {r['perf']:g} | {r['a11y']:g} | {'yes' if r['compressed'] else 'no'} "
                      f"| {'yes' if r['minified'] else 'no'} | {r['lcp_ms']:g} | {r['tbt_ms']:g} "
                      f"| {r['bytes'] / 1024:.0f} | {r['requests']:g} |", flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
