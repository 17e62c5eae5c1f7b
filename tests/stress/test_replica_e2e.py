"""End to end with the real Litestream binary: two boxes (two `companion serve` processes with their own
data folders) replicate to local folders while results are written through the HTTP API; one box is
lost (every process killed with SIGKILL) and restored with `companion restore --from`; the league's
standings over both replicas equal the season code over both boxes' exports. Also: a box whose replica
is unreachable keeps answering, and its replica catches up when it is back.

The loss window (seconds between a write's acknowledgement and its arrival on the replica) is measured
for each write and written to the artifacts folder; docs/league.md states it."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from companion.services import replication
from tests.web.serverproc import REPO, Server

try:
    LITESTREAM = replication.find_binary()
except replication.Unavailable as exc:  # pragma: no cover - the dev extra installs it on x86_64/aarch64
    pytestmark = pytest.mark.skip(reason=f"no Litestream binary: {exc}")
    LITESTREAM = None

SEASON = "Fan Club/conquest-italy/2026"
DEADLINE = 20.0  # seconds a write may take to reach the replica before the test calls it lost


def cli(data_dir, *args, check=True):
    p = subprocess.run([sys.executable, "-m", "companion", *map(str, args), "--data-dir", str(data_dir)],
                       capture_output=True, text=True, cwd=str(REPO), timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


class Box:
    def __init__(self, root: Path, name: str):
        self.name = name
        self.data = root / name
        self.replica = root / f"replica-{name}"
        from companion.services import seasons as season_store
        from companion.services.access import Access
        from companion.storage import Store

        with Store(self.data / "companion.db") as store:  # what `season club-create`, `season create`,
            season_store.create_club(store, "Fan Club")  # `token create` and `replicate set` write
            self.season = season_store.create_season(store, "Fan Club", "conquest-italy", 2026)["id"]
            self.token = Access(store).create_api_token("organiser")[0]
            store.set_setting(replication.SETTING, replication.check_settings({"target": str(self.replica)}))
        self.server = Server(self.data)
        self.replicator = subprocess.Popen([sys.executable, "-m", "companion", "replicate", "--data-dir", str(self.data)],
                                           cwd=str(REPO), start_new_session=True, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.PIPE, text=True)

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.server.url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {self.token}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def add(self, mid, day, *players):
        return self.call("POST", f"/api/seasons/{self.season}/results",
                         {"id": mid, "date": f"2026-03-{day:02d}",
                          "results": [{"player": p, "place": i + 1} for i, p in enumerate(players)]})

    def replicated(self) -> int:
        try:
            return replication.replica_position({"kind": "folder", "path": str(self.replica)})[0]
        except FileNotFoundError:  # no first snapshot yet (or the stick pulled out)
            return 0

    def local(self) -> int:
        return replication.local_position(self.data / "companion.db")

    def wait_level(self, since: float | None = None):
        """Until the replica holds every transaction Litestream has read here; with ``since`` (a
        ``time.time()`` taken before the last write was sent), also until it holds that write: the LTX
        file of Litestream's local log holding it was written after the commit, so after ``since``, and
        the newest file written since then holds a transaction at least as new."""
        end = time.monotonic() + DEADLINE
        meta = self.data / ".companion.db-litestream" / "ltx"
        while time.monotonic() < end:
            need = self.local()
            if since is not None:
                after = [int(f.name.split("-")[1][:16], 16) for f in meta.glob("*/*.ltx")
                         if f.stat().st_mtime >= since]
                need = max(after) if after else None
            if need and self.replicated() >= need:
                return
            time.sleep(0.05)
        raise AssertionError(f"box {self.name}: the replica stayed behind ({self.replicated()} < {self.local()})")

    def write_and_time(self, mid, day, *players) -> float:
        """Write, then the seconds from the acknowledgement until the replica holds a newer transaction
        than before the write (the write's own, or a later one)."""
        before = self.replicated()
        self.add(mid, day, *players)
        acked = time.monotonic()
        end = acked + DEADLINE
        while time.monotonic() < end:
            if self.replicated() > before:
                return time.monotonic() - acked
            time.sleep(0.02)
        raise AssertionError(f"box {self.name}: write {mid} not on the replica after {DEADLINE} s")

    def kill(self):
        """The box is lost: the server, the supervisor and Litestream die at once (SIGKILL)."""
        os.killpg(self.replicator.pid, signal.SIGKILL)
        self.replicator.wait()
        self.server.proc.kill()
        self.server.stop()

    def stop(self):
        if self.replicator.poll() is None:
            os.killpg(self.replicator.pid, signal.SIGTERM)
            try:
                self.replicator.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.replicator.pid, signal.SIGKILL)
                self.replicator.wait()
        if self.server.proc.poll() is None:
            self.server.stop()


@pytest.fixture
def start_boxes(tmp_path):
    """``start_boxes(*names)``: boxes started side by side (each server and replicator in its own thread)."""
    from concurrent.futures import ThreadPoolExecutor

    made = []
    pool = ThreadPoolExecutor(4)

    def start(*names):
        futures = [pool.submit(Box, tmp_path, n) for n in names]
        boxes = []
        for f in futures:
            try:
                boxes.append(f.result())
            except Exception:
                made.extend(x.result() for x in futures if x.done() and not x.exception())
                raise
        made.extend(boxes)
        list(pool.map(lambda b: b.wait_level(), boxes))  # Litestream's first snapshot is on each replica
        return boxes

    try:
        yield start
    finally:
        list(pool.map(lambda b: b.stop(), made))
        pool.shutdown()


def _export(box) -> dict:
    return box.call("GET", f"/api/seasons/{box.season}/export.json")


def test_two_boxes_replicate_one_is_lost_and_restored_and_the_league_adds_them_up(start_boxes, tmp_path,
                                                                                  artifacts_dir):
    a, b = start_boxes("a", "b")
    windows = []
    windows.append(a.write_and_time("a1", 1, "Anna", "Bea", "Carlo", "Dario"))
    windows.append(b.write_and_time("b1", 2, "Carlo", "Nicolò", "Emma"))
    windows.append(a.write_and_time("shared", 3, "Bea", "Anna", "Carlo"))
    windows.append(b.write_and_time("shared", 3, "Bea", "Anna", "Carlo"))  # the same match entered on both
    windows.append(b.write_and_time("b2", 4, "Emma", "Anna", "Nicolò", "Bea"))
    windows.append(a.write_and_time("a2", 5, "Dario", "Carlo", "Anna"))
    a.wait_level()
    b.wait_level()
    exports = {"a": _export(a), "b": _export(b)}
    (Path(artifacts_dir) / "replication-loss-window.txt").write_text(
        "seconds from a write's acknowledgement to its arrival on a folder replica (sync-interval 1 s): "
        + ", ".join(f"{w:.2f}" for w in windows) + f"; max {max(windows):.2f}\n")

    # box b is lost: everything acknowledged before the last replicated transaction must come back
    b.kill()
    restored = tmp_path / "new-sd-card"
    p = cli(restored, "restore", "--from", b.replica)
    summary = json.loads(p.stdout)
    assert summary["previous"] is None and Path(summary["restored"]) == restored / "companion.db"
    p = cli(restored, "season", "export", "--season", SEASON, "--format", "json")
    assert json.loads(p.stdout)["matches"] == exports["b"]["matches"]
    # a second restore over the restored card refuses nothing but keeps the first aside
    again = json.loads(cli(restored, "restore", "--from", b.replica).stdout)
    assert again["previous"] and Path(again["previous"], "companion.db").exists()

    # the league over both replicas equals the season code over both exports (the shared match once)
    p = subprocess.run([sys.executable, "-m", "companion", "league", "standings", "--json", "--cache",
                        str(tmp_path / "cache"), "--box", f"A={a.replica}", "--box", f"B={b.replica}"],
                       capture_output=True, text=True, cwd=str(REPO), timeout=120)
    assert p.returncode == 0, p.stderr
    league = json.loads(p.stdout)
    merged = dict(exports["a"])
    ids = {m["id"] for m in exports["a"]["matches"]}
    merged["matches"] = exports["a"]["matches"] + [m for m in exports["b"]["matches"] if m["id"] not in ids]
    (tmp_path / "merged.json").write_text(json.dumps(merged))
    expected = json.loads(subprocess.run([sys.executable, "-m", "companion", "season", "standings",
                                          str(tmp_path / "merged.json")], capture_output=True, text=True,
                                         check=True).stdout)
    assert league["standings"] == expected["standings"] and league["total_matches"] == 5
    assert league["duplicates"] == [{"match": "shared", "boxes": ["A", "B"]}]
    assert league["ambiguous"] == []


def test_a_box_with_its_replica_unreachable_keeps_working_and_catches_up(start_boxes, tmp_path):
    (a,) = start_boxes("a")
    a.write_and_time("a1", 1, "Anna", "Bea", "Carlo")
    a.wait_level()
    level = a.replicated()
    away = tmp_path / "replica-a.away"
    a.replica.rename(away)
    a.replica.write_text("the USB stick was pulled out")  # a file where the folder was: every upload fails
    sent = time.time()
    for i in range(3):
        a.add(f"off{i}", 2 + i, "Bea", "Carlo", "Anna")
    # every write was acknowledged while the replica could not take it: nothing waited for the replica
    assert a.call("GET", f"/api/seasons/{a.season}/standings")["total_matches"] == 4
    end = time.monotonic() + DEADLINE
    status = {}
    while time.monotonic() < end:  # the organiser sees it: an error, and a lag
        status = a.call("GET", "/api/replication")
        if status["error"] and status["lag_seconds"] is not None and status["lag_seconds"] > 0:
            break
        time.sleep(0.1)
    assert status["error"] and status["target"]["kind"] == "folder"
    a.replica.unlink()
    away.rename(a.replica)  # the stick is back
    a.wait_level(since=sent)
    assert a.replicated() > level
    restored = tmp_path / "check"
    cli(restored, "restore", "--from", a.replica)
    got = json.loads(cli(restored, "season", "standings", "--season", SEASON).stdout)
    assert got["total_matches"] == 4


@pytest.mark.slow
def test_soak_a_long_evening_through_wal_checkpoints_then_lost_and_restored(start_boxes, tmp_path):
    """`make soak`: 12 matches x 60 events through the API (the WAL passes SQLite's 1,000-page automatic
    checkpoint several times while Litestream replicates), then the box is killed and restored: every
    acknowledged event is there, in order, with no seq missing."""
    (a,) = start_boxes("a")
    players = ["Ada", "Bo", "Cy", "Di"]
    acked = {}
    for t in range(12):
        m = a.call("POST", "/api/matches", {"game": "richelieu", "players": players, "label": f"table {t}"})
        seq = 0
        for i in range(60):
            last_sent = time.time()
            r = a.call("POST", f"/api/matches/{m['id']}/events",
                       {"type": "track.adjust", "expected_seq": seq,
                        "data": {"player": players[i % 4], "track": "money", "delta": 1 + i % 5}})
            seq = r["event"]["seq"]
        acked[m["id"]] = seq
    a.wait_level(since=last_sent)
    a.kill()
    restored = tmp_path / "restored"
    summary = json.loads(cli(restored, "restore", "--from", a.replica).stdout)
    assert summary["events"] == sum(acked.values()) and summary["matches"] == 12
    for match_id, last in acked.items():
        doc = json.loads(cli(restored, "match", "export", match_id).stdout)
        assert [e["seq"] for e in doc["events"]] == list(range(1, last + 1))
