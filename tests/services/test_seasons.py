"""Clubs, seasons and results in SQLite (companion/services/seasons.py), and the feed from finished app matches."""

import pytest

from companion.services import seasons as ss
from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.services.matches import MatchService

# -- a tiny ranked game, registered under a real game id by the ``ranked_game`` fixture ----------
# It ends on a "finish" event carrying the final order (names best first, or entries with shared places);
# final_ranking gives it back in the one shape every game gives (companion.games.contract.Placing).
GAME_ID = "ranked"
EVENT_TYPES = frozenset({"finish", "kill"})


def initial_state(players, options):
    if len(players) < 2:
        raise InputError("needs at least 2 players", "players")
    return {"players": list(players), "ranking": None, "eliminated": []}


def apply(state, event):
    if state["ranking"] is not None:
        raise RuleError("the match has ended", "type")
    data = event.get("data", {})
    if event["type"] == "kill":
        return {**state, "eliminated": state["eliminated"] + [data["player"]]}
    return {**state, "ranking": data["ranking"]}


def is_ended(state):
    return state["ranking"] is not None


def final_ranking(state):
    out = []
    for i, entry in enumerate(state["ranking"] or state["players"]):
        entry = {"player": entry, "place": i + 1} if isinstance(entry, str) else entry
        out.append({"player": entry["player"], "place": entry["place"],
                    "objective": entry.get("objective", False),
                    "eliminated": entry["player"] in state["eliminated"]})
    return out


def final_points(state):
    return {}  # the game gives no number of its own


@pytest.fixture
def ranked_game(monkeypatch):
    from companion import games

    monkeypatch.setitem(games.GAMES, "rome-is-burning", __name__)
    return "rome-is-burning"


def R(player, place, objective=False, eliminated=False):
    return {"player": player, "place": place, "objective": objective, "eliminated": eliminated}


@pytest.fixture
def club(store):
    return ss.create_club(store, "Fan Club Conquista")


@pytest.fixture
def season(store, club):
    return ss.create_season(store, club["name"], "conquest-italy", 2026)


def standings(store, ref):
    return {r["player"]: r for r in ss.season_standings(store, ref)["standings"]}


# -- schema -------------------------------------------------------------------------------------

def test_migration_creates_the_tables(store):
    assert store.schema_version() >= 3
    names = {r[0] for r in store.conn().execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"clubs", "seasons", "season_matches", "season_results"} <= names


# -- clubs and seasons --------------------------------------------------------------------------

def test_clubs_by_id_or_name(store, club):
    assert ss.get_club(store, club["id"]) == club
    assert ss.get_club(store, "fan club conquista")["id"] == club["id"]
    with pytest.raises(ConflictError):
        ss.create_club(store, "FAN CLUB CONQUISTA")
    with pytest.raises(NotFoundError):
        ss.get_club(store, "nobody")
    with pytest.raises(InputError) as err:
        ss.create_club(store, "  ")
    assert err.value.field == "name"
    assert [c["name"] for c in ss.list_clubs(store)] == ["Fan Club Conquista"]


def test_seasons_by_id_or_club_game_year(store, club, season):
    assert season["name"] == "Fan Club Conquista conquest-italy 2026"
    assert season["taken_in"] == []  # no finished match was waiting for it
    season = {k: v for k, v in season.items() if k != "taken_in"}
    assert ss.get_season(store, season["id"]) == season
    assert ss.get_season(store, "Fan Club Conquista/conquest-italy/2026") == season
    assert ss.get_season(store, f"{club['id']}/conquest-italy/2026") == season
    with pytest.raises(NotFoundError):
        ss.get_season(store, "Fan Club Conquista/conquest-italy/2025")
    with pytest.raises(ConflictError) as err:
        ss.create_season(store, club["id"], "conquest-italy", 2026)
    assert err.value.field == "year"
    other = ss.create_season(store, club["id"], "conquest-italy", 2027, name="Campionato 2027")
    assert [s["year"] for s in ss.list_seasons(store, club["name"])] == [2027, 2026]
    assert other["name"] == "Campionato 2027"


@pytest.mark.parametrize("kwargs, field", [
    ({"game": "chess"}, "game"),
    ({"year": 26}, "year"),
    ({"year": True}, "year"),
    ({"settings": {"threshold": 2}}, "settings.threshold"),
    ({"settings": {"points": {"4": [1, 2]}}}, 'settings.points["4"]'),
])
def test_bad_seasons_name_the_field(store, club, kwargs, field):
    args = {"game": "conquest-italy", "year": 2026, **kwargs}
    with pytest.raises(InputError) as err:
        ss.create_season(store, club["id"], args["game"], args["year"], settings=args.get("settings"))
    assert err.value.field == field


# -- results entered by hand --------------------------------------------------------------------

def test_results_played_without_the_app(store, season):
    ss.add_result(store, season["id"], {"id": "t1", "date": "2026-03-14",
                                        "results": [R("Anna", 1, True), R("Bruno", 2), R("Carla", 2), R("Dario", 4, False, True)]})
    ss.add_result(store, season["id"], {"date": "2026-03-21", "results": [R("Anna", 3), R("Bruno", 1), R("Carla", 2)]})
    t = standings(store, season["id"])
    assert {p: r["points"] for p, r in t.items()} == {"Anna": 2, "Bruno": 1, "Carla": 0, "Dario": -2.5}
    assert t["Dario"]["matches"] == 1 and t["Dario"]["eligible"] is True  # 1 of 2 >= 30%
    out = ss.season_standings(store, season["id"])
    assert out["total_matches"] == 2 and out["club"] == "Fan Club Conquista" and out["year"] == 2026
    ids = [m["id"] for m in ss.season_matches(store, season["id"])]
    assert ids[0] == "t1" and ids[1].startswith("m-")


@pytest.mark.parametrize("doc, path", [
    ({"date": "2026-03-14", "results": [R("a", 1), R("b", 1), R("c", 2)]}, "$.results[2].place"),
    ({"date": "2026-03-14", "results": [R("a", 1), R("a", 2), R("c", 3)]}, "$.results[1].player"),
    ({"date": "2026-03-14", "results": [R("a", 1), R("b", 2)]}, "$.results"),
    ({"date": "2025-03-14", "results": [R("a", 1), R("b", 2), R("c", 3)]}, "$.date"),
    ({"date": "2026-03-14", "results": [R("a", 1), R("b", 2), R("c", 3)], "game": "x"}, "$"),
    ({"results": [R("a", 1), R("b", 2), R("c", 3)]}, "$"),
])
def test_bad_results_name_the_json_path(store, season, doc, path):
    with pytest.raises(InputError) as err:
        ss.add_result(store, season["id"], doc)
    assert err.value.field == path
    assert ss.season_matches(store, season["id"]) == []


def test_a_match_id_is_entered_once(store, season):
    doc = {"id": "t1", "date": "2026-03-14", "results": [R("a", 1), R("b", 2), R("c", 3)]}
    ss.add_result(store, season["id"], doc)
    with pytest.raises(ConflictError) as err:
        ss.add_result(store, season["id"], doc)
    assert err.value.field == "$.id"
    ss.remove_result(store, season["id"], "t1")
    assert ss.season_matches(store, season["id"]) == []
    assert store.conn().execute("SELECT COUNT(*) FROM season_results").fetchone()[0] == 0
    with pytest.raises(NotFoundError):
        ss.remove_result(store, season["id"], "t1")


# -- settings -----------------------------------------------------------------------------------

def test_club_settings_then_season_settings(store, club, season):
    for i in range(10):
        players = ["a", "b", "x"] if i < 3 else ["a", "b", "c"]
        ss.add_result(store, season["id"], {"id": f"t{i}", "date": "2026-02-01",
                                            "results": [R(p, j + 1) for j, p in enumerate(players)]})
    assert standings(store, season["id"])["x"]["eligible"] is True          # 3 of 10 at 30%
    ss.set_club_settings(store, club["name"], {"threshold": 0.5, "points": {"3": [3, 1, 0]}})
    t = standings(store, season["id"])
    assert t["x"]["eligible"] is False and t["x"]["needs"] == 4            # (3+4)/(10+4) = 1/2
    assert t["a"]["points"] == 30
    ss.set_season_settings(store, season["id"], {"threshold": 0.25})        # the season's own value wins
    t = standings(store, season["id"])
    assert t["x"]["eligible"] is True and t["a"]["points"] == 30           # the club's table still applies
    assert ss.season_standings(store, season["id"])["threshold"] == 0.25


def test_settings_that_would_orphan_results_are_refused(store, club, season):
    ss.set_club_settings(store, club["id"], {"points": {"2": [1, -1]}})
    ss.add_result(store, season["id"], {"id": "duel", "date": "2026-02-01", "results": [R("a", 1), R("b", 2)]})
    with pytest.raises(RuleError) as err:
        ss.set_club_settings(store, club["id"], {})
    assert err.value.field == "settings.points"
    assert ss.get_club(store, club["id"])["settings"] == {"points": {"2": [1, -1]}}
    with pytest.raises(InputError) as err:
        ss.set_club_settings(store, club["id"], {"points": {"2": [1, -1, 0]}})
    assert err.value.field == 'settings.points["2"]'


def test_season_document_reads_back(store, season):
    from companion.core import season as core

    ss.add_result(store, season["id"], {"id": "t1", "date": "2026-03-14",
                                        "results": [R("a", 1, True), R("b", 2), R("c", 3, False, True)]})
    doc = ss.season_document(store, season["id"])
    assert doc["game"] == "conquest-italy" and doc["matches"][0]["game"] == "conquest-italy"
    again = core.standings_document(doc)
    stored = ss.season_standings(store, season["id"])
    assert again["standings"] == stored["standings"]


# -- finished app matches -------------------------------------------------------------------------

def _app_match(store, game="conquest-italy", players=("a", "b", "c", "d"), options=None, match_id=None):
    return store.create_match(game, list(players), options or {}, match_id=match_id)


def test_record_finished_match_is_idempotent(store, season):
    m = _app_match(store)
    results = [R("a", 1, True), R("b", 2), R("c", 3), R("d", 4, False, True)]
    rec = ss.record_finished_match(store, m, results, date="2026-04-01T21:30:00Z")
    assert rec["season"] == season["id"] and rec["source"] == "app"
    ss.record_finished_match(store, m, results, date="2026-04-01T21:30:00Z")
    matches = ss.season_matches(store, season["id"])
    assert len(matches) == 1 and matches[0]["match_id"] == m["id"] and matches[0]["date"] == "2026-04-01T21:30:00.000Z"
    assert {p: r["points"] for p, r in standings(store, season["id"]).items()} == {"a": 3, "b": 1, "c": -1, "d": -2.5}
    # re-recorded with other places: replaced, not added
    ss.record_finished_match(store, m, [R("a", 2), R("b", 1), R("c", 3), R("d", 4)], date="2026-04-01T21:30:00Z")
    assert {p: r["points"] for p, r in standings(store, season["id"]).items()} == {"a": 1, "b": 2, "c": -1, "d": -2}


def test_which_season_an_app_match_feeds(store, club, season):
    m = _app_match(store)
    assert ss.record_finished_match(store, m, [R("a", 1), R("b", 2), R("c", 3), R("d", 4)],
                                    date="2025-12-31T22:00:00Z") is None           # no 2025 season
    other = ss.create_club(store, "Altro club")
    theirs = ss.create_season(store, other["id"], "conquest-italy", 2026)
    # two clubs: a match naming neither feeds nothing
    assert ss.record_finished_match(store, _app_match(store), [R("a", 1), R("b", 2), R("c", 3), R("d", 4)],
                                    date="2026-05-01") is None
    named = _app_match(store, options={"club": "altro club"})
    assert ss.record_finished_match(store, named, [R("a", 1), R("b", 2), R("c", 3), R("d", 4)],
                                    date="2026-05-01")["season"] == theirs["id"]
    by_season = _app_match(store, options={"season": season["id"]})
    assert ss.record_finished_match(store, by_season, [R("a", 1), R("b", 2), R("c", 3), R("d", 4)],
                                    date="2026-05-02")["season"] == season["id"]
    missing = _app_match(store, options={"season": "nope"})
    assert ss.record_finished_match(store, missing, [R("a", 1), R("b", 2), R("c", 3), R("d", 4)]) is None


def test_the_only_club_is_the_default(store, season):
    m = _app_match(store, players=("a", "b", "c"))
    rec = ss.record_finished_match(store, m, [R("a", 1), R("b", 2), R("c", 3)], date="2026-06-01T10:00:00Z")
    assert rec["season"] == season["id"]


@pytest.mark.parametrize("results, field", [
    ([R("a", 1), R("b", 2), R("z", 3), R("d", 4)], "results[2].player"),
    ([R("a", 1), R("b", 2), R("c", 2), R("d", 3)], "results[3].place"),
    ([R("a", 1), R("b", 2)], "results"),
    ([{"player": "a"}, R("b", 2), R("c", 3), R("d", 4)], "results[0]"),
])
def test_bad_app_results_are_refused(store, season, results, field):
    with pytest.raises(InputError) as err:
        ss.record_finished_match(store, _app_match(store), results, date="2026-04-01")
    assert err.value.field == field
    assert ss.season_matches(store, season["id"]) == []


def test_a_season_of_another_game_is_refused(store, season):
    m = _app_match(store, game="richelieu", players=("a", "b", "c"))
    with pytest.raises(InputError) as err:
        ss.record_finished_match(store, m, [R("a", 1), R("b", 2), R("c", 3)], season=season)
    assert err.value.field == "season"


def test_the_feeder_records_a_match_when_it_ends_and_forgets_it_on_undo(store, club, ranked_game):
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    service = MatchService(store)
    m = service.create(ranked_game, ["ada", "bo", "cy", "di"])
    service.append(m["id"], "kill", {"player": "di"})
    assert ss.season_matches(store, season["id"]) == []
    ranking = [{"player": "bo", "place": 1, "objective": True}, {"player": "ada", "place": 2},
               {"player": "cy", "place": 2}, {"player": "di", "place": 4}]
    service.append(m["id"], "finish", {"ranking": ranking})
    t = standings(store, season["id"])
    assert {p: r["points"] for p, r in t.items()} == {"bo": 3, "ada": 0, "cy": 0, "di": -2.5}
    rec = ss.season_matches(store, season["id"])[0]
    assert rec["source"] == "app" and rec["match_id"] == m["id"] and rec["date"] == "2026-03-01T20:00:00.000Z"
    service.undo(m["id"])
    assert ss.season_matches(store, season["id"]) == []
    service.append(m["id"], "finish", {"ranking": ["cy", "bo", "ada", "di"]})  # plain order: no ties
    t = standings(store, season["id"])
    assert {p: r["points"] for p, r in t.items()} == {"cy": 2, "bo": 1, "ada": -1, "di": -2.5}


def test_a_feeder_failure_never_loses_the_event(store, club, ranked_game, caplog):
    ss.create_season(store, club["id"], ranked_game, 2026)
    service = MatchService(store)
    m = service.create(ranked_game, ["ada", "bo"])  # no points table for 2 players
    event = service.append(m["id"], "finish", {"ranking": ["ada", "bo"]})
    assert event["seq"] == 1 and store.get_match(m["id"])["status"] == "ended"
    assert "could not record" in caplog.text


def test_results_from_fold_are_the_game_s_final_ranking(store, ranked_game):
    from companion.core.match import fold

    f = fold(ranked_game, ["ada", "bo", "cy"], [
        {"seq": 1, "type": "kill", "data": {"player": "cy"}, "at": "2026-01-01T20:00:00Z"},
        {"seq": 2, "type": "finish", "data": {"ranking": [{"player": "bo", "place": 1, "objective": True},
                                                          "ada", "cy"]}, "at": "2026-01-01T21:00:00Z"}])
    assert ss.results_from_fold(f) == [R("bo", 1, True), R("ada", 2), R("cy", 3, False, True)]


@pytest.mark.parametrize("game", ["web-of-power", "richelieu", "rome-is-burning", "conquest-italy"])
def test_every_game_s_ended_match_gives_season_results(game):
    """Every game has a final_ranking in the one shape, so an ended match of any game feeds its season
    (before, only a game with its own final_ranking did, and the store guessed at other shapes)."""
    from companion.games import contract
    from companion.core.match import Fold
    from tests.games.conformance import play

    f = play(game, seed=1, until_ended=True)
    assert f.ended()
    results = ss.results_from_fold(f)
    assert contract.check_ranking(results, f.players) == []


def test_a_real_conquest_match_feeds_its_season_when_the_objective_is_completed(store, club, clock):
    """End to end with the real game: deal, place, start the clock, complete an objective."""
    import random

    from companion.games import conquest_italy as ci

    season = ss.create_season(store, club["id"], "conquest-italy", 2026)
    players = ["Anna", "Bruno", "Carla", "Dario"]
    svc = MatchService(store)
    m = svc.create("conquest-italy", players)
    owner, _ = ci.deal(players, ci.conquest_map.default_map(), random.Random(4))
    svc.append(m["id"], "setup.deal", {"owner": owner})
    state = svc.fold(m["id"]).game_state
    while state["phase"] == "place":
        p = state["next_placer"]
        svc.append(m["id"], "setup.place", {"player": p, "placements": {ci.held(state, p)[0]: min(5, state["reserve"][p])}})
        state = svc.fold(m["id"]).game_state
    svc.append(m["id"], "clock.start", {})
    for p in players:
        svc.append(m["id"], "objective.set", {"player": p, "cities": [ci.held(state, p)[0]]})
    clock.advance(3600)
    svc.append(m["id"], "objective.completed", {"player": "Carla"})
    assert svc.fold(m["id"]).ended()
    [rec] = ss.season_matches(store, season["id"])
    assert rec["source"] == "app" and rec["match_id"] == m["id"] and rec["date"] == "2026-03-01T21:00:00.000Z"
    carla = next(r for r in rec["results"] if r["player"] == "Carla")
    assert carla == {"player": "Carla", "place": 1, "objective": True, "eliminated": False}
    assert sorted(r["player"] for r in rec["results"]) == players
    expected = ss.results_from_fold(svc.fold(m["id"]))
    table = standings(store, season["id"])
    assert table["Carla"]["points"] == 3 and table["Carla"]["wins"] == 1
    from companion.core import season as core
    pts = core.points_of_places(core.Rules(), [r["place"] for r in expected])
    for r, base in zip(expected, pts):
        assert table[r["player"]]["points"] == float(base + (1 if r["objective"] else 0))
    svc.undo(m["id"])  # takes the completion back: the match is open again, and out of the season
    assert ss.season_matches(store, season["id"]) == []


# -- a season made after its matches ----------------------------------------------------------------

def _ended(service, game, players, options=None, ranking=None):
    m = service.create(game, list(players), options if options is not None else {})
    service.append(m["id"], "finish", {"ranking": ranking or list(players)})
    return m


def test_a_season_made_after_its_match_takes_it_in(store, club, clock, ranked_game):
    service = MatchService(store)
    opts = ss.options_for_new_match(store, ranked_game)  # /new's default: this year's season, once there is one
    assert opts == {"club": club["id"]}
    waiting = _ended(service, ranked_game, ["ada", "bo", "cy", "di"], opts, ["bo", "ada", "cy", "di"])
    assert ss.season_state(store, store.get_match(waiting["id"]))["state"] == "waiting"
    # not taken in: explicitly no season, another game, another year
    none = _ended(service, ranked_game, ["ada", "bo", "cy"],
                  ss.options_for_new_match(store, ranked_game, season="none"))
    assert ss.season_state(store, store.get_match(none["id"]))["state"] == "none"
    service_other = MatchService(store)
    other_game = service_other.create("richelieu", ["ada", "bo", "cy"], ss.options_for_new_match(store, "richelieu"))
    clock.advance(366 * 86400)  # 2027
    next_year = _ended(service, ranked_game, ["ada", "bo", "cy"], ss.options_for_new_match(store, ranked_game))
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    assert season["taken_in"] == [waiting["id"]]
    assert [m["match_id"] for m in ss.season_matches(store, season["id"])] == [waiting["id"]]
    assert {p: r["points"] for p, r in standings(store, season["id"]).items()} == \
        {"bo": 2, "ada": 1, "cy": -1, "di": -2}
    state = ss.season_state(store, store.get_match(waiting["id"]))
    assert state["state"] == "counted" and state["season"]["id"] == season["id"]
    assert ss.season_state(store, store.get_match(none["id"]))["state"] == "none"
    assert ss.season_state(store, store.get_match(next_year["id"]))["state"] == "waiting"
    assert store.get_match(other_game["id"])["status"] != "ended"
    # the 2027 season takes in the 2027 match alone
    later = ss.create_season(store, club["id"], ranked_game, 2027)
    assert later["taken_in"] == [next_year["id"]]
    service.rebuild()  # the season rows are derived: rebuilt from the log, each match is where it was
    assert [m["match_id"] for m in ss.season_matches(store, season["id"])] == [waiting["id"]]
    assert [m["match_id"] for m in ss.season_matches(store, later["id"])] == [next_year["id"]]


def test_the_organiser_moves_a_finished_match_in_and_out(store, club, ranked_game):
    service = MatchService(store)
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    m = _ended(service, ranked_game, ["ada", "bo", "cy"], ss.options_for_new_match(store, ranked_game, season="none"))
    assert ss.season_matches(store, season["id"]) == []
    state = ss.set_match_season(store, store.get_match(m["id"]), season["id"])
    assert state["state"] == "counted" and [x["match_id"] for x in ss.season_matches(store, season["id"])] == [m["id"]]
    ss.remove_result(store, season["id"], m["id"])
    assert ss.season_matches(store, season["id"]) == []
    service.rebuild()  # taken out is chosen for good: no rebuild puts it back
    assert ss.season_matches(store, season["id"]) == []
    assert ss.season_state(store, store.get_match(m["id"]))["state"] == "none"
    other = ss.create_season(store, club["id"], "richelieu", 2026)
    with pytest.raises(InputError) as err:
        ss.set_match_season(store, store.get_match(m["id"]), other["id"])
    assert err.value.field == "season"


def test_a_matchs_season_changed_keeps_its_other_options_set_meanwhile(store, season):
    """The organiser's season for a match, from a page that read the match before another choice of his was
    stored (who records on the phones): that choice is kept, the season set (it wrote the options it had read)."""
    svc = MatchService(store)
    mid = svc.create("conquest-italy", ["Ada", "Bo", "Cy"])["id"]
    read = store.get_match(mid)
    svc.set_phones(mid, "own-seat")
    ss.set_match_season(store, read, "none")
    assert store.get_match(mid)["options"] == {**read["options"], "phones": "own-seat", "season": "none"}
    ss.set_match_season(store, read, season["id"])
    got = store.get_match(mid)["options"]
    assert got["phones"] == "own-seat" and got["season"] == season["id"], got
