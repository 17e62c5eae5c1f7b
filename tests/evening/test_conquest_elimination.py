"""A conquest elimination on the seated phones and the TV: a match set up through the API, corrected by the
organiser to one city left for a player, who loses it to an attack with the table's dice (its own file: it
plays no tournament, so it runs beside the conquest evening, tests/evening/test_conquest.py)."""

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, Evening, Table, text

pytestmark = pytest.mark.browser


def test_an_elimination_is_said_on_the_phone_in_the_history_and_on_the_tv(browser, server, artifacts_dir):
    """Carla loses her last city to Anna's attack (a match set up through the API, then corrected by the
    organiser to one city left): her phone says she is out and who took it, every phone and the history
    say "Carla is eliminated", and so does the TV (docs/rulings.md#conquest-elimination)."""
    from companion.games.conquest_map import default_map

    ev = Evening(browser, server, artifacts=artifacts_dir)
    org, h = ev.org, {"Origin": server.url}

    def post(path, body):
        r = org.request.post(path, data=body, headers=h)
        assert r.status < 300, r.text()
        return r.json()

    players = ["Anna", "Bruno", "Carla"]
    mid = post("/api/matches", {"game": "conquest-italy", "players": players, "label": "Elimination"})["id"]
    m = post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    while m["view"]["state"]["phase"] == "place":
        s = m["view"]["state"]
        p = s["next_placer"]
        city = next(c for c, q in s["owner"].items() if q == p)
        m = post(f"/api/matches/{mid}/events", {"type": "setup.place", "expected_seq": m["seq"],
                                                "data": {"player": p, "placements": {city: min(5, s["reserve"][p])}}})
    m = post(f"/api/matches/{mid}/events", {"type": "clock.start", "expected_seq": m["seq"], "data": {"limit_minutes": 60}})
    # the organiser's corrections: Carla keeps one city, next to a city of Anna's with 10 units
    gm, owner = default_map(), m["view"]["state"]["owner"]
    last, front = next((c, n) for c in gm.cities if owner[c] == "Carla" for n in sorted(gm.neighbours[c])
                       if owner[n] == "Anna")
    fixes = [{"city": c, "player": "Bruno", "units": 1} for c in gm.cities if owner[c] == "Carla" and c != last]
    fixes += [{"city": front, "player": "Anna", "units": 10}, {"city": last, "player": "Carla", "units": 1}]
    for f in fixes:
        m = post(f"/api/matches/{mid}/events", {"type": "territory.set", "expected_seq": m["seq"], "data": f})
    table = Table(ev, 0, 1, players, mid, org.request.get(f"/api/matches/{mid}/join").json()["url"])
    ev.sit(table)
    tv = ev.tv(table)
    anna = table["Anna"]
    turn_view = anna.evaluate("window.companionMatch.view")
    assert turn_view["summary"]["turn"]["player"] == "Anna"
    anna.locator("#ci-reinforce-list .trk-step button[title]").first.click()
    table.act("Anna", "#ci-reinforce-send")
    # the attack with the table's dice: three sixes against a one
    anna.locator(f"#ci-targets button[data-from='{front}'][data-to='{last}']").click()
    anna.check("input[name=ci-dice-mode][value=table]")
    for box, face in (("#ci-adice input", "6"), ("#ci-ddice input", "1")):
        for i in range(anna.locator(box).count()):
            anna.locator(box).nth(i).fill(face)
    n = table.act("Anna", "#ci-attack")
    table.wait_all(n)
    carla = table["Carla"]
    expect(carla.locator("#ci-out")).to_have_text(text(EN, "ci.you_are_out", player="Carla", by="Anna", city=last))
    expect(anna.locator("#ci-out")).to_be_hidden()
    for p in players:
        expect(table[p].locator("#history li").first).to_contain_text(text(EN, "ci.is_eliminated", player="Carla"))
        expect(table[p].locator(f"#ci-summary tr[data-player='Carla']")).to_contain_text(EN["ci.eliminated"])
    expect(tv.locator("#ci-tv-eliminated")).to_have_text(text(EN, "tv.ci_eliminated", player="Carla"))
    expect(tv.locator("#ci-tv-players tr.ci-tv-out[data-player='Carla']")).to_have_count(1)
    ev.shot(carla, "conquest-eliminated-phone", full_page=True)
    ev.shot(tv, "conquest-eliminated-tv")
    assert ev.errors() == []
