"""The spoken announcer without audio hardware: the texts (Italian and English), the espeak-ng command it
would run, quiet and said once in the log when espeak-ng or the audio output is missing; the final roll
owed announced from a real clock fold; a real espeak-ng render to a WAV file when espeak-ng is installed."""

import logging
import shutil
import subprocess
from types import SimpleNamespace

import pytest

from companion import announcer as A
from companion.base.notices import Notice
from companion.core import clock
from tests.debian_packages import install_hint


def test_texts_in_italian_and_english():
    assert A.text("5-minutes", "it") == "Cinque minuti alla fine"
    assert A.text("15-minutes", "it") == "Quindici minuti alla fine"
    assert A.text("5-minutes", "en") == "Five minutes to go"
    assert A.text("final-roll", "it", player="Bruno", n=6) == \
        "Tocca a Bruno: lancia due dadi, con sei o meno la partita finisce"
    assert A.text("final-roll", "en", player="Bruno", n=4) == "Bruno's turn: roll two dice, four or less ends the match"
    assert A.text("ended", "it") == "La partita è finita"
    assert A.text("ended", "en", player="Carla") == "The match is over: Carla wins"
    for lang in A.LANGS:
        for n in range(clock.FIRST_THRESHOLD, clock.MAX_THRESHOLD + 1):
            assert not any(ch.isdigit() for ch in A.text("final-roll", lang, player="X", n=n))  # said in words
    with pytest.raises(ValueError):
        A.text("5-minutes", "de")


def test_the_command_it_would_run():
    assert A.command("Cinque minuti alla fine", "it") == ["espeak-ng", "-v", "it", "--", "Cinque minuti alla fine"]
    assert A.command("Five minutes to go", "en", wav="/tmp/x.wav") == \
        ["espeak-ng", "-v", "en", "-w", "/tmp/x.wav", "--", "Five minutes to go"]
    # a name that looks like an option is still words
    assert A.command("-x", "en")[-2:] == ["--", "-x"]


def test_the_setting():
    assert A.lang_from(None) is None and A.lang_from("off") is None and A.lang_from("") is None
    assert A.lang_from("it") == "it" and A.lang_from(" EN ") == "en"
    with pytest.raises(ValueError):
        A.lang_from("fr")


class Runs:
    def __init__(self, returncode=0, stderr=b""):
        self.calls, self.returncode, self.stderr = [], returncode, stderr

    def __call__(self, cmd, **kw):
        self.calls.append(cmd)
        return SimpleNamespace(returncode=self.returncode, stderr=self.stderr)


def test_off_by_default_says_nothing():
    run = Runs()
    a = A.Announcer(None, run=run, which=lambda b: "/usr/bin/espeak-ng", background=False)
    assert a.say("5-minutes") is None and run.calls == []


def test_says_the_alerts_with_espeak_ng():
    run = Runs()
    a = A.Announcer("it", run=run, which=lambda b: "/usr/bin/espeak-ng", background=False)
    a.on_clock(Notice("alert", "m1", {"alert": "5-minutes"}))
    a.on_clock(Notice("tick", "m1", {"remaining_seconds": 3}))
    a.on_clock(Notice("alert", "m1", {"alert": "ended", "ended_by": {"reason": "objective", "player": "Anna"}}))
    assert run.calls == [["/usr/bin/espeak-ng", "-v", "it", "--", "Cinque minuti alla fine"],
                         ["/usr/bin/espeak-ng", "-v", "it", "--", "La partita è finita: vince Anna"]]


def test_no_espeak_ng_is_said_once_and_nothing_breaks(caplog):
    run = Runs()
    a = A.Announcer("en", run=run, which=lambda b: None, background=False)
    with caplog.at_level(logging.WARNING, logger="companion.announcer"):
        for _ in range(3):
            assert a.say("time-up") is None
    assert run.calls == []
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1 and len(caplog.records) == 1
    assert "espeak-ng is not installed" in caplog.records[0].message


def test_no_audio_device_is_said_once_then_quiet(caplog):
    run = Runs(returncode=1, stderr=b"ALSA lib: cannot find card '0'")
    a = A.Announcer("it", run=run, which=lambda b: "/usr/bin/espeak-ng", background=False)
    with caplog.at_level(logging.WARNING, logger="companion.announcer"):
        a.say("5-minutes")
        a.say("time-up")
        a.say("ended")
    assert len(run.calls) == 1  # quiet after the first failure
    assert len(caplog.records) == 1 and "no audio output" in caplog.records[0].message
    assert not a.enabled()


def test_a_command_that_cannot_start_is_said_once(caplog):
    def boom(cmd, **kw):
        raise OSError("exec format error")

    a = A.Announcer("it", run=boom, which=lambda b: "/usr/bin/espeak-ng", background=False)
    with caplog.at_level(logging.WARNING, logger="companion.announcer"):
        a.say("5-minutes")
        a.say("5-minutes")
    assert len(caplog.records) == 1


def _final_rounds_state():
    """The clock's own fold: a 1-minute clock run out, the round finished, the last lap, then Anna ends her
    first final-round turn with no conquest (she owes the roll; 4 or less ends the match)."""
    players = ["Anna", "Bruno", "Carla"]
    s = clock.initial_state(players, {})
    t = 0

    def at(sec):
        return f"2026-03-01T20:{sec // 60:02d}:{sec % 60:02d}Z"

    s = clock.apply(s, {"type": "clock.start", "data": {"limit_minutes": 1}, "at": at(0)})
    t = 120
    for _ in range(2):
        for p in players:
            s = clock.apply(s, {"type": "turn.end", "data": {"player": p}, "at": at(t)})
            t += 60
    s = clock.apply(s, {"type": "turn.end", "data": {"player": "Anna", "conquered": 0}, "at": at(t)})
    return s


def test_the_final_roll_owed_is_announced_from_the_clock_fold():
    s = _final_rounds_state()
    assert s["awaiting_roll"] == "Anna" and s["final_threshold"] == 4
    run = Runs()
    a = A.Announcer("it", run=run, which=lambda b: "espeak-ng", background=False)
    fold = SimpleNamespace(clock_on=True, clock_state=s)
    a.on_event(Notice("event", "m1", {"type": "turn.end", "data": {"player": "Anna", "conquered": 0}}, fold))
    assert run.calls == [["espeak-ng", "-v", "it", "--",
                          "Tocca a Anna: lancia due dadi, con quattro o meno la partita finisce"]]
    # two conquests: no roll owed, nothing said
    a.on_event(Notice("event", "m1", {"type": "turn.end"},
                       SimpleNamespace(clock_on=True, clock_state={**s, "awaiting_roll": None})))
    assert len(run.calls) == 1


def test_the_app_turns_it_on_by_the_setting(store, monkeypatch, caplog):
    from companion.web.app import create_app

    monkeypatch.setenv("COMPANION_ANNOUNCER", "it")
    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None})
    assert app.extensions["companion"].runtime.announcer.lang() == "it"
    assert app.extensions["companion"].runtime.announcer.enabled()
    monkeypatch.setenv("COMPANION_ANNOUNCER", "klingon")
    with caplog.at_level(logging.WARNING):
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None})
    assert not app.extensions["companion"].runtime.announcer.enabled()
    assert any("COMPANION_ANNOUNCER" in r.message for r in caplog.records)
    monkeypatch.delenv("COMPANION_ANNOUNCER")
    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None})
    assert not app.extensions["companion"].runtime.announcer.enabled()  # off by default


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason=f"espeak-ng is not installed ({install_hint('espeak-ng')})")
@pytest.mark.parametrize("lang", A.LANGS)
def test_a_real_espeak_ng_render_to_a_wav_file(tmp_path, lang):
    wav = tmp_path / f"five-{lang}.wav"
    cmd = A.command(A.text("final-roll", lang, player="Bruno", n=6), lang, wav=str(wav),
                    binary=shutil.which("espeak-ng"))
    p = subprocess.run(cmd, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    data = wav.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert len(data) > 20_000  # a few seconds of speech, not an empty file
