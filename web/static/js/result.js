/* Final result only (docs/rulings.md, "Final result only"): on the match page of a match created with
 * options.tracking = "result", a card where the table taps each player's place (number pickers: ties are
 * the same number, 1, 2, 2, 4; conquest adds "objective" and "eliminated"), then saves it with one POST
 * /api/matches/<id>/result. Once entered, the scores box shows the ranking "entered by hand" (pages.js).
 * On a match the phones follow, the organiser's page has the same card folded ("Enter the final places"):
 * it ends the match as a correction (docs/rulings.md#the-organisers-result), after asking. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var FLAGS = { "conquest-italy": ["objective", "eliminated"] };
  var FLAG_TEXT = { objective: "result.objective", eliminated: "result.eliminated" };
  var card = null, draft = {}, flags = {}, builtFor = null;

  // the first problem of a draft, in words (null when it can be saved)
  function problem(players) {
    var missing = players.filter(function (p) { return !draft[p]; });
    if (missing.length) return t("result.missing", { players: missing.join(", ") });
    var got = players.map(function (p) { return draft[p]; });
    for (var i = 0; i < players.length; i++) {
      var place = draft[players[i]];
      var want = 1 + got.filter(function (q) { return q < place; }).length;
      if (place !== want) return t("result.shape", { player: players[i], place: place, want: want });
    }
    return null;
  }

  // ``correction``: the organiser's card on a match the phones follow (docs/rulings.md#the-organisers-result)
  function build(client, correction) {
    var m = client.match, players = m.players, n = players.length, game = m.game;
    builtFor = m.id;
    var rows = el("div", { class: "result-rows", id: "result-rows" });
    var err = el("p", { class: "error-text", id: "result-error", role: "alert", hidden: "hidden" });
    var save = el("button", { type: "button", class: "btn btn-primary btn-big", id: "result-save" }, t("result.save"));
    function redraw() {
      Array.prototype.forEach.call(rows.querySelectorAll("[data-place]"), function (b) {
        b.setAttribute("aria-pressed", String(draft[b.dataset.player] === Number(b.dataset.place)));
      });
      Array.prototype.forEach.call(rows.querySelectorAll("[data-flag]"), function (b) {
        b.setAttribute("aria-pressed", String(!!(flags[b.dataset.player] || {})[b.dataset.flag]));
      });
      err.hidden = true;
    }
    players.forEach(function (p) {
      var seg = el("div", { class: "result-seg", role: "group", "aria-label": t("result.place_of", { player: p }) });
      for (var k = 1; k <= n; k++) {
        seg.appendChild(el("button", { type: "button", class: "btn", "data-player": p, "data-place": String(k),
          "aria-label": t("result.place_of", { player: p }) + " " + k,
          onclick: (function (k) { return function () { draft[p] = draft[p] === k ? 0 : k; redraw(); }; })(k) }, String(k)));
      }
      var extra = (FLAGS[game] || []).map(function (f) {
        return el("button", { type: "button", class: "btn btn-small btn-ghost", "data-player": p, "data-flag": f,
          onclick: function () { var x = flags[p] = flags[p] || {}; x[f] = !x[f]; redraw(); } }, t(FLAG_TEXT[f]));
      });
      var sw = (m.colours || {})[p];
      rows.appendChild(el("div", { class: "result-row", "data-row": p },
        el("span", { class: "result-name" }, sw ? el("span", { class: "swatch", style: "background:" + sw }) : null, p),
        seg, extra.length ? el("div", { class: "result-flags" }, extra) : null));
    });
    save.addEventListener("click", function () {
      var why = problem(players);
      if (why) { err.textContent = why; err.hidden = false; return; }
      var places = players.map(function (p) {
        var row = { player: p, place: draft[p] };
        Object.keys(flags[p] || {}).forEach(function (f) { if (flags[p][f]) row[f] = true; });
        return row;
      });
      // the organiser's places end a match in play for the whole table: asked first
      if (correction && !window.confirm(t("result.correction_confirm"))) return;
      save.disabled = true;
      client._write("/api/matches/" + encodeURIComponent(client.id) + "/result", { expected_seq: client.seq, places: places })
        .then(function () { save.disabled = false; C.toast(t("match.saved")); },
          function (e) { save.disabled = false; err.textContent = C.errorText(e); err.hidden = false; });
    });
    card = correction ?
      el("details", { class: "card write", id: "result-correction" },
        el("summary", null, el("h2", { text: t("result.correction_title") })),
        el("p", { class: "muted small", text: t("result.correction_hint") }),
        el("p", { class: "muted small", text: t("result.hint") }), rows, err, save) :
      el("section", { class: "card", id: "result-card" },
        el("h2", { text: t("result.title") }),
        el("p", { class: "muted small", text: t("result.hint") }),
        rows, err, save);
    var anchor = correction ? document.getElementById("game-tracker") : null;
    if (!anchor) { var scores = document.getElementById("scores"); anchor = scores ? scores.closest("section") : null; }
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(card, anchor.nextSibling);
    else document.querySelector("main").appendChild(card);
    if (correction && location.hash === "#result-correction") { card.open = true; card.scrollIntoView(); }
  }

  function show(view, client) {
    if (!view || !client.match) return;
    if (view.tracking !== "result") {
      // a match the phones follow: its organiser may end it with the places entered by hand
      var organiser = document.body.dataset.role === "organiser";
      if (organiser && !client.ended() && (!card || builtFor !== client.match.id)) build(client, true);
      if (card && card.id === "result-correction") card.hidden = client.ended();
      return;
    }
    if (card && card.id === "result-correction") { card.remove(); card = null; }
    // no tracker, no JSON form: this match is recorded by its final places alone
    ["game-tracker", "generic-event"].forEach(function (id) { var x = document.getElementById(id); if (x) x.hidden = true; });
    if (!card || builtFor !== client.match.id) build(client);
    card.hidden = !!view.result;
  }

  function hook() {
    var client = window.companionMatch;
    if (!client || document.body.dataset.page !== "match") return;
    var before = client.hooks.view;
    client.hooks.view = function (view, cl) { if (before) before(view, cl); show(view, cl); };
    if (client.view) show(client.view, client);
  }
  hook();
})();
