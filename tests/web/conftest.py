"""Fixtures for the web adapter: an app over a temporary store with a hand-moved clock."""

import pytest

ORIGIN = "http://localhost"


@pytest.fixture
def app(store):
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468",
                      "SSE_HEARTBEAT": 0.05})
    yield app


@pytest.fixture
def client(app):
    return app.test_client()


class Api:
    """A test client that speaks JSON and sends this server's Origin on writes (as a browser does)."""

    def __init__(self, client, bearer=None, origin=ORIGIN):
        self.c = client
        self.bearer = bearer
        self.origin = origin

    def _headers(self, method, extra):
        h = {}
        if self.bearer:
            h["Authorization"] = f"Bearer {self.bearer}"
        if method != "GET" and self.origin:
            h["Origin"] = self.origin
        h.update(extra or {})
        return h

    def get(self, path, headers=None, **kw):
        return self.c.get(path, headers=self._headers("GET", headers), **kw)

    def post(self, path, body=None, headers=None, **kw):
        if body is not None:
            kw["json"] = body
        return self.c.post(path, headers=self._headers("POST", headers), **kw)

    def put(self, path, body=None, headers=None, **kw):
        if body is not None:
            kw["json"] = body
        return self.c.put(path, headers=self._headers("PUT", headers), **kw)

    def delete(self, path, headers=None, **kw):
        return self.c.delete(path, headers=self._headers("DELETE", headers), **kw)


@pytest.fixture
def api(client):
    """A viewer (no session)."""
    return Api(client)


def join(app, client):
    from companion.web.auth import current_join

    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"]
    r = client.get(url[len("http://localhost"):])
    assert r.status_code == 303, r.data
    return r


@pytest.fixture
def player(app):
    c = app.test_client()
    join(app, c)
    return Api(c)


@pytest.fixture
def organiser(app):
    c = app.test_client()
    a = Api(c)
    r = a.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"})
    assert r.status_code == 200, r.json
    return a


@pytest.fixture
def tokens(store):
    from companion.services.access import Access

    acc = Access(store)
    return {"player": acc.create_api_token("player")[0], "organiser": acc.create_api_token("organiser")[0]}
