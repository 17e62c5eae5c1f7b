"""Every player's play log: a finished match as a BG Stats "push a play" link (docs/playlog.md).

The play is checked against the published field list (``schemas/bgstats.play.schema.json``) and travels
through the link and back unchanged, whatever the names hold (accents, ``&``, ``?``, ``#``, ``%``, ``+``)."""

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from hypothesis import given, strategies as st

from companion.core import playlog
from companion.base.errors import InputError
from companion.base.schemas import validate

DOCS = Path(__file__).resolve().parents[2] / "docs" / "playlog.md"
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]


def ranking(places, points=None):
    return [{"player": p, "place": k, **({"game_points": points[i]} if points else {})}
            for i, (p, k) in enumerate(zip(PLAYERS, places))]


def build(**kw):
    args = dict(match_id="m1", game="richelieu", game_name="Richelieu", players=PLAYERS,
                results=ranking([2, 1, 3, 4], [30, 41, 12, 9]), started_at="2026-03-14T19:05:12Z",
                ended_at="2026-03-14T21:03:40Z", first_player="Anna", location="Club Dadi Rossi",
                player_ids={"Anna": "p-1"})
    args.update(kw)
    return playlog.build_play(**args)


def test_the_play_has_the_published_fields():
    play = build()
    validate("bgstats.play", play)
    assert play["sourceName"] == "companion" and play["sourcePlayId"] == "m1"
    assert play["playDate"] == "2026-03-14 19:05:12" and play["durationMin"] == 118
    assert play["location"] == "Club Dadi Rossi"
    assert play["game"] == {"name": "Richelieu", "sourceGameId": "companion:richelieu", "highestWins": True,
                            "noPoints": False}
    rows = {p["name"]: p for p in play["players"]}
    assert rows["Bruno"] == {"name": "Bruno", "rank": 1, "winner": True, "startPlayer": False, "score": 41}
    assert rows["Anna"]["sourcePlayerId"] == "player:p-1" and rows["Anna"]["startPlayer"] is True
    assert [p["name"] for p in play["players"]] == PLAYERS  # seat order, as the match has them


def test_a_tie_for_first_names_both_winners_and_a_result_only_match_sends_no_points():
    play = build(results=ranking([1, 1, 3, 4]))
    assert [p["name"] for p in play["players"] if p["winner"]] == ["Anna", "Bruno"]
    assert play["game"]["noPoints"] is True and all("score" not in p for p in play["players"])
    validate("bgstats.play", play)


def test_a_ranking_with_a_missing_part_names_no_winner():
    with pytest.raises(InputError) as e:
        build(results=ranking([1, 2, 3]))  # Dario has no place
    assert e.value.field == "results" and "Dario" in str(e.value)
    with pytest.raises(InputError):
        build(results=[])


def test_points_are_sent_only_when_every_player_has_them():
    results = ranking([1, 2, 3, 4], [10, 8, 6, 4])
    results[2]["game_points"] = None
    play = build(results=results)
    assert play["game"]["noPoints"] is True and all("score" not in p for p in play["players"])


def test_a_known_bgg_id_is_sent_and_an_unknown_one_is_not():
    assert build(bgg_id=12345)["game"]["bggId"] == 12345
    assert "bggId" not in build(bgg_id=None)["game"]
    assert "bggId" not in build(bgg_id=True)["game"]  # a boolean is no id


@pytest.mark.parametrize("app", [False, True])
def test_the_link_round_trips(app):
    play = build()
    url = playlog.link(play, app=app)
    assert url.startswith("bgstats://app.bgstatsapp.com/createPlay.html?data=" if app
                          else "https://app.bgstatsapp.com/createPlay.html?data=")
    assert playlog.parse_link(url) == play
    # the way any URL reader takes it apart (one parameter, nothing left unescaped that would split it)
    parts = urlsplit(url)
    assert list(parse_qs(parts.query)) == ["data"]
    assert json.loads(unquote(parts.query[len("data="):])) == play
    assert not re.search(r"[^A-Za-z0-9%:,._~*'()!$;@/-]", parts.query[len("data="):])


name = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=24)


@given(st.lists(name, min_size=2, max_size=6, unique=True), st.sampled_from([False, True]))
def test_any_names_round_trip(names, app):
    results = [{"player": n, "place": i + 1, "game_points": 10 - i} for i, n in enumerate(names)]
    play = playlog.build_play(match_id="m&2?x#y", game="rome-is-burning", game_name="Rome Is Burning",
                              players=names, results=results, started_at="2026-03-14T19:05:00+01:00",
                              ended_at="2026-03-14T19:05:20+01:00", first_player=names[0], location="Sala 5% & +")
    validate("bgstats.play", play)
    assert play["playDate"] == "2026-03-14 18:05:00"  # UTC
    assert play["durationMin"] == 1  # 20 seconds count as a minute
    assert playlog.parse_link(playlog.link(play, app=app)) == play


def test_a_play_too_long_for_a_link_drops_the_player_ids_first():
    names = [("N" * 38) + str(i) for i in range(6)]
    results = [{"player": n, "place": i + 1} for i, n in enumerate(names)]
    play = playlog.build_play(match_id="m", game="richelieu", game_name="Richelieu", players=names,
                              results=results, started_at="2026-03-14T19:05:00Z", ended_at=None,
                              player_ids={n: "x" * 2000 for n in names})
    url = playlog.link(play)
    assert len(url) <= playlog.MAX_URL
    back = playlog.parse_link(url)
    assert [p["name"] for p in back["players"]] == names and all("sourcePlayerId" not in p for p in back["players"])


@pytest.mark.parametrize("url", ["https://example.com/createPlay.html?data=%7B%7D",
                                 "https://app.bgstatsapp.com/createPlay.html",
                                 "https://app.bgstatsapp.com/createPlay.html?data=not-json",
                                 "bgstats://app.bgstatsapp.com/createPlay.html?data=%5B%5D"])
def test_parse_link_refuses_what_is_not_a_play(url):
    with pytest.raises(InputError):
        playlog.parse_link(url)


def test_every_game_s_bgg_id_is_in_the_docs_with_where_it_came_from():
    from companion.games import GAMES

    text = DOCS.read_text(encoding="utf-8")
    assert set(playlog.BGG_IDS) == set(GAMES)
    section = text.split("## The games' BoardGameGeek ids", 1)[1].split("\n## ", 1)[0]
    for gid, bgg in playlog.BGG_IDS.items():
        [line] = [ln for ln in section.splitlines() if f"`{gid}`" in ln]
        if bgg is None:
            assert "by name" in line, line
        else:
            assert str(bgg) in line and "https://" in line, line
