/* sounds.js: short tones made in the browser with WebAudio (no sound files, nothing from a CDN) for the
 * clock's alerts on phones and on the TV: 15 minutes left (one tone), 5 minutes (two), time up (three),
 * a final roll owed (a rising pair), the end of the match (a short rising arpeggio).
 *
 *   CompanionSound.play(kind)   kind: "15-minutes" | "5-minutes" | "time-up" | "final-roll" | "ended"
 *   CompanionSound.muted() / setMuted(bool)   remembered in this browser (localStorage "sound-muted")
 *   CompanionSound.log          what was played (the browser tests read it: a test has no speakers)
 *   CompanionSound.offer(el, {offer, on, muted})   a phone that was never tapped cannot play them: the line
 *                               el (in the page, its place kept: under no control, nothing moves) offers to tap;
 *                               the first tap anywhere unlocks the sound (so the tap on the button under a finger
 *                               does what it says, and no tap is spent on the offer), and the line then says the
 *                               phone sounds the alerts (or that they are muted). A tap on the line plays a short
 *                               tone: it says the sound works.
 *
 * Browsers start audio only after a tap on the page: the first tap anywhere unlocks it (a TV in kiosk
 * mode runs Chromium with --autoplay-policy=no-user-gesture-required). */
(function () {
  "use strict";
  var ctx = null, log = [];
  var PATTERNS = {
    "15-minutes": [[660, 0, 0.25]],
    "5-minutes": [[660, 0, 0.2], [660, 0.3, 0.2]],
    "time-up": [[880, 0, 0.18], [880, 0.25, 0.18], [880, 0.5, 0.35]],
    "final-roll": [[523, 0, 0.18], [784, 0.22, 0.3]],
    "ended": [[523, 0, 0.15], [659, 0.16, 0.15], [784, 0.32, 0.15], [1047, 0.48, 0.45]],
    "ready": [[784, 0, 0.12]]
  };
  function muted() { try { return localStorage.getItem("sound-muted") === "1"; } catch (e) { return false; } }
  function setMuted(on) {
    try { localStorage.setItem("sound-muted", on ? "1" : "0"); } catch (e) { /* private mode */ }
    document.dispatchEvent(new CustomEvent("companion:muted", { detail: !!on }));
  }
  function audio() {
    var A = window.AudioContext || window.webkitAudioContext;
    if (!A) return null;
    if (!ctx) { try { ctx = new A(); } catch (e) { ctx = null; } }
    return ctx;
  }
  // A running context renders silence all the time (a thread of the browser and one of the page, on a Pi
  // too): it runs while a tone plays and is suspended the rest of the time. The first tap unlocks it (the
  // page may start audio from then on), then it rests until a tone.
  var quietAt = 0, quietTimer = null, unlocked = false;
  function rest() {
    quietTimer = null;
    if (Date.now() < quietAt) { quietTimer = setTimeout(rest, quietAt - Date.now()); return; }
    if (ctx && ctx.state === "running") ctx.suspend().catch(function () {});
  }
  function restAfter(ms) {
    quietAt = Math.max(quietAt, Date.now() + ms);
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = setTimeout(rest, Math.max(0, quietAt - Date.now()));
  }
  var line = null, words = null;
  function drawLine() {
    if (!line) return;
    var act = navigator.userActivation;
    if (!(window.AudioContext || window.webkitAudioContext)) { line.textContent = ""; return; }
    line.textContent = muted() ? words.muted : (unlocked || (act && act.hasBeenActive)) ? words.on : words.offer;
  }
  // Only some events let a page start audio (the HTML standard's "activation-triggering" ones): a mouse's
  // pointerdown, but a finger's pointerup or touchend, a click, a key. So every one of them tries, and the
  // sound counts as unlocked only once the context runs (a finger's pointerdown alone left it suspended); a
  // silent sample started in the same handler is what Safari on an iPhone wants as well.
  function running(a) {
    if (unlocked || a.state !== "running") return;
    unlocked = true;
    restAfter(0);
    drawLine();
  }
  function unlock(ev) {
    // the line's own tap: a short tone says it works (the tap itself goes on to what it was on)
    var asked = !!line && !!ev && ev.type === "click" && ev.target instanceof Node && line.contains(ev.target);
    if (!unlocked) {
      var a = audio();
      if (!a) return;
      try {
        var src = a.createBufferSource();
        src.buffer = a.createBuffer(1, 1, 22050);
        src.connect(a.destination);
        src.start(0);
      } catch (e) { /* no sample: resume() alone */ }
      if (a.state === "suspended") a.resume().then(function () { running(a); }, function () {});
      running(a);
    }
    if (asked) play("ready");
  }
  ["pointerdown", "pointerup", "touchend", "click"].forEach(function (type) {
    document.addEventListener(type, unlock, { passive: true });
  });
  document.addEventListener("keydown", unlock);
  document.addEventListener("companion:muted", drawLine);
  function offer(el, w) {
    if (el !== line || !words || words.offer !== w.offer) { line = el; words = w; drawLine(); }
    return el;
  }
  function play(kind) {
    var notes = PATTERNS[kind];
    if (!notes) return false;
    log.push({ kind: kind, muted: muted() });
    if (muted()) return false;
    var a = audio();
    if (!a) return false;
    if (a.state === "suspended") a.resume();
    var t0 = a.currentTime + 0.02, end = 0;
    notes.forEach(function (n) {
      var osc = a.createOscillator(), gain = a.createGain();
      osc.type = "sine"; osc.frequency.value = n[0];
      gain.gain.setValueAtTime(0.0001, t0 + n[1]);
      gain.gain.exponentialRampToValueAtTime(0.4, t0 + n[1] + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, t0 + n[1] + n[2]);
      osc.connect(gain); gain.connect(a.destination);
      osc.start(t0 + n[1]); osc.stop(t0 + n[1] + n[2] + 0.05);
      end = Math.max(end, n[1] + n[2] + 0.05);
    });
    restAfter(Math.ceil((end + 0.5) * 1000));  // the last tone has ended
    return true;
  }
  window.CompanionSound = { play: play, muted: muted, setMuted: setMuted, log: log, offer: offer,
    unlocked: function () { return unlocked; }, state: function () { return ctx ? ctx.state : null; }, kinds: Object.keys(PATTERNS) };
})();
