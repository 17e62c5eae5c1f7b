"""``companion pin reset``: a one-time setup code, made on the box, with which /login sets a new PIN."""

import json

import pytest

from companion.access import Access
from tests.web.conftest import Api


def last_line(out: str) -> str:
    return out.strip().splitlines()[-1]


def test_pin_reset_code_sets_the_first_pin_through_the_web(run_cli, tmp_path):
    from companion.storage import Store
    from companion.web.app import create_app

    rc, out, err = run_cli("pin", "status")
    assert rc == 0 and json.loads(out) == {"pin_set": False}
    rc, out, err = run_cli("pin", "reset")
    assert rc == 0, err
    code = last_line(out)
    assert code.isdigit() and len(code) == 8 and "forgot" not in out

    store = Store(tmp_path / "data" / "companion.db")
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})
        api = Api(app.test_client())
        assert api.post("/api/auth/pin", {"pin": "1234", "setup_code": "87654321"}).status_code == 401
        r = api.post("/api/auth/pin", {"pin": "1234", "setup_code": code})
        assert r.status_code == 200 and api.get("/api/auth/me").json["role"] == "organiser"
        # one use: with the PIN set, the code sets nothing
        r = Api(app.test_client()).post("/api/auth/pin", {"pin": "9999", "setup_code": code})
        assert r.status_code == 401 and r.json["field"] == "Authorization"
        assert store.get_setting("web.setup_code") is None
    finally:
        store.close()
    rc, out, _ = run_cli("pin", "status")
    assert json.loads(out) == {"pin_set": True}


def test_reset_forgets_the_pin_and_signs_organisers_out(app, organiser, store):
    assert organiser.get("/api/auth/me").json["role"] == "organiser"
    info = Access(store).reset_pin()
    assert info["pin_was_set"] is True
    assert organiser.get("/api/auth/me").json["role"] == "viewer"  # the session was ended
    fresh = Api(app.test_client())
    assert fresh.post("/api/auth/login", {"pin": "2468"}).status_code == 409  # no PIN any more
    r = fresh.post("/api/auth/pin", {"pin": "5555", "setup_code": info["setup_code"]})
    assert r.status_code == 200
    assert Api(app.test_client()).post("/api/auth/login", {"pin": "5555"}).status_code == 200


def test_a_reset_code_expires_and_a_newer_one_replaces_it(app, store, clock):
    acc = Access(store)
    first = acc.reset_pin(hours=1)["setup_code"]
    second = acc.reset_pin(hours=1)["setup_code"]
    api = Api(app.test_client())
    if first != second:
        assert api.post("/api/auth/pin", {"pin": "1234", "setup_code": first}).status_code == 401
    clock.advance(3601)
    r = api.post("/api/auth/pin", {"pin": "1234", "setup_code": second})
    assert r.status_code == 401 and r.json["field"] == "$.setup_code"


def test_changing_the_pin_uses_up_a_pending_code(store):
    acc = Access(store)
    code = acc.reset_pin()["setup_code"]
    assert acc.check_setup_code(code)
    acc.set_pin("4321")
    assert not acc.check_setup_code(code)


@pytest.mark.parametrize("args", [["--hours", "0"], ["--hours", "-1"], ["--hours", "1000"]])
def test_pin_reset_refuses_bad_hours(run_cli, args):
    rc, out, err = run_cli("pin", "reset", *args)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--hours" in err
