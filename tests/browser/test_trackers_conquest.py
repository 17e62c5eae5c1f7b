"""The Conquest of Italy tracker in headless Chromium: a short scripted match played through the page
(deal by the Pi, set-up placements, secret objectives, clock, reinforcements, combat with the Pi's dice
and with table dice, undo, the one move, the turn's card, a correction, the objective declared), every
number shown checked against the engine's fold of the same events; the page offers only what the turn's
step allows (docs/rulings.md, "Conquest: the turn") and marks corrections in the history; the secret
objective shown on its owner's phone only; a stale phone gets the conflict message and the fresh state,
and its write is not applied."""

import pytest
from playwright.sync_api import expect

from tests.browser.trackers_kit import Api, joined_page, open_match, organiser_page, seq, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]


@pytest.fixture(scope="module")
def tokens(server):
    import subprocess
    import sys

    out = {}
    for role in ("player", "organiser"):
        p = subprocess.run([sys.executable, "-m", "companion", "token", "create", "--role", role,
                            "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        out[role] = p.stdout.strip().splitlines()[-1]
    return out


def summary_rows(page):
    """The players table the page shows: {player: [territories, units, regions, cards, reinf, conquests, obj]}."""
    rows = page.eval_on_selector_all(
        "#ci-summary tbody tr",
        "trs => trs.map(tr => [tr.dataset.player, ...Array.from(tr.querySelectorAll('td.num')).map(td => td.textContent)])")
    words = {"registrato": "recorded"}  # an Italian phone says the same
    return {r[0]: r[1:-1] + [words.get(r[-1], r[-1])] for r in rows}


def expected_rows(fold):
    s = fold.view()["summary"]
    out = {}
    for p in s["players"]:
        reinf = p["reinforcements"] if p["reinforcements"] is not None else p["reserve"]
        out[p["player"]] = [str(p["territories"]), str(p["units"]), ", ".join(p["regions"]) or "0", str(p["cards"]),
                            str(reinf), str(p["conquests"]), "recorded" if p["objective_set"] else "—"]
    return out


def check_scores(page, org, mid):
    f = org.engine(mid)
    wait_seq(page, f.last_seq)
    expect(page.locator("#seq")).to_have_text(str(f.last_seq))
    assert summary_rows(page) == expected_rows(f)
    return f


def step(page, selector, org, mid, pages=()):
    """Click, wait for this phone's write to be stored, then check every phone against the engine."""
    n = seq(page)
    page.click(selector)
    wait_seq(page, n + 1)
    f = check_scores(page, org, mid)
    for other in pages:
        check_scores(other, org, mid)
    return f


def test_a_scripted_conquest_match_through_the_page(new_context, server, tokens, artifacts_dir):
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("conquest-italy", PLAYERS)
    anna = open_match(joined_page(new_context, server), mid, seat="Anna")
    bruno = open_match(joined_page(new_context, server, locale="it-IT"), mid, seat="Bruno")

    # the Pi deals: 14 cities each, one unit on each
    f = step(anna, "#ci-deal-pi", org, mid, [bruno])
    owner = f.game_state["owner"]
    assert sorted(owner.values()).count("Anna") == 14

    # set-up placements, 5 at a time in seat order (the page tells whose turn and how many)
    while f.game_state["phase"] == "place":
        placer, due = f.game_state["next_placer"], min(5, f.game_state["reserve"][f.game_state["next_placer"]])
        expect(anna.locator("#ci-place-title")).to_contain_text(f"{placer} places {due}")
        expect(anna.locator("#ci-override")).to_be_hidden()  # the clock waits; only an organiser may override
        anna.locator("#ci-place-list .ci-place-row").first.locator(".ci-rest").click()  # the rest here: sent
        wait_seq(anna, f.last_seq + 1)
        f = org.engine(mid)
    check_scores(anna, org, mid)

    # secret objectives: Anna's has two of her cities and one of Bruno's; Bruno's one of Carla's
    mine = [c for c in owner if owner[c] == "Anna"][:2] + [c for c in owner if owner[c] == "Bruno"][:1]
    bruno_obj = [c for c in owner if owner[c] == "Carla"][-1]  # not held: incomplete
    for page, cities in ((anna, mine), (bruno, [bruno_obj])):
        page.click("#ci-obj-form summary")
        for c in cities:
            page.check(f"#ci-obj-grid input[value='{c}']")
        n = seq(page)
        page.click("#ci-obj-send")
        wait_seq(page, n + 1)
    wait_seq(anna, f.last_seq + 2)
    expect(anna.locator("#ci-objective li")).to_have_count(3)
    expect(anna.locator("#ci-objective li.held")).to_have_count(2)
    expect(bruno.locator("#ci-objective li")).to_have_count(1)
    # Bruno's phone knows nothing of Anna's objective: not in its state, not in its history, not in the API
    wait_seq(bruno, f.last_seq + 2)
    assert "Anna" not in bruno.evaluate("Object.keys(window.companionMatch.view.state.objectives)")
    doc = bruno.request.get(f"/api/matches/{mid}").json()
    assert list(doc["view"]["state"]["objectives"]) == ["Bruno"]
    events = bruno.request.get(f"/api/matches/{mid}/events").json()["events"]
    annas = [e for e in events if e["type"] == "objective.set" and e["data"].get("player") == "Anna"]
    assert annas and annas[0]["hidden"] and "cities" not in annas[0]["data"]
    assert bruno.request.get(f"/api/matches/{mid}/conquest/ranking").status == 409
    expect(bruno.locator("#history")).to_contain_text("Anna ha scelto un obiettivo segreto")
    check_scores(anna, org, mid)

    # the clock starts; Anna's turn: reinforcements as the engine computes them
    anna.fill("#ci-clock-minutes", "90")
    f = step(anna, "#ci-clock-start", org, mid)
    assert f.clock_state["limit_us"] == 90 * 60 * 10**6
    expect(anna.locator("#ci-status")).to_have_text("Anna's turn")
    # the turn begins with the reinforcements: nothing else is offered, and nobody else plays
    expect(anna.locator("#ci-step")).to_have_text("Anna: reinforcements first")
    expect(bruno.locator("#ci-step")).to_have_text("Anna: prima la ricarica")
    for page in (anna, bruno):
        expect(page.locator("#ci-reinforce")).to_be_visible()
        for hidden in ("#ci-combat", "#ci-move", "#ci-cards", "#ci-turn-end", "#ci-player-field"):
            expect(page.locator(hidden)).to_be_hidden()
    due = f.view()["summary"]["players"][0]["reinforcements"]
    expect(anna.locator("#ci-reinforce-calc")).to_contain_text(f"{due} units to place")
    from companion.games.conquest_map import default_map
    gm, own = default_map(), f.game_state["owner"]
    front = next(c for c in gm.cities if own[c] == "Anna" and any(own[n] != "Anna" for n in gm.neighbours[c]))
    anna.locator(f"#ci-reinforce-list .trk-step[data-city='{front}'] button[title]").click()
    expect(anna.locator("#ci-reinforce-send")).to_have_text(f"Place reinforcements {due} / {due}")
    f = step(anna, "#ci-reinforce-send", org, mid, [bruno])
    # reinforced: the combats, the move and the end of the turn; no second reinforcement, no card yet
    expect(anna.locator("#ci-reinforce")).to_be_hidden()
    for shown in ("#ci-combat", "#ci-move", "#ci-turn-end"):
        expect(anna.locator(shown)).to_be_visible()
    expect(anna.locator("#ci-cards")).to_be_hidden()
    anna.screenshot(path=str(artifacts_dir / "tracker-conquest-italy.png"), full_page=True)

    # no attack is chosen for the player: the lists say "choose", the attack button waits
    assert anna.input_value("#ci-from") == "" and anna.input_value("#ci-to") == ""
    expect(anna.locator("#ci-attack")).to_be_disabled()
    expect(anna.locator("#ci-targets button[aria-pressed=true]")).to_have_count(0)
    # a combat rolled by the Pi: the page shows the engine's dice and losses, and the odds
    anna.select_option("#ci-from", front)
    assert anna.input_value("#ci-to") == ""  # choosing where from chooses no target
    expect(anna.locator("#ci-attack")).to_be_disabled()
    anna.select_option("#ci-to", anna.locator("#ci-to option").nth(1).get_attribute("value"))
    expect(anna.locator("#ci-odds")).to_contain_text("conquest")
    src, dst = anna.input_value("#ci-from"), anna.input_value("#ci-to")
    from companion.games import conquest_odds
    p = conquest_odds.battle(f.game_state["units"][src], f.game_state["units"][dst])["p_conquer"]
    # (as the page rounds: half up, Math.round(p * 1000) / 10; Python's round() would take 0.1235 down)
    import math
    shown = "> 99.9%" if p > 0.9995 else "< 0.1%" if 0 < p < 0.0005 else f"{math.floor(p * 1000 + 0.5) / 10:.1f}%"
    expect(anna.locator("#ci-odds")).to_contain_text(shown)
    before = f.game_state["units"]
    f = step(anna, "#ci-attack", org, mid)
    lc = f.game_state["last_combat"]
    assert (lc["from"], lc["to"]) == (src, dst)
    expect(anna.locator("#ci-last-combat")).to_contain_text(" ".join(map(str, lc["attacker_dice"])))
    expect(anna.locator("#ci-last-combat")).to_contain_text(
        f"Anna loses {lc['attacker_losses']}, {lc['defender']} loses {lc['defender_losses']}")

    # the Pi rolled these dice: a player may not undo them (and roll again); the page says so before asking
    n = seq(anna)
    anna.click("#undo")
    expect(anna.locator("#undo-confirm-text")).to_contain_text("Undo: ")
    expect(anna.locator("#undo-confirm-text")).to_contain_text("only an organiser can undo it")
    expect(anna.locator("#undo-yes")).to_be_hidden()
    anna.screenshot(path=str(artifacts_dir / "tracker-conquest-undo-pi-roll.png"), full_page=True)
    anna.click("#undo-no")
    expect(anna.locator("#undo-confirm")).to_be_hidden()
    assert seq(anna) == n
    # the organiser undoes it: on both phones; the history marks it as a correction, the roll as re-rolled
    org.ok("POST", f"/api/matches/{mid}/undo", {"expected_seq": n})
    wait_seq(anna, n + 1)
    f = check_scores(anna, org, mid)
    check_scores(bruno, org, mid)
    assert f.game_state["units"] == before
    expect(anna.locator("#history")).to_contain_text(f"Correction, taken back: {src} attacks {dst}: ")
    expect(anna.locator(f"#history li[data-seq='{n}'] .rerolled")).to_have_text("drawn again")
    expect(bruno.locator(f"#history li[data-seq='{n}'] .rerolled")).to_have_text("estratto di nuovo")

    # the same attack with dice rolled at the table: 6s against 1s
    anna.check("input[name=ci-dice-mode][value=table]")
    anna.select_option("#ci-from", src)
    anna.select_option("#ci-to", dst)
    for box, face in (("#ci-adice input", "6"), ("#ci-ddice input", "1")):
        for i in range(anna.locator(box).count()):
            anna.locator(box).nth(i).fill(face)
    f = step(anna, "#ci-attack", org, mid)
    lc = f.game_state["last_combat"]
    assert lc["attacker_dice"][0] == 6 and lc["attacker_losses"] == 0 and lc["defender_losses"] >= 1
    # a battle that can still be lost is never "conquest 100.0%": the organiser puts 60 against 1
    org.event(mid, "territory.set", {"city": src, "player": "Anna", "units": 60})
    own = org.engine(mid).game_state["owner"]
    # a neighbour of another player (the deal is random: when Anna holds every neighbour, Bruno gets one)
    big = next((d for d in sorted(gm.neighbours[src]) if own[d] != "Anna"), sorted(gm.neighbours[src])[0])
    org.event(mid, "territory.set", {"city": big, "player": own[big] if own[big] != "Anna" else "Bruno", "units": 1})
    f = org.engine(mid)
    wait_seq(anna, f.last_seq)
    anna.locator(f"#ci-targets button[data-from='{src}'][data-to='{big}']").click()
    expect(anna.locator("#ci-targets button[aria-pressed=true]")).to_have_count(1)
    expect(anna.locator("#ci-odds")).to_contain_text("conquest > 99.9%")
    expect(anna.locator("#ci-odds")).not_to_contain_text("100.0%")
    # a conquest: the conquered city is Anna's own, and the page picks no next attack for her
    for box, face in (("#ci-adice input", "6"), ("#ci-ddice input", "1")):
        for i in range(anna.locator(box).count()):
            anna.locator(box).nth(i).fill(face)
    f = step(anna, "#ci-attack", org, mid)
    assert f.game_state["owner"][big] == "Anna"
    assert anna.input_value("#ci-to") == ""
    expect(anna.locator("#ci-attack")).to_be_disabled()
    expect(anna.locator("#ci-targets button[aria-pressed=true]")).to_have_count(0)

    # Anna's one move (an organiser's correction first gives her two bordering cities to move between)
    own = f.game_state["owner"]
    a, b = next((c, n) for c in gm.cities if own[c] == "Anna" for n in sorted(gm.neighbours[c]) if own[n] == "Anna")
    org.event(mid, "territory.set", {"city": a, "player": "Anna", "units": 3})
    f = org.engine(mid)
    ub = f.game_state["units"][b]
    wait_seq(anna, f.last_seq)
    anna.locator("#ci-move summary").click()
    anna.select_option("#ci-move-from", a)
    anna.select_option("#ci-move-to", b)
    anna.fill("#ci-move-units", "1")
    f = step(anna, "#ci-move-send", org, mid, [bruno])
    assert (f.game_state["units"][a], f.game_state["units"][b]) == (2, ub + 1)
    # after the move: no more attacks, no second move; the end of the turn (and the card, after a conquest)
    for hidden in ("#ci-combat", "#ci-move", "#ci-reinforce"):
        expect(anna.locator(hidden)).to_be_hidden()
    expect(anna.locator("#ci-step")).to_contain_text("Anna has moved: no more attacks, end the turn")
    expect(anna.locator("#ci-turn-end")).to_be_visible()
    conquered = f.game_state["turn_conquests"]
    if conquered:
        expect(anna.locator("#ci-cards")).to_be_visible()
    else:
        expect(anna.locator("#ci-cards")).to_be_hidden()
    expect(anna.locator("#history")).to_contain_text(f"Correction: {a} to Anna with 3")

    # Anna ends her turn: the server counts her conquests (and draws her card after a conquest); Bruno next
    f = step(anna, "#ci-turn-end", org, mid, [bruno])
    ended = org.ok("GET", f"/api/matches/{mid}/events?after={f.last_seq - 1}")["events"][0]["data"]
    assert ended["player"] == "Anna" and ended["conquered"] == conquered
    assert ("card" in ended) == (conquered > 0)
    assert f.game_state["hands"]["Anna"] == ([ended["card"]] if conquered else [])
    # the card Anna drew is hers (docs/rulings.md#conquest-hidden-information): her phone names it, Bruno's
    # says that she drew one, in its history, its view and its API
    assert conquered
    card = ended["card"]
    expect(anna.locator(f"#history li[data-seq='{f.last_seq}']")).to_contain_text(card)
    expect(bruno.locator(f"#history li[data-seq='{f.last_seq}']")).to_contain_text("pescata una carta")
    assert card not in bruno.inner_text(f"#history li[data-seq='{f.last_seq}']")
    assert bruno.evaluate("Object.keys(window.companionMatch.view.state.hands)") == ["Bruno"]
    last = bruno.request.get(f"/api/matches/{mid}/events?after={f.last_seq - 1}").json()["events"][0]
    assert last["hidden"] == ["card"] and "card" not in last["data"], last
    expect(bruno.locator("#ci-status")).to_have_text("Tocca a Bruno")
    expect(bruno.locator("#ci-reinforce")).to_be_visible()
    expect(bruno.locator("#ci-combat")).to_be_hidden()

    # corrections of the map are the organiser's (docs/rulings.md#conquest-corrections): the players' pages
    # do not offer them, an organiser's does
    expect(anna.locator("#ci-fix")).to_be_hidden()
    expect(bruno.locator("#ci-fix")).to_be_hidden()
    # two phones at once: a phone whose live updates lag writes after another write -> conflict, fresh state
    stale = open_match(organiser_page(new_context, server), mid, block_stream=True)
    expect(stale.locator("#ci-fix")).to_be_visible()
    stale.locator("#ci-fix summary").click()
    city = stale.input_value("#ci-fix-city")
    org.event(mid, "territory.set", {"city": city, "player": f.game_state["owner"][city], "units": 7})
    stale.fill("#ci-fix-units", "2")
    stale.click("#ci-fix-send")
    expect(stale.locator("#conflict")).to_be_visible()
    expect(stale.locator("#conflict")).to_contain_text("Someone else recorded something first")
    f = org.engine(mid)
    assert seq(stale) == f.last_seq  # the fresh state is shown
    assert f.game_state["units"][city] == 7  # the stale write was not applied
    stale.screenshot(path=str(artifacts_dir / "tracker-conquest-italy-conflict.png"), full_page=True)
    check_scores(stale, org, mid)

    # the organiser's correction, on the organiser's phone, gives Anna the third city of her objective: only
    # her phone tells her
    missing = mine[2]
    stale.unroute("**/stream*")  # the same organiser's phone, its live updates back
    fixer = open_match(stale, mid)
    fixer.locator("#ci-fix summary").click()
    fixer.select_option("#ci-fix-city", missing)
    fixer.select_option("#ci-fix-player", "Anna")
    fixer.fill("#ci-fix-units", "3")
    f = step(fixer, "#ci-fix-send", org, mid, [anna, bruno])
    expect(anna.locator("#ci-objective-done")).to_be_visible()
    expect(anna.locator("#ci-objective li.held")).to_have_count(3)
    wait_seq(bruno, f.last_seq)
    expect(bruno.locator("#ci-objective-done")).to_have_count(0)
    assert "Anna" not in bruno.evaluate("Object.keys(window.companionMatch.view.state.objectives)")
    assert missing not in bruno.inner_text("#ci-secret-body")

    # a phone that came to the table late, still asked "Who are you?" and told how to see an objective
    late = open_match(joined_page(new_context, server), mid)
    expect(late.locator("#who-card")).to_be_visible()
    expect(late.locator("#ci-secret-body")).to_contain_text("Who are you?")

    # Anna declares it: the match ends, the ranking is the engine's
    n = seq(anna)
    anna.once("dialog", lambda d: d.accept())  # it ends the match: asked first
    anna.click("#ci-objective-declare")
    wait_seq(anna, n + 1)
    # an ended match seats nobody and takes no objective: the late phone's question and objective section go
    # on that event; a seat's recorded objective stays on its phone, without a "declare"
    wait_seq(late, n + 1)
    expect(late.locator("#who-card")).to_be_hidden()
    expect(late.locator("#ci-secret")).to_be_hidden()
    wait_seq(bruno, n + 1)
    expect(bruno.locator("#ci-objective li")).to_have_count(1)
    expect(bruno.locator("#ci-obj-form")).to_have_count(0)
    expect(anna.locator("#ci-objective li.held")).to_have_count(3)
    expect(anna.locator("#ci-objective-declare")).to_have_count(0)
    f = org.engine(mid)
    assert f.ended()
    ranking = f.module.final_score(f.game_state)
    expect(anna.locator("#ci-ranking")).to_be_visible()
    expect(anna.locator("#ci-ranking-body tbody tr")).to_have_count(len(PLAYERS))  # fetched from the server
    rows = anna.eval_on_selector_all(
        "#ci-ranking-body tbody tr", "trs => trs.map(tr => [tr.dataset.player, tr.querySelector('.trk-place').textContent,"
        " ...Array.from(tr.querySelectorAll('td.num')).map(td => td.textContent)])")
    assert rows == [[r["player"], str(r["place"]), str(r["objective_points"]), str(r["other_points"]),
                     f"{r['objective_cities_held']}/{r['objective_cities']}"] for r in ranking["players"]]
    assert rows[0][0] == "Anna" and rows[0][1] == "1"
    expect(anna.locator("#ci-status")).to_have_text("Over: Anna completed the objective")
    anna.screenshot(path=str(artifacts_dir / "tracker-conquest-italy-ranking.png"), full_page=True)
    assert anna.errors == [] and bruno.errors == [] and stale.errors == [] and fixer.errors == [] and late.errors == []


def test_a_turn_with_nothing_to_place_goes_straight_to_the_combats(new_context, server, tokens):
    """Anna holds 2 cities and no region (docs/rulings.md, "Conquest: the turn"): her turn offers the combats,
    the move and the end of the turn at once, no reinforcement of nothing, and says so."""
    org = Api(server, tokens["organiser"])
    mid = org.create("conquest-italy", PLAYERS)
    org.ok("POST", f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    while True:  # the set-up placed through the API, 5 at a time on each player's first city
        v = org.ok("GET", f"/api/matches/{mid}")["view"]
        if v["summary"]["phase"] != "place":
            break
        p = v["summary"]["next_placer"]
        city = sorted(c for c, o in v["state"]["owner"].items() if o == p)[0]
        org.event(mid, "setup.place", {"player": p, "placements": {city: v["summary"]["placement_due"]}})
    annas = sorted(c for c, o in v["state"]["owner"].items() if o == "Anna")
    for c in annas[2:]:  # the organiser's corrections leave Anna 2 cities
        org.event(mid, "territory.set", {"city": c, "player": "Bruno", "units": 1})
    org.event(mid, "clock.start", {"limit_minutes": 90})
    assert org.engine(mid).view()["summary"]["players"][0]["reinforcements"] == 0
    anna = open_match(joined_page(new_context, server, viewport={"width": 390, "height": 844}), mid, seat="Anna")
    expect(anna.locator("#ci-step")).to_have_text("Anna: nothing to place, attack or move once")
    expect(anna.locator("#ci-reinforce")).to_be_hidden()
    for shown in ("#ci-combat", "#ci-move", "#ci-turn-end"):
        expect(anna.locator(shown)).to_be_visible()
    assert anna.errors == []
