"""A Richelieu tournament evening: 6 roster players, 2 tables of 3, 3 rounds, played through the organiser's
pages and the seated phones to the end of each game (a few actions each, an intrigue's board bonus entered
as a correction, "End the game now", which asks first), the TV of table 1 open; between the rounds a
drop-out, a player sitting a round out and a late arrival (docs/tournament.md, "Late arrivals, drop-outs
and sitting out"); the standings against the places the phones showed."""

import pytest

from tests.engines import expect

from tests.evening.kit import EN, Evening, check_standings, places_shown, text, tv_end, tv_fits, tv_turn

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
        n = table.act(p, "#rl-income")
        table.act(p, "#rl-turn-end", n=n)
    # money and jewels stay behind each player's screen (docs/rulings.md#behind-the-screens): the second
    # phone shows its own (the income: 1), "—" for the first player's; so does the room's TV; the board's
    # tracks are everyone's
    second = table.players[1]
    table.wait_all()
    mine = table[second].locator(f"#rl-tracks-table tr[data-player='{second}']")
    theirs = table[second].locator(f"#rl-tracks-table tr[data-player='{first}']")
    expect(mine.locator("td[data-track=money]")).to_have_text("1")
    expect(theirs.locator("td[data-track=money]")).to_have_text("—")
    expect(theirs.locator("td[data-track=jewels]")).to_have_text("—")
    expect(theirs.locator("td[data-track=income]")).to_have_text("1")
    expect(table[second].locator(f"#rl-standings tr[data-player='{first}'] td.score")).to_have_text("—")
    if table.tv is not None:
        for p in table.players:
            expect(table.tv.locator(f"#rl-tv-tracks tr[data-player='{p}'] td[data-track=money]")).to_have_text("—")
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
    # the end turns the screens face up: everyone's money on every phone
    expect(table[second].locator(f"#rl-tracks-table tr[data-player='{first}'] td[data-track=money]")).to_have_text("1")
    return places


def test_a_richelieu_tournament_evening(browser, server, artifacts_dir):
    """Three rounds: after round 1 a player withdraws (5 left at tables of 3-4: one sits round 2 out, the
    lowest in the standings; one table of 4); before round 3 a late arrival registers (6: two tables)."""
    ev = Evening(browser, server, artifacts=artifacts_dir)
    ev.add_roster(ROSTER)
    ev.lap("roster")
    ev.new_tournament("Coppa Richelieu", "richelieu", ROSTER, rounds=3)
    ev.lap("tournament")
    played = []
    for n in (1, 2, 3):
        if n == 2:
            ev.withdraw(ROSTER[-1])
        if n == 3:
            ev.register_late("Gino Neri")
        tables = ev.seat(n)
        out = ev.sitting_out(n)
        if n == 2:
            lowest = [r["player"] for r in ev.standings() if r["player"] != ROSTER[-1]][-1]
            assert out == [lowest] and len(tables) == 1 and len(tables[0].players) == 4
            expect(ev.org.locator(".tday-round[data-round='2'] .tday-sitting-out")).to_have_text(
                text(EN, "tday.sitting_out.one", n=1, players=lowest))
        else:
            assert out == [] and [len(t.players) for t in tables] == [3, 3]
        assert ROSTER[-1] not in [p for t in tables for p in t.players] or n == 1
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
        tv_end(ev, tables[0], "richelieu", played[-len(tables)])
        if n < 3:  # (round 2: a table of four; round 3's table of three looks as round 1's)
            ev.shot(tv, f"richelieu-tv-end-{n}")
        check_standings(ev, played)
        ev.lap(f"round {n} TV and standings")
    ev.shot(ev.org, "richelieu-standings", full_page=True)
    assert ev.errors() == []
