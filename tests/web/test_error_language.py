"""An error body's sentence is in the caller's language: the page's language (the ``lang`` cookie, else
Accept-Language, which the pages' fetch calls set to the page's language), English by default and for any
other language; ``{"error", "field"}`` keep their shape (docs/developing.md, "Errors in the person's
language")."""

import sqlite3

import pytest

from tests.web.test_trackers_api import P3, new_match

IT = {"Accept-Language": "it"}


def test_a_rule_refusal_in_italian_english_and_a_third_language(player):
    mid = new_match(player, "rome-is-burning")
    body = {"type": "move", "expected_seq": 0, "data": {"player": "Anna", "die": 3, "direction": "cw"}}
    said = {}
    for lang in ("it", "en", "de"):
        r = player.post(f"/api/matches/{mid}/events", body, headers={"Accept-Language": lang})
        assert r.status_code == 409 and set(r.json) == {"error", "field"}, r.json
        said[lang] = r.json["error"]
    assert said == {"it": "nessuna mossa ora: prima distribuisci il turno",
                    "en": "no move now: deal the turn first", "de": "no move now: deal the turn first"}


def test_the_lang_cookie_wins_over_accept_language(app, player):
    mid = new_match(player, "rome-is-burning")
    player.c.set_cookie("lang", "it", domain="localhost")
    r = player.post(f"/api/matches/{mid}/events", {"type": "move", "expected_seq": 0,
                                                   "data": {"player": "Anna", "die": 3, "direction": "cw"}},
                    headers={"Accept-Language": "en"})
    assert r.json["error"] == "nessuna mossa ora: prima distribuisci il turno"


def test_values_and_plural_forms_in_the_sentence(player):
    """A sentence with values (the player's name) and a counted noun takes the form of its number."""
    mid = new_match(player, "web-of-power")
    seq = 0
    for _ in range(4):  # 8 councillors, two at a time
        r = player.post(f"/api/matches/{mid}/events", {"type": "place", "expected_seq": seq, "data": {
            "player": "Anna", "piece": "councillor", "country": "England", "count": 2}})
        assert r.status_code == 201, r.json
        seq += 1
    r = player.post(f"/api/matches/{mid}/events", {"type": "place", "expected_seq": seq, "data": {
        "player": "Anna", "piece": "councillor", "country": "England", "count": 1}}, headers=IT)
    assert r.status_code == 409 and r.json["error"] == "a Anna restano 0 consiglieri", r.json
    r = player.post(f"/api/matches/{mid}/events", {"type": "place", "expected_seq": seq, "data": {
        "player": "Anna", "piece": "councillor", "country": "England", "count": 1}})
    assert r.json["error"] == "Anna has 0 councillors left"


def test_the_match_service_refusals(player):
    mid = new_match(player, "rome-is-burning")
    url = f"/api/matches/{mid}"
    r = player.post(url + "/undo", {"expected_seq": 0}, headers=IT)
    assert r.status_code == 409 and r.json == {"error": "niente da annullare", "field": "$.type"}
    r = player.post(url + "/undo", {"expected_seq": 5}, headers=IT)
    assert r.status_code == 409 and r.json["field"] == "expected_seq"
    assert r.json["error"] == "scrittura non aggiornata: la partita è alla seq 0, la scrittura si aspettava 5"
    r = player.post(url + "/redo", {"expected_seq": 0}, headers=IT)
    assert r.status_code == 409 and r.json["error"].startswith("niente da ripristinare"), r.json


def test_schema_errors_name_the_field_in_words(player):
    r = player.post("/api/matches", {"game": "rome-is-burning", "players": ["Anna", ""]}, headers=IT)
    assert r.status_code == 400 and r.json == {"error": "il nome di un giocatore: è vuoto", "field": "$.players[1]"}
    r = player.post("/api/matches", {"game": "rome-is-burning", "players": ["Anna", ""]})
    assert r.json["error"] == "a player's name is empty"
    r = player.post("/api/matches", {"players": P3}, headers=IT)
    assert r.status_code == 400 and r.json["error"] == "il gioco: manca", r.json
    r = player.post("/api/matches", {"players": P3})
    assert r.json["error"] == "the game is missing"


def test_not_found_and_wrong_method(player):
    r = player.get("/api/matches/nope", headers=IT)
    assert r.status_code == 404 and r.json == {"error": "nessuna partita nope", "field": "match_id"}
    r = player.get("/api/no-such-thing", headers=IT)
    assert r.status_code == 404 and r.json["error"] == "non trovato"
    r = player.c.delete("/api/games", headers={**IT, "Origin": "http://localhost"})
    assert r.status_code == 405 and r.json == {"error": "metodo non consentito", "field": "method"}


def test_rate_limit_in_italian(client):
    from tests.web.conftest import Api

    a = Api(client)
    assert a.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    b = Api(client.application.test_client())
    for _ in range(20):
        r = b.post("/api/auth/login", {"pin": "000000"}, headers=IT)
        if r.status_code == 429:
            break
    assert r.status_code == 429 and r.json["field"] == "$.pin", r.json
    assert r.json["error"].startswith("troppi tentativi falliti: riprova tra ") and r.json["error"].endswith(" s")


def test_storage_full_in_italian(app, player, monkeypatch):
    store = app.extensions["companion"].store

    def full(*a, **kw):
        raise sqlite3.OperationalError("database or disk is full")
    monkeypatch.setattr(store, "create_match", full)
    r = player.post("/api/matches", {"game": "rome-is-burning", "players": P3}, headers=IT)
    assert r.status_code == 503 and r.json["code"] == "storage_full"
    assert r.json["error"] == "la memoria della scatola è piena"


def test_a_damaged_page_met_while_serving_is_503_storage_damaged_and_logged(app, player, monkeypatch, caplog):
    """A page of the database damaged under a running server (a failing SD card): that request is 503
    storage_damaged in the person's language and the log says to restore, never "internal error"."""
    store = app.extensions["companion"].store

    def damaged(*a, **kw):
        raise sqlite3.DatabaseError("database disk image is malformed")
    monkeypatch.setattr(store, "create_match", damaged)
    r = player.post("/api/matches", {"game": "rome-is-burning", "players": P3}, headers=IT)
    assert r.status_code == 503 and r.json["code"] == "storage_damaged", r.json
    assert r.json["error"] == "il database della scatola è danneggiato: l'organizzatore lo ripristina da una copia"
    assert any("damaged" in m and "restore" in m for m in caplog.messages), caplog.messages


@pytest.mark.parametrize("lang, words", [("it", "questo Host non è servito qui"), ("en", "this Host is not served here")])
def test_an_error_page_in_the_page_s_language(client, lang, words):
    r = client.get("/", headers={"Accept": "text/html", "Accept-Language": lang, "Host": "evil.example"})
    assert r.status_code == 403 and words in r.get_data(as_text=True)
