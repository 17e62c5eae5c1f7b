"""A Web of Power tournament evening on a transcribed board: the organiser imports the club's board (its sites,
roads and alliances) on the boards page and makes it the box's default; 6 roster players, 2 tables of 3,
2 rounds; each match is played on the seated phones (a monastery on a site each turn, a councillor now and
then), the deck runs out twice (the intermediate scoring, then the final one: each asks first) and the final
scoring names the winner from the board (alliances and chains known); the TV of table 1 open; the standings
against the places the phones showed."""

import json

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, Evening, check_standings, places_shown, seq, shown_at, text, tv_end

pytestmark = pytest.mark.browser

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]


def club_board():
    """The club's transcribed board (fictional: the benchmarks' board, complete: sites, roads, alliances)."""
    from bench.bench_web_of_power import synthetic_board

    doc = synthetic_board(6, 4, seed=3)
    doc["name"] = "Our club's board"
    return doc


def import_board(ev, tmp_path) -> None:
    """The boards page: import the board file, make it the box's default."""
    path = tmp_path / "board.json"
    path.write_text(json.dumps(club_board()), encoding="utf-8")
    org = ev.org
    org.goto("/boards")
    org.set_input_files("#bd-import", str(path))
    expect(org.locator(".toast").last).to_contain_text(text(EN, "boards.imported", name="Our club's board"))
    expect(org.locator("#bd-name")).to_have_value("Our club's board")
    org.click("#bd-make-default")
    expect(org.locator("#bd-default-note")).to_have_text(EN["boards.is_default"])


def place(table, player: str, country: str, councillor: bool = False) -> None:
    """``player``'s placement on their phone: a monastery on the first free site of ``country`` (or a
    councillor there), then the end of their turn."""
    page = table[player]
    n, (status, chosen) = shown_at(page, table.seq, "#wop-status", "value:#wop-player")
    assert player in status and chosen == player, (status, chosen)
    page.click("#wop-piece-councillor" if councillor else "#wop-piece-monastery")
    page.select_option("#wop-country", country)
    n = table.act(player, "#wop-place", n=n)
    table.act(player, "#wop-turn-end", n=n)


def deck_out(table, player: str, final: bool) -> None:
    page = table[player]
    table.sync(player)
    expect(page.locator("#wop-deck-out")).to_have_text(EN["wop.deck_out_2" if final else "wop.deck_out_1"])
    n = table.act(player, "#wop-deck-out", confirm=False)  # asked first: "no" scores nothing
    assert seq(page) == n
    table.act(player, "#wop-deck-out", confirm=True)
    table.wait_all()


def play_wop(ev, table, countries: list[str]) -> list[dict]:
    """Two rounds of monasteries (each player in ``countries[i]``, one councillor), the intermediate scoring,
    one more round (a monastery each in a small country), the final scoring: the winner from the board's
    alliances and chains."""
    a, b, c = table.players
    for rnd in range(2):
        for i, p in enumerate(table.players):
            place(table, p, countries[i], councillor=(rnd == 1 and i == 0))
    deck_out(table, c, final=False)
    for p in table.players:
        expect(table[p].locator(".wop-scoring[data-scoring=intermediate]")).to_have_count(1)
    for i, p in enumerate(table.players):
        place(table, p, ["Italien", "Aragon", "Burgund"][i])
    deck_out(table, a, final=True)
    v = table.view()
    assert v["summary"]["phase"] == "ended" and v["summary"]["scores"]["final"]["complete"] is not False
    winners = v["summary"]["winners"]
    want = text(EN, "wop.ended", players=winners[0]) if len(winners) == 1 else text(
        EN, "wop.ended_tie", players=", ".join(winners))
    places = places_shown(table[a], "#wop-totals tbody tr")
    for p in table.players:
        expect(table[p].locator("#wop-status")).to_have_text(want)
        assert places_shown(table[p], "#wop-totals tbody tr") == places
    assert sorted(r["player"] for r in places if r["place"] == 1) == sorted(winners)
    return places


def test_a_web_of_power_tournament_evening(browser, server, artifacts_dir, tmp_path):
    ev = Evening(browser, server, artifacts=artifacts_dir)
    import_board(ev, tmp_path)
    ev.add_roster(ROSTER)
    ev.new_tournament("Coppa della Rete", "web-of-power", ROSTER)
    ev.lap("board, roster and tournament")
    played = []
    for n in (1, 2):
        tables = ev.seat(n)
        ev.start(n)
        ev.cards(n)
        for t in tables:
            ev.sit(t)
        tv = ev.tv(tables[0])
        # the round plays on the club's board (the box's default), not on the installed template
        for t in tables:
            expect(t[t.players[0]].locator("#wop-board-note")).to_be_hidden()
            assert t.view()["state"]["board_name"] == "Our club's board" if "board_name" in t.view()["state"] else True
        ev.lap(f"round {n} seated, started, phones, TV")
        for k, t in enumerate(tables):
            countries = ["England", "Franken", "Bayern"]
            countries = countries[(n + k) % 3:] + countries[:(n + k) % 3]
            played.append(play_wop(ev, t, countries))
            ev.lap(f"round {n} table {t.number} played")
        tv_end(ev, tables[0], "web-of-power", played[-2])
        if n == 2:  # (round 1's end screen looks the same)
            ev.shot(tv, f"wop-tv-end-{n}")
        check_standings(ev, played)
    ev.shot(ev.org, "wop-standings", full_page=True)
    assert ev.errors() == []
