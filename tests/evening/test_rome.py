"""A Rome Is Burning tournament evening: 6 roster players, 2 tables of 3, 2 rounds, each match played through
its 7 turns on the seated phones (the Pi deals each turn; each player moves on their own phone with the die
rolled at the table, the Pi's roll for some moves; steals; a tied election decided by the old emperor; each
turn scored), the TV of table 1 open; the standings against the places the totals give."""

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, Evening, check_standings, text, texts_at, tv_end, wait_seq

pytestmark = pytest.mark.browser

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]
RING = 12


def best_move(state, mover):
    """The table's choice: a die and a direction that land on cards, if any (else 1 clockwise)."""
    pos = state["positions"][mover]
    for d in range(1, 7):
        for direction, sign in (("cw", 1), ("ccw", -1)):
            if state["spaces"][(pos + sign * d) % RING]:
                return d, direction
    return 1, "cw"


def totals(page) -> dict[str, int]:
    rows = page.eval_on_selector_all("#rb-totals tbody tr",
                                     "trs => trs.map(tr => [tr.dataset.player, tr.querySelector('td.score').textContent])")
    return {p: int(v) for p, v in rows}


def places_from(tot: dict[str, int]) -> list[dict]:
    """Places by total, equal totals sharing (1, 2, 2, 4): what the totals on the phone say."""
    return [{"player": p, "place": 1 + sum(1 for q in tot.values() if q > v)} for p, v in tot.items()]


def play_rome(ev, table, pi_rolls: int = 2) -> list[dict]:
    """The match to its end: each step tapped on the phone whose step it is, once that phone shows the
    table's last event; the match read from the phone that tapped last (its answer: the stored event)."""
    first = table.players[0]
    watch = table[first]
    turn_no, rolled = 1, 0
    v = table.view()
    while True:
        s, sm = v["state"], v["summary"]
        if s["phase"] == "ended":
            break
        if s["phase"] == "setup":
            assert texts_at(watch, v["seq"], "#rb-status") == [text(EN, "rb.status_setup", n=s["turn"], of=7)]
            v = table.act_view(first, "#rb-deal-pi", n=v["seq"])
        elif s["phase"] == "election":
            # the old emperor (or the table, on turn 1) decides the tie, on the first phone
            wait_seq(watch, v["seq"])
            expect(watch.locator("#rb-election")).to_be_visible()
            v = table.act_view(first, "#rb-candidates button >> nth=0", n=v["seq"])
        elif sm.get("steal"):
            who = sm["steal"]["player"]  # the mover draws a card from a pawn on the same space
            wait_seq(table[who], v["seq"])
            v = table.act_view(who, "#rb-steal-send", n=v["seq"])
        elif sm.get("to_move") is None:  # every card taken: the turn is scored
            assert texts_at(watch, v["seq"], "#rb-status") == [text(EN, "rb.status_score", n=s["turn"])]
            v = table.act_view(first, "#rb-score", n=v["seq"])
            turn_no += 1
        else:
            mover = sm["to_move"]
            page = table[mover]
            assert texts_at(page, v["seq"], "#rb-status") == [text(EN, "rb.status_move", n=s["turn"], player=mover)]
            if rolled < pi_rolls and s["turn"] >= 2:
                rolled += 1
                v = table.act_view(mover, "#rb-roll-cw", n=v["seq"])  # the Pi rolls the die
            else:
                d, direction = best_move(s, mover)
                page.fill("#rb-die", str(d))
                v = table.act_view(mover, f"#rb-move-{direction}", n=v["seq"])
    table.wait_all()
    tot = totals(watch)
    assert tot == v["state"]["totals"]
    winners = [p for p, x in tot.items() if x == max(tot.values())]
    for p in table.players:
        expect(table[p].locator("#rb-status")).to_have_text(text(EN, "rb.ended", players=", ".join(v["state"]["winners"])))
        assert totals(table[p]) == tot
    assert sorted(v["state"]["winners"]) == sorted(winners)
    return places_from(tot)


def test_a_rome_is_burning_tournament_evening(browser, server, artifacts_dir):
    ev = Evening(browser, server, artifacts=artifacts_dir)
    ev.add_roster(ROSTER)
    ev.new_tournament("Coppa di Roma", "rome-is-burning", ROSTER)
    ev.lap("roster and tournament")
    played = []
    for n in (1, 2):
        tables = ev.seat(n)
        ev.start(n)
        ev.cards(n)
        for t in tables:
            ev.sit(t)
        tv = ev.tv(tables[0])
        ev.lap(f"round {n} seated, started, phones, TV")
        for t in tables:
            played.append(play_rome(ev, t))
            ev.lap(f"round {n} table {t.number} played")
        tv_end(ev, tables[0], "rome-is-burning", played[-2])
        if n == 2:  # (round 1's end screen looks the same)
            ev.shot(tv, f"rome-tv-end-{n}")
        check_standings(ev, played)
    ev.shot(ev.org, "rome-standings", full_page=True)
    assert ev.errors() == []
