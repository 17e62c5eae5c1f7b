/* Rome Is Burning on the TV (/m/<id>/display, through CompanionTV.register): the emperor large, then every
 * player's cards in hand, this turn's score and the total (the highest first); whose move, the turn and the
 * step of the turn in the side column. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var root = null;
  function $(id) { return document.getElementById(id); }
  function mount(box) {
    root = box;
    root.appendChild(el("div", { class: "rome-tv tv-box" },
      el("div", { class: "rome-tv-head" },
        el("div", null, el("div", { class: "tv-panel-title", text: t("tv.rome_emperor") }), el("div", { class: "rome-tv-emperor", id: "rome-tv-emperor" }))),
      el("div", { id: "rome-tv-scores" })));
    var side = $("tv-side-extra");
    if (side) side.appendChild(el("div", { class: "tv-status", id: "rome-tv-turn" }));
  }
  function update(view, client) {
    if (!root || !view) return;
    var sm = view.summary || {}, totals = sm.totals || {}, now = sm.scores_now || {}, hands = sm.hand_sizes || {};
    var emp = $("rome-tv-emperor");
    emp.textContent = "";
    if (sm.emperor) emp.appendChild(TV.who(sm.emperor)); else emp.textContent = t("tv.rome_no_emperor");
    var side = $("rome-tv-turn");
    side.textContent = "";
    if (sm.turn) side.appendChild(el("div", { text: t("tv.rome_turn", { turn: sm.turn, turns: sm.turns }) }));
    if (sm.phase === "election") side.appendChild(el("div", { text: t("tv.rome_election") }));
    else if (sm.phase === "moving" && !sm.to_move) side.appendChild(el("div", { text: t("tv.rome_scoring") }));
    var players = client.match.players;
    var names = players.slice().sort(function (a, b) { return (totals[b] || 0) - (totals[a] || 0) || players.indexOf(a) - players.indexOf(b); });
    C.patch($("rome-tv-scores"), el("table", { class: "tv-table rome-tv-table" },
      el("thead", null, el("tr", null, el("th", { text: t("scores.player") }), el("th", { class: "num", text: t("tv.rome_hand") }),
        el("th", { class: "num", text: t("tv.rome_this_turn") }), el("th", { class: "num", text: t("scores.total") }))),
      el("tbody", null, names.map(function (p) {
        return el("tr", { "data-player": p, class: (p === sm.to_move ? "tv-current " : "") + (p === sm.emperor ? "rome-tv-is-emperor" : "") || null },
          el("td", { class: "tv-name" }, TV.swatch(TV.colour(p)), p, p === sm.emperor ? el("span", { class: "rome-tv-crown", text: " ♛" }) : null),
          el("td", { class: "num", "data-col": "hand", text: String(hands[p] || 0) }),
          el("td", { class: "num", "data-col": "now", text: now[p] === undefined ? "" : String(now[p]) }),
          el("td", { class: "num tv-total", "data-col": "total", text: String(totals[p] === undefined ? "" : totals[p]) }));
      }))));
  }
  TV.register("rome-is-burning", {
    mount: mount,
    update: update,
    turn: function (view) { var sm = view.summary || {}; return sm.phase !== "ended" ? sm.to_move || null : null; },
    score: function (view, player) {
      var totals = (view.summary || {}).totals || {};
      return totals[player] === undefined ? "" : C.plural("tv.points", totals[player]);
    }
  });
})();
