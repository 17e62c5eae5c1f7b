"""The box's own answers compressed for a phone that takes gzip (``companion/web/compress.py``): pages and
JSON above one Wi-Fi frame, a write's answer too; small ones, streams and huge bodies as they are; a page
revalidates (``no-cache`` and an ETag: a reload of an unchanged page is a 304 with no body); a page that holds
a secret stays ``no-store``."""

from __future__ import annotations

import gzip

import pytest

from companion.web import compress

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


def _first_move(game="web-of-power"):
    """A legal first event of a match of ``game`` (a random legal playthrough's: tests/games/conformance.py)."""
    from tests.games.conformance import Playthrough

    e = Playthrough(game, seed=0, undo_rate=0, fuzz_rate=0, checks=False).run(3, False).events[0]
    return {"type": e["type"], "data": e.get("data", {})}


@pytest.fixture
def wop(organiser):
    r = organiser.post("/api/matches", {"game": "web-of-power", "players": ["Anna", "Bruno", "Carla"]})
    assert r.status_code == 201, r.json
    return r.json["id"]


def _same_text(plain, packed):
    assert "Content-Encoding" not in plain.headers, plain.headers
    assert packed.headers["Content-Encoding"] == "gzip", packed.headers
    assert "Accept-Encoding" in packed.headers["Vary"] and "Accept-Encoding" in plain.headers["Vary"]
    assert gzip.decompress(packed.data) == plain.data
    assert int(packed.headers["Content-Length"]) == len(packed.data) < len(plain.data) / 2


def test_pages_and_json_go_compressed_to_a_phone_that_takes_gzip(organiser, api, wop):
    for who, path in ((organiser, f"/m/{wop}"), (api, f"/m/{wop}"), (api, f"/m/{wop}/display"),
                      (api, "/"), (organiser, f"/api/matches/{wop}"), (organiser, "/tournament")):
        plain, packed = who.get(path), who.get(path, headers=GZIP)
        assert plain.status_code == packed.status_code == 200, path
        assert len(plain.data) >= compress.MIN_BYTES, path
        _same_text(plain, packed)
        # a caller that refuses gzip gets the text as it is
        assert "Content-Encoding" not in who.get(path, headers={"Accept-Encoding": "gzip;q=0"}).headers


def test_a_write_s_answer_is_compressed_when_longer_than_a_frame(organiser, wop):
    seq = organiser.get(f"/api/matches/{wop}").json["seq"]
    body = {**_first_move(), "expected_seq": seq}
    r = organiser.post(f"/api/matches/{wop}/events", body, headers=GZIP)
    assert r.status_code == 201 and r.headers["Content-Encoding"] == "gzip"
    import json

    doc = json.loads(gzip.decompress(r.data))
    assert doc["event"]["type"] == body["type"] and doc["seq"] == seq + 1
    assert r.headers["Cache-Control"] == "no-store"


def test_small_answers_and_streams_go_as_they_are(organiser, wop):
    small = organiser.get("/api/games", headers=GZIP)
    assert small.status_code == 200 and len(small.data) < compress.MIN_BYTES
    assert "Content-Encoding" not in small.headers
    stream = organiser.get(f"/api/matches/{wop}/stream", headers=GZIP, buffered=False)
    try:
        assert stream.mimetype == "text/event-stream" and "Content-Encoding" not in stream.headers
    finally:
        stream.close()


def test_a_body_over_the_cap_is_not_compressed_per_request(app):
    from flask import Response

    for size, packed in ((compress.MAX_BYTES, True), (compress.MAX_BYTES + 1, False)):
        with app.test_request_context("/api/x", headers=GZIP):
            from flask import request

            resp = compress.finish(request, Response(b"1" * size, mimetype="application/json"))
            assert ("Content-Encoding" in resp.headers) is packed, size


def test_a_page_revalidates_and_an_unchanged_one_costs_no_body(api, organiser, wop):
    for path in ("/", f"/m/{wop}/display", "/tournament"):
        first = api.get(path, headers=GZIP)
        assert first.headers["Cache-Control"] == "no-cache", path
        tag = first.headers["ETag"]
        assert tag.startswith('W/"')
        again = api.get(path, headers={**GZIP, "If-None-Match": tag})
        assert again.status_code == 304 and not again.data, path
        # the same page without gzip has the same tag (a weak one: one text, two encodings)
        assert api.get(path, headers={"If-None-Match": tag}).status_code == 304
    # a page that changed is sent again (the home lists the matches under way)
    tag = api.get("/").headers["ETag"]
    assert organiser.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"]}).status_code == 201
    changed = api.get("/", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.data and changed.headers["ETag"] != tag
    # the organiser's match page holds its secrets: never kept, no tag
    page = organiser.get(f"/m/{wop}", headers=GZIP)
    assert page.headers["Cache-Control"] == "no-store" and "ETag" not in page.headers
