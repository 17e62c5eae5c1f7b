"""Replication and the league (docs/league.md), with the real Litestream binary:

- replication lag under the 12-player write load: the real server, `companion replicate` to a folder
  (sync-interval 1 s), 12 clients writing paced events (20-100 ms apart) to their own matches; for each
  acknowledged write, the seconds until the replica holds it. Which Litestream transaction holds a write
  is read from the files' times: the first LTX file of Litestream's local log written after the write's
  acknowledgement holds it (Litestream read the WAL after the commit), and the replica's file of that
  name is its arrival (an upper bound by at most one local read);
- the league over 10 boxes of 500 matches each: combining (reading the 10 copies, merging, standings), and
  a full refresh (10 `litestream restore` runs from folder replicas, each copy checked).

Without the binary the rows say so. Traffic goes only to 127.0.0.1; every phase is bounded in time.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CLIENTS = 12
PER_CLIENT = 40
BOXES = 10
MATCHES = 500
DEADLINE = 120.0


def _ltx_files(folder: Path) -> dict[str, tuple[int, float]]:
    """name -> (max txid, mtime) of the level-0 LTX files under ``folder``/ltx/0."""
    out = {}
    level = folder / "ltx" / "0"
    try:
        names = os.listdir(level)
    except OSError:
        return out
    for name in names:
        if name.endswith(".ltx"):
            try:
                out[name] = (int(name.split("-")[1].split(".")[0], 16), (level / name).stat().st_mtime)
            except (OSError, ValueError, IndexError):
                pass
    return out


def _pct(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def replication_lag(binary: str) -> dict:
    from companion.services import replication
    from bench.bench_server import Client, Server, _adjust, _new_match, _token
    from companion.storage import Store

    with tempfile.TemporaryDirectory(prefix="companion-bench-replica-") as d:
        data, replica = Path(d) / "data", Path(d) / "replica"
        data.mkdir()
        token = _token(data)
        with Store(data / "companion.db") as store:
            store.set_setting(replication.SETTING, replication.check_settings({"target": str(replica)}))
        server = Server(data)
        sup = subprocess.Popen([sys.executable, "-m", "companion", "replicate", "--data-dir", str(data)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               env=dict(os.environ, COMPANION_LITESTREAM=binary))
        try:
            setup = Client(server.host, token)
            matches = [_new_match(setup, f"bench {i}") for i in range(CLIENTS)]
            setup.close()
            end = time.monotonic() + 30
            while time.monotonic() < end and not _ltx_files(replica):
                time.sleep(0.05)
            acks: list[float] = []
            lock = threading.Lock()
            barrier = threading.Barrier(CLIENTS)

            def run(n):
                rng = random.Random(n)
                c = Client(server.host, token)
                seq = 0
                mine = []
                try:
                    barrier.wait(timeout=30)
                    for i in range(PER_CLIENT):
                        status, resp = c.call("POST", f"/api/matches/{matches[n]}/events",
                                              dict(_adjust(i), expected_seq=seq))
                        if status != 201:
                            raise RuntimeError(f"POST {status}: {resp}")
                        mine.append(time.time())
                        seq = resp["event"]["seq"]
                        time.sleep(rng.uniform(0.02, 0.1))
                finally:
                    c.close()
                    with lock:
                        acks.extend(mine)

            threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(CLIENTS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=DEADLINE)
            last = max(acks)
            end = time.monotonic() + 30
            local_dir = data / ".companion.db-litestream"
            while time.monotonic() < end:  # until the replica holds what the local log holds after the last write
                local = _ltx_files(local_dir)
                after = [v for v in local.values() if v[1] >= last]
                if after and max(v[0] for v in _ltx_files(replica).values()) >= max(v[0] for v in after):
                    break
                time.sleep(0.1)
            local = sorted(_ltx_files(local_dir).items(), key=lambda kv: kv[1][1])
            remote = _ltx_files(replica)
            lags = []
            for t in acks:
                holder = next(((name, v) for name, v in local if v[1] >= t), None)
                if holder is None:
                    continue
                arrived = [mt for (txid, mt) in remote.values() if txid >= holder[1][0]]
                if arrived:
                    lags.append((min(arrived) - t) * 1000)
        finally:
            os.killpg(sup.pid, 15)
            try:
                sup.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(sup.pid, 9)
            server.stop()
    return {"lags": lags, "writes": len(acks)}


def _make_box(path: Path, box: int, rng: random.Random) -> None:
    from companion.services import seasons
    from companion.storage import Store

    names = [f"Player {i}" for i in range(40)]
    with Store(path) as store:
        seasons.create_club(store, "Fan Club")
        season = seasons.create_season(store, "Fan Club", "conquest-italy", 2026)
        with store.write():  # one transaction: the results as savepoints of it
            for m in range(MATCHES):
                players = rng.sample(names, rng.randint(3, 6))
                seasons.add_result(store, season["id"], {
                    "id": f"b{box}-m{m}", "date": f"2026-{1 + m % 12:02d}-{1 + m % 28:02d}",
                    "results": [{"player": p, "place": i + 1, "objective": rng.random() < 0.2}
                                for i, p in enumerate(players)]})


def league_rows(binary: str | None) -> list[dict]:
    from companion.services import league_boxes
    from companion.services.league_boxes import refresh_all

    rng = random.Random(7)
    rows = []
    with tempfile.TemporaryDirectory(prefix="companion-bench-league-") as d:
        d = Path(d)
        boxes = []
        for b in range(BOXES):
            db = d / f"box{b}" / "companion.db"
            db.parent.mkdir()
            _make_box(db, b, rng)
            boxes.append(f"B{b}={db}")
        parsed = league_boxes.parse_boxes(boxes)
        refresh_all(parsed, d / "cache")  # the copies, as a refresh leaves them
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            result, _title = league_boxes.combined(parsed, d / "cache")
            league_boxes.league.standings(result)
            times.append((time.perf_counter() - t0) * 1000)
        rows.append({"name": f"league: combine {BOXES} boxes x {MATCHES} matches (read, merge, standings)",
                     "median_ms": statistics.median(times), "best_ms": min(times), "target_ms": 2000.0,
                     "note": f"{len(result['matches'])} matches, {len(result['ambiguous'])} ambiguous names"})
        if binary is None:
            rows.append({"name": f"league: refresh {BOXES} boxes from their replicas", "median_ms": float("nan"),
                         "best_ms": None, "target_ms": None, "note": "no Litestream binary here"})
            return rows
        replicas = []
        for b in range(BOXES):  # each box's replica, as `companion replicate` would have written it
            cfg = d / f"box{b}" / "litestream.yml"
            from companion.services import replication

            cfg.write_text(replication.config_text(d / f"box{b}" / "companion.db", {"target": str(d / f"rep{b}")}))
            subprocess.run([binary, "replicate", "-once", "-config", str(cfg)], check=True, capture_output=True,
                           timeout=60)
            replicas.append(f"B{b}={d / f'rep{b}'}")
        parsed = league_boxes.parse_boxes(replicas)
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            refresh_all(parsed, d / "cache-replicas")
            times.append((time.perf_counter() - t0) * 1000)
        rows.append({"name": f"league: refresh {BOXES} boxes from folder replicas (litestream restore, checks)",
                     "median_ms": statistics.median(times), "best_ms": min(times), "target_ms": 30000.0,
                     "note": "every box restored and checked; a league serve does this every --every seconds"})
    return rows


def report() -> list[dict]:
    from companion.services import replication

    try:
        binary = replication.find_binary()
    except replication.Unavailable as exc:
        binary = None
        why = str(exc)
    rows = []
    if binary is None:
        rows.append({"name": "replication lag, 12 players writing", "median_ms": float("nan"), "best_ms": None,
                     "target_ms": None, "note": why})
    else:
        r = replication_lag(binary)
        lags = r["lags"]
        if lags:
            rows.append({"name": f"replication lag p95, {CLIENTS} players writing (folder replica, sync 1 s)",
                         "median_ms": _pct(lags, 95), "best_ms": min(lags), "target_ms": 2000.0,
                         "note": f"{len(lags)} of {r['writes']} writes timed; median {statistics.median(lags):.0f} ms, "
                                 f"max {max(lags):.0f} ms: the loss window if the box dies"})
        else:
            rows.append({"name": "replication lag", "median_ms": float("nan"), "best_ms": None, "target_ms": 2000.0,
                         "note": "no write could be timed"})
    rows.extend(league_rows(binary))
    return rows
