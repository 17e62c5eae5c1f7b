"""Every string key the pages use exists in both languages.

The keys are read from the sources themselves: every template (pages, season pages, game trackers) and
every script (``web/static/js``, ``web/static/games``). Literal keys (``t("clock.start")``) must be in
both catalogues (``web/static/i18n/<lang>.json``; the season pages also see the strings of
``companion/web/seasons.py``). Keys built at run time (``t("phase." + view.phase)``) are checked for
every value the engines can produce (the values come from the engine modules, the clock, the schemas
and the shipped map, not from the catalogues); a new prefix must be added to ``dynamic_values()``.
"""

from __future__ import annotations

import json
import re

import pytest

from companion.base.resources import web_dir
from companion.web import i18n

KEY = r"[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)+"
# Companion.t / C.t / t / ts with a literal key, closed or followed by arguments
LITERAL = re.compile(r"""\b(?:t|ts)\(\s*(["'])(%s)\1\s*[,)]""" % KEY)
# a counted string: C.plural("key", n) in scripts, i18n.plural(lang, "key", n) on the server: "<key>.one"
# and "<key>.other" must both exist
PLURAL = re.compile(r"""\bplural\(\s*(?:\w+\s*,\s*)?(["'])(%s)\1\s*,""" % KEY)
# a prefix joined at run time: t("phase." + x) in scripts, t("game." ~ x) in templates
DYNAMIC = re.compile(r"""\bt\(\s*(["'])([a-z][a-z0-9_.-]*[._])\1\s*[+~]""")

SEASON_TEMPLATES = {"seasons.html", "season.html", "season_club.html", "season_player.html",
                    "season_settings_form.html"}
SEASON_SCRIPTS = {"seasons.js"}

# the same text in both languages on purpose: names, symbols, placeholders only
SAME_IN_BOTH = {"app.name", "game.web-of-power", "game.richelieu", "game.rome-is-burning", "login.pin",
                "ci.symbol_mozzarella", "rb.col_extra", "rl.sheet_richelieu", "rl.col_place",
                "rl.col_richelieu_sheets", "rl.ev_action", "rl.ev_adjust", "wop.col_place", "wop.ev_place", "wop.supply_of", "wop.bd_place", "ci.legend_set",
                "season.rank", "season.club", "season.rating", "season.source.app", "nav.menu"}


def catalogues() -> dict[str, dict]:
    return {lang: json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))
            for lang in i18n.LANGUAGES}


def sources():
    """(name, text, is_season_page) for every template and script of the web app."""
    wd = web_dir()
    for path in sorted((wd / "templates").rglob("*.html")):
        yield path.relative_to(wd).as_posix(), path.read_text("utf-8"), path.name in SEASON_TEMPLATES
    for path in sorted((wd / "static").rglob("*.js")):
        yield path.relative_to(wd).as_posix(), path.read_text("utf-8"), path.name in SEASON_SCRIPTS


def _data_fields(schema: dict) -> set[str]:
    """Every property name an event's ``data`` may have, read from an events schema."""
    out: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            data = (node.get("properties") or {}).get("data")
            if isinstance(data, dict):
                out.update((data.get("properties") or {}).keys())
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return out


def dynamic_values() -> dict[str, set[str] | None]:
    """Each run-time prefix and the values it is joined with (None: the code falls back to a readable
    text when the key is missing, e.g. an unknown summary column)."""
    from companion import dice
    from companion.core import clock
    from companion.services import clockrunner
    from companion.games import GAMES, game_module
    from companion.games.conquest_map import SET_KINDS, default_map_doc
    from companion.base.schemas import load_schema

    rl = game_module("richelieu")
    wop = game_module("web-of-power")
    ci = game_module("conquest-italy")
    rl_summary = rl.summary(rl.initial_state(["A", "B", "C"], {}))
    rl_cols = set(rl_summary["standings"]["players"][0]["breakdown"]) | {"place", "money"}
    symbols = {c["card"] for r in default_map_doc()["regions"] for c in r["cities"]}
    bonuses = set(load_schema("season.settings")["$defs"]["bonus"]["properties"])
    return {
        "game.": set(GAMES),
        "status.": {"open", "ended"},
        "role.": {"viewer", "player", "organiser"},
        "phase.": set(clock.PHASES),
        # a game's own phases (the summary's "phase"): the tournament page names them in words
        "gphase.": {"web-of-power.play", "web-of-power.ended", "rome-is-burning.setup", "rome-is-burning.moving",
                    "rome-is-burning.election", "rome-is-burning.ended", "conquest-italy.deal",
                    "conquest-italy.place", "conquest-italy.play"},
        "pause.": set(clockrunner.PAUSE_REASONS),  # a typed reason falls back to itself
        # the generic history names the clock's events for every game (the trackers name their own)
        "event.": set(clock.EVENT_TYPES),
        "field.": _data_fields(load_schema("clock.events")),
        "season.source.": {"app", "manual"},
        "season.bonus_": bonuses,
        "rl.faction_": set(rl.FACTIONS),
        "rl.track_": set(rl.TRACKS) | {"jewels"},
        "rl.sheet_": set(rl.SHEET_KINDS),
        "rl.action_": set(rl.TURN_ACTIONS),
        "rl.reward_": set(rl.NUMERIC_REWARDS) | set(rl.ACTION_REWARDS),
        "rl.col_": rl_cols,
        "wop.": set(wop.PIECES),
        "wop.scoring_": {"intermediate", "final"},
        "ci.symbol_": symbols,
        "ci.set_": set(SET_KINDS),
        # (the attack step names its count of conquests: ci.step_attack.one/.other, a counted string)
        "ci.step_": {ci.REINFORCE, ci.MOVED, ci.CARD},
        "breakdown.": None,
        # the smart dice (companion/dice.py, companion/core/dice_roll.py; js/dice.js, js/dice-live.js)
        "dice.state_": set(dice.ROLL_STATES.values()),
        "dice.side_": {"attack", "defend", "any"},
        "dice.status_": {"waiting", "rolling", "settled", "crooked", "wrong_side", "moved_after"},
        "dice.note.": {"crooked", "wrong_side", "moved_after", "not_d6", "timeout"},
        "boards.status_": {"template", "partial", "complete"},
        "boards.hint_": {"site", "road", "sea"},
        # the board checker's sentences the editor words (the others stay as the checker wrote them)
        # (those with a count have its plural forms: "1 site", "2 sites")
        "boards.p_": {"alliances_unknown", "roads_unknown", "count_unknown", "unknown_site",
                      "site_twice", "road_twice", "road_self", "book_alliance", "book_sea", "book_not_sea",
                      "parts", "alliance_same", "book_cards"} |
                     {f"{k}.{form}" for k in ("book_sites", "lonely", "unplaced", "unnamed") for form in ("one", "other")},
    }


def test_the_sources_use_keys_at_all():
    """The extraction itself works: a broken regex would make the tests below vacuous."""
    literal = {m.group(2) for _, text, _ in sources() for m in LITERAL.finditer(text)}
    dynamic = {m.group(2) for _, text, _ in sources() for m in DYNAMIC.finditer(text)}
    assert len(literal) > 300
    assert {"clock.start", "season.standings", "rl.title", "ci.title", "rb.title", "wop.title"} <= literal
    assert {"phase.", "game.", "rl.faction_"} <= dynamic


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_literal_key_exists_in_the_language(lang):
    cat = catalogues()[lang]
    missing = []
    for name, text, season_page in sources():
        have = set(cat)
        missing += [f"{name}: {m.group(2)}" for m in LITERAL.finditer(text) if m.group(2) not in have]
    assert not missing, f"keys missing from {lang}: {missing}"


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_counted_string_has_its_plural_forms(lang):
    cat = catalogues()[lang]
    used = {m.group(2) for _, text, _ in sources() for m in PLURAL.finditer(text)}
    assert {"clock.minutes_left", "ci.winner"} <= used  # the extraction works
    missing = [f"{k}.{form}" for k in sorted(used) for form in ("one", "other") if f"{k}.{form}" not in cat]
    assert not missing, f"plural forms missing from {lang}: {missing}"
    for k in used:
        for form in ("one", "other"):
            assert "{n}" in cat[f"{k}.{form}"] or k in COUNT_IN_WORDS, f"{k}.{form} does not show the count"


# counted strings whose count is said by the words themselves ("Winner: Anna" / "Winners: Anna, Bruno")
COUNT_IN_WORDS = {"ci.winner", "wop.points_word", "wop.w_alliances"}


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_every_key_built_at_run_time_exists_for_every_value(lang):
    cat = catalogues()[lang]
    values = dynamic_values()
    unknown, missing = [], []
    for name, text, season_page in sources():
        have = set(cat)
        for m in DYNAMIC.finditer(text):
            prefix = m.group(2)
            if prefix not in values:
                unknown.append(f"{name}: {prefix}")
            elif values[prefix] is not None:
                missing += [f"{name}: {prefix}{v}" for v in sorted(values[prefix]) if prefix + v not in have]
    assert not unknown, f"new run-time prefixes: list their values in dynamic_values(): {unknown}"
    assert not missing, f"keys missing from {lang}: {missing}"


def test_every_string_has_the_same_placeholders_in_both_languages():
    en, it = catalogues()["en"], catalogues()["it"]
    assert set(en) == set(it)
    for key in en:
        assert en[key].strip() and it[key].strip(), key
        assert set(re.findall(r"\{(\w+)\}", en[key])) == set(re.findall(r"\{(\w+)\}", it[key])), key


def test_no_ui_string_catalogue_in_python():
    """Every UI string lives in the JSON catalogues: no module keeps a catalogue of its own."""
    from pathlib import Path

    import companion.web as web

    for path in Path(web.__file__).parent.rglob("*.py"):
        assert "STRINGS = {" not in path.read_text(encoding="utf-8"), path.name


def test_no_english_left_in_the_italian_catalogue():
    """A text identical in both languages is a forgotten translation unless it is a name or a symbol."""
    cats = catalogues()
    same = {k for k in cats["en"] if cats["it"].get(k) == cats["en"][k]}
    assert same - SAME_IN_BOTH == set()


def test_a_missing_key_would_be_caught(tmp_path, monkeypatch):
    """The check fails on a page that uses a key no catalogue has (so it cannot pass vacuously)."""
    fake = tmp_path / "web"
    (fake / "templates").mkdir(parents=True)
    (fake / "static" / "js").mkdir(parents=True)
    (fake / "static" / "i18n").mkdir(parents=True)
    for lang, cat in catalogues().items():
        (fake / "static" / "i18n" / f"{lang}.json").write_text(json.dumps(cat), "utf-8")
    (fake / "templates" / "x.html").write_text('{{ t("clock.start") }} {{ t("nope.missing") }}', "utf-8")
    (fake / "static" / "js" / "x.js").write_text('C.t("phase." + p); t("clock.pause", {a: 1});', "utf-8")
    monkeypatch.setattr(f"{__name__}.web_dir", lambda: fake)
    with pytest.raises(AssertionError, match="nope.missing"):
        test_every_literal_key_exists_in_the_language("it")
    test_every_key_built_at_run_time_exists_for_every_value("it")  # phase.* are all there
    (fake / "static" / "js" / "y.js").write_text('t("brandnew." + x)', "utf-8")
    with pytest.raises(AssertionError, match="brandnew"):
        test_every_key_built_at_run_time_exists_for_every_value("it")
