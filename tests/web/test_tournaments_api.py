"""Tournament days through the API: create, register, seat, swap by hand, start (matches created through
the match service, clocks started together), standings across four rounds of sixteen players checked
against an independent computation, CSV, the printable page, the TV's match result."""

import csv
import io
import random

import pytest

from companion.core import tournament as T
from companion.core.season import Rules
from tests.core.test_tournament import independent_standings
from tests.web.conftest import Api

PLAYERS = [f"P{i:02}" for i in range(16)]


@pytest.fixture
def clocked_app(store):
    """An app with a clock runner (not running in the background: the test moves the clock by hand)."""
    from companion.web.app import create_app

    return create_app({"STORE": store, "TESTING": True, "SETUP_CODE": "13572468", "SSE_HEARTBEAT": 0.05})


@pytest.fixture
def org(clocked_app):
    a = Api(clocked_app.test_client())
    assert a.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    return a


def _create(org, game, players=PLAYERS, **kw):
    body = {"name": "Coppa", "date": "2026-12-12", "game": game, "table_size": 4, "rounds": 4, **kw,
            "players": players}
    r = org.post("/api/tournaments", body)
    assert r.status_code == 201, r.json
    return r.json


def _finish(org, mid, rng):
    """Play the (fake) game to its end: a few points each, then finish."""
    m = org.get(f"/api/matches/{mid}").json
    seq = m["seq"]
    for p in m["players"]:
        r = org.post(f"/api/matches/{mid}/events", {"type": "point", "data": {"player": p, "n": rng.randint(0, 3)},
                                                    "expected_seq": seq})
        assert r.status_code == 201, r.json
        seq = r.json["seq"]
    r = org.post(f"/api/matches/{mid}/events", {"type": "finish", "data": {}, "expected_seq": seq})
    assert r.status_code == 201, r.json


def test_a_four_round_sixteen_player_tournament(fake_game, org, store):
    rng = random.Random(3)
    t = _create(org, fake_game, clock_minutes=60)
    tid = t["id"]
    assert t["next_round"] == 1 and t["round_list"] == [] and len(t["standings"]) == 16
    played = []  # independent record: per match the results as the game ranked them
    for rnd in range(1, 5):
        r = org.post(f"/api/tournaments/{tid}/rounds", {})
        assert r.status_code == 201, r.json
        tables = r.json["round_list"][-1]["tables"]
        assert [len(x) for x in tables] == [4, 4, 4, 4]
        assert sorted(p for x in tables for p in x) == PLAYERS
        if rnd == 2:  # a swap by hand before the start
            tables[0][0], tables[1][0] = tables[1][0], tables[0][0]
            r = org.put(f"/api/tournaments/{tid}/rounds/2", {"tables": tables})
            assert r.status_code == 200, r.json
            assert r.json["round_list"][1]["tables"] == tables
        # round 3 is started from an Italian phone: its matches are labelled in Italian (the label is stored)
        lang = {"Accept-Language": "it"} if rnd == 3 else None
        r = org.post(f"/api/tournaments/{tid}/rounds/{rnd}/start", {}, headers=lang)
        assert r.status_code == 201, r.json
        rd = r.json["round_list"][-1]
        assert rd["status"] == "playing" and len(r.json["started"]) == 4 and r.json["skipped"] == []
        # the next round waits for this one
        assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 409
        # seats are fixed once started
        assert org.put(f"/api/tournaments/{tid}/rounds/{rnd}", {"tables": tables}).status_code == 409
        for k, mm in enumerate(rd["matches"]):
            m = org.get(f"/api/matches/{mm['match_id']}").json
            assert m["label"] == (f"Turno {rnd} · Tavolo {k + 1}" if rnd == 3 else f"Round {rnd} · Table {k + 1}")
            assert m["players"] == tables[k]
            assert m["view"]["clock"]["running"] is True  # every clock started together
            assert m["view"]["clock"]["limit_seconds"] == 3600
            _finish(org, mm["match_id"], rng)
            st = org.get(f"/api/matches/{mm['match_id']}").json["view"]["state"]["points"]
            played.append({"results": [{"player": p, "place": 1 + sum(1 for q in st.values() if q > st[p]),
                                        "game_points": None} for p in tables[k]]})
        doc = org.get(f"/api/tournaments/{tid}").json
        assert doc["round_list"][-1]["status"] == "ended"
        # independent computation: the season's default table, shared places, no game points for this game
        want = independent_standings(PLAYERS, played, Rules())
        assert [(s["rank"], s["player"], s["points"]) for s in doc["standings"]] == \
            [(rank, p, float(v) if v.denominator != 1 else int(v)) for rank, p, v in want]
    doc = org.get(f"/api/tournaments/{tid}").json
    assert doc["finished"] is True and doc["next_round"] is None
    assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 409
    # later rounds kept those who met apart: far fewer repeats than random seating would give
    met = T.meetings([r["tables"] for r in doc["round_list"]])
    assert sum(v - 1 for v in met.values()) <= 8
    # CSV
    r = org.get(f"/api/tournaments/{tid}/standings.csv?dialect=plain")
    assert r.status_code == 200 and r.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(r.data.decode())))
    assert [x["player"] for x in rows] == [s["player"] for s in doc["standings"]]
    # printable pages
    page = org.get(f"/tournaments/{tid}/print?round=3").data.decode()
    for p in doc["round_list"][2]["tables"][0]:
        assert p in page
    page = org.get(f"/tournaments/{tid}/print").data.decode()
    assert doc["standings"][0]["player"] in page


def test_round_of_a_game_without_clock_skips_and_says_so(org, store):
    t = _create(org, "richelieu", players=PLAYERS[:8])
    tid = t["id"]
    org.post(f"/api/tournaments/{tid}/rounds", {})
    r = org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    assert r.status_code == 201
    assert r.json["started"] == [] and [s["reason"] for s in r.json["skipped"]] == ["no-clock", "no-clock"]


def test_registration_and_refusals(org, clocked_app):
    t = _create(org, "conquest-italy", players=["Anna", "Bruno"])
    tid = t["id"]
    assert org.post(f"/api/tournaments/{tid}/players", {"player": "Carla"}).status_code == 201
    assert org.post(f"/api/tournaments/{tid}/players", {"player": "Carla"}).status_code == 409
    assert org.delete(f"/api/tournaments/{tid}/players/Bruno").status_code == 200
    assert org.get(f"/api/tournaments/{tid}").json["players"] == ["Anna", "Carla"]
    r = org.post(f"/api/tournaments/{tid}/rounds", {})
    assert r.status_code == 409 and r.json["field"] == "players"  # 2 players cannot sit at a table of 3-6
    for p in ("Dario", "Elena", "Franco", "Gina"):
        org.post(f"/api/tournaments/{tid}/players", {"player": p})
    assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 201
    # a late arrival before the round starts: registered, and round 1 is to be seated again with them
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Late"})
    assert r.status_code == 201 and r.json["round_list"] == [] and r.json["next_round"] == 1
    assert org.delete(f"/api/tournaments/{tid}/players/Late").json["players"][-1] == "Gina"  # (no round yet)
    assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 201
    # seats by hand: every player once, tables of 3-6
    r = org.put(f"/api/tournaments/{tid}/rounds/1", {"tables": [["Anna", "Carla", "Dario", "Elena", "Franco"]]})
    assert r.status_code == 400 and r.json["field"] == "$.tables" and "Gina" in r.json["error"]
    r = org.put(f"/api/tournaments/{tid}/rounds/1", {"tables": [["Anna", "Carla"], ["Dario", "Elena", "Franco",
                                                                                 "Gina"]]})
    assert r.status_code == 400 and r.json["field"] == "$.tables[0]"
    # bad bodies and roles
    r = org.post("/api/tournaments", {"name": "x", "date": "2026-12-12", "game": "conquest-italy", "table_size": 7,
                                      "rounds": 3})
    assert r.status_code == 400 and r.json["field"] == "$.table_size"
    r = org.post("/api/tournaments", {"name": "x", "date": "2026-12-12", "game": "richelieu", "table_size": 5,
                                      "rounds": 3})
    assert r.status_code == 400 and r.json["field"] == "$.table_size"  # Richelieu: at most 4
    viewer = Api(clocked_app.test_client())
    assert viewer.post("/api/tournaments", {"name": "x"}).status_code == 401
    assert viewer.get(f"/api/tournaments/{tid}").status_code == 200
    assert viewer.get("/api/tournaments/nope").status_code == 404


def test_match_result_for_the_tv(org):
    r = org.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"],
                                  "options": {"clock": False}})
    mid = r.json["id"]
    assert org.get(f"/api/matches/{mid}/result").json == {"match_id": mid, "ended": False, "results": []}
    org.post(f"/api/matches/{mid}/events", {"type": "objective.completed", "data": {"player": "Bruno"},
                                            "expected_seq": r.json["seq"]})
    res = org.get(f"/api/matches/{mid}/result").json
    assert res["ended"] is True
    first = res["results"][0]
    assert first["player"] == "Bruno" and first["place"] == 1 and first["points"] == 1.5
    # no city was dealt, so the game counts everyone out (-0.5): Bruno +1 (1st of 3) +1 (objective) -0.5
    assert sorted(x["points"] for x in res["results"][1:]) == [-1, -1]  # share places 2-3 (0 - 1) / 2, -0.5 out


def test_openapi_lists_the_tournament_endpoints(org):
    doc = org.get("/api/openapi.json").json
    for path in ("/api/tournaments", "/api/tournaments/{tid}/rounds/{number}/start", "/api/matches/{match_id}/result"):
        assert path in doc["paths"]


def test_players_picked_from_the_roster_carry_their_ids_into_the_round(fake_game, org, store):
    """Two clubs on the box (so no match belongs to a club by default): the registered roster players' ids go
    into the round's matches, which land on their roster pages; a name typed by hand stays a guest."""
    from companion.storage import players as roster_rows

    clubs = [org.post("/api/clubs", {"name": n}).json["id"] for n in ("Fan Club", "Other Club")]
    ids = {n: org.post("/api/players", {"club": clubs[0], "name": n}).json["id"] for n in ("Anna", "Bruno", "Carla")}
    stranger = org.post("/api/players", {"club": clubs[1], "name": "Zed"}).json["id"]
    t = _create(org, fake_game, players=[], rounds=1)
    tid = t["id"]
    for n in ("Anna", "Bruno", "Carla"):
        r = org.post(f"/api/tournaments/{tid}/players", {"player": n, "player_id": ids[n]})
        assert r.status_code == 201, r.json
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Anna B.", "player_id": ids["Anna"]})
    assert r.status_code == 409 and r.json["field"] == "$.player_id"  # the same roster player twice
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Zed", "player_id": stranger})
    assert r.status_code == 400 and r.json["field"] == "$.player_id"  # another club's roster
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Nobody", "player_id": "nope"})
    assert r.status_code == 400 and r.json["field"] == "$.player_id"
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Guest"})
    assert r.status_code == 201
    doc = r.json
    assert doc["players"] == ["Anna", "Bruno", "Carla", "Guest"]
    assert doc["player_ids"] == [ids["Anna"], ids["Bruno"], ids["Carla"], None]
    assert doc["club_id"] == clubs[0]

    org.post(f"/api/tournaments/{tid}/rounds", {})
    r = org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    assert r.status_code == 201, r.json
    table = r.json["round_list"][0]["tables"][0]
    mid = r.json["round_list"][0]["matches"][0]["match_id"]
    want = {seat: ids[p] for seat, p in enumerate(table) if p in ids}
    assert len(want) == 3 and roster_rows.match_seats(store, mid) == want
    assert org.get(f"/api/matches/{mid}").json["options"]["club"] == clubs[0]
    _finish(org, mid, random.Random(1))
    for n in ("Anna", "Bruno", "Carla"):
        page = org.get(f"/api/players/{ids[n]}").json
        assert [h["match_id"] for h in page["last"]] == [mid]


def test_the_printed_round_shows_each_tables_qr_code_once_started(fake_game, org, clocked_app, store):
    t = _create(org, fake_game, players=PLAYERS[:12], rounds=1)
    tid = t["id"]
    org.post(f"/api/tournaments/{tid}/rounds", {})
    page = org.get(f"/tournaments/{tid}/print?round=1").data.decode()
    assert page.count("<svg") == 0 and 'id="qr-later"' in page  # the codes appear when the round starts
    r = org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    matches = r.json["round_list"][0]["matches"]
    assert len(matches) == 3
    page = org.get(f"/tournaments/{tid}/print?round=1").data.decode()
    assert page.count('<div class="table-qr"><div class="qr"><svg') == 3 and 'id="qr-later"' not in page
    for k, m in enumerate(matches):  # each table's own short address, as on its table card
        card = org.get(f"/m/{m['match_id']}/card").data.decode()
        url = card.split('id="table-url">')[1].split("<")[0]
        block = page.split(f'data-table="{k + 1}"')[1].split('data-table=')[0]
        assert url in block and "/j/" in url
    viewer = Api(clocked_app.test_client())
    lan = {"REMOTE_ADDR": "192.168.1.50"}  # not the Pi's own screen (localhost may show join codes)
    page = viewer.get(f"/tournaments/{tid}/print?round=1", environ_base=lan).data.decode()
    assert page.count("<svg") == 0 and 'id="qr-not-allowed"' in page  # a viewer prints no join codes
    _finish(org, matches[0]["match_id"], random.Random(2))
    page = org.get(f"/tournaments/{tid}/print?round=1").data.decode()
    assert page.count('class="table-qr"') == 2  # an ended table has no code to scan


def test_merging_two_roster_entries_moves_the_registration(org):
    club = org.post("/api/clubs", {"name": "Fan Club"}).json["id"]
    bruno = org.post("/api/players", {"club": club, "name": "Bruno"}).json["id"]
    twin = org.post("/api/players", {"club": club, "name": "Bruno Rossi"}).json["id"]
    tid = _create(org, "conquest-italy", players=["Anna"])["id"]
    org.post(f"/api/tournaments/{tid}/players", {"player": "Bruno", "player_id": bruno})
    r = org.post("/api/players/merge", {"from": bruno, "into": twin})
    assert r.status_code == 200, r.json
    assert org.get(f"/api/tournaments/{tid}").json["player_ids"] == [None, twin]


def test_a_new_tournament_registers_roster_players_with_their_ids(fake_game, org):
    """The new-tournament form sends the players picked from the roster as {name, player_id}, guests by
    name: the ids are stored at creation; another club's player, an unknown id or one player twice is
    refused, naming the player's entry."""
    clubs = [org.post("/api/clubs", {"name": n}).json["id"] for n in ("Fan Club", "Other Club")]
    ids = {n: org.post("/api/players", {"club": clubs[0], "name": n}).json["id"] for n in ("Anna", "Bruno")}
    stranger = org.post("/api/players", {"club": clubs[1], "name": "Zed"}).json["id"]
    t = _create(org, fake_game, rounds=1, players=[{"name": "Anna", "player_id": ids["Anna"]}, "Guest",
                                                   {"name": "Bruno", "player_id": ids["Bruno"]}, {"name": "Dee"}])
    assert t["players"] == ["Anna", "Guest", "Bruno", "Dee"]
    assert t["player_ids"] == [ids["Anna"], None, ids["Bruno"], None] and t["club_id"] == clubs[0]
    body = {"name": "Coppa", "date": "2026-12-12", "game": fake_game, "table_size": 4, "rounds": 1}
    for players, status, field in [
        ([{"name": "Anna", "player_id": ids["Anna"]}, {"name": "Zed", "player_id": stranger}], 400,
         "$.players[1].player_id"),
        ([{"name": "Anna", "player_id": "nope"}], 400, "$.players[0].player_id"),
        ([{"name": "Anna", "player_id": ids["Anna"]}, {"name": "Anna B.", "player_id": ids["Anna"]}], 400,
         "$.players[1].player_id"),
        ([{"player_id": ids["Anna"]}], 400, "$.players[0]"),
    ]:
        r = org.post("/api/tournaments", {**body, "players": players})
        assert (r.status_code, r.json["field"]) == (status, field), r.json


def test_a_round_s_table_cards_print_every_table_with_its_qr_and_address(fake_game, org, clocked_app):
    """One page with every table's card of a round (label, game, players, QR code drawn on the box, short
    address), 2 or 4 to an A4 sheet; and one with every open match of the club night."""
    import re

    t = _create(org, fake_game, players=PLAYERS[:8], rounds=2)
    tid = t["id"]
    org.post(f"/api/tournaments/{tid}/rounds", {})
    html = org.get(f"/tournaments/{tid}/rounds/1/cards").get_data(as_text=True)
    assert 'id="cards-none"' in html and "has not started" in html  # no match yet: no QR code to print
    org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    mids = [m["match_id"] for m in org.get(f"/api/tournaments/{tid}").json["round_list"][0]["matches"]]
    assert len(mids) == 2
    r = org.get(f"/tournaments/{tid}/rounds/1/cards")
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    cards = re.findall(r'<section class="table-card-print" data-match="(\w+)"', html)
    assert cards == mids
    for k, mid in enumerate(mids):
        url = org.get(f"/api/matches/{mid}/join").json["url"]
        assert f"<code>{url}</code>" in html and f"Round 1 · Table {k + 1}" in html
    assert html.count("<svg") == 2 and "@page { size: A4" in html and html.count('class="tc-sheet"') == 1
    assert org.get(f"/tournaments/{tid}/rounds/1/cards?per_page=4").get_data(as_text=True).count("<svg") == 2
    r = org.get(f"/tournaments/{tid}/rounds/1/cards?per_page=3", headers={"Accept": "application/json"})
    assert r.status_code == 400 and r.json["field"] == "per_page"
    assert org.get(f"/tournaments/{tid}/rounds/9/cards").status_code == 404
    assert org.get("/tournaments/nope/rounds/1/cards").status_code == 404
    viewer = Api(clocked_app.test_client())  # a phone on the club's Wi-Fi: no codes
    r = viewer.get(f"/tournaments/{tid}/rounds/1/cards", environ_base={"REMOTE_ADDR": "192.168.1.50"})
    assert r.status_code == 403 and "<svg" not in r.get_data(as_text=True)
    # the club night: every open match, this round's and any other table's
    other = org.post("/api/matches", {"game": fake_game, "players": ["Xa", "Yo"], "label": "Tavolo extra"}).json["id"]
    html = org.get("/tournament/cards?lang=it").get_data(as_text=True)
    assert sorted(re.findall(r'data-match="(\w+)"', html)) == sorted(mids + [other])
    assert "Tutti i tavoli in gioco" in html and "3 tavoli" in html
    assert 'href="/tournament/cards"' in org.get("/tournament").get_data(as_text=True)


def _event(org, mid, type_, data):
    seq = org.get(f"/api/matches/{mid}").json["seq"]
    r = org.post(f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": seq})
    assert r.status_code == 201, r.json
    return r.json


def test_a_conquest_round_starts_each_tables_clock_when_its_set_up_is_done(org, store):
    """Starting a conquest round arms each table's clock with the tournament's minutes; the Pi's deal and the
    placements are taken, and the last placement starts that table's clock (the other table still sets up);
    an undone start keeps the tournament's minutes (docs/rulings.md#the-clock-of-a-tournament-round)."""
    t = _create(org, "conquest-italy", players=PLAYERS[:6], table_size=3, rounds=2, clock_minutes=90)
    tid = t["id"]
    assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 201
    r = org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    assert r.status_code == 201, r.json
    mids = [m["match_id"] for m in r.json["round_list"][0]["matches"]]
    assert r.json["armed"] == mids and r.json["started"] == []
    room = {m["id"]: m for m in org.get("/api/tournament").json["tables"]}
    for mid in mids:
        v = org.get(f"/api/matches/{mid}").json["view"]
        assert v["phase"] == "setup" and v["armed"] is True and v["clock"]["running"] is False
        assert v["clock"]["limit_seconds"] == 90 * 60
        assert room[mid]["brief"]["phase"] == "setup" and room[mid]["brief"]["game_phase"] == "deal"
        assert room[mid]["brief"]["current_player"] is None
    a, b = mids
    deal = org.post(f"/api/matches/{a}/conquest/deal", {"expected_seq": 1, "data": {}})
    assert deal.status_code == 201, deal.json  # was 409: "the clock has started without a recorded deal"
    m = deal.json
    while m["view"]["state"]["phase"] == "place":
        s = m["view"]["state"]
        p = s["next_placer"]
        city = next(c for c, q in s["owner"].items() if q == p)
        m = _event(org, a, "setup.place", {"player": p, "placements": {city: min(5, s["reserve"][p])}})
    v = org.get(f"/api/matches/{a}").json["view"]
    assert v["phase"] == "regular" and v["clock"]["running"] is True and v["clock"]["limit_seconds"] == 90 * 60
    assert v["summary"]["turn"]["player"] == v["players"][0] and "armed" not in v
    events = org.get(f"/api/matches/{a}/events").json["events"]
    assert [e["type"] for e in events][-2:] == ["setup.place", "clock.start"]
    assert events[-1]["data"] == {"limit_minutes": 90} and events[-1]["at"] == events[-2]["at"]
    assert org.get(f"/api/matches/{b}").json["view"]["phase"] == "setup"  # the other table still sets up
    # the start taken back (the placement stays): started again by hand, the tournament's minutes kept
    seq = org.get(f"/api/matches/{a}").json["seq"]
    assert org.post(f"/api/matches/{a}/undo", {"expected_seq": seq}).status_code == 201
    v = org.get(f"/api/matches/{a}").json["view"]
    assert v["phase"] == "setup" and v["state"]["phase"] == "play" and v["clock"]["limit_seconds"] == 90 * 60
    _event(org, a, "clock.start", {})
    assert org.get(f"/api/matches/{a}").json["view"]["clock"]["limit_seconds"] == 90 * 60


def test_late_arrivals_withdrawals_and_a_player_sitting_out(org, store):
    """Between rounds: a player withdraws (their results stay, never seated again), a late arrival joins,
    and when the numbers don't fit the game's tables the fewest sit out, those who sat out least first, the
    lowest in the standings among them (docs/tournament.md, "Late arrivals, drop-outs and sitting out")."""
    players = ["Anna", "Bruno", "Carla", "Dario", "Elena", "Franco"]
    t = _create(org, "richelieu", players=players, table_size=3, rounds=3)
    tid = t["id"]

    def play_round(n):
        doc = org.get(f"/api/tournaments/{tid}").json
        r = doc["round_list"][n - 1]
        for m, table in zip(r["matches"], r["tables"]):
            seq = org.get(f"/api/matches/{m['match_id']}").json["seq"]
            places = [{"player": p, "place": k + 1} for k, p in enumerate(table)]
            assert org.post(f"/api/matches/{m['match_id']}/result", {"expected_seq": seq, "places": places}).status_code == 201
        return org.get(f"/api/tournaments/{tid}").json

    assert org.post(f"/api/tournaments/{tid}/rounds", {}).status_code == 201
    org.post(f"/api/tournaments/{tid}/rounds/1/start", {})
    doc = play_round(1)
    gone = doc["round_list"][0]["tables"][0][0]  # a winner of round 1 withdraws
    r = org.delete(f"/api/tournaments/{tid}/players/{gone}")
    assert r.status_code == 200 and r.json["withdrawn"] == [gone] and gone in r.json["players"]
    row = next(x for x in r.json["standings"] if x["player"] == gone)
    assert row["withdrawn"] is True and row["points"] == 1 and row["matches"] == 1  # results kept
    # 5 players of a game of 3-4 at a table: one sits out, the lowest in the standings
    r = org.post(f"/api/tournaments/{tid}/rounds", {})
    assert r.status_code == 201, r.json
    rnd = r.json["round_list"][1]
    seated = [p for table in rnd["tables"] for p in table]
    assert len(rnd["sitting_out"]) == 1 and gone not in seated + rnd["sitting_out"]
    lowest = [x["player"] for x in r.json["standings"] if x["player"] != gone][-1]
    assert rnd["sitting_out"] == [lowest] and sorted(seated + [lowest]) == sorted(set(players) - {gone})
    org.post(f"/api/tournaments/{tid}/rounds/2/start", {})
    doc = play_round(2)
    bye = next(x for x in doc["standings"] if x["player"] == lowest)
    assert bye["matches"] == 1  # the round sat out counts no match and no points
    # a late arrival: six again, two tables; the one who sat out is seated
    r = org.post(f"/api/tournaments/{tid}/players", {"player": "Late"})
    assert r.status_code == 201 and r.json["players"][-1] == "Late"
    r = org.post(f"/api/tournaments/{tid}/rounds", {})
    rnd = r.json["round_list"][2]
    assert rnd["sitting_out"] == [] and len(rnd["tables"]) == 2
    seated = sorted(p for table in rnd["tables"] for p in table)
    assert seated == sorted((set(players) - {gone}) | {"Late"})
    # the one who withdrew comes back under the same name (before the round starts: seated again)
    r = org.post(f"/api/tournaments/{tid}/players", {"player": gone})
    assert r.status_code == 201 and r.json["withdrawn"] == [] and r.json["next_round"] == 3
