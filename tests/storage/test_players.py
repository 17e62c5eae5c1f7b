"""The club roster in SQLite (companion/storage/players.py): players, renames, merges, links, and the
season a match feeds, chosen at creation (several clubs on one box)."""

import pytest

from companion.services import seasons as ss
from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.services.matches import MatchService
from companion.storage import players as roster
from tests.services.test_seasons import ranked_game  # noqa: F401  (fixture)


@pytest.fixture
def club(store):
    return ss.create_club(store, "Fan Club")


def test_a_player_is_on_the_roster_once(store, club):
    p = roster.create_player(store, club["id"], "  Nicolò   Rossi ", colour="#AA0000")
    assert p["name"] == "Nicolò Rossi" and p["short_name"] == "Nicolò" and p["colour"] == "#aa0000"
    with pytest.raises(ConflictError) as err:
        roster.create_player(store, club["id"], "Nicolò Rossi")
    assert err.value.field == "name"
    look_alike = roster.create_player(store, club["id"], "NICOLO ROSSI")  # suggested, never merged
    assert look_alike["similar"] == [p["id"]]
    listed = {x["id"]: x for x in roster.list_players(store, club["id"])}
    assert listed[p["id"]]["similar"] == [look_alike["id"]] and len(listed) == 2
    assert {x["name"] for x in roster.list_players(store, club["id"], q="ross")} == {"NICOLO ROSSI", "Nicolò Rossi"}
    assert [x["name"] for x in roster.list_players(store, club["id"], q="nicolo r")][0].casefold() == "nicolo rossi"
    assert roster.list_players(store, club["id"], q="zz") == []


@pytest.mark.parametrize("kwargs, field", [
    ({"name": ""}, "name"), ({"name": "x" * 41}, "name"), ({"name": "a\nb"}, "name"),
    ({"name": "ok", "colour": "red"}, "colour"), ({"name": "ok", "short_name": "y" * 13}, "short_name"),
])
def test_bad_players_name_the_field(store, club, kwargs, field):
    with pytest.raises(InputError) as err:
        roster.create_player(store, club["id"], **kwargs)
    assert err.value.field == field


def test_an_unknown_club_or_player(store, club):
    with pytest.raises(NotFoundError):
        roster.create_player(store, "nope", "Ann")
    with pytest.raises(NotFoundError):
        roster.get_player(store, "nope")


def _finish(service, game, players, options=None, roster_seats=None):
    m = service.create(game, players, options, roster=roster_seats)
    service.append(m["id"], "finish", {"ranking": list(players)})
    return m


def test_a_rename_keeps_the_history_and_the_standings(store, club, clock, ranked_game):  # noqa: F811
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    ann = roster.create_player(store, club["id"], "Ann")
    service = MatchService(store)
    opts = ss.options_for_new_match(store, ranked_game)
    assert opts == {"club": club["id"], "season": season["id"]}
    m = _finish(service, ranked_game, ["Ann", "Bo", "Cy"], opts)
    # Bo and Cy were guests: playing a season match puts them on the club's roster
    names = {p["name"] for p in roster.list_players(store, club["id"])}
    assert names == {"Ann", "Bo", "Cy"}
    assert [r["place"] for r in roster.history(store, ann["id"])] == [1]
    roster.update_player(store, ann["id"], name="Anna Bianchi")
    hist = roster.history(store, ann["id"])
    assert [(h["match_id"], h["place"], h["season_id"]) for h in hist] == [(m["id"], 1, season["id"])]
    table = ss.season_standings(store, season["id"])["standings"]
    assert table[0]["player"] == "Anna Bianchi"
    # the event log keeps the name typed at the table
    assert store.get_match(m["id"])["players"][0] == "Ann"
    # a later match of the renamed player, by the new name, adds to the same entry
    clock.advance(3600)
    _finish(service, ranked_game, ["Bo", "Anna Bianchi", "Cy"], ss.options_for_new_match(store, ranked_game))
    assert [h["place"] for h in roster.history(store, ann["id"])] == [1, 2]
    row = {r["player"]: r for r in ss.season_standings(store, season["id"])["standings"]}["Anna Bianchi"]
    assert row["matches"] == 2
    bo = roster.find_by_name(store, club["id"], "Bo")
    with pytest.raises(ConflictError):
        roster.update_player(store, bo["id"], name="Anna Bianchi")


def test_a_merge_moves_every_result_and_keeps_an_audit_line(store, club, ranked_game):  # noqa: F811
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    service = MatchService(store)
    opts = ss.options_for_new_match(store, ranked_game)
    _finish(service, ranked_game, ["Luca", "Bo", "Cy"], opts)
    _finish(service, ranked_game, ["Bo", "LUCA", "Cy"], opts)
    ss.add_result(store, season["id"], {"date": "2026-02-01", "results": [
        {"player": "LUCA", "place": 1}, {"player": "Bo", "place": 2}, {"player": "Cy", "place": 3}]})
    luca = roster.find_by_name(store, club["id"], "Luca")
    upper = roster.find_by_name(store, club["id"], "LUCA")
    assert roster.similar_to(store, club["id"], "luca", exclude=luca["id"])[0]["id"] == upper["id"]
    bo = roster.find_by_name(store, club["id"], "Bo")
    with pytest.raises(RuleError):  # they played together: two people
        roster.merge_players(store, bo["id"], luca["id"], by="organiser")
    before = ss.season_standings(store, season["id"])
    assert len(before["standings"]) == 4
    out = roster.merge_players(store, upper["id"], luca["id"], by="organiser (cli)")
    assert out["results"] == 3  # one match seat, two season results
    assert sorted(h["place"] for h in roster.history(store, luca["id"])) == [1, 1, 2]
    with pytest.raises(NotFoundError):
        roster.get_player(store, upper["id"])
    after = {r["player"]: r for r in ss.season_standings(store, season["id"])["standings"]}
    assert set(after) == {"Luca", "Bo", "Cy"} and after["Luca"]["matches"] == 3
    audit = roster.merges(store, club["id"])
    assert audit == [{"club_id": club["id"], "from": {"id": upper["id"], "name": "LUCA"},
                      "into": {"id": luca["id"], "name": "Luca"}, "by": "organiser (cli)",
                      "at": out["at"], "results": 3}]
    with pytest.raises(InputError):
        roster.merge_players(store, luca["id"], luca["id"], by="x")


def test_several_clubs_each_match_feeds_the_season_chosen_at_creation(store, ranked_game):  # noqa: F811
    a = ss.create_club(store, "Club A")
    b = ss.create_club(store, "Club B")
    sa = ss.create_season(store, a["id"], ranked_game, 2026)
    sb = ss.create_season(store, b["id"], ranked_game, 2026)
    assert ss.options_for_new_match(store, ranked_game) == {}  # no club named: no club, no season
    service = MatchService(store)
    _finish(service, ranked_game, ["Ann", "Bo", "Cy"], ss.options_for_new_match(store, ranked_game, club="club b"))
    _finish(service, ranked_game, ["Ann", "Bo", "Cy"], ss.options_for_new_match(store, ranked_game, season=sa["id"]))
    none = ss.options_for_new_match(store, ranked_game, club=a["id"], season="none")
    assert none == {"club": a["id"], "season": "none"}
    _finish(service, ranked_game, ["Ann", "Bo", "Cy"], none)
    assert ss.season_match_count(store, sa["id"]) == 1 and ss.season_match_count(store, sb["id"]) == 1
    # each club has its own Ann
    ann_a = roster.find_by_name(store, a["id"], "Ann")
    ann_b = roster.find_by_name(store, b["id"], "Ann")
    assert ann_a["id"] != ann_b["id"]
    assert len(roster.history(store, ann_a["id"])) == 2 and len(roster.history(store, ann_b["id"])) == 1
    with pytest.raises(RuleError):
        roster.merge_players(store, ann_a["id"], ann_b["id"], by="x")
    other_game = ss.create_season(store, a["id"], "conquest-italy", 2026)
    with pytest.raises(InputError) as err:
        ss.options_for_new_match(store, ranked_game, season=other_game["id"])
    assert err.value.field == "season"


def test_roster_seats_chosen_at_creation(store, club, ranked_game):  # noqa: F811
    ann = roster.create_player(store, club["id"], "Ann")
    service = MatchService(store)
    m = service.create(ranked_game, ["Annie", "Bo"], ss.options_for_new_match(store, ranked_game),
                       roster={0: ann["id"]})
    assert roster.match_roster(store, m["id"]) == [{"seat": 0, "id": ann["id"], "name": "Ann", "place": None}]
    other = ss.create_club(store, "Other")
    stranger = roster.create_player(store, other["id"], "Zed")
    with pytest.raises(InputError):
        service.create(ranked_game, ["Zed", "Bo"], {"club": club["id"]}, roster={0: stranger["id"]})
    assert len(store.list_matches()) == 1  # nothing half-written


def test_this_is_me_links_are_hashed_and_revocable(store, club):
    ann = roster.create_player(store, club["id"], "Ann")
    token = roster.create_link(store, ann["id"])
    assert len(token) >= 32
    raw = store.conn().execute("SELECT token_hash FROM player_links").fetchone()[0]
    assert token not in raw and len(raw) == 64
    assert roster.link_owner(store, token)["id"] == ann["id"]
    assert roster.link_owner(store, token + "x") is None
    assert roster.revoke_links(store, ann["id"])["links_revoked"] == 1
    assert roster.link_owner(store, token) is None


def test_no_season_yet_feeds_the_season_created_before_the_match_ends(store, club, ranked_game):  # noqa: F811
    service = MatchService(store)
    opts = ss.options_for_new_match(store, ranked_game)
    assert opts == {"club": club["id"]}  # no season of the game this year yet: decided when it ends
    m = service.create(ranked_game, ["Ann", "Bo", "Cy"], opts)
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    service.append(m["id"], "finish", {"ranking": ["Ann", "Bo", "Cy"]})
    assert ss.season_match_count(store, season["id"]) == 1
    # "none" chosen at creation: never in a season
    m2 = service.create(ranked_game, ["Ann", "Bo", "Cy"], ss.options_for_new_match(store, ranked_game, season="none"))
    service.append(m2["id"], "finish", {"ranking": ["Ann", "Bo", "Cy"]})
    assert ss.season_match_count(store, season["id"]) == 1
    assert [s["name"] for s in roster.match_roster(store, m2["id"])] == ["Ann", "Bo", "Cy"]
    assert [s["place"] for s in roster.match_roster(store, m2["id"])] == [1, 2, 3]
