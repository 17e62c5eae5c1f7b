"""A match stream's events carry a patch of the view (``base`` + ``patch``) once the page holds the view of
the event before, else the whole view: applied over a random playthrough of every game, the patches give
each audience (a viewer, the TV, the organiser, each seat, a page that opened mid-way) exactly its whole
view at every step, and every value a patch carries is one of that audience's whole view at that step (so
no viewer's or TV's patch carries a seat's secret, nor one seat's another's: what a whole view shows to
whom is tests/stress/test_secrets.py's). The page's applyPatch (web/static/js/companion.js) follows
``companion.base.jsondiff.apply``: tests/browser/test_live.py."""

import json

import pytest

from companion.base import jsondiff
from companion.core.match import Fold
from companion.web.calls import present_view
from tests.games.conformance import SETUPS, Playthrough
from tests.web.conftest import Api, join
from tests.web.test_sse import Stream, parse


def at(doc, path):
    for k in path:
        doc = doc[k if isinstance(doc, list) else str(k)]
    return doc


def carries_only_what_it_shows(before, after, patch):
    """Every value a patch sets is the value at its place in the view it makes, and every key it removes
    was in the view before: it carries nothing that this audience's whole views do not show."""
    for op in patch:
        if len(op) == 2:
            assert at(after, op[0]) == op[1]
        else:
            assert op[0][-1] in at(before, op[0][:-1]) and op[0][-1] not in at(after, op[0][:-1])
    return True


def read_all(stream, last_seq):
    """Every event up to ``last_seq`` (the chunks parsed once: ``Stream.until`` parses them all at each)."""
    mark = f"id: {last_seq}\n"
    for _ in range(20000):
        chunk = next(stream.it)
        chunk = chunk.decode() if isinstance(chunk, bytes) else chunk
        stream.chunks.append(chunk)
        if mark in chunk:
            return parse(stream.chunks)[0]
    raise AssertionError("the last event never came")


@pytest.mark.parametrize("game", sorted(SETUPS))
def test_patches_give_each_audience_its_whole_view(app, organiser, game):
    # a whole match, undos and redos included (Rome is Burning's random matches are longer)
    p = Playthrough(game, seed=1, undo_rate=0.15, fuzz_rate=0, checks=False).run(
        300 if game == "rome-is-burning" else 100, True)
    players, options = SETUPS[game]
    c = app.extensions["companion"]
    mid = c.service.import_match({"id": f"patch-{game}", "game": game, "players": players, "options": options,
                                  "created_at": p.events[0]["at"], "events": []})[0]
    phones = {}
    for name in players:
        api = Api(app.test_client())
        join(app, api.c)
        r = api.put(f"/api/matches/{mid}/seat", {"player": name})
        assert r.status_code == 200, r.json
        phones[name] = api
    url = f"/api/matches/{mid}/stream"
    streams = {("viewer", None): Stream(app.test_client(), url),
               ("tv", None): Stream(app.test_client(), url + "?as=viewer&tv=1"),
               ("organiser", None): Stream(organiser.c, url),
               **{("player", n): Stream(api.c, url) for n, api in phones.items()}}
    for s in streams.values():  # each has its snapshot (subscribed) before the first event
        s.until(lambda ev, _: any(e[0] == "snapshot" for e in ev))

    hub, fold, views = c.hub, Fold(game, players, options), []
    half = len(p.events) // 2
    late = None
    for e in p.events:
        fold.apply(e)
        view = fold.view(e["at"])
        views.append(view)
        hub.publish_event(mid, {"event": e, "view": view, "status": "ended" if fold.ended() else "open"})
        if e["seq"] == half:  # a page that opens mid-way (a reconnect): its first event is whole again
            late = Stream(app.test_client(), url + f"?last_event_id={half - 2}")
            late.until(lambda ev, _: any(x[0] == "snapshot" for x in ev))
    streams[("late", None)] = late
    assert fold.ended(), "the playthrough should reach the end (its reveal included)"

    known: dict = {}

    def seen_as(aud, seq):
        """The whole view at ``seq`` as ``aud`` sees it, as JSON gives it to a page."""
        who, seat = aud
        key = ({"tv": "viewer", "late": "viewer"}.get(who, who), seat)
        if key not in known:
            known[key] = [json.loads(json.dumps(present_view(v, *key))) for v in views]
        return known[key][seq - 1]

    last = p.events[-1]["seq"]
    patched = 0
    for aud, s in streams.items():
        events = read_all(s, last)
        s.close()
        held, first = None, True
        for kind, sid, data in events:
            if kind == "snapshot":
                held = data["view"]
                continue
            if kind != "event" or "view" not in data and "patch" not in data:
                continue  # (a missed event told again, before the snapshot)
            seq = int(sid)
            if "patch" in data:
                assert not first, f"{aud}: the first event after the snapshot is whole"
                assert data["base"] == held["seq"] == seq - 1 or data["base"] == held["seq"], (aud, seq)
                before, held = held, jsondiff.apply(held, data["patch"])
                assert carries_only_what_it_shows(before, held, data["patch"]), aud
                patched += 1
            else:
                held = data["view"]
            first = False
            assert held == seen_as(aud, seq), f"{aud} at seq {seq}: the view held is not the whole view"
        assert held["seq"] == last
    n = len(streams)
    assert patched >= (last - 2) * (n - 1), "nearly every event should go as a patch"
    assert hub.count() == 0
