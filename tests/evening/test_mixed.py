"""A mixed club night: a conquest table and a Richelieu table (with the clock) made on the new-match page and
started with one "Start the round" on the tables page. The Richelieu clock starts at once; the conquest table
sets up on its phones and its clock starts when its own set-up is done
(docs/rulings.md#the-clock-of-a-tournament-round); the room screen says so for each; at the conquest table a
placement is tapped on another player's phone, the placer's phone says so and undoes it, and the organiser sets
the match to each phone plays its own seat, which refuses the next such tap (docs/rulings.md#playing-for-another-seat);
both are played to their end on the seated phones; the home page lists both as ended."""

import pytest

from tests.engines import expect

from tests.evening.kit import EN, Evening, text
from tests.evening.test_conquest import play_to_an_objective, set_up
from tests.evening.test_richelieu import play_richelieu

pytestmark = pytest.mark.browser
ENGINES = ("chromium", "webkit")  # (tests/engines.py)

ROSTER = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo"]


def test_a_conquest_and_a_richelieu_table_started_with_one_tap(browser, server, artifacts_dir):
    ev = Evening(browser, server, artifacts=artifacts_dir)
    ev.add_roster(ROSTER)
    conquest = ev.new_match("conquest-italy", "Table 1", ROSTER[:3])
    richelieu = ev.new_match("richelieu", "Table 2", ROSTER[3:], clock=True)
    ev.lap("roster and two matches")
    org = ev.org
    org.goto("/tournament")
    expect(org.locator(f".table-card[data-id='{richelieu.match_id}']")).to_be_visible()
    org.click("#start-round")
    toast = org.locator(".toast").last
    expect(toast).to_contain_text(EN["tournament.started_n.one"].replace("{n}", "1"))
    expect(toast).to_contain_text(EN["tournament.armed_n.one"].replace("{n}", "1"))
    card = org.locator(f".table-card[data-id='{conquest.match_id}']")
    expect(card.locator(".table-phase")).to_have_text(EN["tournament.setting_up"] + " · " + EN["gphase.conquest-italy.deal"])
    expect(card.locator(".table-turn")).to_have_text(text(EN, "tournament.clock_waits", n=120))
    other = org.locator(f".table-card[data-id='{richelieu.match_id}']")
    expect(other.locator(".table-phase")).to_have_text(EN["phase.regular"])
    ev.shot(org, "mixed-room-started", full_page=True)
    ev.room_cards()
    for t in (conquest, richelieu):
        ev.sit(t)
    ev.tv(conquest)
    ev.lap("started, cards, phones")
    set_up(ev, conquest, minutes=120, helped=True)
    conquest_places = play_to_an_objective(ev, conquest)
    ev.lap("conquest played")
    richelieu_places = play_richelieu(ev, richelieu, bonus_to=0)
    ev.lap("richelieu played")
    org.goto("/tournament")
    expect(org.locator("#tables")).to_contain_text(EN["home.none_open"])
    org.goto("/")
    for t, places in ((conquest, conquest_places), (richelieu, richelieu_places)):
        item = org.locator(f"#recent-matches li[data-id='{t.match_id}']")
        expect(item).to_contain_text(EN["status.ended"])
    assert conquest_places[0]["objective"] and richelieu_places[0]["place"] == 1
    assert ev.errors() == []
