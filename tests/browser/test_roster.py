"""The club roster in headless Chromium: picking a roster player by type-ahead on the new-match page (the
club and season chosen there reach the server with the seat's roster id), adding a new name to the roster
from there, a rename on the player page that keeps the player's old results, and the pages at 360 px."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def org(browser, server):
    """An organiser's phone (signed in with the setup code), with a club and a 2026 Rome season."""
    ctx = browser.new_context(base_url=server.url, locale="en-GB", viewport={"width": 412, "height": 860})
    ctx.set_default_timeout(10_000)
    page = ctx.new_page()
    page.goto("/login")
    page.fill("#setup-code", server.setup_code)
    page.fill("#new-pin", "482193")
    page.fill("#club-name", "Fan Club")  # the first PIN names the box's club
    page.click("#setup-form button[type=submit]")
    page.wait_for_url(server.url + "/join")

    def call(method, path, body=None):
        r = page.request.fetch(path, method=method, data=body, headers={"Origin": server.url})
        assert r.ok, (path, r.status, r.text())
        return r.json()

    page.call = call
    [club] = call("GET", "/api/seasons")["clubs"]
    assert club["name"] == "Fan Club"
    page.season = call("POST", "/api/seasons", {"club": club["id"], "game": "rome-is-burning", "year": 2026})
    page.club = club
    yield page
    ctx.close()


def fits(page):
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_pick_a_roster_player_by_type_ahead(org, artifacts_dir):
    nico = org.call("POST", "/api/players", {"name": "Nicolò Rossi", "colour": "#9467bd"})
    org.call("POST", "/api/players", {"name": "Anna Bianchi"})
    org.goto("/new")
    org.select_option("#game", "rome-is-burning")
    expect(org.locator("#season")).to_have_value(org.season["id"])  # the club's season of the game, by default
    names = org.locator(".player-name")
    # a name typed then Escape: no list comes after it (its look-up, 150 ms later, would push the form down
    # under the next tap)
    names.nth(0).press_sequentially("Anna", delay=20)
    names.nth(0).press("Escape")
    org.wait_for_timeout(500)  # (a list that does not come: the look-up's 150 ms and its answer, given time)
    expect(org.locator(".roster-suggest")).to_have_count(0)
    names.nth(0).fill("")
    names.nth(0).press_sequentially("NICO", delay=20)  # case- and accent-insensitive
    suggestion = org.locator(f".roster-suggest [data-roster-id='{nico['id']}']")
    expect(suggestion).to_be_visible()
    org.screenshot(path=str(artifacts_dir / "roster-type-ahead.png"), full_page=True)
    suggestion.click()
    expect(names.nth(0)).to_have_value("Nicolò Rossi")
    expect(org.locator(".player-colour").nth(0)).to_have_value("#9467bd")
    # a new name offers to add it to the roster
    names.nth(1).press_sequentially("Zed", delay=20)
    add = org.locator(".add-to-roster")
    expect(add).to_contain_text("Zed")
    add.click()
    expect(org.locator("#toast")).to_contain_text("Zed is on the roster now")
    names.nth(2).fill("Guest Person")
    assert fits(org)
    with org.expect_request(re.compile(r".*/api/matches$")) as req:
        org.click("#create")
    body = req.value.post_data_json
    zed = [p for p in org.call("GET", "/api/players?q=zed")["players"]][0]
    assert body["club"] == org.club["id"] and body["season"] == org.season["id"]
    assert body["roster"] == [nico["id"], zed["id"], None]
    org.wait_for_url(re.compile(r"/m/[0-9a-f]+$"))
    mid = org.url.rsplit("/", 1)[1]
    match = org.call("GET", f"/api/matches/{mid}")
    assert match["options"]["season"] == org.season["id"] and match["options"]["club"] == org.club["id"]


def test_a_rename_keeps_the_history(org, artifacts_dir):
    sid = org.season["id"]
    org.call("POST", f"/api/seasons/{sid}/results", {"date": "2026-02-01", "results": [
        {"player": "Marta", "place": 1}, {"player": "Bo", "place": 2}, {"player": "Cy", "place": 3}]})
    for day, order in (("08", ["Bo", "Marta", "Cy"]), ("15", ["Cy", "Bo", "Marta"])):
        org.call("POST", f"/api/seasons/{sid}/results", {"date": f"2026-02-{day}", "results": [
            {"player": p, "place": i + 1} for i, p in enumerate(order)]})
    marta = org.call("GET", "/api/players?q=marta")["players"][0]
    org.goto(f"/players/{marta['id']}")
    expect(org.locator("#player-last li")).to_have_count(3)
    org.fill("#edit-name", "Marta Verdi")
    org.click("#save-player")
    expect(org.locator("#player-name")).to_contain_text("Marta Verdi")
    last = org.locator("#player-last li")
    expect(last).to_have_count(3)  # newest first; the oldest, from before the rename, is still there
    expect(last.nth(2)).to_contain_text("2026-02-01")
    expect(last.nth(2)).to_contain_text("1 of 3")
    expect(org.locator("#player-games .trend svg polyline")).to_have_count(1)
    expect(org.locator("#player-seasons")).to_contain_text(org.season["name"])
    stored = org.call("GET", f"/api/players/{marta['id']}")
    assert stored["colour"] is None and stored["short_name"] == "Marta"  # only the name was changed
    org.screenshot(path=str(artifacts_dir / "roster-player-page.png"), full_page=True)
    # the season's pages follow the new name and link to the player page
    org.goto(f"/seasons/{sid}")
    expect(org.locator("#standings")).to_contain_text("Marta Verdi")
    org.click("#standings a:has-text('Marta Verdi')")
    org.click("#player-page-link")
    expect(org).to_have_url(re.compile(f"/players/{marta['id']}$"))


def test_pages_fit_a_360_px_phone(org, artifacts_dir):
    org.set_viewport_size({"width": 360, "height": 740})
    try:
        for path, name in (("/players", "roster-list"), ("/new", "roster-new-360")):
            org.goto(path)
            org.wait_for_load_state("networkidle")
            assert fits(org), path
            org.screenshot(path=str(artifacts_dir / f"{name}.png"), full_page=True)
        anyone = org.call("GET", "/api/players")["players"][0]
        org.goto(f"/players/{anyone['id']}")
        assert fits(org)
        org.goto("/players?lang=it")
        expect(org.locator("h1")).to_have_text("Giocatori")
        org.goto("/players?lang=en")
    finally:
        org.set_viewport_size({"width": 412, "height": 860})


def test_a_phone_opens_its_personal_link_and_a_second_club_is_chosen_on_new_match(org, browser, server, artifacts_dir):
    bo = org.call("GET", "/api/players?q=bo")["players"][0]
    org.goto(f"/players/{bo['id']}")
    org.click("#new-link")
    url = org.locator("#link-url").inner_text()
    expect(org.locator("#link-count")).to_have_attribute("data-n", re.compile("[1-9]"))  # the new link counted
    assert url.startswith(server.url + "/me/")
    phone = browser.new_context(base_url=server.url, locale="it-IT", viewport={"width": 360, "height": 740})
    try:
        page = phone.new_page()
        page.goto(url)
        expect(page).to_have_url(f"{server.url}/players/{bo['id']}")  # the token left the address bar
        expect(page.locator("#this-is-me")).to_have_text("sei tu")
        expect(page.locator("#role-badge")).to_have_text(re.compile("giocatore", re.I))
        page.screenshot(path=str(artifacts_dir / "roster-this-is-me.png"), full_page=True)
        assert page.evaluate("[...document.querySelectorAll('.table-scroll')].every(w => w.scrollWidth <= w.clientWidth)")
        org.click("#revoke-links")
        expect(org.locator("#link-count")).to_have_attribute("data-n", "0")  # (once the server has answered)
        page.reload()
        expect(page.locator("#this-is-me")).to_have_count(0)
    finally:
        phone.close()
    # a second club: the new-match page asks which, and offers that club's seasons
    other = org.call("POST", "/api/clubs", {"name": "Altro Club"})
    theirs = org.call("POST", "/api/seasons", {"club": other["id"], "game": "rome-is-burning", "year": 2026})
    org.goto("/new")
    org.select_option("#game", "rome-is-burning")
    expect(org.locator("#club")).to_be_visible()
    org.select_option("#club", other["id"])
    expect(org.locator("#season")).to_have_value(theirs["id"])
    org.locator(".player-name").nth(0).press_sequentially("Nic", delay=20)
    expect(org.locator(".add-to-roster")).to_be_visible()  # Nicolò is on the other club's roster only
    expect(org.locator(".roster-suggest .suggest")).to_have_count(0)


def test_the_organiser_places_the_upgrade_s_leftover_names_by_taps(org, server, artifacts_dir):
    """A match the roster upgrade could not place: the roster page lists its names, each with the entries that
    look like the same person; one tap each puts a name on a suggested entry, a new entry, or another roster
    player picked by type-ahead. Nothing is merged; each choice is an audit line on the page."""
    from companion.storage import Store

    org.set_viewport_size({"width": 360, "height": 780})
    luca = org.call("POST", "/api/players", {"club": org.club["id"], "name": "Luca Ferri"})
    anna = org.call("POST", "/api/players", {"club": org.club["id"], "name": "Annalisa Moro"})
    m = org.call("POST", "/api/matches", {"game": "richelieu", "players": ["LUCA ferri", "Zeno Quinto", "Marco B"]})
    with Store(server.data_dir / "companion.db") as store, store.write() as c:  # as the upgrade leaves it
        c.execute("DELETE FROM match_players WHERE match_id=?", (m["id"],))
        c.execute("INSERT INTO roster_pending(match_id, reason) VALUES (?, 'several clubs')", (m["id"],))
    org.goto("/players?lang=it")
    expect(org.locator(f"#leftovers .leftover[data-match='{m['id']}']")).to_be_visible()
    assert fits(org)
    org.screenshot(path=str(artifacts_dir / "roster-leftovers-it.png"), full_page=True)
    org.goto("/players?lang=en")
    item = org.locator(f"#leftovers .leftover[data-match='{m['id']}']")
    name = item.locator(".leftover-name[data-name='LUCA ferri']")
    expect(name.locator(".leftover-pick")).to_have_text(re.compile(r"^It is Luca Ferri"))
    expect(item.locator(".leftover-name[data-name='Zeno Quinto'] .leftover-pick")).to_have_count(0)
    org.screenshot(path=str(artifacts_dir / "roster-leftovers.png"), full_page=True)
    name.locator(f".leftover-pick[data-player-id='{luca['id']}']").click()  # 1 tap
    expect(item.locator(".leftover-name.placed[data-name='LUCA ferri']")).to_contain_text("LUCA ferri is Luca Ferri")
    item.locator(".leftover-name[data-name='Zeno Quinto'] .leftover-new").click()  # 1 tap: a new entry
    expect(item.locator(".leftover-name.placed[data-name='Zeno Quinto']")).to_be_visible()
    other = item.locator(".leftover-name[data-name='Marco B'] .leftover-other")
    other.press_sequentially("annal")  # another roster player, by the new-match page's type-ahead
    org.locator(f".leftover-name[data-name='Marco B'] .roster-suggest button[data-roster-id='{anna['id']}']").click()
    expect(org.locator("#assignments li")).to_have_count(3)
    expect(org.locator(f"#leftovers .leftover[data-match='{m['id']}']")).to_have_count(0)  # all placed
    expect(org.locator("#assignments li").first).to_contain_text("Marco B is Annalisa Moro")
    assert fits(org)
    org.screenshot(path=str(artifacts_dir / "roster-leftovers-placed.png"), full_page=True)
    assert {p["name"] for p in org.call("GET", f"/api/players?club={org.club['id']}")["players"]} >= {
        "Luca Ferri", "Zeno Quinto", "Annalisa Moro"}
    audit = org.call("GET", "/api/players/assignments")["assignments"]
    assert [(a["name"], a["player"]["id"] if a["name"] != "Zeno Quinto" else a["created"]) for a in audit] == [
        ("LUCA ferri", luca["id"]), ("Zeno Quinto", True), ("Marco B", anna["id"])]
