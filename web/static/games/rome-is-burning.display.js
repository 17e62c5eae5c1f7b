/* Rome Is Burning on the TV (/m/<id>/display, through CompanionTV.register): the emperor, the turn, and the
 * scores large. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var root = null;
  function mount(box) {
    root = box;
    root.appendChild(el("div", { class: "rome-tv tv-box" },
      el("div", { class: "rome-tv-head" },
        el("div", null, el("div", { class: "tv-panel-title", text: t("tv.rome_emperor") }), el("div", { class: "rome-tv-emperor", id: "rome-tv-emperor" })),
        el("div", { class: "rome-tv-turn", id: "rome-tv-turn" })),
      el("div", { id: "rome-tv-scores" })));
  }
  function update(view, client) {
    if (!root || !view) return;
    var sm = view.summary || {}, totals = sm.totals || {};
    var emp = document.getElementById("rome-tv-emperor");
    emp.textContent = "";
    if (sm.emperor) emp.appendChild(TV.who(sm.emperor)); else emp.textContent = t("tv.rome_no_emperor");
    document.getElementById("rome-tv-turn").textContent = sm.turn ? t("tv.rome_turn", { turn: sm.turn, turns: sm.turns }) : "";
    var names = Object.keys(totals).sort(function (a, b) { return totals[b] - totals[a] || client.match.players.indexOf(a) - client.match.players.indexOf(b); });
    var box = document.getElementById("rome-tv-scores");
    box.textContent = "";
    box.appendChild(el("table", { class: "tv-table rome-tv-table" }, el("tbody", null, names.map(function (p) {
      return el("tr", { "data-player": p, class: p === sm.emperor ? "rome-tv-is-emperor" : null },
        el("td", null, TV.who(p)), el("td", { class: "num", text: String(totals[p]) }));
    }))));
  }
  TV.register("rome-is-burning", { mount: mount, update: update });
})();
