"""The club's join link and a table's link stay the same across a restart of the box while they work (the
QR code printed or shown before keeps matching the screen); a new link (the organiser's, or after the old
one expired or was ended) is what the screens show from then on, after a restart too."""

from companion.web.app import create_app
from tests.web.conftest import Api


def _app(store):
    return create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})


def _club_link(app):
    from companion.web.auth import current_join

    with app.test_request_context("/"):
        return current_join("http://box")["url"]


def _table_link(app, mid):
    from companion.web.seats import table_link

    with app.test_request_context("/"):
        return table_link(mid, "http://box")["url"]


def test_a_restart_shows_the_same_links(store, fake_game):
    first = _app(store)
    org = Api(first.test_client())
    assert org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    mid = org.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]
    club, table = _club_link(first), _table_link(first, mid)
    again = _app(store)  # the box restarted: a new process, the same database
    assert _club_link(again) == club and _table_link(again, mid) == table
    # the organiser makes a new club link and ends the others: the screens show the new one, after a restart too
    org2 = Api(again.test_client())
    assert org2.post("/api/auth/login", {"pin": "246813"}).status_code == 200
    r = org2.post("/api/auth/join-tokens", {"revoke_others": True})
    assert r.status_code == 201
    new = r.json["url"].replace("http://localhost", "http://box")
    assert new != club and _club_link(again) == new and _club_link(_app(store)) == new


def test_an_ended_link_is_not_shown_again(store):
    first = _app(store)
    club = _club_link(first)
    links = first.extensions["companion"].access.list_join_tokens()
    first.extensions["companion"].access.revoke_join_token(links[0]["id"])
    assert _club_link(_app(store)) != club
