/* sounds.js: short tones made in the browser with WebAudio (no sound files, nothing from a CDN) for the
 * clock's alerts on phones and on the TV: 15 minutes left (one tone), 5 minutes (two), time up (three),
 * a final roll owed (a rising pair), the end of the match (a short rising arpeggio).
 *
 *   CompanionSound.play(kind)   kind: "15-minutes" | "5-minutes" | "time-up" | "final-roll" | "ended"
 *   CompanionSound.muted() / setMuted(bool)   remembered in this browser (localStorage "sound-muted")
 *   CompanionSound.log          what was played (the browser tests read it: a test has no speakers)
 *   CompanionSound.offer(text)  a phone that was never tapped cannot play them: a button (fixed, over the page:
 *                               nothing moves) offers once to tap, which unlocks the sound with a short tone;
 *                               it goes at the first tap anywhere. Not offered when muted or already tapped.
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
  var offered = null, offeredOnce = false;
  function unlock(ev) {
    var asked = !!offered && !!ev && ev.target === offered;  // the offer's own tap: a short tone says it works
    if (offered) { offered.remove(); offered = null; }
    if (!unlocked) {
      var a = audio();
      if (!a) return;
      unlocked = true;
      if (a.state === "suspended") a.resume().then(function () { restAfter(0); }, function () { unlocked = false; });
      else restAfter(0);
    }
    if (asked) play("ready");
  }
  document.addEventListener("pointerdown", unlock, { passive: true });
  document.addEventListener("keydown", unlock);
  function offer(text) {
    var act = navigator.userActivation;
    if (offeredOnce || unlocked || muted() || (act && act.hasBeenActive) || !(window.AudioContext || window.webkitAudioContext)) return null;
    offeredOnce = true;
    var b = document.createElement("button");
    b.type = "button"; b.id = "sound-offer"; b.className = "btn sound-offer"; b.textContent = text;
    document.body.appendChild(b);
    offered = b;
    return b;
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
    unlocked: function () { return unlocked; }, kinds: Object.keys(PATTERNS) };
})();
