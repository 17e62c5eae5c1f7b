"""``/api/matches/<id>/playlog``, its QR code and the page behind "Save to my play log"."""

import pytest

from companion.core import playlog
from companion.services import seasons as ss
from companion.base.schemas import validate

PLAYERS = ["Anna", "Bruno", "Carla"]


def result_only(a):
    r = a.post("/api/matches", {"game": "rome-is-burning", "players": PLAYERS, "options": {"tracking": "result"}})
    assert r.status_code == 201, r.json
    return r.json["id"]


def test_a_match_in_play_has_no_play_log_link_yet(player, api):
    mid = result_only(player)
    r = api.get(f"/api/matches/{mid}/playlog")
    assert r.status_code == 409 and r.json["field"] == "match_id"
    assert api.get(f"/api/matches/{mid}/playlog.svg").status_code == 409
    page = api.get(f"/m/{mid}/playlog")
    assert page.status_code == 409 and b'id="playlog-wait"' in page.data
    assert api.get("/api/matches/nope/playlog").status_code == 404


def test_an_ended_match_gives_its_play_link_qr_and_page(player, api, store, clock):
    club = ss.create_club(store, "Dadi Rossi")
    ss.create_season(store, club["id"], "rome-is-burning", 2026)
    mid = result_only(player)
    clock.advance(3600)
    r = player.post(f"/api/matches/{mid}/result", {"expected_seq": 0, "places": [
        {"player": "Carla", "place": 1}, {"player": "Anna", "place": 2}, {"player": "Bruno", "place": 2}]})
    assert r.status_code == 201, r.json
    body = api.get(f"/api/matches/{mid}/playlog").json
    play = body["play"]
    validate("bgstats.play", play)
    assert playlog.parse_link(body["url"]) == play and playlog.parse_link(body["app_url"]) == play
    assert play["sourcePlayId"] == mid and play["location"] == "Dadi Rossi"
    assert play["game"]["name"] == "Rome Is Burning" and play["game"]["noPoints"] is True
    assert {p["name"]: (p["rank"], p["winner"]) for p in play["players"]} == {
        "Carla": (1, True), "Anna": (2, False), "Bruno": (2, False)}
    # the roster ids the match was linked to are the players' stable ids
    assert all(p["sourcePlayerId"].startswith("player:") for p in play["players"])
    assert [p["name"] for p in play["players"] if p["startPlayer"]] == ["Anna"]
    svg = api.get(f"/api/matches/{mid}/playlog.svg")
    assert svg.status_code == 200 and svg.mimetype == "image/svg+xml" and b"<svg" in svg.data
    page = api.get(f"/m/{mid}/playlog?lang=it")
    assert page.status_code == 200
    html = page.data.decode()
    assert 'id="playlog-app"' in html and "bgstats://app.bgstatsapp.com/createPlay.html?data=" in html
    assert "Apri in BG Stats" in html and 'id="playlog-qr"' in html


@pytest.mark.parametrize("game", ["web-of-power", "richelieu", "rome-is-burning", "conquest-italy"])
def test_a_real_played_match_sends_the_game_s_points(store, game):
    """A match of each game played to its end by the conformance proposer: its points go with the play."""
    from companion.services.playlog import match_play
    from companion.services.matches import MatchService
    from tests.games.conformance import Playthrough

    p = Playthrough(game, seed=3, undo_rate=0, fuzz_rate=0, checks=False).run(400, True)
    assert p.fold.ended()
    svc = MatchService(store)
    m = svc.create(game, p.players, p.options)
    for e in p.events:
        svc.append(m["id"], e["type"], e.get("data") or {}, at=e["at"])
    play = match_play(svc, store, m["id"])["play"]
    validate("bgstats.play", play)
    fold = svc.fold(m["id"])
    points = fold.module.final_points(fold.game_state)
    assert play["game"]["noPoints"] is False
    assert {r["name"]: r["score"] for r in play["players"]} == points
    ranking = {r["player"]: r["place"] for r in fold.final_ranking()}
    assert {r["name"]: r["rank"] for r in play["players"]} == ranking
    winners = [r for r in play["players"] if r["winner"]]
    assert winners and all(r["rank"] == 1 for r in winners)
    if game != "conquest-italy":  # conquest ranks the objective's points first
        assert all(r["score"] == max(points.values()) for r in winners)
