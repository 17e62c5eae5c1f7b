"""The league's boxes: each box's replica restored into a cache folder, read-only (docs/league.md).

``NAME=REPLICA``: REPLICA is a Litestream replica (a folder, sftp://, s3://) or, for a box without
replication, a database file (a copy made by ``companion backup``). ``refresh`` restores the newest state
into ``CACHE/NAME/companion.db`` through a temporary file checked like a backup; a box whose replica
cannot be reached (or whose copy fails its checks) keeps its last good copy, and its state says since
when. Nothing is ever written to a box or its replica.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

from companion.core import league
from companion.services import replication, seasons as season_store
from companion.base.errors import InputError
from companion.storage.db import ReadOnlyStore, check_restored

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
STATE = "state.json"


def parse_box(text: str, field: str = "--box") -> dict:
    name, sep, where = (text or "").partition("=")
    if not sep or not where:
        raise InputError("must be NAME=REPLICA (got {text!r})", field, text=text)
    if not _NAME.fullmatch(name):
        raise InputError("a box's name is 1-40 letters, digits, '.', '_' or '-' (got {name!r})", field, name=name)
    if "://" not in where and os.path.isfile(where):
        return {"name": name, "kind": "file", "source": os.path.abspath(where), "shown": os.path.abspath(where)}
    target = replication.parse_target(where, field)
    return {"name": name, "kind": target["kind"], "source": target["url"], "shown": target["shown"]}


def parse_boxes(texts: list[str]) -> list[dict]:
    if not texts:
        raise InputError("name at least one box (--box NAME=REPLICA)", "--box")
    boxes = [parse_box(t) for t in texts]
    names = [b["name"] for b in boxes]
    for n in names:
        if names.count(n) > 1:
            raise InputError("the box name {n!r} is given twice", "--box", n=n)
    return boxes


def read_state(cache: Path, name: str) -> dict:
    try:
        doc = json.loads((cache / name / STATE).read_text(encoding="utf-8"))
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_state(cache: Path, name: str, state: dict) -> None:
    path = cache / name / STATE
    tmp = path.with_name(STATE + ".tmp")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, path)


def refresh(box: dict, cache: str | Path, binary: str | None = None, clock=time.time) -> dict:
    """Bring the box's copy up to date; returns its state (``restored_at``, ``events``, ``matches``,
    ``error``/``error_since`` when this refresh failed, ``went_back`` when the box now holds fewer events
    than the copy before: the previous copy is kept as ``previous.db``)."""
    cache = Path(cache)
    folder = cache / box["name"]
    folder.mkdir(parents=True, exist_ok=True)
    state = read_state(cache, box["name"])
    part = folder / "companion.db.part"
    now = clock()
    try:
        if box["kind"] == "file":
            from companion.storage.db import BackupRefused, backup_database

            try:
                part.touch()  # an existing file is the copy's name (not a folder to put it in)
                backup_database(box["source"], part)
            except BackupRefused as exc:
                raise replication.RestoreFailed(str(exc)) from None
        else:
            replication.restore_to(box["source"], part, binary or replication.find_binary())
        reason, summary = check_restored(part)
        if reason:
            raise replication.RestoreFailed(f"the restored copy is refused: {reason}")
    except (replication.RestoreFailed, replication.Unavailable, InputError, OSError) as exc:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{part}{suffix}").unlink(missing_ok=True)
        state.update({"error": str(exc), "error_since": state.get("error_since") or now, "checked_at": now})
        _write_state(cache, box["name"], state)
        return state
    current = folder / "companion.db"
    went_back = None
    if current.exists() and state.get("events", 0) > summary["events"]:
        went_back = {"before": state["events"], "now": summary["events"], "at": now}
        shutil.copyfile(current, folder / "previous.db")
    for suffix in ("-wal", "-shm"):
        Path(f"{part}{suffix}").unlink(missing_ok=True)
        Path(f"{current}{suffix}").unlink(missing_ok=True)
    os.replace(part, current)
    state = {"restored_at": now, "checked_at": now, "events": summary["events"], "matches": summary["matches"],
             "error": None, "error_since": None, "went_back": went_back or state.get("went_back")}
    _write_state(cache, box["name"], state)
    return state


def refresh_all(boxes: list[dict], cache, log=None) -> dict:
    """Refresh every box (see :func:`refresh`); a box that fails keeps its last copy and is logged."""
    binary = None
    if any(b["kind"] != "file" for b in boxes):
        try:
            binary = replication.find_binary()
        except replication.Unavailable as exc:
            raise InputError(str(exc), "litestream") from None
    states = {}
    for b in boxes:
        states[b["name"]] = refresh(b, cache, binary)
        if log and states[b["name"]].get("error"):
            log(f"box {b['name']}: {states[b['name']]['error']} (its last good copy is used)")
    return states


def _season_key(ref: str | None) -> tuple[str | None, str | None, int | None]:
    if not ref:
        return None, None, None
    parts = ref.split("/")
    if len(parts) not in (2, 3) or not parts[-1].isdigit():
        raise InputError("must be GAME/YEAR or CLUB/GAME/YEAR", "--season")
    club = parts[0] if len(parts) == 3 else None
    return club, parts[-2], int(parts[-1])


def load(boxes: list[dict], cache: str | Path, season: str | None = None) -> tuple[list[dict], str]:
    """Each box's season (``league.combine``'s input) from the cached copies, and the season's title.
    ``season``: GAME/YEAR or CLUB/GAME/YEAR; without it, the one (game, year) the boxes have."""
    cache = Path(cache)
    club, game, year = _season_key(season)
    listed = {}
    for box in boxes:
        path = cache / box["name"] / "companion.db"
        if not path.exists():
            listed[box["name"]] = None
            continue
        with ReadOnlyStore(path) as store:
            listed[box["name"]] = season_store.list_seasons(store)
    candidates = set()
    for seasons in listed.values():
        for s in seasons or []:
            if club and s["club"].casefold() != club.casefold():
                continue
            if game and (s["game"], s["year"]) != (game, year):
                continue
            candidates.add((s["game"], s["year"]))
    if not candidates:
        raise InputError("no box has " + (f"the season {season}" if season else "a season yet"), "--season")
    if len(candidates) > 1:
        raise InputError("the boxes have several seasons: choose one with --season GAME/YEAR ("
                         + ", ".join(f"{g}/{y}" for g, y in sorted(candidates)) + ")", "--season")
    game, year = candidates.pop()
    out = []
    for box in boxes:
        seasons = [s for s in listed[box["name"]] or [] if (s["game"], s["year"]) == (game, year)
                   and (not club or s["club"].casefold() == club.casefold())]
        if len(seasons) > 1:
            raise InputError("box {name} has {n_seasons} clubs with a {game} season in {year}: choose with --season "
                             "CLUB/GAME/YEAR", "--season", name=box['name'], n_seasons=len(seasons), game=game, year=year)
        if not seasons:
            out.append({"name": box["name"], "season": None, "rules": None, "matches": []})
            continue
        with ReadOnlyStore(cache / box["name"] / "companion.db") as store:
            s, rules, matches = season_store.season_data(store, seasons[0]["id"])
        out.append({"name": box["name"], "season": s, "rules": rules, "matches": matches})
    names = {b["season"]["club"] for b in out if b["season"]}
    title = f"{' / '.join(sorted(names))} {game} {year}"
    return out, title


def combined(boxes: list[dict], cache, season: str | None = None, aliases=None, now: str | None = None) -> tuple[dict, str]:
    loaded, title = load(boxes, cache, season)
    result = league.combine(loaded, aliases, now)
    for row in result["boxes"]:
        row["state"] = read_state(Path(cache), row["box"])
    return result, title


def parse_aliases(texts: list[str] | None) -> dict[str, str]:
    out = {}
    for t in texts or []:
        a, sep, b = t.partition("=")
        if not sep or not a or not b:
            raise InputError("must be NAME=SAME-PLAYER (got {t!r})", "--same", t=t)
        out[a] = b
    return out
