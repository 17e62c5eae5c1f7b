/* The table's smart dice, live (docs/dice.md): on the match page and the TV, a panel that follows the roll the
 * match waits for (event: dice on the match stream): each die of the table's set as it rolls and lands, the
 * faces of each side, what is wrong in words (a die of the other side, crooked, out of range), the time left;
 * past it, which dice are missing, and the phones' trackers fall back to typing the faces.
 * window.CompanionDice: info (GET /api/matches/<id>/dice), smart() (this match's dice come from the table),
 * roll(what, data) (POST .../dice/roll), cancel(), on(callback(wait)) for the trackers. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var page = document.body.dataset.page, id = document.body.dataset.match;
  if (!id || (page !== "match" && page !== "display")) return;
  var info = null, wait = null, listeners = [], panel = null, timer = null, hideTimer = null;
  var base = "/api/matches/" + encodeURIComponent(id) + "/dice";

  function sideName(side) { return t("dice.side_" + side); }
  function noteText(n) {
    var v = Object.assign({}, n);
    if (v.side) v.side = sideName(v.side);
    if (n.key === "side_full") return C.plural("dice.note_side_full", n.n, v);
    if (n.key === "enough") return C.plural("dice.note_enough", n.n, v);
    return t("dice.note." + n.key, v);
  }
  function needText(need) {
    return Object.keys(need).map(function (side) {
      return side === "any" ? C.plural("dice.need_any", need[side]) : C.plural("dice.need_side", need[side], { side: sideName(side) });
    }).join(" · ");
  }
  function ensurePanel() {
    if (panel) return panel;
    panel = el("section", { class: page === "display" ? "tv-smart-dice" : "card dice-live", id: "dice-live", hidden: "hidden",
                            role: "status", "aria-live": "polite" });
    var anchor = page === "display" ? document.getElementById("tv-roll") : document.getElementById("game-tracker");
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(panel, page === "display" ? anchor.nextSibling : anchor);
    else document.querySelector("main").appendChild(panel);
    return panel;
  }
  function draw() {
    var p = ensurePanel();
    if (hideTimer) { clearTimeout(hideTimer); hideTimer = null; }
    if (!wait || wait.state === "cancelled") { p.hidden = true; p.dataset.state = wait ? wait.state : ""; return; }
    p.hidden = false;
    p.dataset.state = wait.state;
    p.textContent = "";
    var title = { waiting: "dice.waiting", recorded: "dice.recorded", timeout: "dice.timeout", refused: "dice.refused" }[wait.state] || "dice.waiting";
    p.appendChild(el("h2", { class: "dice-live-title", text: t(title) }));
    p.appendChild(el("p", { class: "small dice-need", text: needText(wait.need || {}) }));
    var sides = el("div", { class: "dice-live-sides" });
    var groups = wait.need && wait.need.any ? ["any"] : ["attack", "defend"].filter(function (s) { return wait.need && wait.need[s]; });
    groups.forEach(function (side) {
      var row = el("div", { class: "dice-live-side", "data-side": side },
        side === "any" ? null : el("span", { class: "dice-live-who", text: sideName(side) }));
      (wait.dice || []).filter(function (d) { return side === "any" || d.side === side; }).forEach(function (d) {
        var face = d.face ? String(d.face) : (d.status === "rolling" ? "…" : "·");
        row.appendChild(el("span", { class: "dice-chip dice-" + d.status, "data-die": d.die, title: t("dice.status_" + d.status.replace("-", "_")) },
          el("span", { class: "dice-chip-face", text: face }), el("span", { class: "dice-chip-label", text: d.label })));
      });
      sides.appendChild(row);
    });
    p.appendChild(sides);
    (wait.notes || []).slice(-2).forEach(function (n) { p.appendChild(el("p", { class: "dice-note", "data-note": n.key, text: noteText(n) })); });
    if (wait.state === "waiting") {
      var left = el("p", { class: "small muted dice-left", text: t("dice.left", { s: Math.ceil(wait.remaining_s || 0) }) });
      p.appendChild(left);
      if (page === "match" && document.body.dataset.role !== "viewer") {
        p.appendChild(el("button", { type: "button", class: "btn btn-small", id: "dice-cancel", onclick: function () { cancel(); } }, t("dice.cancel")));
      }
    } else if (wait.state === "timeout") {
      (wait.missing || []).forEach(function (m) {
        p.appendChild(el("p", { class: "dice-note", "data-missing": m.die,
          text: t(m.why === "out_of_range" ? "dice.missing_gone" : "dice.missing_still", { die: m.die, s: m.ago_s === null ? "?" : m.ago_s }) }));
      });
      p.appendChild(el("p", { class: "small", text: t("dice.by_hand") }));
    } else if (wait.state === "refused") {
      p.appendChild(el("p", { class: "dice-note", text: (wait.error && wait.error.text) || t("dice.by_hand") }));
    } else if (wait.state === "recorded") {
      hideTimer = setTimeout(function () { p.hidden = true; }, 8000);
    }
  }
  function set(w) {
    wait = w;
    draw();
    listeners.forEach(function (cb) { try { cb(wait); } catch (e) { console.error(e); } });
    if (timer) { clearInterval(timer); timer = null; }
    if (wait && wait.state === "waiting") {
      var until = Date.now() + (wait.remaining_s || 0) * 1000;
      timer = setInterval(function () {
        wait.remaining_s = Math.max(0, (until - Date.now()) / 1000);
        var left = panel && panel.querySelector(".dice-left");
        if (left) left.textContent = t("dice.left", { s: Math.ceil(wait.remaining_s) });
      }, 500);
    }
  }
  var answered = false;  // the first read answered (before the stream's first snapshot, most often)
  function load() {
    return C.api("GET", base).then(function (d) { info = d; answered = true; set(d.wait && d.wait.state === "waiting" ? d.wait : null); return d; },
                                   function () { info = null; });
  }
  function roll(what, data) {
    var client = window.companionMatch;
    return C.api("POST", base + "/roll", { what: what, data: data || {}, expected_seq: client ? client.seq : undefined })
      .then(function (w) { set(w); return w; });
  }
  function cancel() { return C.api("POST", base + "/cancel").then(set, function () { set(null); }); }
  document.addEventListener("companion:dice", function (ev) {
    var w = ev.detail;
    if (w && w.state === "bound") {  // the organiser bound (or took away) this table's dice: read again
      load().then(function () { listeners.forEach(function (cb) { try { cb(wait); } catch (e) { console.error(e); } }); });
      return;
    }
    if (w && w.state === "refused" && page === "match") {  // the reason in this phone's language
      C.api("GET", base).then(function (d) { set(d.wait || w); }, function () { set(w); });
      return;
    }
    set(w);
  });
  // the stream (re)opened: a roll that began before it did, or while the page was offline, is on no event
  // this page will hear (the page's first read may have come before it began: a TV opened as a combat starts)
  // A table without smart dice has no roll to wait for, so the first snapshot after a first read that said
  // so asks nothing again (a binding of dice comes as its own event, "bound"); every later one does.
  // A first snapshot that comes while the first read is still on its way (the TV asks for both at once) waits
  // for its answer and decides then, as if it had come after it: asking again at once would ask twice.
  var snapshots = 0, first = null;
  document.addEventListener("companion:snapshot", function () {
    snapshots += 1;
    if (snapshots === 1 && !answered && first) {
      first.then(function () { if (!(answered && info && info.source !== "smart")) load(); });
      return;
    }
    if (snapshots === 1 && answered && info && info.source !== "smart") return;
    load();
  });
  // the match page holds the first read (pages.py first_load): the TV's asks
  function firstRead() {
    var node = document.getElementById("first-load"), d = null;
    try { d = node ? JSON.parse(node.textContent).dice : null; } catch (e) { d = null; }
    if (!d) return load();
    info = d; answered = true;
    set(d.wait && d.wait.state === "waiting" ? d.wait : null);
    return Promise.resolve(d);
  }
  first = firstRead();
  window.CompanionDice = {
    info: function () { return info; }, wait: function () { return wait; },
    smart: function () { return !!(info && info.source === "smart"); },
    ready: first, roll: roll, cancel: cancel,
    on: function (cb) { listeners.push(cb); }
  };
})();
