"""Language choice and catalogues, the OpenAPI document, and the `companion token` command."""

import json
import re

import pytest

from companion.base.resources import schemas_dir, web_dir
from companion.web import i18n


@pytest.mark.parametrize("header, lang", [
    ("it-IT,it;q=0.9,en;q=0.8", "it"), ("en-GB,en;q=0.9", "en"), ("de-DE,de;q=0.9", "en"), ("", "en"),
    ("fr;q=1, it;q=0.5, en;q=0.4", "it"), ("en;q=0.2, it;q=0.8", "it"), ("it;q=0", "en"), ("IT", "it"),
    ("*", "en"), ("it;q=abc, en", "en"), (None, "en"),
])
def test_accept_language(header, lang):
    assert i18n.from_accept_language(header) == lang


def test_language_from_header_then_switched_and_remembered(client):
    assert b"Tavoli in gioco" in client.get("/", headers={"Accept-Language": "it-IT"}).data
    r = client.get("/?lang=en", headers={"Accept-Language": "it-IT"})
    assert b"Tables in play" in r.data and "lang=en" in r.headers["Set-Cookie"]
    assert b"Tables in play" in client.get("/", headers={"Accept-Language": "it-IT"}).data  # the cookie wins
    assert b"Tavoli in gioco" in client.get("/?lang=it").data
    assert b"Tavoli in gioco" in client.get("/").data
    assert b"Tavoli in gioco" in client.get("/?lang=xx").data  # unknown: ignored


def _catalogues():
    return {lang: json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))
            for lang in i18n.LANGUAGES}


def test_catalogues_have_the_same_keys():
    cats = _catalogues()
    assert set(cats["en"]) == set(cats["it"])
    for lang, cat in cats.items():
        for key, text in cat.items():
            assert text.strip(), (lang, key)
            assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", cats["en"][key])), (lang, key)


def test_every_literal_key_used_by_the_generic_pages_exists():
    cats = _catalogues()
    used = set()
    mine = ["base", "error", "join_error", "home", "new", "match", "display", "tournament", "join", "login"]
    for path in (web_dir() / "templates" / f"{n}.html" for n in mine):
        used |= set(re.findall(r"""t\(\s*["']([a-z_]+\.[a-z_.]+)["']""", path.read_text("utf-8")))
    for name in ("companion.js", "pages.js"):
        used |= set(re.findall(r"""\bt\(\s*"([a-z_]+\.[a-z_]+)"\s*[,)]""", (web_dir() / "static" / "js" / name).read_text("utf-8")))
    assert len(used) > 60
    missing = sorted(k for k in used if k not in cats["en"])
    assert not missing


def test_every_game_has_a_name_in_both_languages():
    from companion.games import GAMES

    for cat in _catalogues().values():
        assert all(f"game.{g}" in cat for g in GAMES)


def test_openapi_document(client):
    doc = client.get("/api/openapi.json").json
    assert doc["openapi"].startswith("3.1")
    # every API route of the app is documented, with the right methods
    app = client.application
    documented = {(p, m.upper()) for p, item in doc["paths"].items() for m in item}
    for rule in app.url_map.iter_rules():
        if not (rule.rule.startswith("/api/") or rule.rule == "/healthz"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method) in documented, (path, method)
    # every $ref resolves and request bodies are the very schemas the endpoints validate with
    text = json.dumps(doc)
    for ref in set(re.findall(r'"\$ref": "#/components/schemas/([^"]+)"', text)):
        assert ref in doc["components"]["schemas"], ref
    body = doc["paths"]["/api/matches"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/api.match-create"}
    on_disk = json.loads((schemas_dir() / "api.match-create.schema.json").read_text("utf-8"))
    from companion.base.schemas import standalone

    # (its references to other files written in place: the document stands alone)
    assert doc["components"]["schemas"]["api.match-create"]["properties"] == standalone(on_disk)["properties"]
    from jsonschema import Draft202012Validator

    for name, schema in doc["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
    # every error answer is the error object, said in words ("not found", not "error")
    for path, item in doc["paths"].items():
        for method, op in item.items():
            for code, answer in op.get("responses", {}).items():
                if code.startswith("4") and "application/json" in answer.get("content", {}):
                    assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
                    assert answer["description"] not in ("", "error"), (path, method, code)


def test_the_openapi_fragments_are_written_once_in_apidoc():
    """A path parameter, a write's security and a reference to a component are built by
    companion/web/apidoc.py; a blueprint that spells one out again drifts from the others."""
    from pathlib import Path

    import companion.web

    root = Path(companion.web.__file__).parent
    spelled = [f"{f.relative_to(root)}: {needle}" for f in sorted(root.rglob("*.py")) if f.name != "apidoc.py"
               for needle in ('"in": "path"', '{"bearer": []}', '"#/components/schemas/')
               if needle in f.read_text("utf-8")]
    assert not spelled, spelled


def test_token_cli(run_cli, tmp_path):
    code, out, err = run_cli("token", "create", "--role", "organiser", "--label", "scoreboard script")
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    assert token.startswith("cpn_") and len(token) > 40 and " " not in token
    code, out, err = run_cli("token", "list")
    tokens = json.loads(out)["tokens"]
    assert code == 0 and len(tokens) == 1 and tokens[0]["role"] == "organiser"
    assert tokens[0]["label"] == "scoreboard script" and token not in out
    code, out, err = run_cli("token", "revoke", tokens[0]["id"])
    assert code == 0 and json.loads(run_cli("token", "list")[1])["tokens"][0]["revoked"] is True
    code, out, err = run_cli("token", "revoke", "nope")
    assert code == 2 and err.count("\n") == 1 and "ID" in err
    code, out, err = run_cli("token", "create", "--role", "admin")
    assert code == 2 and err.count("\n") == 1 and "--role" in err
    code, out, err = run_cli("token", "create", "--role", "player", "--days", "-1")
    assert code == 2 and "--days" in err


def test_serve_bad_options_are_one_line(run_cli):
    code, out, err = run_cli("serve", "--port", "70000")
    assert code == 2 and err.count("\n") == 1 and "--port" in err
    code, out, err = run_cli("serve", "--gpio", "maybe")
    assert code == 2 and err.count("\n") == 1 and "--gpio" in err
    code, out, err = run_cli("serve", "--help")
    assert code == 0 and "--data-dir" in out and "join link" in out
