"""Web of Power at a phone's size (390x844), in headless Chromium: on the installed template board (alliances
1-13 unknown, no roads) the final scoring names no winner, says what is missing and takes the missing parts
by hand, then names the winner (docs/rulings.md, "Web of Power: incomplete scoring"); the board's notice is said
there, once, with a link to the board editor (never during play, nor once ended); each scoring row says why its
place is worth its points; the "now" column says it is points, and nothing is ranked before the end; warnings
show their turn, the current turn's apart from the earlier ones. English and Italian."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.test_ui_review import CHECKS
from tests.browser.trackers_kit import Api, joined_page, open_match, seq, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]
COLOURS = {"Anna": "#d62728", "Bruno": "#1f77b4", "Carla": "#2ca02c"}
PHONE = {"width": 390, "height": 844}


def phone(new_context, server, locale="en-GB"):
    return joined_page(new_context, server, locale=locale, viewport=PHONE)


def create(api):
    return api.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS, "colours": COLOURS})["id"]


def fits(page):
    """Nothing wider than the phone's screen."""
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_no_winner_until_the_missing_parts_are_entered_by_hand(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = create(api)
    # Anna: 4 monasteries, the most councillors in England and Franken; Bruno 4 monasteries; Carla 1
    for data in ({"player": "Anna", "piece": "monastery", "country": "England", "count": 2},
                 {"player": "Anna", "piece": "monastery", "country": "Franken", "count": 2},
                 {"player": "Anna", "piece": "councillor", "country": "England"},
                 {"player": "Anna", "piece": "councillor", "country": "Franken"},
                 {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 2},
                 {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 2},
                 {"player": "Bruno", "piece": "monastery", "country": "Franken"},
                 {"player": "Carla", "piece": "monastery", "country": "Italien"}):
        api.event(mid, "place", data)
    api.event(mid, "deck.out", {})
    page = open_match(phone(new_context, server), mid, seat="Anna")
    n = seq(page)
    expect(page.locator("#wop-turn")).to_be_visible()
    expect(page.locator("#wop-board-note")).to_be_hidden()  # during play the board's notice is not said
    page.once("dialog", lambda d: d.accept())  # it asks first
    page.click("#wop-deck-out")  # the deck runs out again: the final scoring
    wait_seq(page, n + 1)

    # no winner: the status says parts are missing, the page lists them and offers the form
    expect(page.locator("#wop-status")).to_have_text("Final scoring: parts are missing, no winner yet")
    expect(page.locator("#game-tracker")).not_to_contain_text("Game over")
    expect(page.locator("#wop-missing-alliances")).to_have_text(
        "Missing: 13 alliances, 1–13 (which two countries each joins)")
    expect(page.locator("#wop-missing-chains")).to_have_text("Missing: the chains of 2 players, Anna, Bruno")
    expect(page.locator(".wop-scoring[data-scoring=final] .wop-incomplete")).to_be_visible()
    expect(page.locator("#wop-provisional")).to_be_visible()
    expect(page.locator("#wop-totals tr.leader")).to_have_count(0)
    expect(page.locator("#wop-hand .wop-al")).to_have_count(13)
    expect(page.locator("#wop-turn")).to_be_hidden()
    expect(page.locator("#wop-deck")).to_be_hidden()
    # the board's notice, here and only here, with the board editor for a club that wants its whole board
    note = page.locator("#wop-board-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("Board: Web of Power: transcription template (incomplete, not the full board).")
    assert page.evaluate("document.body.innerText.split('transcription template').length - 1") == 1  # said once
    expect(page.locator("#wop-board-editor")).to_have_attribute("href", "/boards")
    expect(page.locator("#wop-board-editor")).to_have_text("A club can transcribe its whole board in the board editor.")
    fits(page)
    page.locator("#wop-hand").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "wop-scoring-missing-390.png"))
    page.screenshot(path=str(artifacts_dir / "wop-scoring-missing-390-full.png"), full_page=True)
    page.locator("#wop-hand").screenshot(path=str(artifacts_dir / "wop-scoring-form-390.png"))
    page.locator("#scores").screenshot(path=str(artifacts_dir / "wop-scoring-scores-390.png"))

    # nothing entered: a sentence, no event
    page.click("#wop-hand-finish")
    expect(page.locator(".toast").last).to_contain_text("Enter at least one missing part.")
    assert seq(page) == n + 1

    # a part of it: alliance 1 joins England and Franken (Anna leads both); still no winner
    al1 = page.locator(".wop-al[data-number='1']")
    al1.locator(".wop-al-how").select_option("countries")
    al1.locator(".wop-al-a").select_option("England")
    al1.locator(".wop-al-b").select_option("Franken")
    page.click("#wop-hand-finish")
    wait_seq(page, n + 2)
    expect(page.locator("#wop-missing-alliances")).to_have_text(
        "Missing: 12 alliances, 2–13 (which two countries each joins)")
    expect(page.locator("#wop-status")).to_have_text("Final scoring: parts are missing, no winner yet")

    # another phone enters Bruno's chains (none) while this one has started typing: what is typed stays
    page.locator(".wop-al[data-number='3'] .wop-al-how").select_option("nobody")
    api.event(mid, "scoring.hand", {"chains": {"Bruno": []}})
    wait_seq(page, n + 3)
    expect(page.locator("#wop-missing-chains")).to_have_text("Missing: Anna's chains")
    expect(page.locator("#wop-hand-chains input")).to_have_count(1)
    expect(page.locator(".wop-al[data-number='3'] .wop-al-how")).to_have_value("nobody")

    # the rest: alliance 2 scored by Anna (counted at the table), the others by nobody; Anna's chain
    al2 = page.locator(".wop-al[data-number='2']")
    al2.locator(".wop-al-how").select_option("players")
    expect(al2.locator(".wop-al-player")).to_have_count(1)  # only Anna leads in two countries
    al2.locator(".wop-al-player[value=Anna]").check()
    al2.locator(".wop-al-points").fill("2")
    al2.screenshot(path=str(artifacts_dir / "wop-scoring-alliance-by-players-390.png"))
    found = page.evaluate(CHECKS)  # the review every page passes: nothing too wide, too small or too faint
    assert found == {"overflow": [], "small": [], "contrast": []}, found
    for k in range(3, 14):
        page.locator(f".wop-al[data-number='{k}'] .wop-al-how").select_option("nobody")
    page.fill("#wop-hand-chains input[data-player=Anna]", "4")
    page.click("#wop-hand-finish")
    wait_seq(page, n + 4)

    f = org.engine(mid)
    assert f.ended()
    summ = f.view()["summary"]
    assert summ["winners"] == ["Anna"]
    expect(page.locator("#wop-status")).to_have_text("Game over: Anna won")
    expect(page.locator("#wop-hand")).to_be_hidden()
    expect(page.locator("#wop-board-note")).to_be_hidden()  # a finished match says no more of it
    anna = next(r for r in summ["scores"]["final"]["players"] if r["player"] == "Anna")
    expect(page.locator("#wop-totals tr[data-player=Anna] td[data-col=final]")).to_have_text(str(anna["total"]))
    lines = page.locator(".wop-scoring[data-scoring=final] details[data-player=Anna] li")
    page.locator(".wop-scoring[data-scoring=final] details[data-player=Anna] summary").click()
    expect(lines.filter(has_text="Alliance 1 (England + Franken, entered by hand) → 2")).to_have_count(1)
    expect(lines.filter(has_text="Alliance 2 (entered by hand) → 2")).to_have_count(1)
    expect(lines.filter(has_text="Chain of 4 monasteries → 4")).to_have_count(1)
    # why each place is worth its points: the first the country's total, the others the count above them
    expect(lines.filter(has_text="Franken: 2 monasteries, 3 in all → first place 3")).to_have_count(1)
    bruno = page.locator(".wop-scoring[data-scoring=final] details[data-player=Bruno]")
    bruno.locator("summary").click()
    expect(bruno.locator("li")).to_have_text(["Franken: 1 monastery, the place above has 2 → second place 2",
                                              "Bayern: 4 monasteries, 4 in all → first place 4"])
    expect(page.locator(".wop-incomplete")).to_have_count(0)
    # one and more: "1 point", "1 monastery", "12 points"
    carla = page.locator(".wop-scoring[data-scoring=final] details[data-player=Carla]")
    expect(carla.locator("summary")).to_contain_text("Carla · 1 point")
    expect(carla.locator("summary")).not_to_contain_text("points")
    carla.locator("summary").click()
    expect(carla.locator("li")).to_have_text(["Italien: 1 monastery, 1 in all → first place 1"])
    expect(page.locator(".wop-scoring[data-scoring=final] details[data-player=Anna] summary")).to_contain_text(
        f"Anna · {anna['total']} points")
    expect(page.locator("#wop-totals tr.leader[data-player=Anna]")).to_have_count(1)
    # ended: the final ranking's places
    expect(page.locator("#wop-totals thead th").first).to_have_text("#")
    expect(page.locator("#wop-totals tr[data-player=Anna] td.trk-place")).to_have_text("1")
    # the history says what was entered by hand
    expect(page.locator("#history")).to_contain_text("Final scoring, entered by hand: alliance 2 scored by Anna, 2 points")
    fits(page)
    page.screenshot(path=str(artifacts_dir / "wop-scoring-complete-390.png"), full_page=True)
    page.locator("#wop-root").screenshot(path=str(artifacts_dir / "wop-scoring-complete-tracker-390.png"))
    assert page.errors == []


def test_the_scoring_step_in_italian(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    mid = create(api)
    for data in ({"player": "Anna", "piece": "monastery", "country": "England", "count": 2},
                 {"player": "Anna", "piece": "monastery", "country": "England", "count": 2},
                 {"player": "Anna", "piece": "councillor", "country": "England"},
                 {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 1}):
        api.event(mid, "place", data)
    api.event(mid, "deck.out", {})
    api.event(mid, "deck.out", {})
    page = open_match(phone(new_context, server, locale="it-IT"), mid)
    # nobody leads in two countries: no alliance is missing, only Anna's chains (one player)
    expect(page.locator("#wop-status")).to_have_text("Conteggio finale: mancano delle parti, ancora nessun vincitore")
    expect(page.locator("#wop-missing-chains")).to_have_text("Mancano: le catene di Anna")
    expect(page.locator("#wop-missing-alliances")).to_have_count(0)
    expect(page.locator("#wop-hand h3")).to_have_text("Completa il conteggio finale")
    # the board's notice in Italian, the shipped board's name too
    expect(page.locator("#wop-board-note")).to_contain_text(
        "Tabellone: Web of Power: modello di trascrizione")
    expect(page.locator("#wop-board-note")).not_to_contain_text("TEMPLATE")
    expect(page.locator("#wop-board-editor")).to_have_text(
        "Un club può trascrivere il suo tabellone completo nell'editor dei tabelloni.")
    fits(page)
    page.locator("#wop-hand").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / "wop-scoring-missing-390-it.png"))
    page.fill("#wop-hand-chains input[data-player=Anna]", "3")
    page.click("#wop-hand-finish")
    expect(page.locator(".toast").last).to_contain_text("Anna: ogni catena ha almeno 4 monasteri")
    n = seq(page)
    page.fill("#wop-hand-chains input[data-player=Anna]", "4")
    page.click("#wop-hand-finish")
    wait_seq(page, n + 1)
    expect(page.locator("#wop-status")).to_have_text("Partita finita: ha vinto Anna")
    bruno = page.locator(".wop-scoring[data-scoring=final] details[data-player=Bruno]")
    expect(bruno.locator("summary")).to_contain_text("Bruno · 1 punto")
    bruno.locator("summary").click()
    expect(bruno.locator("li")).to_have_text(["Bayern: 1 monastero, 1 in tutto → primo posto 1"])
    assert page.errors == []


@pytest.mark.parametrize("locale, header, note, player_head", [
    ("en-GB", "Now (points)", "Points, not pieces.", "Player"),
    ("it-IT", "Ora (punti)", "Punti, non pedine.", "Giocatore"),
])
def test_the_now_column_says_it_is_points(new_context, server, tokens, artifacts_dir, locale, header, note,  # noqa: F811
                                          player_head):
    api = Api(server, tokens["player"])
    mid = create(api)
    # one monastery each in England: each scores the country's 3 (a three-way tie for the most)
    for p in PLAYERS:
        api.event(mid, "place", {"player": p, "piece": "monastery", "country": "England"})
    page = open_match(phone(new_context, server, locale=locale), mid)
    expect(page.locator("#wop-totals thead th").last).to_have_text(header)
    # no rank during play: the official totals are all 0 before a scoring (every player "#1" said nothing)
    expect(page.locator("#wop-totals thead th").first).to_have_text(player_head)
    expect(page.locator("#wop-totals td.trk-place")).to_have_count(0)
    expect(page.locator("#wop-totals tbody tr")).to_have_count(3)
    assert page.eval_on_selector_all("#wop-totals tbody tr", "trs => trs.map(tr => tr.dataset.player)") == PLAYERS
    expect(page.locator("#wop-totals tr[data-player=Anna] td[data-col=now]")).to_have_text("3")
    expect(page.locator("#wop-now-note")).to_contain_text(note)
    fits(page)
    # the whole table is on the screen: the points column is not scrolled away
    assert page.evaluate("(() => { const t = document.getElementById('wop-totals');"
                         " return t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1; })()")
    page.locator("#scores").screenshot(path=str(artifacts_dir / f"wop-now-column-390-{locale}.png"))
    assert page.errors == []


@pytest.mark.parametrize("locale, earlier_1, earlier_2, first, second", [
    ("en-GB", "1 earlier warning", "2 earlier warnings",
     "Turn 1 · England had no monastery: at most 1 monastery there this turn",
     "Turn 2 · Carla played out of turn: it was Bruno's turn"),
    ("it-IT", "1 avviso precedente", "2 avvisi precedenti",
     "Turno 1 · England non aveva monasteri: in questo turno lì al massimo 1 monastero",
     "Turno 2 · Carla ha giocato fuori turno: toccava a Bruno"),
])
def test_warnings_show_their_turn_and_the_current_ones_apart(new_context, server, tokens, artifacts_dir,  # noqa: F811
                                                             locale, earlier_1, earlier_2, first, second):
    api = Api(server, tokens["player"])
    mid = create(api)
    page = open_match(phone(new_context, server, locale=locale), mid)
    # turn 1: Anna puts two monasteries into an empty country (one allowed)
    api.event(mid, "place", {"player": "Anna", "piece": "monastery", "country": "England", "count": 2})
    wait_seq(page, 1)
    expect(page.locator("#wop-warnings li")).to_have_count(1)
    expect(page.locator("#wop-warnings li").first).to_have_attribute("data-turn", "1")
    expect(page.locator("#wop-warnings li").first).to_have_text(first)
    expect(page.locator("#wop-warnings-old")).to_be_hidden()
    api.event(mid, "turn.end", {})
    # turn 2: Carla plays out of turn (it was Bruno's): turn 1's warning is now an earlier one
    api.event(mid, "place", {"player": "Carla", "piece": "monastery", "country": "Franken"})
    wait_seq(page, 3)
    expect(page.locator("#wop-warnings li")).to_have_count(1)
    expect(page.locator("#wop-warnings li").first).to_have_text(second)
    expect(page.locator("#wop-warnings-old-title")).to_have_text(earlier_1)
    api.event(mid, "turn.end", {})
    # turn 3: a legal placement: no current warning, both earlier, newest first
    api.event(mid, "place", {"player": "Anna", "piece": "monastery", "country": "England"})
    wait_seq(page, 5)
    expect(page.locator("#wop-warnings li")).to_have_count(0)
    expect(page.locator("#wop-warnings-old-title")).to_have_text(earlier_2)
    page.click("#wop-warnings-old-title")
    expect(page.locator("#wop-warnings-old-list li")).to_have_text([second, first])
    fits(page)
    page.locator("#wop-turn").screenshot(path=str(artifacts_dir / f"wop-warnings-390-{locale}.png"))
    assert page.errors == []
