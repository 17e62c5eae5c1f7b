"""The spoken announcer on the box (an adapter): the clock's alerts said aloud on the Pi's audio output by
Debian's ``espeak-ng`` (``espeak-ng -v it "Cinque minuti alla fine"``), switched on by the setting
``COMPANION_ANNOUNCER=it`` (or ``en``) in the server's environment (``/etc/default/companion`` on the box); off
by default (unset, or ``off``).

What it says (the texts are :func:`text`): 15 and 5 minutes left, the time up, a final roll owed (whose
roll, and the total that ends the match: in the final rounds a player who conquered fewer than 2
territories in the turn rolls two dice, and a total at or below the round's threshold, 4 in the first final
round and one more each round up to 12, ends the match; ``companion/core/clock.py``), and the end of the match.

Nothing breaks without a voice: no ``espeak-ng`` installed, or no audio device (espeak-ng fails), is said
once in the log and the announcer goes quiet; the server runs on. Speech runs in one background thread, a
queue in front of it, so no request waits for it."""

from __future__ import annotations

import logging
import queue
import shutil
import subprocess
import threading

log = logging.getLogger(__name__)

LANGS = ("it", "en")
VOICE = {"it": "it", "en": "en"}
ENV = "COMPANION_ANNOUNCER"
TIMEOUT_SECONDS = 20

_NUMBERS = {
    "it": {2: "due", 3: "tre", 4: "quattro", 5: "cinque", 6: "sei", 7: "sette", 8: "otto", 9: "nove",
           10: "dieci", 11: "undici", 12: "dodici", 15: "quindici"},
    "en": {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten",
           11: "eleven", 12: "twelve", 15: "fifteen"},
}

_TEXTS = {
    "it": {
        "15-minutes": "Quindici minuti alla fine",
        "5-minutes": "Cinque minuti alla fine",
        "time-up": "Tempo scaduto: si finisce il giro",
        "final-roll": "Tocca a {player}: lancia due dadi, con {n} o meno la partita finisce",
        "ended": "La partita è finita",
        "ended-winner": "La partita è finita: vince {player}",
    },
    "en": {
        "15-minutes": "Fifteen minutes to go",
        "5-minutes": "Five minutes to go",
        "time-up": "Time is up: finish the round",
        "final-roll": "{player}'s turn: roll two dice, {n} or less ends the match",
        "ended": "The match is over",
        "ended-winner": "The match is over: {player} wins",
    },
}
KINDS = tuple(_TEXTS["en"])


def number(n: int, lang: str) -> str:
    """A small number in words (the thresholds 4..12), else in figures."""
    return _NUMBERS[lang].get(n, str(n))


def text(kind: str, lang: str = "it", player: str | None = None, n: int | None = None) -> str:
    """The sentence said for ``kind`` (one of :data:`KINDS`) in ``lang``."""
    if lang not in LANGS:
        raise ValueError(f"no announcer language {lang!r}")
    if kind == "ended" and player:
        kind = "ended-winner"
    words = _TEXTS[lang][kind]
    return words.format(player=player or "", n=number(n, lang) if n is not None else "")


def command(words: str, lang: str = "it", wav: str | None = None, binary: str = "espeak-ng") -> list[str]:
    """The espeak-ng command that says ``words`` (on the audio output, or into the WAV file ``wav``)."""
    cmd = [binary, "-v", VOICE[lang]]
    if wav is not None:
        cmd += ["-w", str(wav)]
    return cmd + ["--", words]


def lang_from(value: str | None) -> str | None:
    """The announcer's language from the setting's value: ``it``/``en``; None (off) for unset/off/0/no."""
    v = (value or "").strip().lower()
    if v in ("", "off", "0", "no", "false"):
        return None
    if v not in LANGS:
        raise ValueError(f"{ENV} must be it, en or off, not {value!r}")
    return v


class Announcer:
    """Says the match clock's alerts aloud in ``lang`` (None: off). ``run`` and ``which`` are injectable
    (tests run without a voice or a speaker)."""

    def __init__(self, lang: str | None = None, run=subprocess.run, which=shutil.which, background: bool = True):
        self._lang = lang
        self.run = run
        self.which = which
        self.said: list[list[str]] = []   # the commands run, newest last (for tests and the log)
        self.broken: str | None = None    # why the announcer went quiet (logged once)
        self._queue: queue.Queue | None = queue.Queue(maxsize=20) if background else None
        self._thread: threading.Thread | None = None

    def enabled(self) -> bool:
        return self._lang is not None and self.broken is None

    def lang(self) -> str:
        return self._lang or "it"

    def _quiet(self, why: str) -> None:
        if self.broken is None:
            self.broken = why
            log.warning("announcer: %s; the spoken announcements are off until the server restarts", why)

    def say(self, kind: str, player: str | None = None, n: int | None = None) -> list[str] | None:
        """Queue the announcement of ``kind``; returns the command (None when off or quiet)."""
        if not self.enabled():
            return None
        binary = self.which("espeak-ng")
        if binary is None:
            self._quiet("espeak-ng is not installed (sudo apt-get install espeak-ng)")
            return None
        cmd = command(text(kind, self.lang(), player, n), self.lang(), binary=binary)
        if self._queue is None:
            self._speak(cmd)
        else:
            self._start()
            try:
                self._queue.put_nowait(cmd)
            except queue.Full:
                log.info("announcer: too many announcements waiting; this one is dropped")
        return cmd

    def _start(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="announcer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            cmd = self._queue.get()
            if cmd is None:
                return
            self._speak(cmd)

    def stop(self) -> None:
        if self._queue is not None and self._thread is not None and self._thread.is_alive():
            self._queue.put(None)

    def _speak(self, cmd: list[str]) -> None:
        if self.broken is not None:
            return
        self.said.append(cmd)
        try:
            p = self.run(cmd, capture_output=True, timeout=TIMEOUT_SECONDS)
        except (OSError, subprocess.SubprocessError) as exc:
            self._quiet(f"espeak-ng could not run ({exc})")
            return
        if p.returncode != 0:
            err = (p.stderr or b"")
            err = err.decode("utf-8", "replace") if isinstance(err, bytes) else str(err)
            self._quiet(f"no audio output (espeak-ng exited {p.returncode}: {err.strip()[:200]})")

    # -- what it listens to -------------------------------------------------------------------------
    def on_clock(self, notice) -> None:
        """ClockRunner listener: the alerts 15-minutes, 5-minutes, time-up, ended."""
        payload = notice.payload
        if notice.kind != "alert" or not isinstance(payload, dict):
            return
        alert = payload.get("alert")
        if alert in ("15-minutes", "5-minutes", "time-up"):
            self.say(alert)
        elif alert == "ended":
            by = payload.get("ended_by") or {}
            self.say("ended", player=by.get("player") if by.get("reason") == "objective" else None)

    def on_event(self, notice) -> None:
        """MatchService listener: a turn's end that leaves a final roll owed is announced with whose roll
        and the total that ends the match."""
        event, fold = notice.event, notice.fold
        if not self.enabled() or (event or {}).get("type") != "turn.end" or not getattr(fold, "clock_on", False):
            return
        clock = fold.clock_state or {}
        if clock.get("awaiting_roll"):
            self.say("final-roll", player=clock["awaiting_roll"], n=clock.get("final_threshold"))
