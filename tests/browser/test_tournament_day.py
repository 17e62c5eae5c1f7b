"""A tournament day in the browser, as the organiser does it on a phone (360 px): create it with its
players, seat round 1, swap two players by tapping them, start the round (its matches appear, every clock
started), print the seats on A4. Screenshots: test-artifacts/tday-*.png."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_game_night import EN, IT
from tests.browser.test_tournament_round import _organiser

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla", "Dario", "Elena", "Franco", "Gina", "Ugo"]


@pytest.mark.parametrize("locale, cat", [("en-GB", EN), ("it-IT", IT)])
def test_organiser_runs_a_round_from_a_phone(new_context, server, artifacts_dir, locale, cat):
    org = _organiser(new_context, server, locale)
    org.set_viewport_size({"width": 360, "height": 780})
    org.goto("/tournaments")
    org.fill("#tday-new [name=name]", f"Coppa {locale}")
    org.select_option("#tday-new [name=game]", "conquest-italy")
    org.fill("#tday-new [name=table_size]", "4")
    org.fill("#tday-new [name=rounds]", "3")
    org.fill("#tday-new [name=clock_minutes]", "90")
    for name in PLAYERS[:7]:  # names typed and registered as they are (guests): Enter after each
        org.fill("#tday-new-player", name)
        org.press("#tday-new-player", "Enter")
    expect(org.locator("#tday-new-players li")).to_have_count(7)
    org.click("#tday-new button[type=submit]")
    org.wait_for_url("**/tournaments/*")
    expect(org.locator("#tday-players li")).to_have_count(7)
    org.fill("#tday-add [name=player]", "Ugo")
    org.click("#tday-add button[type=submit]")
    expect(org.locator("#tday-players li")).to_have_count(8)
    expect(org.locator("#tday-count")).to_have_text(cat["tday.players_count.other"].format(n=8))

    org.click("#tday-seat")
    tables = org.locator(".tday-round[data-round='1'] .tday-table")
    expect(tables).to_have_count(2)
    # a late arrival may still be registered (seated from the next round): the form stays, its hint says so
    expect(org.locator("#tday-add-hint")).to_have_text(cat["tday.add_hint_late"])
    a = tables.nth(0).locator("li").first.get_attribute("data-player")
    b = tables.nth(1).locator("li").first.get_attribute("data-player")
    tables.nth(0).locator(f'li[data-player="{a}"] button').click()
    tables.nth(1).locator(f'li[data-player="{b}"] button').click()
    expect(org.locator(".toast").last).to_have_text(cat["tday.swapped"].format(a=a, b=b))
    expect(tables.nth(0).locator(f'li[data-player="{b}"]')).to_have_count(1)
    expect(tables.nth(1).locator(f'li[data-player="{a}"]')).to_have_count(1)
    org.screenshot(path=str(artifacts_dir / f"tday-seated-{locale}.png"), full_page=True)
    assert org.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

    org.once("dialog", lambda d: d.accept())  # "Start round 1?" asks first
    org.click("[data-start='1']")
    expect(org.locator(".toast").last).to_contain_text(cat["tday.started"].format(n=1))
    expect(org.locator(".toast").last).to_contain_text(cat["tday.armed"])  # conquest: after each set-up
    links = org.locator(".tday-round[data-round='1'] .tday-table a[href$='/display']")
    expect(links).to_have_count(2)
    tid = org.url.rstrip("/").split("/")[-1]
    doc = org.request.get(f"/api/tournaments/{tid}").json()
    first = doc["round_list"][0]["matches"][0]["match_id"]
    m = org.request.get(f"/api/matches/{first}").json()
    # the clock waits for the table's set-up, with the tournament's minutes
    # (docs/rulings.md#the-clock-of-a-tournament-round)
    assert m["label"] == cat["tday.match_label"].format(round=1, table=1) and m["view"]["armed"] is True and m["view"]["clock"]["running"] is False
    assert m["view"]["clock"]["limit_seconds"] == 90 * 60
    assert m["players"] == doc["round_list"][0]["tables"][0] and b in m["players"]
    org.screenshot(path=str(artifacts_dir / f"tday-started-{locale}.png"), full_page=True)

    # the printable seats
    org.goto(f"/tournaments/{tid}/print?round=1")
    expect(org.locator("#print-tables .table")).to_have_count(2)
    expect(org.locator("#print-tables .table .table-qr svg")).to_have_count(2)  # each table's QR code
    org.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    org.screenshot(path=str(artifacts_dir / f"tday-print-round-{locale}.png"), full_page=True)
    org.goto(f"/tournaments/{tid}/print")
    expect(org.locator("#print-standings tbody tr")).to_have_count(8)

    # every table's card of the round, linked from the round: A4 sheets, each card with its QR code and address
    org.set_viewport_size({"width": 360, "height": 780})
    org.goto(f"/tournaments/{tid}")
    org.click(".tday-round[data-round='1'] a[data-cards='1']")
    cards = org.locator("#cards .table-card-print")
    expect(cards).to_have_count(2)
    for k, mid in enumerate(m["match_id"] for m in doc["round_list"][0]["matches"]):
        card = org.locator(f"#cards .table-card-print[data-match='{mid}']")
        expect(card.locator(".tc-label")).to_have_text(cat["tday.match_label"].format(round=1, table=k + 1))
        expect(card.locator(".tc-qr svg")).to_be_visible()
        url = org.request.get(f"/api/matches/{mid}/join").json()["url"]
        expect(card.locator(".tc-url code")).to_have_text(url)
    assert org.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    org.screenshot(path=str(artifacts_dir / f"tday-cards-phone-{locale}.png"), full_page=True)
    org.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    org.emulate_media(media="print")
    expect(org.locator(".tc-head")).to_be_hidden()
    org.screenshot(path=str(artifacts_dir / f"tday-cards-a4-{locale}.png"), full_page=True)
    org.emulate_media(media="screen")
    # and the tables page links every open table's cards
    org.goto("/tournament")
    org.click("#print-cards")
    expect(org.locator("#cards .table-card-print").first).to_be_visible()
    for mid in (m["match_id"] for m in doc["round_list"][0]["matches"]):
        expect(org.locator(f"#cards .table-card-print[data-match='{mid}'] svg")).to_have_count(1)


def test_organiser_registers_club_players_by_type_ahead(new_context, server, artifacts_dir):
    """Registering from the club roster: type a few letters, tap the roster player (their id goes with the
    name); a new name can be put on the roster from the same list; a round's matches carry the roster ids."""
    org = _organiser(new_context, server, "en-GB")
    org.set_viewport_size({"width": 360, "height": 780})
    h = {"Origin": server.url}
    club = org.request.post("/api/clubs", data={"name": "Type-ahead Club"}, headers=h).json()
    ids = {}
    for n in ("Rosalba Neri", "Marco Verdi", "Marta Rossi"):
        r = org.request.post("/api/players", data={"club": club["id"], "name": n}, headers=h)
        assert r.status == 201, r.text()
        ids[n] = r.json()["id"]
    r = org.request.post("/api/tournaments", headers=h, data={
        "name": "Coppa del club", "date": "2026-12-12", "game": "conquest-italy", "table_size": 3, "rounds": 1,
        "players": []})
    tid = r.json()["id"]
    org.goto(f"/tournaments/{tid}")
    box = org.locator("#tday-add [name=player]")
    box.press_sequentially("ros")  # the type-ahead: word starts, any case
    org.locator(f"#tday-suggest button[data-roster-id='{ids['Rosalba Neri']}']").click()
    expect(org.locator(f"#tday-players li[data-roster-id='{ids['Rosalba Neri']}']")).to_have_count(1)
    expect(box).to_have_value("")
    box.press_sequentially("mar")
    expect(org.locator("#tday-suggest button.suggest")).to_have_count(2)  # Marco and Marta
    org.screenshot(path=str(artifacts_dir / "tday-roster-typeahead.png"), full_page=True)
    org.locator(f"#tday-suggest button[data-roster-id='{ids['Marco Verdi']}']").click()
    expect(org.locator("#tday-players li.on-roster")).to_have_count(2)
    box.press_sequentially("Ugo Nuovo")  # a new name: onto the roster from the list, then registered
    org.click("#tday-suggest .add-to-roster")
    expect(org.locator("#tday-players li.on-roster")).to_have_count(3)
    box.fill("Ospite")  # a guest typed and registered as is
    org.click("#tday-add button[type=submit]")
    expect(org.locator("#tday-players li")).to_have_count(4)
    expect(org.locator("#tday-players li[data-player='Ospite']:not(.on-roster)")).to_have_count(1)
    assert org.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    org.screenshot(path=str(artifacts_dir / "tday-roster-registered.png"), full_page=True)
    doc = org.request.get(f"/api/tournaments/{tid}").json()
    assert doc["players"][:2] == ["Rosalba Neri", "Marco Verdi"]
    assert doc["player_ids"][:2] == [ids["Rosalba Neri"], ids["Marco Verdi"]] and doc["player_ids"][3] is None
    org.click("#tday-seat")
    org.once("dialog", lambda d: d.accept())
    org.click("[data-start='1']")
    expect(org.locator(".tday-round[data-round='1'] .tday-table a[href$='/display']")).to_have_count(1)
    doc = org.request.get(f"/api/tournaments/{tid}").json()
    mid = doc["round_list"][0]["matches"][0]["match_id"]
    m = org.request.get(f"/api/matches/{mid}").json()
    assert m["options"]["club"] == club["id"]


ROSTER8 = ["Alba Neri", "Bice Rota", "Ciro Vela", "Dora Sala", "Ezio Bava", "Fede Lupo", "Gaia Moro", "Ivo Rana"]


@pytest.mark.parametrize("locale, cat", [("en-GB", EN), ("it-IT", IT)])
def test_new_tournament_registers_club_players_from_the_roster_in_taps(new_context, server, artifacts_dir, locale,
                                                                        cat):
    """The new-tournament form at 390 px on a touch screen: the players are picked from the club's roster by
    type-ahead (the new-match page's picker), a new name goes onto the roster from the same list, and the
    tournament stores each roster id. Registering 8 roster players: 1 tap on the name box, then per player
    three letters and 1 tap on the name offered (9 taps), and 1 tap on Create."""
    org = _organiser(new_context, server, locale)
    org.close()
    org = new_context(locale=locale, viewport={"width": 390, "height": 844}, has_touch=True,
                      is_mobile=True).new_page()  # the organiser's session is the context's: sign in again
    org.goto("/login")
    org.fill("#pin", "482193")
    org.click("#login-form button[type=submit]")
    org.wait_for_url(lambda url: "/login" not in url)
    h = {"Origin": server.url}
    club = org.request.post("/api/clubs", data={"name": f"Roster Club {locale}"}, headers=h).json()
    ids = {}
    for n in ROSTER8:
        ids[n] = org.request.post("/api/players", data={"club": club["id"], "name": n}, headers=h).json()["id"]
    org.goto("/tournaments")
    org.fill("#tday-new [name=name]", f"Coppa del roster {locale}")
    org.select_option("#tday-new [name=game]", "richelieu")
    if org.locator("#tday-new-club-field").is_visible():  # other tests' clubs on this box: pick ours
        org.select_option("#tday-new-club", club["id"])
    taps = 0
    org.tap("#tday-new-player")
    taps += 1
    box = org.locator("#tday-new-player")
    for i, n in enumerate(ROSTER8):
        box.press_sequentially(n[:3].lower())  # three letters, any case
        button = org.locator(f"#tday-new-suggest button[data-roster-id='{ids[n]}']")
        expect(button).to_be_visible()
        if i == 1:
            org.screenshot(path=str(artifacts_dir / f"tday-new-typeahead-{locale}.png"), full_page=True)
        button.tap()
        taps += 1
        expect(org.locator("#tday-new-players li.on-roster")).to_have_count(i + 1)
        expect(box).to_have_value("")
        expect(box).to_be_focused()  # the keyboard stays up for the next name
    assert taps == 9
    expect(org.locator("#tday-new-count")).to_have_text(cat["tday.players_count.other"].format(n=8))
    # a picked player is not offered again
    box.press_sequentially("alb")
    expect(org.locator("#tday-new-suggest")).to_have_count(1)
    expect(org.locator(f"#tday-new-suggest button[data-roster-id='{ids['Alba Neri']}']")).to_have_count(0)
    box.fill("")
    # a new name: onto the roster from the list, registered with its new id
    expect(org.locator("#tday-new-suggest")).to_have_count(0)
    box.press_sequentially("Zeno Nuovo")
    expect(org.locator("#tday-new-suggest .add-to-roster")).to_contain_text("Zeno Nuovo")
    org.locator("#tday-new-suggest .add-to-roster").tap()
    expect(org.locator("#tday-new-players li.on-roster")).to_have_count(9)
    # a guest typed as is
    box.press_sequentially("Ospite")
    org.locator("#tday-new-add").tap()
    expect(org.locator("#tday-new-players li")).to_have_count(10)
    expect(org.locator("#tday-new-players li[data-player='Ospite']:not(.on-roster)")).to_have_count(1)
    assert org.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    org.screenshot(path=str(artifacts_dir / f"tday-new-roster-{locale}.png"), full_page=True)
    org.locator("#tday-new button[type=submit]").tap()
    org.wait_for_url("**/tournaments/*")
    tid = org.url.rstrip("/").split("/")[-1]
    doc = org.request.get(f"/api/tournaments/{tid}").json()
    assert doc["players"][:8] == ROSTER8 and doc["player_ids"][:8] == [ids[n] for n in ROSTER8]
    assert doc["players"][8:] == ["Zeno Nuovo", "Ospite"] and doc["player_ids"][8] and doc["player_ids"][9] is None
    assert doc["club_id"] == club["id"]
    expect(org.locator("#tday-players li.on-roster")).to_have_count(9)


def test_organiser_silences_a_tables_tv_from_the_phone(new_context, browser, server, artifacts_dir):
    """The organiser's phone silences one table's TV, then every TV, then sounds them again; the TV follows
    live over its stream, and its own ♪ button keeps working in between."""
    org = _organiser(new_context, server, "en-GB")
    org.set_viewport_size({"width": 360, "height": 780})
    h = {"Origin": server.url}
    tid = org.request.post("/api/tournaments", headers=h, data={
        "name": "Coppa silenziosa", "date": "2026-12-12", "game": "conquest-italy", "table_size": 3, "rounds": 1,
        "players": ["Anna", "Bruno", "Carla"]}).json()["id"]
    assert org.request.post(f"/api/tournaments/{tid}/rounds", headers=h, data={}).status == 201
    doc = org.request.post(f"/api/tournaments/{tid}/rounds/1/start", headers=h, data={}).json()
    mid = doc["round_list"][0]["matches"][0]["match_id"]
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 720}, locale="en-GB")
    try:
        tv = ctx.new_page()
        tv.goto(f"/m/{mid}/display")
        mute = tv.locator("#tv-mute")
        expect(mute).to_have_attribute("aria-pressed", "false")
        expect(tv.locator("body")).to_have_attribute("data-remote-sound", "on")  # the stream's head has arrived
        org.goto(f"/tournaments/{tid}")
        table_btn = org.locator(f"[data-tv-sound='{mid}']")
        expect(table_btn).to_have_text(EN["tday.tv_sound_on"])
        table_btn.click()
        expect(table_btn).to_have_text(EN["tday.tv_sound_off"])
        expect(mute).to_have_attribute("aria-pressed", "true")  # the TV went silent, live
        assert tv.evaluate("window.CompanionSound.play('5-minutes')") is False
        org.screenshot(path=str(artifacts_dir / "tday-tv-silenced.png"), full_page=True)
        tv.click("#tv-mute")  # the TV's own button still works
        expect(mute).to_have_attribute("aria-pressed", "false")
        org.click("#tday-tv-all")  # every TV
        expect(org.locator("#tday-tv-all")).to_have_text(EN["tday.tv_all_on"])
        expect(mute).to_have_attribute("aria-pressed", "true")
        org.click("#tday-tv-all")
        table_btn.click()  # both on again: the TV sounds again
        expect(table_btn).to_have_text(EN["tday.tv_sound_on"])
        expect(mute).to_have_attribute("aria-pressed", "false")
        tv.reload()  # switched on later: starts as set (sounding)
        expect(tv.locator("body")).to_have_attribute("data-remote-sound", "on")
        expect(mute).to_have_attribute("aria-pressed", "false")
        assert org.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    finally:
        ctx.close()


def test_a_tv_whose_script_comes_after_the_streams_head_still_follows_the_sound(new_context, browser, server):
    """The TV's js/display.js loads beside the scripts that open the match's stream: when it came after the
    stream's head (a loaded box), the head's tv-sound was told before anyone listened, and the TV never
    followed the organiser's switch (its body's data-remote-sound never came). Here display.js is held back
    until the stream has been asked for and its head had time to arrive: the TV still starts as set (silent)."""
    org = _organiser(new_context, server, "en-GB")
    h = {"Origin": server.url}
    tid = org.request.post("/api/tournaments", headers=h, data={
        "name": "Coppa tardiva", "date": "2026-12-12", "game": "conquest-italy", "table_size": 3, "rounds": 1,
        "players": ["Anna", "Bruno", "Carla"]}).json()["id"]
    assert org.request.post(f"/api/tournaments/{tid}/rounds", headers=h, data={}).status == 201
    doc = org.request.post(f"/api/tournaments/{tid}/rounds/1/start", headers=h, data={}).json()
    mid = doc["round_list"][0]["matches"][0]["match_id"]
    assert org.request.put(f"/api/matches/{mid}/tv/sound", headers=h, data={"off": True}).ok
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 720}, locale="en-GB")
    try:
        tv = ctx.new_page()
        held = []
        tv.route("**/js/display*.js*", lambda route: held.append(route))
        with tv.expect_request(lambda r: "/stream" in r.url):
            tv.goto(f"/m/{mid}/display", wait_until="commit")
        tv.wait_for_timeout(1000)  # the head (its tv-sound) arrives now, before display.js runs
        assert held, "display.js was not asked for"
        for route in held:
            route.continue_()
        tv.unroute("**/js/display*.js*")
        expect(tv.locator("body")).to_have_attribute("data-remote-sound", "off")
        expect(tv.locator("#tv-mute")).to_have_attribute("aria-pressed", "true")
    finally:
        ctx.close()
