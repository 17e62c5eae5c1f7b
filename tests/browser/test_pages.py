"""The phone web app in headless Chromium: live sync across phones, events and undo, joining through
the QR link, language switch, refused writes without a session, screenshots of the main pages."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def joined_page(new_context, server, **kw):
    """A phone that scanned the club's join QR code (the join link the server printed)."""
    ctx = new_context(**kw)
    page = ctx.new_page()
    page.goto(server.join_url)
    expect(page).to_have_url(server.url + "/pick")  # redirected: the token is not in the address; pick a table
    expect(page.locator("#role-badge")).to_have_text("player")
    return page


def create_match(page, game, players, label=None, clock=None):
    page.goto("/new")
    page.select_option("#game", game)
    names = page.locator(".player-name")
    for i, name in enumerate(players):
        if i >= names.count():
            page.click("#add-player")
        names.nth(i).fill(name)
    if label:
        page.fill("#label", label)
    if clock is not None:
        page.locator("#opt-clock").set_checked(clock)
    page.click("#create")
    page.wait_for_url(re.compile(r"/m/[0-9a-f]+$"))
    return page.url.rsplit("/", 1)[1]


def test_a_new_match_appears_live_on_another_phone(new_context, server, artifacts_dir):
    watcher = new_context().new_page()  # a viewer on the home page, never reloaded
    watcher.goto("/")
    expect(watcher.locator("#open-matches")).not_to_contain_text("Loading")
    creator = joined_page(new_context, server)
    creator.goto("/new")
    creator.screenshot(path=str(artifacts_dir / "web-new-match.png"), full_page=True)
    mid = create_match(creator, "richelieu", ["Anna", "Bruno", "Carla"], label="Tavolo 7")
    item = watcher.locator(f"#open-matches li[data-id='{mid}']")
    expect(item).to_contain_text("Tavolo 7")
    expect(item).to_contain_text("Anna")
    watcher.screenshot(path=str(artifacts_dir / "web-home.png"), full_page=True)
    creator.screenshot(path=str(artifacts_dir / "web-match.png"), full_page=True)


def test_record_an_event_and_undo_it_seen_live_by_a_second_phone(new_context, server, artifacts_dir):
    page = joined_page(new_context, server)
    mid = create_match(page, "rome-is-burning", ["Anna", "Bruno", "Carla"], label="Tavolo 3", clock=True)
    other = new_context().new_page()
    other.goto(f"/m/{mid}")
    expect(other.locator("#seq")).to_have_text("0")
    page.click("#clock-start")
    expect(page.locator("#history li[data-seq='1']")).to_have_attribute("data-type", "clock.start")
    expect(page.locator("#clock-pause")).to_be_visible()
    expect(other.locator("#seq")).to_have_text("1")  # live, no reload
    expect(other.locator("#clock-panel")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "web-match-clock.png"), full_page=True)
    page.click("#undo")  # undo asks first, saying what it takes back
    expect(page.locator("#undo-confirm-text")).to_have_text("Undo: Clock started?")
    expect(page.locator("#seq")).to_have_text("1")
    page.click("#undo-yes")
    expect(page.locator("#seq")).to_have_text("2")
    expect(page.locator("#history li[data-seq='1']")).to_have_class(re.compile("undone"))
    expect(page.locator("#clock-start")).to_be_visible()
    expect(other.locator("#seq")).to_have_text("2")
    expect(other.locator("#history li[data-seq='2']")).to_have_attribute("data-type", "undo")
    display = new_context(viewport={"width": 1280, "height": 720}).new_page()
    display.goto(f"/m/{mid}/display")
    expect(display.locator("#clock-remaining")).not_to_have_text("--:--")
    display.screenshot(path=str(artifacts_dir / "web-display.png"))


def test_a_stale_phone_gets_a_conflict_not_an_overwrite(new_context, server):
    a = joined_page(new_context, server)
    mid = create_match(a, "rome-is-burning", ["Anna", "Bruno"], clock=True)
    b = joined_page(new_context, server)
    b.goto(f"/m/{mid}")
    expect(b.locator("#clock-start")).to_be_visible()
    b.route("**/stream*", lambda route: route.abort())  # b stops hearing live updates
    b.reload()
    expect(b.locator("#clock-start")).to_be_visible()
    a.click("#clock-start")
    expect(a.locator("#seq")).to_have_text("1")
    b.click("#clock-start")  # b still believes seq 0
    expect(b.locator("#conflict")).to_be_visible()
    expect(b.locator("#seq")).to_have_text("1")  # the fresh state is shown
    expect(b.locator("#clock-start")).to_be_hidden()


def test_organiser_setup_join_qr_and_joining_through_it(new_context, server, artifacts_dir):
    org = new_context().new_page()
    org.goto("/login")
    org.screenshot(path=str(artifacts_dir / "web-login-setup.png"), full_page=True)
    org.fill("#setup-code", server.setup_code)
    org.fill("#new-pin", "482193")
    org.click("#setup-form button[type=submit]")
    org.wait_for_url(server.url + "/join")
    expect(org.locator("#role-badge")).to_have_text("organiser")
    expect(org.locator("#join-qr svg")).to_be_visible()
    org.screenshot(path=str(artifacts_dir / "web-join.png"), full_page=True)
    link = org.locator("#join-url").inner_text()
    assert link.startswith(server.url + "/j/")
    phone = new_context().new_page()
    phone.goto(link)
    expect(phone).to_have_url(server.url + "/pick")
    expect(phone.locator("#role-badge")).to_have_text("player")
    org.goto("/tournament")
    expect(org.locator("#tables")).not_to_contain_text("Loading")
    org.screenshot(path=str(artifacts_dir / "web-tournament.png"), full_page=True)
    # a wrong PIN is refused with a clear message
    other = new_context().new_page()
    other.goto("/login")
    other.fill("#pin", "000000")
    other.click("#login-form button[type=submit]")
    expect(other.locator("#form-error")).to_contain_text("That PIN is wrong")


def test_switch_language_and_it_is_remembered(new_context):
    page = new_context(locale="en-GB").new_page()
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Tables in play")
    page.click(".lang-switch a[data-lang='it']")
    expect(page.locator("h1").first).to_have_text("Tavoli in gioco")
    page.goto("/new")
    expect(page.locator("h1")).to_have_text("Nuova partita")


def test_italian_browser_gets_italian(new_context, artifacts_dir):
    page = new_context(locale="it-IT").new_page()
    page.goto("/")
    expect(page.locator("h1").first).to_have_text("Tavoli in gioco")
    page.screenshot(path=str(artifacts_dir / "web-home-it.png"), full_page=True)


def test_a_write_without_a_session_is_refused(new_context):
    page = new_context().new_page()
    page.goto("/new")
    expect(page.locator("#need-join")).to_be_visible()
    page.locator(".player-name").nth(0).fill("Anna")
    page.locator(".player-name").nth(1).fill("Bruno")
    page.click("#create")
    expect(page.locator("#form-error")).to_be_visible()
    expect(page.locator("#form-error")).to_contain_text("scan the table's QR code")
    assert page.url.endswith("/new")
    status = page.evaluate("""() => fetch('/api/matches', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({game: 'richelieu', players: ['A', 'B']})}).then(r => r.status)""")
    assert status == 401


def test_dark_mode(new_context, artifacts_dir):
    page = new_context(color_scheme="dark").new_page()
    page.goto("/")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(18, 19, 22)"
    page.screenshot(path=str(artifacts_dir / "web-home-dark.png"), full_page=True)
