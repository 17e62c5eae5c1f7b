"""The whole server is killed mid-match and restarted: the running clock comes back paused at its last
checkpoint (within 30 s of running time; the test shortens the checkpoint cadence to 2 s with
$COMPANION_CHECKPOINT_SECONDS so the real server writes several) and nothing else is lost."""

import http.client
import json
import sqlite3
import time

import pytest

from tests.web.serverproc import Server

CADENCE = 2
ENV = {"COMPANION_CHECKPOINT_SECONDS": str(CADENCE)}


def call(server, method, path, token, body=None):
    conn = http.client.HTTPConnection(server.host, timeout=20)
    headers = {"Authorization": f"Bearer {token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    data = json.loads(r.read() or b"null")
    conn.close()
    return r.status, data


def checkpoint(db, match_id):
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        row = conn.execute("SELECT at, elapsed_seconds FROM clock_checkpoints WHERE match_id=?",
                           (match_id,)).fetchone()
    finally:
        conn.close()
    return row


def wait_for(predicate, what, limit=30):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def kill(server):
    server.proc.kill()          # SIGKILL: no shutdown handler, no last checkpoint
    server.proc.wait(timeout=15)
    server.proc.stdout.close()
    server.proc.stderr.close()


def test_sigkill_mid_match_then_restart_resumes_paused_at_the_last_checkpoint(tmp_path, run_cli):
    data = tmp_path / "data"
    code, out, err = run_cli("token", "create", "--role", "organiser", "--data-dir", str(data))
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    db = data / "companion.db"

    server = Server(data, ENV)
    try:
        # a game with no set-up before its clock (a conquest table's clock would wait for its deal and
        # placements: docs/rulings.md#the-clock-of-a-tournament-round)
        status, m = call(server, "POST", "/api/matches", token,
                         {"game": "rome-is-burning", "players": ["Anna", "Bruno", "Carla"], "label": "Table 1",
                          "options": {"clock": True}})
        assert status == 201, m
        mid = m["id"]
        status, body = call(server, "POST", f"/api/tournament/round", token, {"match_ids": [mid]})
        assert status == 200, body
        status, body = call(server, "POST", f"/api/matches/{mid}/events", token,
                            {"type": "turn.end", "data": {"player": "Anna", "conquered": 1}, "expected_seq": 1})
        assert status == 201, body
        # the real server's thread writes checkpoints of the running clock
        first = wait_for(lambda: checkpoint(db, mid), "a first checkpoint")
        wait_for(lambda: (lambda r: r if r and r[1] >= first[1] + 2 * CADENCE else None)(checkpoint(db, mid)),
                 "later checkpoints")
        status, events_before = call(server, "GET", f"/api/matches/{mid}/events", token)
        status, before = call(server, "GET", f"/api/matches/{mid}", token)
        assert before["view"]["clock"]["running"] is True
        elapsed_at_kill = before["view"]["clock"]["elapsed_seconds"]   # a moment before the kill
    finally:
        kill(server)
    last = checkpoint(db, mid)        # the last checkpoint the killed server wrote
    assert last[1] >= first[1] + 2 * CADENCE
    assert last[1] <= elapsed_at_kill + 5   # one more may have landed between the GET and the kill

    server = Server(data, ENV)
    try:
        status, after = call(server, "GET", f"/api/matches/{mid}", token)
        assert status == 200, after
        clock = after["view"]["clock"]
        assert clock["running"] is False
        assert clock["elapsed_seconds"] == last[1]           # paused exactly at the last checkpoint
        assert elapsed_at_kill - clock["elapsed_seconds"] <= 30   # within 30 s of running time
        assert after["view"]["current_player"] == "Bruno" and after["view"]["phase"] == "regular"
        flag = after["power_lost"]
        assert flag and flag["remaining_seconds"] == clock["remaining_seconds"]
        assert flag["message"].startswith("Power was lost;") and flag["message"].endswith("resume?")
        status, events_after = call(server, "GET", f"/api/matches/{mid}/events", token)
        assert events_after["events"][:-1] == events_before["events"]          # nothing else is lost
        pause = events_after["events"][-1]
        assert pause["type"] == "clock.pause" and pause["data"] == {"reason": "power-lost"}
        # the table resumes: the flag goes, the clock runs from where it stopped
        seq = after["seq"]
        status, body = call(server, "POST", f"/api/matches/{mid}/events", token,
                            {"type": "clock.resume", "expected_seq": seq})
        assert status == 201, body
        assert body["power_lost"] is None and body["view"]["clock"]["running"] is True
        assert body["view"]["clock"]["elapsed_seconds"] >= clock["elapsed_seconds"]
        # refusals over HTTP name the field
        status, body = call(server, "POST", f"/api/matches/{mid}/events", token,
                            {"type": "turn.end", "data": {"player": "Anna", "conquered": 0}, "expected_seq": seq + 1})
        assert status == 409 and body["field"] == "$.data.player", body
        status, body = call(server, "POST", f"/api/matches/{mid}/events", token,
                            {"type": "final.roll", "data": {"player": "Bruno", "dice": [3, 9]}, "expected_seq": seq + 1})
        assert status == 400 and body["field"] == "$.data.dice[1]", body
    finally:
        server.stop()
