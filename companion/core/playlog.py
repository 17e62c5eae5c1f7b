"""A finished match as a play for the players' own play loggers: BG Stats' "push a play" link.

BG Stats (an app many players keep their plays in) takes one play by a link: ``https://app.bgstatsapp.com/
createPlay.html?data=<url-encoded JSON>``, or the same path under the app's own ``bgstats://`` scheme, which
opens the app directly (docs/playlog.md says what a player sees and which fields are sent). This module is
pure: it builds the play from what the match service already knows (the ranking, the game's points, the
first and last event, the club) and reads a link back (:func:`parse_link`, used by the tests' round trip).

A game's BoardGameGeek id is sent only where it was verified from a public source (``BGG_IDS``, with where
it came from in docs/playlog.md); a game without a known id is sent by its name alone, and BG Stats asks
the player which game it is the first time.
"""

from __future__ import annotations

import json
from datetime import timezone
from urllib.parse import parse_qs, quote, urlsplit

from companion.base.errors import InputError
from companion.base.timeutil import parse_iso

WEB_URL = "https://app.bgstatsapp.com/createPlay.html"
APP_URL = "bgstats://app.bgstatsapp.com/createPlay.html"
SOURCE_NAME = "companion"  # BG Stats remembers a sender's games and players by (sourceName, source…Id): never rename

# game id -> BoardGameGeek id, or None when no stored public source confirmed one (docs/playlog.md,
# "The games' BoardGameGeek ids"): such a game is sent by its name alone, never by a guessed id.
BGG_IDS: dict[str, int | None] = {
    "web-of-power": None,
    "richelieu": None,
    "rome-is-burning": None,
    "conquest-italy": None,
}

# the longest link a phone's browser and the app's link handler take without trouble; a play that would
# need more drops its per-player ids first (docs/playlog.md)
MAX_URL = 8000


def play_date(iso: str) -> str:
    """An ISO instant as BG Stats' ``playDate``: ``YYYY-MM-DD HH:MM:SS`` in UTC."""
    return parse_iso(iso).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _minutes(start: str | None, end: str | None) -> int | None:
    if not start or not end:
        return None
    seconds = (parse_iso(end) - parse_iso(start)).total_seconds()
    if seconds <= 0:
        return None
    return max(1, round(seconds / 60))


def _number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def build_play(*, match_id: str, game: str, game_name: str, players: list[str], results: list[dict],
               started_at: str | None, ended_at: str | None, first_player: str | None = None,
               location: str | None = None, player_ids: dict[str, str] | None = None,
               bgg_id: int | None = None, comments: str | None = None) -> dict:
    """The play of one finished match in BG Stats' fields.

    ``results``: the match's final ranking, one row per player (``player``, ``place``; ``game_points`` when the
    game gives a number). Every player must have a place: a ranking
    with a missing part names no winner (refused). ``player_ids``: {name: roster id} for the players on the
    club's roster (a stable ``sourcePlayerId``; a guest is known by the name alone). ``started_at``/``ended_at``:
    the match's first and last event (ISO)."""
    if not isinstance(results, list) or not results:
        raise InputError("the match has no final ranking yet", "results")
    by_player = {r.get("player"): r for r in results if isinstance(r, dict)}
    missing = [p for p in players if p not in by_player or not isinstance(by_player[p].get("place"), int)]
    if missing:
        raise InputError("no place for {players}: a play is sent only with the whole ranking", "results",
                         players=", ".join(missing))
    scores = {p: _number(by_player[p].get("game_points")) for p in players}
    with_points = all(v is not None for v in scores.values())
    ids = player_ids or {}
    game_doc = {"name": game_name, "sourceGameId": f"{SOURCE_NAME}:{game}", "highestWins": True,
                "noPoints": not with_points}
    if isinstance(bgg_id, int) and not isinstance(bgg_id, bool) and bgg_id > 0:
        game_doc["bggId"] = bgg_id
    rows = []
    for p in players:
        r = by_player[p]
        row = {"name": p, "rank": r["place"], "winner": r["place"] == 1, "startPlayer": p == first_player}
        if ids.get(p):  # a guest is known by the name alone
            row["sourcePlayerId"] = f"player:{ids[p]}"
        if with_points:
            row["score"] = scores[p]
        rows.append(row)
    play = {"sourceName": SOURCE_NAME, "sourcePlayId": match_id,
            "playDate": play_date(started_at or ended_at) if (started_at or ended_at) else None,
            "game": game_doc, "players": rows}
    if play["playDate"] is None:
        raise InputError("the match has no recorded event to date the play by", "started_at")
    minutes = _minutes(started_at, ended_at)
    if minutes is not None:
        play["durationMin"] = minutes
    if location:
        play["location"] = location
    if comments:
        play["comments"] = comments
    return play


def encode(play: dict) -> str:
    """The ``data`` value of a link: the play as compact JSON (non-ASCII kept, then percent-encoded)."""
    # ":" and "," may stand as they are in a query value (RFC 3986): a shorter link, a smaller QR code
    return quote(json.dumps(play, ensure_ascii=False, separators=(",", ":")), safe=":,")


def link(play: dict, app: bool = False) -> str:
    """The link that pushes ``play`` to BG Stats: the web address (opens the app where it is installed) or,
    with ``app``, the app's own ``bgstats://`` address. A play too long for a link loses its per-player
    ids first (BG Stats then matches the players by name)."""
    base = APP_URL if app else WEB_URL
    url = f"{base}?data={encode(play)}"
    if len(url) > MAX_URL:
        slim = {**play, "players": [{k: v for k, v in p.items() if k != "sourcePlayerId"} for p in play["players"]]}
        slim.pop("comments", None)
        url = f"{base}?data={encode(slim)}"
    return url


_SCHEMES = {"https": WEB_URL, "bgstats": APP_URL}


def parse_link(url: str) -> dict:
    """The play a BG Stats link carries (the inverse of :func:`link`); refuses another address."""
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}{parts.path}"
    if _SCHEMES.get(parts.scheme) != base:
        raise InputError("not a BG Stats createPlay link: {url}", "url", url=url[:80])
    values = parse_qs(parts.query, keep_blank_values=True).get("data")
    if not values or len(values) != 1:
        raise InputError("the link carries no data", "url")
    try:
        doc = json.loads(values[0])
    except ValueError as exc:
        raise InputError("the link's data is not JSON: {exc}", "url", exc=exc) from None
    if not isinstance(doc, dict):
        raise InputError("the link's data is not a play", "url")
    return doc

