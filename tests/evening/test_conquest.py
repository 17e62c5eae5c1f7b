"""A conquest tournament evening: 6 roster players, 2 tables of 3, 2 rounds with a 2-minute clock, played
through the organiser's pages and the seated phones. Each table sets up on its phones (the Pi deals, every
unit placed) and its clock starts when its own set-up is done
(docs/rulings.md#the-clock-of-a-tournament-round); round 1's table 1 plays to the time-up, the finishing round, the last lap and the final rolls (one
roll goes on, one ends the match), table 2 ends by an objective declared on a phone (it asks first); the
TV of table 1 is open the whole time; round 2 is seated by the standings and played; the standings are
checked against the places the phones showed."""

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, Evening, act, check_standings, seq, text, tv_end, wait_seq

pytestmark = pytest.mark.browser

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]
MINUTES = 2


def owned(page, player: str) -> list[str]:
    """The cities ``player`` holds, as the phone's territories table lists them (map order)."""
    state = page.evaluate("window.companionMatch.view.state")
    return [c for c, p in state["owner"].items() if p == player]


def set_up(ev, table, minutes: int = MINUTES) -> None:
    """The table's set-up on its phones: the Pi deals from the first phone, then each player places their
    units on their own phone, 5 at a time, as the status line says; the clock waits, then starts by itself."""
    first = table.players[0]
    page = table[first]
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(
            text(EN, "ci.phase_deal") + " · " + text(EN, "ci.clock_armed", n=minutes))
    table.act(first, "#ci-deal-pi")
    while True:
        v = page.evaluate("window.companionMatch.view")
        if v["state"]["phase"] != "place":
            break
        placer, due = v["summary"]["next_placer"], v["summary"]["placement_due"]
        phone = table[placer]
        wait_seq(phone, v["seq"])
        want = EN[f"ci.phase_place.{'one' if due == 1 else 'other'}"].replace("{player}", placer).replace("{n}", str(due))
        expect(phone.locator("#ci-status")).to_have_text(want + " · " + text(EN, "ci.clock_armed", n=minutes))
        phone.locator("#ci-place-list .ci-place-row .ci-rest").first.click()
        wait_seq(phone, v["seq"] + 1)
        wait_seq(page, v["seq"] + 1)
    # the last placement started this table's clock: the first seat's turn, the tournament's minutes
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "clock.turn", player=first))
        expect(table[p].locator("#history li").first).to_contain_text(text(EN, "ci.ev_clock_start", n=minutes))
    v = table.view()
    assert v["phase"] == "regular" and v["clock"]["running"] and v["clock"]["limit_seconds"] == minutes * 60


def turn(table, player: str, conquered_note: bool = False) -> None:
    """``player``'s turn on their phone: every reinforcement on their first city, then the end of the turn."""
    page = table[player]
    wait_seq(page, seq(table[table.players[0]]))
    expect(page.locator("#ci-step")).to_have_text(text(EN, "ci.step_reinforce", player=player))
    page.locator("#ci-reinforce-list .trk-step button[title]").first.click()
    table.act(player, "#ci-reinforce-send")
    table.act(player, "#ci-turn-end")


def final_roll(table, player: str, dice: tuple[int, int]) -> None:
    """``player`` owes the final roll: the dice rolled at the table, typed on their phone."""
    page = table[player]
    expect(page.locator("#ci-final")).to_be_visible()
    expect(page.locator("#ci-final-text")).to_contain_text(player)
    page.fill("#ci-final-d1", str(dice[0]))
    page.fill("#ci-final-d2", str(dice[1]))
    table.act(player, "#ci-final-send")


def ranking(page) -> list[dict]:
    """The final ranking the phone shows: each player's place and whether they completed the objective."""
    page.wait_for_selector("#ci-ranking-body tbody tr")
    return page.eval_on_selector_all("#ci-ranking-body tbody tr", """trs => trs.map(tr => ({player: tr.dataset.player,
        place: parseInt(tr.querySelector('.trk-place').textContent, 10),
        objective: !!tr.querySelector('.trk-badge')}))""")


def play_to_the_final_rolls(ev, table) -> list[dict]:
    """Regular time, then the clock runs out (the server's clock moved forward): the round is finished, the
    last lap played, then the final rounds: a roll of 12 goes on, a roll of 3 ends the match."""
    a, b, c = table.players
    tv = table.tv
    turn(table, a)
    if tv is not None:
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.regular"])
    ev.server.advance(MINUTES * 60)  # the 2 minutes are up during b's turn
    for p in table.players:  # (the clock runner's next tick, once a second, brings it: no event does)
        expect(table[p].locator("#clock-note")).to_have_text(text(EN, "clock.time_up", player=a), timeout=10_000)
    if tv is not None:
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.finishing-round"])
        expect(tv.locator("#clock-remaining")).to_have_text("0:00")
    turn(table, b)
    turn(table, c)
    for p in (a, b, c):  # the last lap
        expect(table[p].locator("#clock-phase")).to_have_text(EN["phase.last-lap"])
        turn(table, p)
    expect(table[a].locator("#clock-phase")).to_have_text(EN["phase.final-rounds"])
    turn(table, a)  # no conquest in a final round: a roll is owed
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "ci.awaiting_roll", player=a, n=4))
    final_roll(table, a, (6, 6))
    if tv is not None:
        expect(tv.locator("#final-roll-result")).to_have_text(
            text(EN, "clock.final_roll_goes_on", player=a, dice="6 + 6", total=12, n=4))
    turn(table, b)
    final_roll(table, b, (1, 2))
    table.wait_all()
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "ci.ended_roll", player=b))
    return ranking(table[a])


def play_to_an_objective(ev, table, who: int = 1) -> list[dict]:
    """The player of seat ``who`` records their secret objective (two cities they hold), and declares it
    completed in their own turn: the tap asks first; "no" changes nothing, "yes" ends the match."""
    players = table.players
    declarer = players[who]
    page = table[declarer]
    cities = owned(page, declarer)[:2]
    page.click("#ci-obj-form summary")
    for c in cities:
        page.check(f"#ci-obj-grid input[value='{c}']")
    act(page, "#ci-obj-send")
    expect(page.locator("#ci-objective li.held")).to_have_count(2)
    for p in players[:who]:
        turn(table, p)
    expect(page.locator("#ci-objective-done")).to_be_visible()
    n = act(page, "#ci-objective-declare", confirm=False)  # asked first: "no" records nothing
    assert seq(page) == n
    act(page, "#ci-objective-declare", confirm=True)
    table.wait_all()
    for p in players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "ci.ended_objective", player=declarer))
    places = ranking(page)
    assert places[0] == {"player": declarer, "place": 1, "objective": True}
    return places


def test_a_conquest_tournament_evening(browser, server, artifacts_dir):
    ev = Evening(browser, server, artifacts=artifacts_dir)
    ev.add_roster(ROSTER)
    ev.new_tournament("Coppa d'Italia", "conquest-italy", ROSTER, clock_minutes=MINUTES)
    ev.lap("roster and tournament")
    played = []
    for n in (1, 2):
        tables = ev.seat(n)
        ev.start(n)
        expect(ev.org.locator(".toast").last).to_contain_text(EN["tday.armed"])
        ev.cards(n)
        for t in tables:
            ev.sit(t)
        tv = ev.tv(tables[0])
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.setup"])
        # the room screen: every table setting up, its clock waiting for the set-up
        ev.org.goto("/tournament")
        for t in tables:
            card = ev.org.locator(f".table-card[data-id='{t.match_id}']")
            expect(card.locator(".table-phase")).to_have_text(
                EN["tournament.setting_up"] + " · " + EN["gphase.conquest-italy.deal"])
            expect(card.locator(".table-turn")).to_have_text(text(EN, "tournament.clock_waits", n=MINUTES))
        ev.shot(ev.org, f"conquest-room-setting-up-{n}", full_page=True)
        ev.lap(f"round {n} seated, started, phones, TV")
        for t in tables:
            set_up(ev, t)
        ev.lap(f"round {n} set up")
        if n == 1:
            played.append(play_to_the_final_rolls(ev, tables[0]))
            ev.lap("round 1 table 1: time-up to the final rolls")
            played.append(play_to_an_objective(ev, tables[1]))
        else:
            played.append(play_to_an_objective(ev, tables[0], who=2))
            played.append(play_to_an_objective(ev, tables[1], who=0))
        ev.lap(f"round {n} played")
        tv_end(ev, tables[0], "conquest-italy", played[-2])
        ev.shot(tv, f"conquest-tv-end-{n}")
        check_standings(ev, played)
        ev.lap(f"round {n} standings")
    ev.shot(ev.org, "conquest-standings", full_page=True)
    assert ev.errors() == []
