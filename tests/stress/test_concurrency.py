"""Concurrency: 12 clients x 25 events (1,000 each in `make soak`) on one match through the API of the real
server (uvicorn), every
write with ``expected_seq`` (the last seq that client saw).

- no lost update: every 201 is stored, at the seq it answered (expected_seq + 1), and nothing else is;
- every stale write gets 409: a write is stale exactly when another write took the seq it aimed at
  (expected_seq + 1), or it aims past the end; each such write got 409, and each 409 was such a write;
- the final state the API shows equals an independent fold of the stored events, and the sum of the
  deltas each client had acknowledged.
"""

from __future__ import annotations

import http.client
import random
import threading
import time
from companion.core.match import fold
from tests.stress.conftest import examples
from tests.stress.harness import PLAYERS, Client, Payloads, create_match, key, make_token, stored_events
from tests.web.serverproc import Server

CLIENTS = 12
EVENTS = examples(25, 1000)  # per client


def test_12_clients_writing_at_once_on_one_match(tmp_path):
    data_dir = tmp_path / "data"
    token = make_token(data_dir)
    # the final state is read as an organiser: a player's token sees everyone's money behind the screens as
    # null (docs/rulings.md, "Behind the screens"), and this compares every track with the fold
    organiser = make_token(data_dir, "organiser")
    server = Server(data_dir, {"COMPANION_SSE_HEARTBEAT": "600"})
    payloads = Payloads()
    log = []  # (client, expected_seq, key, status, answered seq)
    lock = threading.Lock()
    errors = []
    try:
        match_id = create_match(Client(server.host, token))

        def client(n):
            c = Client(server.host, token)
            try:
                status, body = c.request("GET", f"/api/matches/{match_id}")
                seq = body["seq"]
                done = 0
                attempts = 0
                pause = 0.001
                rng = random.Random(n)
                data = payloads.next()
                while done < EVENTS and attempts < EVENTS * 200:
                    attempts += 1
                    # now and then a write from a client that believes it is ahead (a bug, a replay)
                    ahead = attempts % 97 == 0
                    aim = seq + 1 if ahead else seq
                    status, body = c.request("POST", f"/api/matches/{match_id}/events",
                                             {"type": "track.adjust", "data": data, "expected_seq": aim})
                    with lock:
                        log.append((n, aim, key(data), status, body["event"]["seq"] if status == 201 else None,
                                    ahead))
                    if status == 201:
                        seq = body["event"]["seq"]
                        done += 1
                        pause = 0.001
                        data = payloads.next()
                    # after a 409 the client refreshes and sends the same change again, after a random wait that
                    # grows with each refusal in a row (as a polite client does: twelve clients retrying at once
                    # would otherwise spend the box on refusals, and the slowest would starve)
                    elif status == 409:
                        assert body.get("field") == "expected_seq", body
                        status, body = c.request("GET", f"/api/matches/{match_id}/events?after={seq}")
                        assert status == 200, body
                        if body["events"]:
                            seq = body["events"][-1]["seq"]
                        time.sleep(rng.uniform(0, pause))
                        pause = min(0.05, pause * 2)
                    else:
                        raise AssertionError((status, body))
                assert done == EVENTS, f"client {n} acknowledged {done} events in {attempts} attempts"
            except (AssertionError, OSError, http.client.HTTPException) as exc:
                errors.append(f"client {n}: {exc!r}")
            finally:
                c.close()

        threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=900)
            assert not t.is_alive(), "a client is stuck"
        assert not errors, errors[:3]

        main = Client(server.host, token)
        status, doc = main.request("GET", f"/api/matches/{match_id}")
        assert status == 200
        # at rest, one by one: behind or ahead of the last seq is refused, the last seq is accepted
        last = doc["seq"]
        extra = payloads.next()
        for aim, want in ((last - 1, 409), (last + 1, 409), (0, 409), (last, 201)):
            status, body = main.request("POST", f"/api/matches/{match_id}/events",
                                        {"type": "track.adjust", "data": extra, "expected_seq": aim})
            assert status == want, (aim, body)
            if status == 409:
                assert body["field"] == "expected_seq"
        log.append((-1, last, key(extra), 201, last + 1, False))
        status, doc = Client(server.host, organiser).request("GET", f"/api/matches/{match_id}")
    finally:
        server.stop()

    events = stored_events(data_dir / "companion.db", match_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    by_seq = {e["seq"]: key(e["data"]) for e in events}
    ok = [row for row in log if row[3] == 201]
    stale = [row for row in log if row[3] == 409]
    assert len(ok) == CLIENTS * EVENTS + 1 == len(events), (len(ok), len(events))
    # no lost update: each 201 is stored at the seq it answered, which is expected_seq + 1
    for n, aim, k, status, seq, ahead in ok:
        assert seq == aim + 1 and by_seq[seq] == k
    assert len({row[2] for row in ok}) == len(ok)  # each change stored once
    # every stale write got 409, and only those: a write aimed at the seq its client last saw was refused
    # exactly when another write had taken the next seq (writes aimed ahead on purpose are checked at rest)
    for n, aim, k, status, seq, ahead in stale:
        if not ahead:
            assert by_seq[aim + 1] != k, (n, aim, k)
    assert stale, "12 clients on one match must collide"
    assert set(by_seq.values()) == {row[2] for row in ok}  # nothing stored that was refused
    # the final state = the fold of the stored events = what the acknowledged deltas add up to
    expected = fold("richelieu", PLAYERS, [dict(e, at="2026-01-01T00:00:00Z") for e in events])
    assert doc["seq"] == len(events)
    assert doc["view"]["state"] == expected.game_state
    initial = fold("richelieu", PLAYERS, []).game_state["players"]
    for p in PLAYERS:
        for track in ("money", "prestige", "military"):
            total = sum(row[2][2] for row in ok if row[2][0] == p and row[2][1] == track)
            assert doc["view"]["state"]["players"][p][track] == initial[p][track] + total
    print(f"{CLIENTS} clients x {EVENTS} events: {len(ok)} stored, {len(stale)} stale writes refused with 409")
