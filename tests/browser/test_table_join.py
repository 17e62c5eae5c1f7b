"""One scan to a seat, in headless Chromium and in WebKit (tests/engines.py: the one kit; ``ENGINES``): a new
phone follows a match's table link (its QR code), the match page asks "Who are you?" (free seats first, a taken
one said so, live, as a second phone sits), one tap seats the phone and its secret objective shows at once,
without a reload; a phone of the club-wide link picks its table, sits, taps its first move and follows another
device's. In Chromium alone: the TV page an organiser opened shows the table QR code and no objective; the
printable table card; the organiser frees and moves a seat; two phones answer the same name (its stream held
back: the kit's WebKit has no request routing)."""

import json

import pytest

from tests.browser.trackers_kit import organiser_api
from tests.engines import expect

pytestmark = pytest.mark.browser
ENGINES = ("chromium", "webkit")  # (the tests that take a `device`: tests/browser/conftest.py)

PLAYERS = ["Anna", "Bruno", "Carla"]
PHONE = {"width": 360, "height": 740}  # (WebKit's window is no narrower than 447 px: tests/engines.py)


@pytest.fixture(scope="module")
def org(server):
    return organiser_api(server)


def _watch(page):
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_phone_scans_the_table_qr_answers_who_it_is_and_sees_its_objective(device, server, org, lang, engine,
                                                                                artifacts_dir):
    cat = json.loads((__import__("companion.base.resources", fromlist=["web_dir"]).web_dir()
                      / "static" / "i18n" / f"{lang}.json").read_text())
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Tavolo 2",
                                          "options": {"clock": False}})["id"]
    secret = ["Roma", "Napoli", "Bari"]
    org.event(mid, "objective.set", {"player": "Anna", "cities": secret})
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    # two phones scan the table's code at once: this one waits on "Who are you?" while Bruno's phone sits
    locale = {"en": "en-GB", "it": "it-IT"}[lang]
    phone = _watch(device(locale=locale, viewport=PHONE).new_page())
    phone.goto(link)
    assert phone.url.endswith(f"/m/{mid}")  # the link left the address bar
    expect(phone.locator("#who-card h2")).to_have_text(cat["seat.who"])
    buttons = phone.locator("#who-card .who-btn")
    expect(buttons).to_have_count(3)
    for p in PLAYERS:
        expect(phone.locator(f"#who-card .who-btn[data-player='{p}']")).to_be_enabled()
    phone.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    phone.evaluate("window.__samePage = true")
    # its stream is open: another device's write (Carla's objective, secret: only its seq shows) comes to it
    org.event(mid, "objective.set", {"player": "Carla", "cities": ["Torino", "Milano"]})
    seq = org.ok("GET", f"/api/matches/{mid}")["seq"]
    phone.wait_for_function("n => window.companionMatch.seq >= n", arg=seq)
    bruno = _watch(device(locale=locale, viewport=PHONE).new_page())
    bruno.goto(link)
    bruno.click("#who-card .who-btn[data-player='Bruno']")
    expect(bruno.locator("#who-card")).to_be_hidden()
    # the waiting phone's card shows Bruno's seat taken, live, where the button was (nothing moves)
    taken = phone.locator("#who-card .who-btn[data-player='Bruno']")
    expect(taken).to_be_disabled()
    expect(taken).to_have_text(f"Bruno · {cat['seat.taken']}")
    assert buttons.evaluate_all("bs => bs.map(b => b.dataset.player)") == PLAYERS
    for p in ("Anna", "Carla"):
        expect(phone.locator(f"#who-card .who-btn[data-player='{p}']")).to_be_enabled()
    assert phone.evaluate("window.__samePage === true")
    expect(phone.locator("#ci-objective")).to_have_count(0)
    phone.screenshot(path=str(artifacts_dir / f"table-join-who-{lang}-{engine}.png"), full_page=True)
    phone.click("#who-card .who-btn[data-player='Anna']")
    # one tap: seated, the objective shown at once, no reload
    expect(phone.locator("#ci-objective li")).to_have_count(3)
    assert phone.eval_on_selector_all("#ci-objective li", "ls => ls.map(l => l.dataset.city)") == secret
    assert phone.evaluate("window.__samePage === true")
    expect(phone.locator("#who-card")).to_be_hidden()
    expect(phone.locator("#my-seat")).to_have_text(cat["seat.you_are"].format(player="Anna"))
    assert phone.evaluate("document.documentElement.scrollWidth") <= phone.viewport_size["width"]
    phone.locator("#ci-secret-body").scroll_into_view_if_needed()
    phone.screenshot(path=str(artifacts_dir / f"table-join-seated-{lang}-{engine}.png"))
    # Bruno's phone never sees Anna's objective
    assert bruno.evaluate("Object.keys(window.companionMatch.view.state.objectives)") == []
    assert not phone.errors and not bruno.errors, phone.errors + bruno.errors


def test_the_tv_page_shows_the_table_qr_and_no_objective_and_the_table_card_prints(new_context, server, org,
                                                                                     artifacts_dir):
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Tavolo 5",
                                          "options": {"clock": False}})["id"]
    org.event(mid, "objective.set", {"player": "Carla", "cities": ["Torino", "Milano"]})
    ctx = new_context(viewport={"width": 1280, "height": 720})
    tv = _watch(ctx.new_page())
    tv.goto(f"/m/{mid}/display")  # the Pi's own screen (localhost): the table QR code is shown
    expect(tv.locator("#table-qr svg")).to_be_visible()
    expect(tv.locator("#ci-tv-players table")).to_be_visible()  # the TV's own table of the players
    seen = tv.evaluate(f"fetch('/api/matches/{mid}?as=viewer').then(r => r.json())")
    assert seen["view"]["state"]["objectives"] == {}
    tv.screenshot(path=str(artifacts_dir / "table-tv-qr.png"))
    card = _watch(ctx.new_page())
    card.goto(f"/m/{mid}/card")
    expect(card.locator(".tc-label")).to_have_text("Tavolo 5")
    expect(card.locator("#table-card svg")).to_be_visible()
    url = card.locator("#table-url").inner_text()
    assert "/j/" in url and len(url.rsplit("/", 1)[1]) == 12
    card.emulate_media(media="print")
    expect(card.locator(".tc-actions")).to_be_hidden()
    card.screenshot(path=str(artifacts_dir / "table-card-a6.png"))
    assert not tv.errors and not card.errors


def test_a_phone_of_the_club_link_picks_its_table_sits_taps_and_follows_another_device(device, server, org,
                                                                                         engine, artifacts_dir):
    """The club's link (its QR code at the door): "Pick your table", the table, "Who are you?", one tap; then the
    seated phone's first move (Richelieu's Income, Anna's turn) recorded as hers, and another device's move shown live."""
    mid = org.ok("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS, "label": "Tavolo 9"})["id"]
    page = _watch(device(viewport=PHONE).new_page())
    page.goto(server.join_url)
    expect(page.locator("#role-badge.role-player")).to_be_visible()
    assert page.url.endswith("/pick")
    page.click(f"#pick-list a[data-id='{mid}']")
    page.click("#who-card .who-btn[data-player='Anna']")
    page.wait_for_function("() => window.companionMatch.match && window.companionMatch.match.seat === 'Anna'")
    if engine == "webkit":
        assert "AppleWebKit" in page.evaluate("navigator.userAgent") and "Chrome" not in page.evaluate("navigator.userAgent")
    seq = page.evaluate("window.companionMatch.seq")
    page.locator("#game-tracker button", has_text="Income").first.click()
    page.wait_for_function("n => window.companionMatch.seq > n && !window.companionMatch.busy", arg=seq)
    last = org.ok("GET", f"/api/matches/{mid}/events")["events"][-1]
    assert last["type"] == "action" and last["data"] == {"player": "Anna", "action": "income"}, last
    # another device's write arrives live over the stream
    seq = page.evaluate("window.companionMatch.seq")
    org.ok("POST", f"/api/matches/{mid}/events", {"expected_seq": seq, "type": "track.adjust",
                                                   "data": {"player": "Bruno", "track": "money", "delta": 1}})
    page.wait_for_function("n => window.companionMatch.seq > n", arg=seq)
    page.screenshot(path=str(artifacts_dir / f"table-pick-{engine}.png"))
    assert not page.errors, page.errors


def test_the_organiser_frees_and_moves_a_seat_on_the_match_page(new_context, server, org, artifacts_dir):
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Tavolo 4",
                                          "options": {"clock": False}})["id"]
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    phone = _watch(new_context(viewport=PHONE).new_page())
    phone.goto(link)
    phone.click("#who-card .who-btn[data-player='Anna']")
    expect(phone.locator("#my-seat")).to_be_visible()
    phone.evaluate("window.__samePage = true")
    # the organiser signs in on a phone of their own (first run: the setup code the server printed)
    page = _watch(new_context(viewport=PHONE).new_page())
    page.goto("/login")
    r = page.request.post("/api/auth/pin", data={"pin": "482193", "setup_code": server.setup_code},
                          headers={"Origin": server.url})
    if r.status != 200:  # another test of this module set it first
        r = page.request.post("/api/auth/login", data={"pin": "482193"}, headers={"Origin": server.url})
    assert r.status == 200, r.text()
    page.goto(f"/m/{mid}")
    expect(page.locator("#seats-admin")).to_have_attribute("open", "")  # a new match's page opens it
    anna = page.locator("#seat-list li[data-player='Anna']")
    expect(anna).to_contain_text("1 phone")
    page.screenshot(path=str(artifacts_dir / "table-seats-admin.png"), full_page=True)
    # move Anna's phone to Carla's seat
    carla = page.locator("#seat-list li[data-player='Carla']")
    option = carla.locator("select.seat-phone option").filter(has_text="Anna")
    carla.locator("select.seat-phone").select_option(option.get_attribute("value"))
    carla.locator(".seat-move").click()
    expect(page.locator("#seat-list li[data-player='Carla']")).to_contain_text("1 phone")
    expect(page.locator("#seat-list li[data-player='Anna']")).to_contain_text("no phone")
    assert org.ok("GET", f"/api/matches/{mid}/seats")["seats"][2]["taken"] is True
    # free it: the phone is asked again
    expect(phone.locator("#my-seat")).to_have_text("This phone is Carla's.")  # the phone follows, no reload
    page.locator("#seat-list li[data-player='Carla'] .seat-free").click()
    expect(page.locator("#seat-list li[data-player='Carla']")).to_contain_text("no phone")
    # the phone is asked again, without a reload, every seat free
    expect(phone.locator("#who-card")).to_be_visible()
    expect(phone.locator("#my-seat")).to_be_hidden()
    for p in PLAYERS:
        expect(phone.locator(f"#who-card .who-btn[data-player='{p}']")).to_be_enabled()
    assert phone.evaluate("window.__samePage === true")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert not page.errors and not phone.errors, page.errors + phone.errors


def test_two_phones_answer_the_same_name_the_second_is_told_in_words(new_context, server, org):
    """The two taps in the same instant: the second phone's card still showed Bruno free (here its live
    stream is held back), the box seats the first and tells the second in words."""
    mid = org.ok("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS, "label": "Tavolo 6"})["id"]
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    first, second = (_watch(new_context(locale=loc, viewport=PHONE).new_page()) for loc in ("en-GB", "it-IT"))
    second.route("**/stream*", lambda route: route.abort())
    for p in (first, second):
        p.goto(link)
        p.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    first.click("#who-card .who-btn[data-player='Bruno']")
    expect(first.locator("#my-seat")).to_be_visible()
    second.click("#who-card .who-btn[data-player='Bruno']")  # its page still showed Bruno free
    expect(second.locator("#toast")).to_have_text(
        "Il posto di Bruno è appena stato preso da un altro telefono: se non è il tuo, chiedi a un organizzatore.")
    expect(second.locator("#who-card .who-btn[data-player='Bruno']")).to_be_disabled()
    expect(second.locator("#who-card")).to_be_visible()
    assert not first.errors and not second.errors


ANDROID = ("Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
           "Mobile Safari/537.36")


@pytest.mark.parametrize("lang", ["en", "it"])
def test_seats_and_phones_name_each_phone_in_words(new_context, server, org, lang, artifacts_dir):
    """The organiser's "Seats and phones": a phone is the seated player's, with the time it signed in and its
    system and browser; the organiser's own phone says "this phone". No session ids."""
    from tests.browser.test_tournament_round import _organiser

    cat = json.loads((__import__("companion.base.resources", fromlist=["web_dir"]).web_dir()
                      / "static" / "i18n" / f"{lang}.json").read_text())
    locale = {"en": "en-GB", "it": "it-IT"}[lang]
    mid = org.ok("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS, "label": "Tavolo 8"})["id"]
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    phone = _watch(new_context(locale=locale, viewport=PHONE, user_agent=ANDROID).new_page())
    phone.goto(link)
    phone.click("#who-card .who-btn[data-player='Anna']")
    expect(phone.locator("#my-seat")).to_be_visible()
    page = _watch(_organiser(new_context, server, locale))
    page.goto(f"/m/{mid}")
    page.select_option("#seat", "Bruno")  # the organiser's own phone sits as Bruno
    expect(page.locator("#seat")).to_have_value("Bruno")
    expect(page.locator("#seats-admin")).to_have_attribute("open", "")  # a new match's page opens it
    anna = page.locator("#seat-list li[data-player='Anna'] .seat-phones li")
    expect(anna).to_have_count(1)
    joined = org.ok("GET", f"/api/matches/{mid}/seats")["seats"][0]["phones"][0]["joined_at"]
    hhmm = page.evaluate("iso => { const d = new Date(iso); return String(d.getHours()).padStart(2, '0') + ':' + "
                         "String(d.getMinutes()).padStart(2, '0'); }", joined)
    words = " · ".join([cat["seat.phone_of"].format(player="Anna"), cat["seat.joined"].format(time=hhmm),
                        "Android · Chrome"])
    expect(anna).to_have_text(words)
    mine = page.locator("#seat-list li[data-player='Bruno'] .seat-phones li")
    expect(mine).to_contain_text(cat["seat.phone_of"].format(player="Bruno"))
    expect(mine).to_contain_text(cat["seat.this_phone"])
    option = page.locator("#seat-list li[data-player='Carla'] select.seat-phone option").filter(has_text=words)
    expect(option).to_have_count(1)  # the phone to give a seat to, in the same words
    assert not page.locator("#seat-list").inner_text().count(anna.get_attribute("data-session")[:4] + ")")
    page.locator("#seats-admin").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir / f"table-seats-words-{lang}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert not page.errors and not phone.errors, page.errors + phone.errors


def test_a_seat_confirmed_by_the_table_lets_its_owner_replace_an_objective_a_guest_recorded(
        new_context, server, org, artifacts_dir):
    """An objective was recorded on Anna's seat before her phone sat (a guest who took the seat and left;
    here recorded for her through the API, the same for the rule); Anna sits, Bruno's phone confirms her
    seat ("Who sits at this table"), and Anna's page offers to record her own objective, which replaces
    the one recorded before (docs/rulings.md#seats)."""
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Tavolo 7",
                                          "options": {"clock": False}})["id"]
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    org.event(mid, "objective.set", {"player": "Anna", "cities": ["Aosta", "Torino"]})
    anna = _watch(new_context(viewport=PHONE).new_page())
    anna.goto(link)
    anna.click("#who-card .who-btn[data-player='Anna']")
    expect(anna.locator("#seat-peers")).to_be_visible()
    anna.click("#seat-peers summary")
    expect(anna.locator("#seat-mine-confirmed")).to_contain_text("not confirmed yet")
    expect(anna.locator("#ci-obj-before")).to_have_count(0)
    bruno = _watch(new_context(viewport=PHONE).new_page())
    bruno.goto(link)
    bruno.click("#who-card .who-btn[data-player='Bruno']")
    bruno.click("#seat-peers summary")
    confirm = bruno.locator("#peer-list .seat-confirm[data-player='Anna']")
    expect(confirm).to_contain_text("Yes, this is Anna")
    bruno.screenshot(path=str(artifacts_dir / "seat-confirm-peers.png"), full_page=True)
    confirm.click()
    expect(bruno.locator("#peer-list li[data-player='Anna'] .seat-confirmed")).to_contain_text("confirmed by Bruno")
    anna.reload()
    expect(anna.locator("#ci-obj-before")).to_be_visible()
    anna.click("#ci-obj-reset summary")
    for city in ("Roma", "Napoli", "Bari"):
        anna.check(f"#ci-obj-reset-grid input[value='{city}']")
    anna.screenshot(path=str(artifacts_dir / "seat-confirm-reset.png"), full_page=True)
    anna.click("#ci-obj-reset-send")
    expect(anna.locator("#ci-objective li")).to_have_count(3)
    assert sorted(anna.eval_on_selector_all("#ci-objective li", "ls => ls.map(l => l.dataset.city)")) == \
        ["Bari", "Napoli", "Roma"]
    expect(anna.locator("#ci-obj-before")).to_have_count(0)
    assert org.engine(mid).game_state["objectives"]["Anna"] == ["Roma", "Napoli", "Bari"]
    # the other seats' objectives recorded: Anna's phone draws its own from its view and asks the box nothing
    asked = []
    anna.on("request", lambda r: "/conquest/objective" in r.url and asked.append(r.url))
    seq = org.event(mid, "objective.set", {"player": "Bruno", "cities": ["Milano"]})["seq"]
    seq = org.event(mid, "objective.set", {"player": "Carla", "cities": ["Firenze"]})["seq"]
    anna.wait_for_function("n => window.companionMatch.seq >= n", arg=seq)
    expect(anna.locator("#ci-objective li")).to_have_count(3)
    assert asked == []
    assert not anna.errors and not bruno.errors, anna.errors + bruno.errors
