"""A conquest tournament evening: 6 roster players, 2 tables of 3, 2 rounds with a 2-minute clock, played
through the organiser's pages and the seated phones. Each table sets up on its phones (the Pi deals, every
unit placed) and its clock starts when its own set-up is done
(docs/rulings.md#the-clock-of-a-tournament-round); round 1's table 1 binds its smart dice on the dice page and rolls a combat with them (MockDice: the
phone and the TV show each face, the box records it), then plays to the time-up, the finishing round, the
last lap and the final rolls (one roll goes on, one ends the match), table 2 ends by an objective declared on a phone (it asks first); the
TV of table 1 is open the whole time; round 2 is seated by the standings and played: table 1 to an
objective, table 2's phones die after a turn and the organiser enters its places (the objective and an
elimination among them); the standings are checked against the places the phones showed."""

import pytest

from tests.engines import expect

from tests.evening.kit import (EN, Evening, check_standings, seq, shown_at, text, texts_at, tv_end, tv_fits, view_at,
                               wait_seq)

pytestmark = pytest.mark.browser
ENGINES = ("chromium", "webkit")  # (tests/engines.py: the one kit, the engine a parameter)

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]
MINUTES = 2


def owned(page, player: str) -> list[str]:
    """The cities ``player`` holds, as the phone's territories table lists them (map order)."""
    state = page.evaluate("window.companionMatch.view.state")
    return [c for c, p in state["owner"].items() if p == player]


def set_up(ev, table, minutes: int = MINUTES, helped: bool = False) -> None:
    """The table's set-up on its phones: the Pi deals from the first phone, then each player places their
    units on their own phone, 5 at a time, as the status line says; the clock waits, then starts by itself.
    ``helped``: first a placement tapped on another player's phone, taken back from the placer's, and the match
    set to each phone plays its own seat (:func:`helped_then_own_seat`)."""
    first = table.players[0]
    page = table[first]
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(
            text(EN, "ci.phase_deal") + " · " + text(EN, "ci.clock_armed", n=minutes))
    table.act(first, "#ci-deal-pi")
    if helped:
        helped_then_own_seat(ev, table)
    v = table.view()
    while v["state"]["phase"] == "place":
        # each placement read from the phone that made it; the next placer's phone shows it before its tap
        placer, due = v["summary"]["next_placer"], v["summary"]["placement_due"]
        phone = table[placer]
        want = EN[f"ci.phase_place.{'one' if due == 1 else 'other'}"].replace("{player}", placer).replace("{n}", str(due))
        assert texts_at(phone, v["seq"], "#ci-status") == [want + " · " + text(EN, "ci.clock_armed", n=minutes)]
        phone.locator("#ci-place-list .ci-place-row .ci-rest").first.click()
        v = view_at(phone, v["seq"] + 1)
        table.seq = max(table.seq, v["seq"])
    # the last placement started this table's clock: the first seat's turn, the tournament's minutes
    for p in table.players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "clock.turn", player=first))
        expect(table[p].locator("#history li").first).to_contain_text(text(EN, "ci.ev_clock_start", n=minutes))
    v = table.view()
    assert v["phase"] == "regular" and v["clock"]["running"] and v["clock"]["limit_seconds"] == minutes * 60


def helped_then_own_seat(ev, table) -> None:
    """Helping at the table (docs/rulings.md#playing-for-another-seat): the placement due is tapped on another
    player's phone; the placer's phone, and no other, says so in words over its page, and its Undo takes the
    placement back; the history says from whose phone it came. Then the organiser sets the match to "each
    phone plays its own seat" on the match page: every phone of the table says so, and the same control on the
    helper's phone is disabled with the reason in words (live again while helping is allowed), nothing recorded."""
    v = table.view()
    placer, due = v["summary"]["next_placer"], v["summary"]["placement_due"]
    helper = next(p for p in table.players if p != placer)
    other = next(p for p in table.players if p not in (placer, helper))
    hp, pp = table[helper], table[placer]
    n = table.sync(helper)
    row = hp.locator("#ci-place-list .ci-place-row").first
    city = row.get_attribute("data-city")
    n = table.act(helper, f"#ci-place-list .ci-place-row[data-city='{city}'] .ci-rest", n=n)
    what = text(EN, "ci.ev_place", player=placer) + f": {city} +{due}"
    notice = pp.locator("#helped")
    expect(pp.locator("#helped-text")).to_have_text(text(EN, "helped.by_seat", seat=helper, what=what))
    expect(pp.locator("#helped-undo")).to_be_visible()
    # over the top of the page (fixed: nothing under a finger moves), within the phone's width
    box = pp.evaluate("""() => { const r = document.getElementById('helped').getBoundingClientRect();
        return [r.top, r.left, r.right, innerWidth, getComputedStyle(document.getElementById('helped')).position]; }""")
    assert box[0] >= 0 and box[1] >= 0 and box[2] <= box[3] and box[4] == "fixed", box
    ev.shot(pp, "helped-notice")
    for p in (helper, other):
        wait_seq(table[p], n)
        expect(table[p].locator("#helped")).to_be_hidden()
        expect(table[p].locator("#history li").first).to_contain_text(
            what + " — " + text(EN, "match.from_phone", seat=helper))
    pp.click("#helped-undo")
    n = table.seq = wait_seq(pp, n + 1)
    expect(notice).to_be_hidden()
    expect(pp.locator("#history li").first).to_contain_text(text(EN, "ci.ev_undo_of", what=what))
    expect(pp.locator(f"#history li[data-seq='{n - 1}']")).to_have_class("undone")
    after = view_at(hp, n)
    assert after["state"]["units"] == v["state"]["units"] and after["summary"]["next_placer"] == placer
    # the organiser: each phone plays its own seat, on the match page
    org = ev.org
    org.goto(f"/m/{table.match_id}")
    choice = org.locator("#phones-rule-set input[value='own-seat']")
    expect(org.locator("#phones-rule-set input[value='any-seat']")).to_be_checked()
    choice.check()
    expect(org.locator("#toast")).to_have_text(EN["phones.saved_own"])
    if ev.artifacts is not None:
        org.locator("#phones-rule-set").screenshot(path=str(ev.artifacts / "evening-phones-rule.png"))
    for p in table.players:  # (told live, over the match's stream)
        expect(table[p].locator("#phones-rule")).to_have_text(EN["phones.own_seat_note"])
    # the helper's phone: the placement is disabled where it is, the reason said on its title line; the
    # placer's phone and the organiser's keep it live
    rest = f"#ci-place-list .ci-place-row[data-city='{city}'] .ci-rest"
    expect(hp.locator(rest)).to_be_disabled()
    expect(hp.locator("#ci-place-title")).to_contain_text(" · " + text(EN, "ci.own_seat_other", player=placer))
    expect(pp.locator(rest)).to_be_enabled()
    expect(pp.locator("#ci-place-title")).not_to_contain_text(text(EN, "ci.own_seat_other", player=placer))
    expect(org.locator(rest)).to_be_enabled()
    assert seq(hp) == n and view_at(pp, n)["seq"] == n
    org.reload()  # (drawn by the box as it is now)
    expect(choice).to_be_checked()
    # helping allowed again for a moment: the helper's phone has it live at once (over the stream), then back
    org.locator("#phones-rule-set input[value='any-seat']").check()
    expect(hp.locator(rest)).to_be_enabled()
    expect(hp.locator("#ci-place-title")).not_to_contain_text(text(EN, "ci.own_seat_other", player=placer))
    choice.check()
    expect(hp.locator(rest)).to_be_disabled()
    ev.lap(f"table {table.number} helped, undone, own seat, refused (and what came before in its round)")


def turn(table, player: str, conquered_note: bool = False, dice=None) -> None:
    """``player``'s turn on their phone: every reinforcement on their first city, then the end of the turn;
    with ``dice`` (the table's smart dice bound), a combat rolled with them in between."""
    page = table[player]
    n, step = shown_at(page, table.seq, "#ci-step")
    assert step == [text(EN, "ci.step_reinforce", player=player)]
    if dice is None:
        page.locator("#ci-reinforce-list .trk-step button[title]").first.click()
    else:  # the reinforcements on a city that borders a rival's: the combat comes from there
        page.locator(f"#ci-reinforce-list .trk-step[data-city='{front(page, player)}'] button[title]").click()
    n = table.act(player, "#ci-reinforce-send", n=n)
    if dice is not None:
        smart_combat(table, player, dice)
        n = None
    table.act(player, "#ci-turn-end", n=n)


def front(page, player: str) -> str:
    """A city of ``player`` with a land border to a rival's (the match's map, as the phone reads it)."""
    mid = page.evaluate("window.companionMatch.id")
    cities = page.request.get(f"/api/matches/{mid}/conquest/map").json()["cities"]
    owner = page.evaluate("window.companionMatch.view.state.owner")
    return next(c["name"] for c in cities if owner[c["name"]] == player and any(owner[n] != player for n in c["land"]))


def bind_dice(ev, table):
    """The organiser binds the table's smart dice on the dice page: three for the attacker (Rosso), three for
    the defender (Blu), the set serving the table's match (docs/dice.md). Returns the dice."""
    from tests.dicekit import MockDie

    red = [MockDie(0x501 + i, f"Rosso {i + 1}") for i in range(3)]
    blue = [MockDie(0x601 + i, f"Blu {i + 1}", colorway=4) for i in range(3)]
    for d in red + blue:
        ev.server.dice.lie(d, 1)
    org = ev.org
    org.goto("/dice")
    expect(org.locator("#dice-heard tbody tr")).to_have_count(6)
    org.click("#dice-new")
    card = org.locator(".dice-set").first
    expect(card).to_be_visible()
    for side, dice in (("attack", red), ("defend", blue)):
        for i, d in enumerate(dice):
            card.locator(f"select[data-slot='{side}{i}']").select_option(d.id)
    card.locator(".dice-set-match").select_option(table.match_id)
    card.locator("[data-save]").click()
    expect(org.locator(f"#dice-heard tbody tr[data-die='{blue[2].id}'] td").last).not_to_have_text("")
    return red, blue


def smart_combat(table, player: str, dice) -> None:
    """A combat rolled with the table's smart dice: the attack tapped on the phone, the dice (MockDice) roll
    and land, the phone and the TV show each face, the box records the combat with those faces (the attacker
    rolls ones, the defender sixes: no city changes hands)."""
    red, blue, kit = dice
    page = table[player]
    expect(page.locator("input[name=ci-dice-mode][value=smart]")).to_be_checked()
    src = front(page, player)
    page.locator(f"#ci-targets button[data-from='{src}']").first.click()
    n = seq(page)
    page.click("#ci-attack")
    expect(page.locator("#dice-live .dice-live-title")).to_have_text(EN["dice.waiting"])
    need = page.evaluate("window.CompanionDice.wait().need")
    for d in red[:need["attack"]]:
        kit.roll(d, 1)
    if table.tv is not None:
        expect(table.tv.locator(f"#dice-live .dice-chip[data-die='{red[0].id}'] .dice-chip-face")).to_have_text("1")
    for d in blue[:need["defend"]]:
        kit.roll(d, 6)
    table.seq = wait_seq(page, n + 1)
    last = page.evaluate("window.companionMatch.view.state.last_combat")
    assert last["attacker_dice"] == [1] * need["attack"] and last["defender_dice"] == [6] * need["defend"]
    assert not last["conquered"]
    expect(page.locator("#history li").first).to_contain_text(EN["dice.ev_read"])
    expect(page.locator("#dice-live .dice-live-title")).to_have_text(EN["dice.recorded"])


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
    red, blue = bind_dice(ev, table)
    turn(table, a, dice=(red, blue, ev.server.dice))  # one combat rolled with the table's smart dice
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
    if tv is not None:  # the roll owed on the TV, with the code to sit still within its screen
        expect(tv.locator("#tv-roll")).to_have_attribute("data-state", "owed")
        expect(tv.locator("#table-qr svg")).to_be_visible()
        tv_fits(table, "final rolls")
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
    table.act(declarer, "#ci-obj-send")
    expect(page.locator("#ci-objective li.held")).to_have_count(2)
    # the other phones see that the objective is recorded, in words (not a tick that reads as "completed"),
    # and never its cities
    for p in players:
        if p != declarer:
            table.sync(p)
            expect(table[p].locator(f"#ci-summary tr[data-player='{declarer}'] td[data-objective]")).to_have_text(
                EN["ci.objective_recorded"])
            assert declarer not in table[p].evaluate("Object.keys(window.companionMatch.view.state.objectives)")
    for p in players[:who]:
        turn(table, p)
    # (the declarer's phone shows the last turn's end before the taps: the "no" is then checked against it)
    n = table.sync(declarer)
    expect(page.locator("#ci-objective-done")).to_be_visible()
    n = table.act(declarer, "#ci-objective-declare", confirm=False, n=n)  # asked first: "no" records nothing
    assert seq(page) == n
    table.act(declarer, "#ci-objective-declare", confirm=True)
    table.wait_all()
    for p in players:
        expect(table[p].locator("#ci-status")).to_have_text(text(EN, "ci.ended_objective", player=declarer))
    places = ranking(page)
    assert places[0] == {"player": declarer, "place": 1, "objective": True}
    return places


def organiser_result(ev, table) -> list[dict]:
    """The table's phones die after a turn: the organiser enters its final places from the tournament page
    ("Enter the result", then the places with the objective and an elimination, saved after asking): the
    match ends as a correction marked in its history, on every phone (docs/rulings.md#the-organisers-result)."""
    a, b, c = table.players
    turn(table, a)
    org = ev.org
    ev.goto_tournament()
    org.click(f".tday-table a.tday-enter-result[href^='/m/{table.match_id}']")
    org.wait_for_url(f"**/m/{table.match_id}#result-correction")
    card = org.locator("#result-correction")
    expect(card).to_have_attribute("open", "")
    for p, place in ((a, 2), (b, 1), (c, 3)):
        card.locator(f"[data-player='{p}'][data-place='{place}']").click()
    card.locator(f"[data-player='{b}'][data-flag='objective']").click()
    card.locator(f"[data-player='{c}'][data-flag='eliminated']").click()
    n = seq(org)
    org.once("dialog", lambda d: d.accept())
    card.locator("#result-save").click()
    wait_seq(org, n + 1)
    expect(card).to_be_hidden()
    for p in table.players:
        page = table[p]
        wait_seq(page, n + 1)
        expect(page.locator("#result-by-hand")).to_have_text(EN["result.by_organiser"])
        expect(page.locator("#result-ranking tbody tr").first).to_contain_text(b)
        expect(page.locator("#history li").first).to_contain_text(EN["event.result.corrected"])
        expect(page.locator("#match-status")).to_have_text(EN["status.ended"])
    return [{"player": b, "place": 1, "objective": True}, {"player": a, "place": 2},
            {"player": c, "place": 3, "eliminated": True}]


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
        if n == 1:  # (round 2's room looks the same)
            ev.shot(ev.org, f"conquest-room-setting-up-{n}", full_page=True)
        ev.lap(f"round {n} seated, started, phones, TV")
        for t in tables:  # (a table that helps a player: the mixed evening's, in Chromium and WebKit)
            set_up(ev, t)
        ev.lap(f"round {n} set up")
        if n == 1:
            played.append(play_to_the_final_rolls(ev, tables[0]))
            ev.lap("round 1 table 1: time-up to the final rolls")
            played.append(play_to_an_objective(ev, tables[1]))
        else:
            played.append(play_to_an_objective(ev, tables[0], who=2))
            played.append(organiser_result(ev, tables[1]))
        ev.lap(f"round {n} played")
        tv_end(ev, tables[0], "conquest-italy", played[-2])
        ev.shot(tv, f"conquest-tv-end-{n}")
        check_standings(ev, played)
        ev.lap(f"round {n} standings")
    ev.shot(ev.org, "conquest-standings", full_page=True)
    assert ev.errors() == []
