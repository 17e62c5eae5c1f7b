"""``companion pin status`` / ``pin reset`` as the installer uses them: the first PIN set with the code."""

import json

import pytest

from tests.web.conftest import Api


def last_line(out: str) -> str:
    return out.strip().splitlines()[-1]


def test_the_installers_first_run_code_sets_the_first_pin_through_the_web(run_cli, tmp_path):
    from companion.storage import Store
    from companion.web.app import create_app

    rc, out, err = run_cli("pin", "status")  # first run: makes the empty database, as the server would
    assert rc == 0 and json.loads(out) == {"pin_set": False}, err
    rc, out, err = run_cli("pin", "reset", "--hours", "24")
    assert rc == 0, err
    code = last_line(out)
    assert code.isdigit() and len(code) == 10

    store = Store(tmp_path / "data" / "companion.db")
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})
        api = Api(app.test_client())
        assert api.post("/api/auth/pin", {"pin": "123456", "setup_code": "8765432109"}).status_code == 401
        r = api.post("/api/auth/pin", {"pin": "123456", "setup_code": code})
        assert r.status_code == 200 and api.get("/api/auth/me").json["role"] == "organiser"
        # one use: the code sets nothing again
        r = Api(app.test_client()).post("/api/auth/pin", {"pin": "999999", "setup_code": code})
        assert r.status_code == 401
    finally:
        store.close()
    rc, out, _ = run_cli("pin", "status")
    assert json.loads(out) == {"pin_set": True}


@pytest.mark.parametrize("args", [["--hours", "0"], ["--hours", "-1"], ["--hours", "1000"]])
def test_pin_reset_refuses_bad_hours(run_cli, args):
    run_cli("pin", "status")  # the database exists
    rc, out, err = run_cli("pin", "reset", *args)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--hours" in err
