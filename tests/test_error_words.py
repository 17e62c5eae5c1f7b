"""Every error sentence a page can show has its Italian words (docs/developing.md, "Errors in the person's
language").

The raise sites are read from the sources (AST): every call of an error class (``InputError(...)``,
``RuleError(...)``, a subclass, ``DiceError``) in the modules the server runs must give its sentence as a
literal template with its values named (``RuleError("it is not {player}'s turn", "player", player=p)``),
and ``web/i18n/errors.it.json`` must have that template. A new error added untranslated, or an f-string
message (its words cannot be looked up), fails here.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

from companion.base import errors
from companion.base.resources import web_dir

PKG = Path(__file__).resolve().parent.parent / "companion"
# what no page shows: the command line, the benchmarks, the GPIO box's own buttons, the league's boxes
# (read by `companion league`), opening the database at start-up
SKIPPED = ("cli/", "gpio.py", "services/league_boxes.py", "services/replication.py", "storage/db.py",
           "base/jsonio.py", "base/timeutil.py", "systemd_notify.py", "announcer.py", "web/server.py",
           "web/netinfo.py")
# calls whose sentence is not a literal, with why it is covered anyway
DYNAMIC = {
    # the reason holds_clock() returns: a literal of the game module, checked below
    ("core/match.py", "held"),
    # a board or map check's first problem, from the checks' own report: the boards page puts the Web of
    # Power report in words itself (web/static/js/boards.js); a conquest map is a JSON document written by
    # hand, checked in English as by `companion map check`
    ("games/conquest_map.py", "message + more"),
    ("games/wop_board.py", 'first["message"]'),
}
PLACEHOLDER = re.compile(r"\{(\w+)(?:![a-z]|:[^{}|]*|(?:\|[^{}|]*)+)?\}")


@functools.lru_cache(maxsize=None)
def _modules() -> tuple:
    """(path, text, tree) of every module of the package, parsed once for all the tests."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        text = path.read_text("utf-8")
        out.append((path, text, ast.parse(text)))
    return tuple(out)


def _error_classes() -> set[str]:
    names = {"DiceError", "CompanionError"} | {c.__name__ for c in _subclasses(errors.CompanionError)}
    for _, _, tree in _modules():  # subclasses defined in modules not imported here
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                    getattr(b, "id", getattr(b, "attr", None)) in names for b in node.bases):
                names.add(node.name)
    return names


def _own_sentence_classes() -> set[str]:
    """Error classes that make their sentence themselves (their ``__init__`` takes no message: the
    sentence is in its ``super().__init__`` call, which is checked)."""
    out = set()
    for _, _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for f in node.body:
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__" and len(f.args.args) > 1 \
                            and f.args.args[1].arg != "message":
                        out.add(node.name)
    return out


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@functools.lru_cache(maxsize=None)
def raise_sites() -> tuple:
    """(module, line, template or None, keyword names, source of the sentence) for every error call."""
    return tuple(_raise_sites())


def _raise_sites():
    classes = _error_classes() - _own_sentence_classes()
    for path, text, tree in _modules():
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(SKIPPED) or rel == "base/errors.py":
            continue
        lines = text.splitlines(keepends=True)
        error_class_bodies = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                              and any(getattr(b, "id", getattr(b, "attr", None)) in classes for b in c.bases)
                              for n in ast.walk(c)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            name = getattr(f, "id", getattr(f, "attr", None))
            is_super_init = (name == "__init__" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call)
                             and getattr(f.value.func, "id", None) == "super" and id(node) in error_class_bodies)
            if name not in classes and not is_super_init:
                continue
            first = node.args[0]
            template = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
            yield rel, node.lineno, template, {k.arg for k in node.keywords}, _segment(lines, first)


def _segment(lines, node) -> str:
    """The node's source (as ast.get_source_segment, without splitting the module again for every node)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    parts = [lines[first].encode()[node.col_offset:].decode(), *lines[first + 1:last],
             lines[last].encode()[:node.end_col_offset].decode()]
    return "".join(parts)


def catalogue(lang="it") -> dict:
    return json.loads((web_dir() / "i18n" / f"errors.{lang}.json").read_text("utf-8"))


def extra_sentences() -> list[str]:
    """Sentences raised from a value rather than a literal (``DYNAMIC``)."""
    from companion.games import web_of_power
    from companion.web import app, asgi

    return [web_of_power.holds_clock({"scoring_step": {}}), *app.HTTP_SENTENCES.values(),
            *app.SERVER_SENTENCES.values(), *asgi.SENTENCES]


def test_every_error_sentence_is_a_template_with_its_values_named():
    bad = []
    for rel, line, template, kwargs, src in raise_sites():
        if template is None:
            if (rel, src) not in DYNAMIC and not src.startswith("exc."):
                bad.append(f"{rel}:{line}: the sentence is not a literal template: {src}")
            continue
        missing = {m.group(1) for m in PLACEHOLDER.finditer(template)} - kwargs
        if missing and kwargs and None not in kwargs:  # a **mapping gives values the AST cannot see
            bad.append(f"{rel}:{line}: {template!r} has no value for {sorted(missing)}")
    assert bad == [], "\n".join(bad)


def test_every_error_sentence_has_italian_words():
    it = catalogue("it")
    missing = sorted({f"{rel}:{line}: {template!r}" for rel, line, template, _, _ in raise_sites()
                      if template is not None and template not in it})
    missing += [f"(dynamic) {s!r}" for s in extra_sentences() if s not in it]
    assert missing == [], f"{len(missing)} error sentences without Italian words (web/i18n/errors.it.json)"


def test_the_italian_words_use_the_same_values_and_no_entry_is_left_over():
    it = catalogue("it")
    used = {t for _, _, t, _, _ in raise_sites() if t is not None} | set(extra_sentences())
    bad = []
    for key, text in it.items():
        if key.startswith(("w:", "w@")):
            continue
        if key not in used:
            bad.append(f"not raised anywhere: {key!r}")
        names = lambda s: {m.group(1) for m in PLACEHOLDER.finditer(s)}  # noqa: E731
        if names(key) and not names(text) <= names(key):  # (no values: braces are plain text)
            bad.append(f"{key!r}: the Italian names values the English does not have: {text!r}")
    assert bad == [], "\n".join(bad)


def test_a_sentence_in_italian_english_and_a_third_language():
    from companion.web import i18n

    t = "{player} has {left} {left|monastery|monasteries} left"
    assert [i18n.error_text("it", t, {"player": "Anna", "left": n}) for n in (1, 0)] == [
        "a Anna resta 1 monastero", "a Anna restano 0 monasteri"]
    assert [i18n.error_text(lang, t, {"player": "Anna", "left": 1}) for lang in ("en", "de")] == [
        "Anna has 1 monastery left"] * 2
    assert i18n.error_text("it", "no such sentence {x}", {"x": 2}) == "no such sentence 2"  # no entry: English
    assert i18n.error_text("it", "{what:w} is missing", {"what": "players.name"}) == "il nome del giocatore: manca"
    assert i18n.error_text("en", "{what:w} is missing", {"what": "players.name"}) == "the player name is missing"
    assert i18n.error_text("en", "{what:w} is missing", {"what": "no_such_field"}) == "no such field is missing"


def test_the_words_put_into_sentences_exist_in_both_languages():
    """``{name:w@ns}`` words: every value the engines can give, in English and Italian."""
    from companion.games import conquest_italy, richelieu

    en, it = catalogue("en"), catalogue("it")
    wanted = {f"w@rl:{v}" for v in (*richelieu.TRACKS, "jewels", *richelieu.SHEET_KINDS, "eminence", "queen")}
    wanted |= {f"w@phase:{v}" for v in ("deal", "place", "play", "ended")}
    wanted |= {"w@do:ending a turn", "w@do:rolling", "w@role:player", "w@role:organiser"}
    words = {k for k in it if k.startswith(("w:", "w@"))}
    assert sorted(wanted - words) == [] and sorted(wanted - set(en)) == []
    assert sorted(words ^ set(en)) == []  # the same words in both catalogues
    phases = set(re.findall(r'\bs\["phase"\] = "(\w+)"', Path(conquest_italy.__file__).read_text("utf-8")))
    assert phases <= {"deal", "place", "play", "ended"}
