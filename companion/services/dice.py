"""The tables' smart dice (docs/dice.md): which dice belong to which table and side, the "roll each die once"
check, and the rolls a match waits for.

- **Dice sets**, bound once per evening on the organiser's dice page: a set is a table's dice, each on a side
  (the attacker's three, the defender's three) with a label (its colour or name). A set serves one match at
  a time (``match_id``); kept in the settings table (``dice.sets``), so a restart keeps the evening's binding.
- **The check**: every die of a set rolled once; the page shows each one's face as it lands.
- **A roll**: a phone asks for one (a combat, a final roll, a Rome move) in a match whose dice come from the
  table (``options.dice = "smart"``); the service checks it with the game (nothing is recorded yet), then
  follows the set's dice (``companion.core.dice_roll.RollWait``), tells the match's live pages every change
  (``event: dice``), and records the event with the faces and ``rolled_by: "dice"`` through the match service
  when every die has landed; past the bound time it says which dice are missing and the table enters the
  faces by hand.

The radio (``companion.dice``) is the adapter; this module holds no SQL (the settings are the store's) and
no game rule (the games say how many dice a roll needs: ``dice_needed``)."""

from __future__ import annotations

import logging
import secrets
import threading
import time

from companion.base.notices import Listeners, Notice
from companion.core.dice_roll import SIDES, RollWait
from companion.base.errors import CompanionError, ConflictError, InputError, NotFoundError, RuleError
from companion.core.match import DICE_SOURCES as SOURCES  # options.dice: where a match's dice come from
from companion.core.match import check_dice as check_source  # noqa: F401
from companion.services.policy import ORGANISER, Caller

log = logging.getLogger(__name__)

SETS_KEY = "dice.sets"
MAX_SETS = 24
MAX_PER_SIDE = 3
LABEL_MAX = 24
CHECK_S = 120.0  # how long a "roll each die once" check stays open
ROLL_EVENTS = {"combat": "combat", "final-roll": "final.roll", "move": "move"}  # the event each roll records


def dice_source(options: dict | None, bound: bool = False) -> str:
    """Where a match's dice come from: ``options.dice`` when the match says; else the table's smart dice when a
    set is bound to it (a tournament's tables are made by the round: binding their dice is what says so),
    else the Pi."""
    v = (options or {}).get("dice")
    if v in SOURCES:
        return v
    return "smart" if bound else "pi"



class DiceTables:
    TICK_S = 0.25

    def __init__(self, service, store, radio, publish=None, monotonic=time.monotonic, timeout_s: float | None = None):
        """``radio``: a ``companion.dice.DiceRadio`` (readings, and when each die was last heard). A roll's
        dice as they land are told to the listeners (:meth:`subscribe`: ``Notice("dice", match_id, view)``,
        the live pages through the runtime), or to ``publish(match_id, kind, payload)`` when given."""
        self.service = service
        self.store = store
        self.radio = radio
        self._listeners = Listeners(log, "dice tables")
        self.publish = publish or (lambda match_id, kind, payload: self._listeners.tell(Notice(kind, match_id, payload)))
        self.monotonic = monotonic
        self.timeout_s = timeout_s
        self._lock = threading.RLock()
        self._waits: dict[str, dict] = {}   # match_id -> {"wait", "what", "data", "seq", "player"}
        self._checks: dict[str, dict] = {}  # set id -> {"started", "dice": {die: face|None}}
        self._recent: list = []             # the last readings (the dice page's "roll to pick")
        self._count = 0                     # readings heard so far: the cursor of rolled_after()
        self._done: dict[str, dict] = {}    # match_id -> the last finished roll's view (a page that reloads)
        self._stop = threading.Event()
        self._thread = None
        if radio is not None:
            radio.subscribe(self.on_reading)

    def subscribe(self, callback) -> None:
        """``callback(notice)`` (:class:`companion.base.notices.Notice`): ``kind`` ``"dice"``, the roll's view."""
        self._listeners.add(callback)

    def unsubscribe(self, callback) -> None:
        self._listeners.remove(callback)

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> "DiceTables":
        self._thread = threading.Thread(target=self._run, name="companion-dice-tables", daemon=True)
        self._thread.start()
        self._hold_godice()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.radio is not None:
            self.radio.unsubscribe(self.on_reading)

    def _run(self) -> None:
        while not self._stop.wait(self.TICK_S):
            try:
                self.tick()
            except Exception:
                log.exception("dice tick failed")

    # -- the sets --------------------------------------------------------------------------------
    def sets(self) -> list[dict]:
        v = self.store.get_setting(SETS_KEY, [])
        return [s for s in v if isinstance(s, dict)] if isinstance(v, list) else []

    def get_set(self, set_id: str) -> dict:
        for s in self.sets():
            if s["id"] == set_id:
                return s
        raise NotFoundError("no dice set {set_id!r}", "set", set_id=set_id)

    def set_for(self, match_id: str) -> dict | None:
        return next((s for s in self.sets() if s.get("match_id") == match_id), None)

    def save_set(self, doc: dict, set_id: str | None = None) -> dict:
        """A new set, or the set ``set_id`` changed: ``{"name", "dice": [{"die", "side", "label"?}],
        "match_id"?}``. A die belongs to one set; a match has one set."""
        name = str(doc.get("name", "")).strip()
        if not name:
            raise InputError("give the set a name (the table's, or its colours)", "$.name")
        dice, seen = [], set()
        for i, d in enumerate(doc.get("dice") or []):
            die, side = d.get("die"), d.get("side")
            if not isinstance(die, str) or not die:
                raise InputError("must name a die heard by the box", f"$.dice[{i}].die")
            if die in seen:
                raise InputError("this die is in the set twice", f"$.dice[{i}].die")
            if side not in SIDES:
                raise InputError("must be attack or defend", f"$.dice[{i}].side")
            seen.add(die)
            label = str(d.get("label") or "").strip()[:LABEL_MAX] or self._default_label(die)
            dice.append({"die": die, "side": side, "label": label})
        for side in SIDES:
            if sum(1 for d in dice if d["side"] == side) > MAX_PER_SIDE:
                raise InputError("at most {n} dice on a side", "$.dice", n=MAX_PER_SIDE)
        match_id = doc.get("match_id") or None
        if match_id is not None:
            self.store.get_match(match_id)  # 404
        with self.store.write():
            sets = self.sets()
            if set_id is None:
                if len(sets) >= MAX_SETS:
                    raise RuleError("the box keeps at most {n} dice sets: delete one first", "$.name", n=MAX_SETS)
                new = {"id": secrets.token_hex(4), "name": name, "dice": dice, "match_id": match_id}
                sets.append(new)
            else:
                new = None
                for s in sets:
                    if s["id"] == set_id:
                        s.update(name=name, dice=dice, match_id=match_id)
                        new = s
                if new is None:
                    raise NotFoundError("no dice set {set_id!r}", "set", set_id=set_id)
            for s in sets:
                if s is new:
                    continue
                taken = [d["label"] for d in s["dice"] if d["die"] in seen]
                if taken:
                    raise RuleError("{die} is in the set {other} already: take it out there first", "$.dice",
                                    die=taken[0], other=s["name"])
                if match_id is not None and s.get("match_id") == match_id:
                    s["match_id"] = None  # the match takes this set instead
            before = {x.get("match_id") for x in self.sets()}
            self.store.set_setting(SETS_KEY, sets)
        self._hold_godice()
        self._bound({m for m in before | {x.get("match_id") for x in sets} if m})
        return new

    def _bound(self, match_ids) -> None:
        """The matches whose table's dice changed: their live pages read where their dice come from again."""
        for mid in match_ids:
            self.publish(mid, "dice", {"match_id": mid, "state": "bound"})

    def delete_set(self, set_id: str) -> None:
        with self.store.write():
            sets = self.sets()
            left = [s for s in sets if s["id"] != set_id]
            if len(left) == len(sets):
                raise NotFoundError("no dice set {set_id!r}", "set", set_id=set_id)
            self.store.set_setting(SETS_KEY, left)
        self._hold_godice()
        self._bound({s.get("match_id") for s in sets if s["id"] == set_id and s.get("match_id")})

    def _default_label(self, die: str) -> str:
        got = self.radio.last(die) if self.radio is not None else None
        return (got[0].name if got else die)[:LABEL_MAX]

    def _hold_godice(self) -> None:
        if self.radio is None:
            return
        addresses = [d["die"].split(":", 1)[1] for s in self.sets() for d in s["dice"] if d["die"].startswith("godice:")]
        self.radio.connect(addresses)

    # -- the "roll each die once" check ----------------------------------------------------------
    def start_check(self, set_id: str) -> dict:
        s = self.get_set(set_id)
        with self._lock:
            self._checks[set_id] = {"started": self.monotonic(), "dice": {d["die"]: None for d in s["dice"]},
                                    "moved": set()}
        return self.check_view(set_id)

    def check_view(self, set_id: str) -> dict:
        s = self.get_set(set_id)
        now = self.monotonic()
        with self._lock:
            chk = self._checks.get(set_id)
            if chk is not None and now - chk["started"] > CHECK_S:
                chk = None
                self._checks.pop(set_id, None)
        rows = []
        for d in s["dice"]:
            last = self.radio.last(d["die"]) if self.radio is not None else None
            ago = None if last is None else now - last[1]
            rows.append({**d, "rolled": None if chk is None else chk["dice"].get(d["die"]),
                         "in_range": ago is not None and ago <= self.radio.GONE_S,
                         "battery": last[0].battery if last else None,
                         "state": last[0].state if last else None})
        done = chk is not None and all(r["rolled"] is not None for r in rows) and bool(rows)
        return {"set": s, "checking": chk is not None, "done": done, "dice": rows}

    # -- rolls -----------------------------------------------------------------------------------
    def needed(self, match_id: str, what: str, data: dict) -> dict:
        """What a roll needs (the game checks it first: nothing is recorded), or a refusal in words."""
        fold = self.service.fold(match_id)
        if fold.ended():
            raise RuleError("the match has ended", "type")
        if what == "final-roll":
            owed = (fold.view(self.store.clock.now_iso()) or {}).get("awaiting_roll")
            if not owed:
                raise RuleError("nobody owes a final roll now", "player")
            if data.get("player") not in (None, owed):
                raise RuleError("{owed} owes the final roll, not {player}", "player", owed=owed, player=data.get("player"))
            data["player"] = owed
            return {"any": 2}
        fn = getattr(fold.module, "dice_needed", None)
        action = {"combat": "combat", "move": "move"}.get(what)
        if fn is None or action is None:
            raise InputError("{game} rolls no dice for {what!r}", "what", game=fold.game, what=what)
        return fn(fold.game_state, action, data)

    def start_roll(self, match_id: str, what: str, data: dict, expected_seq: int | None = None,
                   by: Caller = ORGANISER) -> dict:
        """Wait for the table's dice to make this roll, asked by ``by``: the roll is the move of the seat it acts
        for (a match set to each phone plays its own seat: that seat's phone or an organiser asks it)."""
        match = self.store.get_match(match_id)
        s = self.set_for(match_id)
        if dice_source(match.get("options"), s is not None) != "smart":
            raise RuleError("this match's dice are not smart dice (the match's options say where its dice come "
                            "from)", "what")
        if s is None or not s["dice"]:
            raise RuleError("no dice are bound to this table: the organiser binds them on the dice page", "set")
        if not isinstance(data, dict):
            raise InputError("must be an object", "data")
        data = dict(data)
        need = self.needed(match_id, what, data)
        self.service.check_own_seat(match_id, by, ROLL_EVENTS.get(what, what), data)
        f = self.service.fold(match_id)
        if expected_seq is not None and expected_seq != f.last_seq:
            raise ConflictError("stale write: the match is at seq {last_seq}, not {expected_seq}", "expected_seq",
                                last_seq=f.last_seq, expected_seq=expected_seq)
        for side, n in need.items():
            have = len(s["dice"]) if side == "any" else sum(1 for d in s["dice"] if d["side"] == side)
            if have < n:
                raise RuleError("the roll needs {n} dice on a side and the table's set has {have} there: enter the "
                                "faces by hand", "set", n=n, have=have)
        with self._lock:
            wait = RollWait(need, s["dice"], self.monotonic(), timeout_s=self.timeout_s)
            self._waits[match_id] = {"wait": wait, "what": what, "data": data, "seq": f.last_seq, "set": s["id"]}
            view = self._view(match_id)
        self.publish(match_id, "dice", view)
        return view

    def cancel(self, match_id: str) -> dict | None:
        with self._lock:
            w = self._waits.get(match_id)
            if w is None:
                return None
            w["wait"].cancel()
            view = self._view(match_id)
            self._finish(match_id, view)
        self.publish(match_id, "dice", view)
        return view

    def wait_view(self, match_id: str) -> dict | None:
        """The roll the match waits for, else the last one that finished (recorded, refused, timed out)."""
        with self._lock:
            if match_id in self._waits:
                return self._view(match_id)
            return self._done.get(match_id)

    def _finish(self, match_id: str, view: dict) -> None:
        self._waits.pop(match_id, None)
        self._done[match_id] = view
        while len(self._done) > 64:
            self._done.pop(next(iter(self._done)))

    def _view(self, match_id: str) -> dict:
        w = self._waits[match_id]
        return {"match_id": match_id, "what": w["what"], "data": w["data"], **w["wait"].view(self.monotonic())}

    # -- what the radio hears --------------------------------------------------------------------
    def on_reading(self, reading, now: float) -> None:
        with self._lock:
            self._count += 1
            self._recent.append((reading.die, reading.state, self._count))
            del self._recent[:-50]
            for chk in self._checks.values():
                if reading.die in chk["dice"] and chk["dice"][reading.die] is None:
                    if reading.state in ("rolling", "handling"):
                        chk["moved"].add(reading.die)
                    elif reading.state == "rolled" and reading.die in chk["moved"]:
                        chk["dice"][reading.die] = reading.face
            changed = []
            for match_id, w in list(self._waits.items()):
                if w["wait"].feed(reading, now):
                    changed.append(match_id)
        for match_id in changed:
            self._after_change(match_id)

    def cursor(self) -> int:
        """How many readings were heard so far (the dice page asks what rolled after it)."""
        with self._lock:
            return self._count

    def rolled_after(self, cursor: int) -> list[str]:
        """The dice that started rolling after the reading ``cursor``: the dice page's "roll a die to pick it"."""
        with self._lock:
            return list(dict.fromkeys(d for d, st, n in self._recent if n > cursor and st in ("rolling", "handling")))

    def tick(self, now: float | None = None) -> None:
        now = self.monotonic() if now is None else now

        def ago(die):
            last = self.radio.last(die) if self.radio is not None else None
            return None if last is None else now - last[1]

        changed = []
        with self._lock:
            for match_id, w in list(self._waits.items()):
                if w["wait"].tick(now, ago):
                    changed.append(match_id)
        for match_id in changed:
            self._after_change(match_id)

    def _after_change(self, match_id: str) -> None:
        with self._lock:
            w = self._waits.get(match_id)
            if w is None:
                return
            wait = w["wait"]
            view = self._view(match_id)
            if wait.state in ("timeout", "cancelled"):
                self._finish(match_id, view)
        if wait.state == "complete":
            view = self._record(match_id, w)
        self.publish(match_id, "dice", view)

    def _record(self, match_id: str, w: dict) -> dict:
        """Every die has landed: the event with the faces, marked ``rolled_by: "dice"``."""
        wait, data = w["wait"], dict(w["data"])
        try:
            if w["what"] == "combat":
                data.pop("dice", None)
                data.update(attack_dice=wait.faces["attack"], defend_dice=wait.faces["defend"])
                event, _ = self.service.act(match_id, "combat", data, expected_seq=w["seq"], rolled_by="dice")
            else:  # the mark is the box's own: added where the event is completed, as the Pi's draws are
                if w["what"] == "final-roll":
                    type_, done = "final.roll", {"player": data["player"], "dice": wait.faces["any"]}
                else:
                    type_, done = "move", {"player": data.get("player"), "direction": data.get("direction"),
                                           "die": wait.faces["any"][0]}
                event = self.service.append(match_id, type_, expected_seq=w["seq"],
                                            complete=lambda f, done=done: {**done, "rolled_by": "dice"})
            wait.state = "recorded"
            extra = {"event_seq": event["seq"]}
        except CompanionError as exc:  # the match moved on meanwhile, or the rules refuse it now
            wait.state = "refused"
            wait.error = {"error": exc.template, "params": {k: v for k, v in exc.params.items()
                                                            if isinstance(v, (str, int, float))},
                          "field": exc.field}
            extra = {}
        with self._lock:
            view = {**self._view(match_id), **extra}
            self._finish(match_id, view)
        return view
