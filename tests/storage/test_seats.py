"""The seats of migration 0007: the seats chosen before it (kept in each session's data) become rows, a
phone's own claim is checked and written in one transaction, and a seat held by an ended session is free."""

import sqlite3

from companion.storage import Store, migrations
from companion.storage.db import _split_sql


def test_seats_kept_in_session_data_become_rows(tmp_path, clock):
    path = tmp_path / "companion.db"
    conn = sqlite3.connect(path)
    before = [(v, sql) for v, _, sql in migrations() if v < 7]
    for _, sql in before:
        for statement in _split_sql(sql):
            conn.execute(statement)
    conn.execute("INSERT INTO web_sessions(sid_hash, role, created_at, expires_at, data) VALUES "
                 "('a' || hex(randomblob(8)), 'player', '2026-03-01T19:00:00Z', '2026-03-14T19:00:00Z', "
                 "'{\"seats\": {\"m1\": \"Anna\", \"m2\": \"Bruno\"}}'), "
                 "('b' || hex(randomblob(8)), 'player', '2026-03-01T19:00:00Z', '2026-03-14T19:00:00Z', '{}'), "
                 "('c' || hex(randomblob(8)), 'player', '2026-03-01T19:00:00Z', '2026-03-14T19:00:00Z', 'not json')")
    conn.execute(f"PRAGMA user_version={before[-1][0]}")
    conn.commit()
    conn.close()
    store = Store(path, clock=clock)
    try:
        rows = {r["sid_hash"][0]: store.session_row(r["sid_hash"]) for r in
                store.conn().execute("SELECT sid_hash FROM web_sessions WHERE data != 'not json'")}
        assert rows["a"]["data"]["seats"] == {"m1": "Anna", "m2": "Bruno"}
        assert rows["b"]["data"]["seats"] == {} and rows["b"]["match_id"] is None
    finally:
        store.close()


def test_a_claim_is_refused_when_taken_and_a_seat_of_an_ended_session_is_free(store, clock):
    now = clock.now_iso()
    for key in ("k1", "k2"):
        store.insert_session(key, "player", now, "2026-03-01T23:00:00Z", {}, purge_before="2026-02-01T00:00:00Z")
    assert store.claim_seat("m1", "Anna", "k1", now) is None
    assert store.claim_seat("m1", "Anna", "k1", now) is None  # again: it holds it
    assert store.claim_seat("m1", "Anna", "k2", now) == "taken"
    assert store.claim_seat("m1", "Bruno", "k1", now) == "seated:Anna"
    assert store.claim_seat("m2", "Anna", "k2", now) is None  # another match
    store.delete_session("k1")
    assert store.claim_seat("m1", "Anna", "k2", now) is None
    assert [r["session"] for r in store.seat_rows("m1", now)] == ["k2"]


def test_phones_racing_for_one_seat_one_wins(store, clock):
    import threading

    now = clock.now_iso()
    keys = [f"k{i}" for i in range(8)]
    for key in keys:
        store.insert_session(key, "player", now, "2026-03-01T23:00:00Z", {}, purge_before="2026-02-01T00:00:00Z")
    results, start = {}, threading.Barrier(len(keys))

    def claim(key):
        start.wait()
        results[key] = store.claim_seat("m1", "Anna", key, now)

    threads = [threading.Thread(target=claim, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(str, results.values())) == ["None"] + ["taken"] * (len(keys) - 1)
    assert len(store.seat_rows("m1", now)) == 1
