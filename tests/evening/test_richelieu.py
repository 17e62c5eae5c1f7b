"""A Richelieu tournament evening: 6 roster players, 2 tables of 3, 2 rounds, played through the organiser's
pages and the seated phones to the end of each game (a few actions each, an intrigue's board bonus entered
as a correction, "End the game now", which asks first), the TV of table 1 open; the standings against the
places the phones showed."""

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, Evening, check_standings, places_shown, tv_end, tv_fits, tv_turn

pytestmark = pytest.mark.browser

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]


def play_richelieu(ev, table, bonus_to: int) -> list[dict]:
    """A short game: each player takes their actions and ends their turn; the player of seat ``bonus_to``
    gets a board bonus of 3 prestige (a correction); the game is ended from the first phone. Returns the
    places the phones show."""
    first, *_ = table.players
    for p in table.players:
        page = table[p]
        expect(page.locator("#rl-turn-title")).to_contain_text(p)
        tv_turn(table, p)  # a game without a clock: its TV says whose turn it is
        table.act(p, "#rl-income")
        table.act(p, "#rl-turn-end")
    lucky = table.players[bonus_to]
    page = table[first]
    page.click("#rl-adjust summary")
    page.select_option("#rl-adj-player", lucky)
    page.select_option("#rl-adj-track", "prestige")
    page.fill("#rl-adj-delta", "3")
    table.act(first, "#rl-adj-send")
    page.click("#rl-adjust summary")
    tv_fits(table, "in play")
    # the end of the game asks first: "no" keeps it going, "yes" ends it
    table.act(first, "#rl-game-end", confirm=False)
    expect(page.locator("#rl-game-end")).to_be_visible()
    n = table.act(first, "#rl-game-end", confirm=True)
    table.wait_all(n)
    places = places_shown(page, "#rl-final-table tbody tr")
    winners = [r["player"] for r in places if r["place"] == 1]
    assert winners == [lucky]
    for p in table.players:
        expect(table[p].locator("#rl-status")).to_have_text(EN["rl.ended"].replace("{players}", lucky))
        assert places_shown(table[p], "#rl-final-table tbody tr") == places
    return places


def test_a_richelieu_tournament_evening(browser, server, artifacts_dir):
    ev = Evening(browser, server, artifacts=artifacts_dir)
    ev.add_roster(ROSTER)
    ev.lap("roster")
    ev.new_tournament("Coppa Richelieu", "richelieu", ROSTER)
    ev.lap("tournament")
    played = []
    for n in (1, 2):
        tables = ev.seat(n)
        ev.start(n)
        ev.cards(n)
        ev.lap(f"round {n} seated, started, cards")
        for t in tables:
            ev.sit(t)
        tv = ev.tv(tables[0])
        ev.lap(f"round {n} phones and TV")
        for k, t in enumerate(tables):
            played.append(play_richelieu(ev, t, bonus_to=(n + k) % 3))
            ev.lap(f"round {n} table {t.number} played")
        tv_end(ev, tables[0], "richelieu", played[-2])
        ev.shot(tv, f"richelieu-tv-end-{n}")
        check_standings(ev, played)
        ev.lap(f"round {n} TV and standings")
    ev.shot(ev.org, "richelieu-standings", full_page=True)
    assert ev.errors() == []
