"""The Richelieu intrigue preview of a form being filled in by taps: an empty or partial form is no error
(it says how far it is), a full card gives the engine's result, a real mistake is still refused."""

from tests.web.test_trackers_api import events, new_match
from tests.web.test_trackers_api import seeded  # noqa: F401  (fixture)


def card(slots, faction=None):
    out = {"slots": slots, "rewards": {"first": [], "second": [], "cardinal": 0}}
    if faction:
        out["faction"] = faction
    return out


def test_an_empty_form_previews_as_nothing_placed(seeded, player):
    mid = new_match(player, "richelieu")
    r = player.post(f"/api/matches/{mid}/richelieu/preview",
                    {"data": {"richelieu_card": card([None] * 4), "faction_card": card([None] * 4, "england")}})
    assert r.status_code == 200, r.json
    assert r.json["complete"] is False
    assert r.json["placed"] == {"richelieu_card": 0, "faction_card": 0}
    assert r.json["slots"] == {"richelieu_card": 4, "faction_card": 4}
    assert events(seeded, mid) == []


def test_a_partial_form_says_how_far_it_is_and_a_full_card_resolves(seeded, player):
    mid = new_match(player, "richelieu")
    anna = {"player": "Anna", "value": 3}
    r = player.post(f"/api/matches/{mid}/richelieu/preview",
                    {"data": {"richelieu_card": card([anna, None]), "faction_card": card([None] * 3, "france")}})
    assert r.status_code == 200 and r.json["complete"] is False
    assert r.json["placed"] == {"richelieu_card": 1, "faction_card": 0}
    r = player.post(f"/api/matches/{mid}/richelieu/preview", {"data": {
        "richelieu_card": card([anna, {"piece": "queen"}]), "faction_card": card([None] * 3, "france")}})
    assert r.status_code == 200 and r.json["complete"] is True and r.json["result"]["winner"] == "richelieu"


def test_a_mistake_in_a_partial_form_is_still_refused(seeded, player):
    mid = new_match(player, "richelieu")
    three = {"player": "Anna", "value": 3}  # a colour has two agents of value 3
    r = player.post(f"/api/matches/{mid}/richelieu/preview", {"data": {
        "richelieu_card": card([three, three, None]), "faction_card": card([three, None], "england")}})
    assert r.status_code == 400 and "2 agents of value 3" in r.json["error"]
