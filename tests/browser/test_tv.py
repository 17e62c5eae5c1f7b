"""The TV beside a table, at 1920x1080, while a conquest match is played to its end through the API: the map
(each territory's fill is its holder's colour, its label the units) against the match state after every
step, the last combat's dice and losses, the final roll (whose roll and the total that ends the match, then
the dice), and the ranking revealed from last to first with the winner large and the season points.
Screenshots: test-artifacts/tv-*.png."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

from tests.browser.test_game_night import EN, IT, _watch
from tests.browser.trackers_kit import organiser_api
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

TV = {"width": 1920, "height": 1080}
SMALL_TV = {"width": 1280, "height": 720}
PLAYERS = ["Anna", "Bruno", "Carla"]
COLOURS = {"Anna": "#d62728", "Bruno": "#1f77b4", "Carla": "#f5d90a"}
SEAT_COLOURS = ["#d62728", "#1f77b4", "#2ca02c"]  # the TV's colours by seat for a match that has none


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("tv") / "data", {"COMPANION_CHECKPOINT_SECONDS": "1"})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def org(server):
    return organiser_api(server)


def _iso(dt):
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _match(org, mid):
    return org.ok("GET", f"/api/matches/{mid}")


def _act(org, mid, action, data):
    return org.ok("POST", f"/api/matches/{mid}/conquest/{action}", {"expected_seq": _match(org, mid)["seq"],
                                                                     "data": data})


def _event(org, mid, type_, data):
    return org.ok("POST", f"/api/matches/{mid}/events", {"type": type_, "data": data,
                                                         "expected_seq": _match(org, mid)["seq"]})


def set_up_with_two_seconds_left(org):
    """A conquest match dealt and placed through the API, then imported again with its clock started an
    hour ago (a 1-minute limit) and paused 2 s before the end, so nothing waits for the real clock."""
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "colours": COLOURS,
                                          "label": "Table 7"})["id"]
    _act(org, mid, "deal", {})
    while True:
        m = _match(org, mid)
        sm, st = m["view"]["summary"], m["view"]["state"]
        if sm["phase"] != "place":
            break
        p = sm["next_placer"]
        city = sorted(c for c, o in st["owner"].items() if o == p)[0]
        _event(org, mid, "setup.place", {"player": p, "placements": {city: sm["placement_due"]}})
    doc = org.ok("GET", f"/api/matches/{mid}/export")
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    events = [{"seq": i + 1, "type": e["type"], "data": e["data"], "at": _iso(start + timedelta(seconds=i))}
              for i, e in enumerate(doc["events"])]
    t0 = start + timedelta(seconds=len(events) + 1)
    events.append({"seq": len(events) + 1, "type": "clock.start", "data": {"limit_minutes": 1}, "at": _iso(t0)})
    events.append({"seq": len(events) + 1, "type": "clock.pause", "data": {}, "at": _iso(t0 + timedelta(seconds=58))})
    new = {k: v for k, v in doc.items() if k not in ("events", "id")}
    new.update(id=f"{mid}-tv", events=events, created_at=_iso(start - timedelta(seconds=1)))
    return org.ok("POST", "/api/matches/import", new)["imported"]


def neighbours(org, mid):
    m = org.ok("GET", f"/api/matches/{mid}/conquest/map")
    return {c["name"]: set(c["land"]) | set(c["sea"]) for c in m["cities"]}


def play_turn(org, mid, player, near, attack=False):
    """Reinforce (all the units due on a city with an enemy beside it), attack once with dice from the table
    (the attacker's sixes against ones) when asked, end the turn. Returns the combat's result or None."""
    m = _match(org, mid)
    st, sm = m["view"]["state"], m["view"]["summary"]
    due = next(r for r in sm["players"] if r["player"] == player)["reinforcements"]
    own = sorted(c for c, o in st["owner"].items() if o == player)
    city = next(c for c in own if any(st["owner"][n] != player for n in near[c]))
    _event(org, mid, "reinforce", {"player": player, "placements": {city: due}})
    result = None
    if attack:
        st = _match(org, mid)["view"]["state"]
        target = sorted(n for n in near[city] if st["owner"][n] != player)[0]
        a = min(3, st["units"][city] - 1)
        d = min(3, st["units"][target])
        _act(org, mid, "combat", {"from": city, "to": target, "attack_dice": [6] * a, "defend_dice": [1] * d})
        result = _match(org, mid)["view"]["state"]["last_combat"]
    _act(org, mid, "turn-end", {"player": player})
    return result


def expect_map_matches_state(tv, org, mid):
    m = _match(org, mid)
    st = m["view"]["state"]
    colour = {p: m["colours"].get(p) or SEAT_COLOURS[i] for i, p in enumerate(m["players"])}
    want = {c: [colour[o], str(st["units"][c])] for c, o in st["owner"].items()}
    tv.wait_for_function("""want => {
        const marks = document.querySelectorAll('#ci-tv-map circle[data-city], #ci-tv-map rect[data-city]');
        if (marks.length !== Object.keys(want).length) return false;
        for (const m of marks) {
          const c = m.getAttribute('data-city');
          const label = document.querySelector('#ci-tv-map text.ci-tv-units[data-city="' + CSS.escape(c) + '"]');
          if (!want[c] || m.getAttribute('fill') !== want[c][0] || !label || label.textContent !== want[c][1]) return false;
        }
        return true;
    }""", arg=want, timeout=10_000)


def test_tv_follows_a_conquest_match_to_its_end(browser, new_context, server, org, artifacts_dir):
    mid = set_up_with_two_seconds_left(org)
    near = neighbours(org, mid)
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display?reveal=1000")
        expect(tv.locator("#tv-game")).to_be_visible()
        expect(tv.locator("#table-qr svg")).to_be_visible()
        expect_map_matches_state(tv, org, mid)
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-1-setup.png"))
        # the players' table: territories and units as the summary says
        sm = _match(org, mid)["view"]["summary"]
        for r in sm["players"]:
            row = tv.locator(f'#ci-tv-players tr[data-player="{r["player"]}"]')
            expect(row.locator("td[data-col=territories]")).to_have_text(str(r["territories"]))
            expect(row.locator("td[data-col=units]")).to_have_text(str(r["units"]))
            expect(row.locator("td[data-col=cards]")).to_have_text(str(r["cards"]))  # how many, never which

        _event(org, mid, "clock.resume", {})
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.finishing-round"], timeout=15_000)
        expect(tv.locator("body")).to_have_class(re.compile(r"\btv-alert\b"))  # the time is up: the alert colour

        # Anna's turn finishes the round, with a combat: the map changes, the dice show as faces
        combat = play_turn(org, mid, "Anna", near, attack=True)
        expect_map_matches_state(tv, org, mid)
        box = tv.locator("#ci-tv-combat")
        expect(box).to_be_visible()
        expect(box).to_contain_text(f"Anna ({combat['from']}) attacks {combat['defender']} ({combat['to']})")
        expect(box.locator(".tv-die-attack")).to_have_count(len(combat["attacker_dice"]))
        expect(box.locator(".tv-die-defend")).to_have_count(len(combat["defender_dice"]))
        assert box.locator(".tv-die-attack").first.get_attribute("data-value") == "6"
        assert box.locator(".tv-die-attack .tv-pip").count() == 6 * len(combat["attacker_dice"])
        n = combat["defender_losses"]
        expect(tv.locator("#ci-tv-losses [data-side=defend] .ci-tv-lost")).to_have_text(
            EN["tv.ci_lost.one" if n == 1 else "tv.ci_lost.other"].format(n=n))
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-2-combat.png"))

        for p in ["Bruno", "Carla"] + PLAYERS:  # the end of the finishing round, then the last lap
            play_turn(org, mid, p, near)
            expect_map_matches_state(tv, org, mid)
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.final-rounds"])

        # the final rounds: Anna conquers nothing and owes the roll; 4 or less ends the match
        play_turn(org, mid, "Anna", near)
        roll = tv.locator("#tv-roll")
        expect(roll).to_be_visible()
        expect(roll).to_have_attribute("data-state", "owed")
        expect(roll.locator(".tv-roll-who")).to_have_text(EN["tv.roll_owed"].format(player="Anna"))
        expect(roll.locator(".tv-roll-target")).to_have_text(EN["tv.roll_target"].format(n=4))
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-3-roll-owed.png"))
        # a tone for the roll owed (WebAudio; the page keeps a log of what it played)
        assert {"kind": "final-roll", "muted": False} in tv.evaluate("window.CompanionSound.log")
        _event(org, mid, "final.roll", {"player": "Anna", "dice": [6, 5]})
        expect(roll).to_have_attribute("data-state", "goes-on")
        expect(roll.locator(".tv-roll-verdict")).to_have_text(EN["tv.roll_goes_on"].format(total=11, n=4))
        assert [roll.locator(".tv-die").nth(i).get_attribute("data-value") for i in range(2)] == ["6", "5"]
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-4-roll-goes-on.png"))

        play_turn(org, mid, "Bruno", near)
        expect(roll).to_have_attribute("data-state", "owed")
        expect(roll.locator(".tv-roll-who")).to_have_text(EN["tv.roll_owed"].format(player="Bruno"))
        # the page keeps every count of shown ranking rows it goes through (the reveal is checked after it
        # ends, so a slow machine cannot race the test)
        tv.evaluate("""() => { window.__shown = []; new MutationObserver(() => {
            const n = document.querySelectorAll('.tv-rank:not([hidden])').length;
            const w = document.querySelector('.tv-winner');
            const won = !!(w && !w.hidden && w.offsetParent !== null);
            const last = window.__shown[window.__shown.length - 1];
            if (!last || last[0] !== n || last[1] !== won) window.__shown.push([n, won]);
          }).observe(document.body, {subtree: true, childList: true, attributes: true}); }""")
        _event(org, mid, "final.roll", {"player": "Bruno", "dice": [1, 2]})
        # the dice roll for a moment before they show
        expect(roll).to_have_attribute("data-state", "rolling")
        expect(roll).to_have_attribute("data-state", "ends")
        expect(roll.locator(".tv-roll-verdict")).to_have_text(EN["tv.roll_ends"].format(total=3, n=4))

        # the ranking: from the last place up, then the winner large, with the club points of each place
        result = org.ok("GET", f"/api/matches/{mid}/result")
        assert result["ended"]
        ranking = tv.locator("#tv-ranking")
        expect(ranking).to_be_visible()
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-5-reveal.png"))
        expect(ranking).to_have_attribute("data-revealed", "1", timeout=15_000)
        # one row at a time (0, 1, 2, ... every row), the winner's name only once every row is shown
        shown = [x for x in tv.evaluate("window.__shown") if x[0] > 0 or x[1]]
        rows = len(result["results"])
        counts = [n for n, _ in shown]
        assert sorted(set(counts)) == list(range(1, rows + 1)) and counts == sorted(counts), shown
        assert all(n == rows for n, won in shown if won), shown
        # revealed from the last place up
        order = [int(x) for x in ranking.get_attribute("data-order").split(",")]
        assert order == sorted((r["place"] for r in result["results"]), reverse=True)
        winners = [r["player"] for r in result["results"] if r["place"] == 1]
        expect(tv.locator(".tv-winner-name")).to_have_text(" · ".join(winners))
        # a match no season counts (the box has no club yet): no standings points promised, and the TV says so
        assert result["season_state"] == "waiting" and result["season"] is None
        expect(tv.locator(".tv-winner-season")).to_have_text(EN["tv.no_season_yet"])
        for r in result["results"]:
            li = tv.locator(f'.tv-rank[data-player="{r["player"]}"]')
            expect(li).to_be_visible()
            expect(li.locator(".tv-rank-place")).to_have_text(str(r["place"]))
            expect(li.locator(".tv-rank-points")).to_have_text("")
        # places top to bottom: 1 first
        places = [int(x) for x in tv.locator(".tv-rank").evaluate_all("l => l.map(e => e.dataset.place)")]
        assert places == sorted(places)
        tv.screenshot(path=str(artifacts_dir / "tv-conquest-6-ranking.png"))
        # an ended match: the clock no longer in the alert colour, no "Scan to sit at this table"
        expect(tv.locator("body")).not_to_have_class(re.compile(r"\btv-alert\b"))
        expect(tv.locator("#table-qr")).to_be_hidden()
        assert [x["kind"] for x in tv.evaluate("window.CompanionSound.log")].count("ended") >= 1
        # nothing runs out of the screen at 1920x1080
        assert tv.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert not tv.errors, tv.errors
        in_a_season(new_context, server, org, tv, mid, result, artifacts_dir)
    finally:
        ctx.close()


def in_a_season(new_context, server, org, tv, mid, result, artifacts_dir):
    """The ended match on the organiser's phone: "not in a season yet"; the season made later takes it in (the
    TV's points with it); "Take it out of the season" and it is in none; "Add to <season>" and it counts again."""
    from tests.browser.trackers_kit import organiser_page

    phone = organiser_page(new_context, server, viewport={"width": 390, "height": 844})
    phone.goto(f"/m/{mid}")
    card, state = phone.locator("#match-season"), phone.locator("#match-season-state")
    year = datetime.now(timezone.utc).year
    expect(state).to_have_text(EN["match.season_waiting"].format(game=EN["game.conquest-italy"], year=year))
    club = org.ok("POST", "/api/clubs", {"name": "Circolo TV"})
    season = org.ok("POST", "/api/seasons", {"club": club["id"], "game": "conquest-italy", "year": year})
    assert mid in season["taken_in"][0]  # the season, once made, takes in the match left to it
    phone.reload()
    expect(state).to_have_text(EN["match.season_counted"].format(season=season["name"]))
    got = org.ok("GET", f"/api/matches/{mid}/result")
    assert got["season_state"] == "counted" and got["season_id"] == season["id"]
    # the TV, shown again: the season's points beside each place
    tv.reload()
    expect(tv.locator(".tv-winner-season")).to_have_text(EN["tv.season_points"].format(season=season["name"]), timeout=15_000)
    for r in got["results"]:
        pts = r["points"]
        text = ("+" if pts > 0 else "") + (str(pts) if pts != int(pts) else str(int(pts)))
        expect(tv.locator(f'.tv-rank[data-player="{r["player"]}"] .tv-rank-points')).to_contain_text(text)
    # the organiser takes it out, then puts it back, from the match page
    card.locator("button", has_text=EN["match.season_remove"]).click()
    expect(state).to_have_text(EN["match.season_none"])
    assert org.ok("GET", f"/api/seasons/{season['id']}")["matches"] == 0
    card.locator("button", has_text=EN["match.season_add"].format(season=season["name"])).click()
    expect(state).to_have_text(EN["match.season_counted"].format(season=season["name"]))
    assert org.ok("GET", f"/api/seasons/{season['id']}")["matches"] == 1
    phone.screenshot(path=str(artifacts_dir / "tv-conquest-7-match-season.png"), full_page=True)
    assert not phone.errors, phone.errors


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_tv_at_1280x720_light_and_dark(browser, server, org, artifacts_dir, scheme):
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "colours": COLOURS})["id"]
    _act(org, mid, "deal", {})
    ctx = browser.new_context(base_url=server.url, viewport=SMALL_TV, locale="it-IT", color_scheme=scheme)
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        expect_map_matches_state(tv, org, mid)
        assert tv.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        bg = tv.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (bg == "rgb(18, 19, 22)") == (scheme == "dark"), bg
        # the toggle turns the other way, and is remembered
        tv.click("#tv-theme")
        bg2 = tv.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg2 != bg
        tv.click("#tv-theme")
        expect(tv.locator("#tv-mute")).to_have_attribute("aria-label", IT["tv.mute"])
        tv.click("#tv-mute")
        expect(tv.locator("#tv-mute")).to_have_attribute("aria-pressed", "true")
        assert tv.evaluate("window.CompanionSound.play('5-minutes')") is False  # muted: nothing played
        tv.reload()  # remembered
        expect(tv.locator("#tv-mute")).to_have_attribute("aria-pressed", "true")
        tv.click("#tv-mute")
        tv.screenshot(path=str(artifacts_dir / f"tv-conquest-1280-{scheme}.png"))
        # the table's QR code for joining, in its corner
        expect(tv.locator("#table-qr svg")).to_be_visible()
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_tv_web_of_power_countries_and_the_scoring_step_by_step(browser, server, org, artifacts_dir):
    mid = org.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS, "colours": COLOURS})["id"]
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display?reveal=500")
        expect(tv.locator("#wop-tv-countries table")).to_be_visible()
        for data in ({"player": "Anna", "piece": "monastery", "country": "England", "count": 2},
                     {"player": "Anna", "piece": "councillor", "country": "England"},
                     {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 2},
                     {"player": "Carla", "piece": "monastery", "country": "England"}):
            org.event(mid, "place", data)
        cell = tv.locator('#wop-tv-countries tr[data-country="England"] td[data-player="Anna"]')
        expect(cell).to_have_text("2 / 1")
        expect(tv.locator('#wop-tv-countries tr[data-country="England"] td[data-player="Carla"]')).to_have_text("1 / 0")
        # during play no rank (the official totals are 0 before a scoring): the seats' order
        expect(tv.locator("#wop-tv-totals td.tv-place")).to_have_count(0)
        assert tv.eval_on_selector_all("#wop-tv-totals tbody tr", "trs => trs.map(tr => tr.dataset.player)") == PLAYERS
        org.event(mid, "deck.out", {})  # the intermediate scoring
        box = tv.locator("#wop-tv-scoring")
        expect(box).to_be_visible()
        expect(box).to_have_attribute("data-scoring", "intermediate")
        assert box.locator("tr.wop-tv-totals").is_hidden()  # the totals come last
        expect(box).to_have_attribute("data-revealed", "1", timeout=10_000)
        res = _match(org, mid)["view"]["summary"]["scores"]["intermediate"]
        for p in res["players"]:
            expect(box.locator(f'tr.wop-tv-totals td[data-player="{p["player"]}"]')).to_have_text(str(p["total"]))
        parts = {b["country"] for p in res["players"] for b in p["breakdown"] if b["kind"] == "monasteries"}
        expect(box.locator("tr.wop-tv-part")).to_have_count(len(parts))
        tv.screenshot(path=str(artifacts_dir / "tv-web-of-power.png"))
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_tv_richelieu_tracks_cardinal_and_the_last_intrigue(browser, server, org, artifacts_dir):
    import json
    from pathlib import Path

    players = ["blue", "red", "yellow"]
    mid = org.ok("POST", "/api/matches", {"game": "richelieu", "players": players})["id"]
    data = json.loads((Path(__file__).resolve().parents[2] / "schemas/examples/richelieu.events/intrigue-resolve.json")
                      .read_text())["data"]
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        expect(tv.locator("#rl-tv-intrigue")).to_have_text(EN["tv.rl_no_intrigue"])
        org.event(mid, "intrigue.resolve", data)
        st = _match(org, mid)["view"]["state"]
        last = st["resolutions"][-1]
        expect(tv.locator("#rl-tv-cardinal")).to_contain_text(EN["tv.rl_cardinal"].format(n=st["cardinal"]))
        for p in players:
            for k in ("prestige", "income", "military"):
                expect(tv.locator(f'#rl-tv-tracks tr[data-player="{p}"] td[data-track="{k}"]')).to_have_text(
                    str(st["players"][p][k]))
            for k in ("money", "jewels"):  # behind each player's screen until the end: the room sees "—"
                expect(tv.locator(f'#rl-tv-tracks tr[data-player="{p}"] td[data-track="{k}"]')).to_have_text("—")
        expect(tv.locator("#rl-tv-intrigue")).to_contain_text(EN["tv.rl_places"].format(
            first=last["first"], second=last["second"]))
        tv.screenshot(path=str(artifacts_dir / "tv-richelieu.png"))
        # the table ends the game (no clock): the ranking and the winner appear on that event, no reload; the
        # table's QR code goes (nobody sits at an ended match)
        expect(tv.locator("#table-qr svg")).to_be_visible()
        org.event(mid, "game.end", {})
        ranking = _match(org, mid)["view"]["summary"]["standings"]
        expect(tv.locator("#tv-ranking")).to_be_visible()
        expect(tv.locator(".tv-winner-name")).to_have_text(" · ".join(ranking["winners"]))
        expect(tv.locator("#tv-ranking .tv-rank")).to_have_count(len(players))
        expect(tv.locator("#table-qr")).to_be_hidden()
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_tv_rome_is_burning_emperor_turn_scores(browser, server, org, artifacts_dir):
    mid = org.ok("POST", "/api/matches", {"game": "rome-is-burning", "players": PLAYERS, "colours": COLOURS})["id"]
    ctx = browser.new_context(base_url=server.url, viewport=SMALL_TV, locale="it-IT")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        sm = _match(org, mid)["view"]["summary"]
        expect(tv.locator("#rome-tv-emperor")).to_have_text(IT["tv.rome_no_emperor"])
        expect(tv.locator("#rome-tv-turn")).to_have_text(IT["tv.rome_turn"].format(turn=sm["turn"], turns=sm["turns"]))
        expect(tv.locator("#rome-tv-scores tbody tr")).to_have_count(3)
        assert tv.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        tv.screenshot(path=str(artifacts_dir / "tv-rome.png"))
        assert not tv.errors, tv.errors
        # the box's answer came before the TV's own script (js/display.js) ran: its panel is drawn all the same
        late = _watch(ctx.new_page())
        held = []
        late.route("**/static/js/display.js*", lambda route: held.append(route))
        late.goto(f"/m/{mid}/display", wait_until="commit")
        late.wait_for_function("() => window.companionMatch && window.companionMatch.view")
        assert held and late.evaluate("!window.CompanionTV")
        held[0].continue_()
        expect(late.locator("#tv-game")).to_be_visible()
        expect(late.locator("#rome-tv-emperor")).to_have_text(IT["tv.rome_no_emperor"])
        assert not late.errors, late.errors
    finally:
        ctx.close()


def _board_with_photo(org):
    """A complete board (tests/web/boardkit.py) saved as version 2 without a photo, then its photo (600 x 400)
    as version 3."""
    import http.client

    from tests.web.boardkit import complete_board, png

    bid = org.ok("POST", "/api/boards", {"name": "TV board"})["id"]
    org.ok("POST", f"/api/boards/{bid}/versions", {"board": complete_board()})
    conn = http.client.HTTPConnection(org.server.host, timeout=30)
    conn.request("PUT", f"/api/boards/{bid}/photo", body=png(600, 400),
                 headers={"Authorization": f"Bearer {org.token}", "Content-Type": "image/png"})
    r = conn.getresponse()
    assert r.status == 201, r.read()
    conn.close()
    return bid


def test_tv_web_of_power_board_with_the_pieces_and_the_chains(browser, server, org, artifacts_dir):
    bid = _board_with_photo(org)
    mid = org.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS, "colours": COLOURS,
                                          "options": {"board_id": bid}})["id"]
    assert _match(org, mid)["options"]["board_ref"] == {"id": bid, "version": 3}
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        board = tv.locator("#wop-tv-board")
        expect(tv.locator("#wop-tv")).to_have_attribute("data-board", "photo")
        expect(board).to_be_visible()
        expect(board.locator("image")).to_have_count(1)
        expect(board.locator("circle[data-site]")).to_have_count(18)
        expect(board.locator("circle[data-site]:not(.free)")).to_have_count(0)
        expect(tv.locator("#wop-tv-countries table")).to_be_visible()  # the table beside it
        # Anna's first two monasteries: drawn live, in her colour, on their sites
        org.event(mid, "place", {"player": "Anna", "piece": "monastery", "site": "England1"})
        expect(board.locator("circle[data-site='England1']")).to_have_attribute("fill", COLOURS["Anna"])
        turns = [("Anna", ["England2"]), ("Bruno", ["Bayern1", "Bayern2"]), ("Carla", ["Italien1"]),
                 ("Anna", ["Franken1", "Franken2"])]
        org.event(mid, "place", {"player": "Anna", "piece": "monastery", "site": "England2"})
        org.event(mid, "turn.end", {"player": "Anna"})
        for player, sites in turns[1:]:
            for site in sites:
                org.event(mid, "place", {"player": player, "piece": "monastery", "site": site})
            org.event(mid, "turn.end", {"player": player})
        held = {"England1": "Anna"} | {s: p for p, ss in turns for s in ss}
        for site, player in held.items():
            mark = board.locator(f"circle[data-site='{site}']")
            expect(mark).to_have_attribute("fill", COLOURS[player])
            expect(mark).to_have_attribute("data-holder", player)
            expect(mark).not_to_have_class(re.compile(r"\bfree\b"))
        expect(board.locator("circle[data-site]:not(.free)")).to_have_count(len(held))
        # Anna's chain of four, in her colour; nobody else has one
        chain = board.locator("polyline.wop-chain-live")
        expect(chain).to_have_count(1)
        expect(chain).to_have_attribute("data-player", "Anna")
        expect(chain).to_have_attribute("stroke", COLOURS["Anna"])
        assert sorted(chain.get_attribute("data-chain").split(",")) == ["England1", "England2", "Franken1", "Franken2"]
        expect(tv.locator('#wop-tv-countries tr[data-country="Bayern"] td[data-player="Bruno"]')).to_have_text("2 / 0")
        # large on the screen, nothing runs out of it, and nothing on it writes
        tv.screenshot(path=str(artifacts_dir / "tv-web-of-power-board.png"))
        box = board.bounding_box()
        assert box["width"] >= 820 and box["height"] >= 540, box  # the photo is 600 x 400
        assert tv.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert tv.evaluate("document.documentElement.scrollHeight <= document.documentElement.clientHeight + 1")
        assert tv.locator("#tv-game button, #tv-game input, #tv-game select").count() == 0
        tv.set_viewport_size(SMALL_TV)
        tv.screenshot(path=str(artifacts_dir / "tv-web-of-power-board-1280.png"))
        assert tv.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        # the scores beside it are not cut either
        assert tv.evaluate("[...document.querySelectorAll('#scores .trk-scroll, #wop-tv-countries')]"
                           ".every(e => e.scrollWidth <= e.clientWidth + 1)")
        box = board.bounding_box()
        assert box["width"] >= 540 and box["height"] >= 360, box
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_tv_web_of_power_table_alone_on_the_template_or_without_a_photo(browser, server, org, artifacts_dir):
    bid = _board_with_photo(org)
    template = org.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS,
                                               "options": {"board_id": None}})["id"]
    no_photo = org.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS,
                                               "options": {"board_id": bid, "board_version": 2}})["id"]
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        for mid in (template, no_photo):
            tv.goto(f"/m/{mid}/display")
            expect(tv.locator("#wop-tv")).to_have_attribute("data-board", "table")
            expect(tv.locator("#wop-tv-countries table")).to_be_visible()
            expect(tv.locator("#wop-tv-board")).to_be_hidden()
        tv.screenshot(path=str(artifacts_dir / "tv-web-of-power-no-photo.png"))
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("locale, cat", [("en-GB", EN), ("it-IT", IT)])
def test_the_default_maps_name_is_in_the_pages_language(browser, server, org, locale, cat):
    """The box's default map is named in Italian in its file ("Italia (mappa predefinita)"): the TV and the
    phone's tracker name the drawing in the page's language (its title, what a screen reader says)."""
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "colours": COLOURS})["id"]
    ctx = browser.new_context(base_url=server.url, viewport=SMALL_TV, locale=locale)
    try:
        page = _watch(ctx.new_page())
        page.goto(f"/m/{mid}/display")
        expect(page.locator("#ci-tv-map svg > title")).to_have_text(cat["ci.map_default"])
        page.goto(f"/m/{mid}")
        expect(page.locator("#ci-map svg > title")).to_have_text(cat["ci.map_default"])
        assert not page.errors, page.errors
    finally:
        ctx.close()
