"""One roll made with a table's smart dice: which faces count (pure; docs/dice.md).

A :class:`RollWait` is told what the roll needs (a combat: ``{"attack": 3, "defend": 2}``; a final roll:
``{"any": 2}``; a Rome move: ``{"any": 1}``), the table's dice with their side, and then every reading
the radio hears with the time it heard it. A die counts for its side once it has **moved after the wait
began and then settled on a face** (``rolled``): a die that lies still from an earlier roll is not read
again, a die that lands crooked is asked to be rolled again, a die of the table's other side is said in
words and ignored, a die of another table is ignored. The first face a die settles on is the one that
counts. When every side has its faces the roll is complete; when the bound time passes first, the wait
says which dice are missing (not rolled, or out of range) and the table enters the faces by hand.

Messages are ``{"key", ...values}`` for the pages to put in words (``dice.note.<key>``).
"""

from __future__ import annotations

SIDES = ("attack", "defend")
ANY = "any"
MOVING = ("rolling", "handling")


class RollWait:
    TIMEOUT_S = 30.0   # the whole roll: from the tap to the last die
    GONE_S = 10.0      # a die of the table not heard for this long is out of range

    def __init__(self, need: dict, dice: list[dict], started: float, *, timeout_s: float | None = None,
                 gone_s: float | None = None):
        """``dice``: ``[{"die", "side", "label"}]`` (side ``attack`` or ``defend``). ``need``: dice per
        side, or ``{"any": n}`` for a roll any of the table's dice may make."""
        self.need = {k: int(v) for k, v in need.items() if int(v) > 0}
        self.dice = {d["die"]: {"side": d.get("side"), "label": d.get("label") or d["die"]} for d in dice}
        self.order = [d["die"] for d in dice]
        self.started = started
        self.timeout_s = self.TIMEOUT_S if timeout_s is None else timeout_s
        self.gone_s = self.GONE_S if gone_s is None else gone_s
        self.state = "waiting"  # waiting | complete | timeout | cancelled | refused
        self.faces: dict[str, list[int]] = {k: [] for k in self.need}
        self.status: dict[str, dict] = {d: {"status": "waiting", "face": None, "for": None} for d in self.dice}
        self.moved: set[str] = set()
        self.baseline: dict[str, int | None] = {}  # the face a die lay on when first heard in this wait
        self.counted: dict[str, str] = {}  # die -> the side it counted for
        self.notes: list[dict] = []
        self.ignored = 0  # readings of dice of other tables
        self.missing: list[dict] = []
        self.error: dict | None = None

    # -- what a die is for -----------------------------------------------------------------------
    def _slot(self, die: str) -> str | None:
        """The side this die rolls for now, or None (its side needs no more dice)."""
        if ANY in self.need:
            return ANY if len(self.faces[ANY]) < self.need[ANY] else None
        side = self.dice[die]["side"]
        if side in self.need and len(self.faces[side]) < self.need[side]:
            return side
        return None

    def _note(self, key: str, **values) -> None:
        note = {"key": key, **values}
        if note not in self.notes[-3:]:
            self.notes.append(note)
            del self.notes[:-6]

    # -- what the radio hears --------------------------------------------------------------------
    def feed(self, reading, now: float) -> bool:
        """One reading (``companion.dice.Reading``); True when the wait changed."""
        if self.state != "waiting":
            return False
        die = reading.die
        if die not in self.dice:
            self.ignored += 1
            return False
        label = self.dice[die]["label"]
        st = self.status[die]
        if die in self.counted:
            if reading.state in MOVING and st["status"] != "moved-after":
                st["status"] = "moved-after"
                self._note("moved_after", die=label, face=st["face"])
                return True
            return False
        if die not in self.baseline:
            self.baseline[die] = reading.face if reading.state in ("rolled", "still") else None
            if reading.state in ("rolled", "still"):
                return False  # lying there from before the wait
        elif reading.state == "rolled" and die not in self.moved and reading.face != self.baseline[die]:
            self.moved.add(die)  # another face: it was rolled, its rolling went unheard
        if reading.state in MOVING:
            self.moved.add(die)
            if st["status"] != "rolling":
                st["status"] = "rolling"
                return True
            return False
        if reading.state == "crooked" and die in self.moved:
            self.moved.discard(die)
            st["status"] = "crooked"
            self._note("crooked", die=label)
            return True
        if reading.state == "rolled" and die in self.moved:
            self.moved.discard(die)
            slot = self._slot(die)
            if slot is None:
                st["status"] = "wrong-side"
                side = self.dice[die]["side"]
                if ANY in self.need:
                    self._note("enough", die=label, n=self.need[ANY])
                elif side not in self.need:
                    self._note("wrong_side", die=label, side=side)
                else:
                    self._note("side_full", die=label, side=side, n=self.need[side])
                return True
            face = reading.face
            if not isinstance(face, int) or not 1 <= face <= 6:
                st["status"] = "crooked"
                self._note("not_d6", die=label)
                return True
            self.faces[slot].append(face)
            self.counted[die] = slot
            st.update(status="settled", face=face, **{"for": slot})
            if all(len(self.faces[k]) >= n for k, n in self.need.items()):
                self.state = "complete"
            return True
        return False

    def tick(self, now: float, last_heard=None) -> bool:
        """The bound time: past it, the wait ends with what is missing. ``last_heard(die) -> seconds ago or
        None`` tells a die out of range (not heard lately) from one not rolled."""
        if self.state != "waiting" or now - self.started < self.timeout_s:
            return False
        self.state = "timeout"
        missing = []
        for die in self.order:
            if die in self.counted:
                continue
            if ANY not in self.need and self.dice[die]["side"] not in self.need:
                continue
            if self._slot(die) is None:
                continue
            ago = last_heard(die) if last_heard is not None else None
            gone = ago is None or ago > self.gone_s
            missing.append({"die": self.dice[die]["label"], "side": self.dice[die]["side"],
                            "why": "out_of_range" if gone else "not_rolled",
                            "ago_s": None if ago is None else round(ago)})
        self.missing = missing
        self._note("timeout", s=round(self.timeout_s))
        return True

    def cancel(self) -> None:
        if self.state == "waiting":
            self.state = "cancelled"

    def remaining(self, now: float) -> float:
        return max(0.0, self.timeout_s - (now - self.started))

    def view(self, now: float) -> dict:
        return {"state": self.state, "need": dict(self.need), "faces": {k: list(v) for k, v in self.faces.items()},
                "dice": [{"die": d, "label": self.dice[d]["label"], "side": self.dice[d]["side"], **self.status[d]}
                         for d in self.order],
                "notes": list(self.notes), "missing": list(self.missing), "ignored": self.ignored,
                "remaining_s": round(self.remaining(now), 1), "timeout_s": self.timeout_s, "error": self.error}
