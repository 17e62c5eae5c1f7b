"""The bytes a table's live pages receive over whole matches of each game: the match stream's events as
sent now (the first whole, then patches of the view: ``companion/web/streams.py``) against the whole view
with every event (as before), for each audience of a table (the TV, each seated phone, the organiser's
phone), through the real streams' views (Flask's test client, a store in a temporary folder; the events
published by the hub as the match service publishes them).

    python -m bench.stream_payload [--matches 3]

The matches are random legal playthroughs (``tests/games/conformance.py``: undos and redos included, each
played to its end), so this runs from a checkout. Prints one JSON line per game and one for all.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def _streams_of(app, mid: str, players: list[str]):
    from companion.web.auth import current_join

    from tests.web.test_sse import Stream

    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"][len("http://localhost"):]
    streams = {}
    for name in players:
        client = app.test_client()
        assert client.get(url).status_code == 303
        r = client.put(f"/api/matches/{mid}/seat", json={"player": name}, headers={"Origin": "http://localhost"})
        assert r.status_code == 200, r.json
        streams[("player", name)] = Stream(client, f"/api/matches/{mid}/stream")
    org = app.test_client()
    assert org.post("/api/auth/pin", json={"pin": "246813", "setup_code": "13572468"},
                    headers={"Origin": "http://localhost"}).status_code == 200
    streams[("organiser", None)] = Stream(org, f"/api/matches/{mid}/stream")
    streams[("viewer", None)] = Stream(app.test_client(), f"/api/matches/{mid}/stream?as=viewer&tv=1")
    return streams


def measure(game: str, seed: int, folder: Path) -> dict:
    from companion.core.match import Fold
    from companion.storage import Store
    from companion.web.app import create_app
    from companion.web.calls import present_event, present_view
    from companion.web.hub import sse

    from tests.games.conformance import SETUPS, Playthrough

    p = Playthrough(game, seed=seed, undo_rate=0.1, fuzz_rate=0, checks=False).run(600, True)
    players, options = SETUPS[game]
    store = Store(folder / f"{game}-{seed}.db")
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468",
                          "SSE_HEARTBEAT": 0.05})
        c = app.extensions["companion"]
        mid = c.service.import_match({"id": f"{game}-{seed}", "game": game, "players": players,
                                      "options": options, "created_at": p.events[0]["at"], "events": []})[0]
        streams = _streams_of(app, mid, players)
        for s in streams.values():
            s.until(lambda ev, _: any(e[0] == "snapshot" for e in ev))
            s.chunks.clear()
        fold = Fold(game, players, options)
        before = {aud: 0 for aud in streams}
        for e in p.events:
            fold.apply(e)
            view = fold.view(e["at"])
            status = "ended" if fold.ended() else "open"
            c.hub.publish_event(mid, {"event": e, "view": view, "status": status})
            for aud in streams:
                who, seat = ("viewer", None) if aud[0] == "viewer" else aud
                ended = bool(view.get("ended")) or status == "ended"
                before[aud] += len(sse("event", {"event": present_event(e, game, who, seat, ended),
                                                 "view": present_view(view, who, seat), "status": status},
                                       id=e["seq"]).encode())
        last = f"id: {p.events[-1]['seq']}\n"
        after, blocks = {}, {}
        for aud, s in streams.items():
            for _ in range(100000):
                chunk = next(s.it)
                s.chunks.append(chunk.decode() if isinstance(chunk, bytes) else chunk)
                if last in s.chunks[-1]:
                    break
            text = "".join(s.chunks)
            blocks[aud] = [(b + "\n\n").encode() for b in text.split("\n\n") if "\nevent: event\n" in b]
            after[aud] = sum(map(len, blocks[aud]))
            s.close()
        # blocks: each audience's events as its stream sent them, one by one (bench/bench_bytes.py compresses them)
        return {"events": len(p.events), "before": before, "after": after, "blocks": blocks}
    finally:
        store.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=3, help="whole matches per game (default 3)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.games.conformance import SETUPS

    total = {"before": 0, "after": 0, "events": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for game in sorted(SETUPS):
            row = {"game": game, "matches": args.matches, "events": 0, "before": 0, "after": 0,
                   "tv_before": 0, "tv_after": 0, "phone_before": 0, "phone_after": 0}
            for seed in range(args.matches):
                m = measure(game, seed, Path(tmp))
                row["events"] += m["events"]
                for aud in m["before"]:
                    row["before"] += m["before"][aud]
                    row["after"] += m["after"][aud]
                    if aud[0] == "viewer":
                        row["tv_before"] += m["before"][aud]
                        row["tv_after"] += m["after"][aud]
                    elif aud[0] == "player":
                        row["phone_before"] += m["before"][aud]
                        row["phone_after"] += m["after"][aud]
            seats = len(SETUPS[game][0])
            n = row["events"]
            row["tv_bytes_per_event"] = [round(row["tv_before"] / n), round(row["tv_after"] / n)]
            row["phone_bytes_per_event"] = [round(row["phone_before"] / n / seats), round(row["phone_after"] / n / seats)]
            row["ratio"] = round(row["after"] / row["before"], 3)
            print(json.dumps(row), flush=True)
            for k in total:
                total[k] += row[k]
    total["ratio"] = round(total["after"] / total["before"], 3)
    print(json.dumps({"all": total}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
