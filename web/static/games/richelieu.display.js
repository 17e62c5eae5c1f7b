/* Richelieu on the TV (/m/<id>/display, through CompanionTV.register): each player's tracks (prestige,
 * income, military, money, jewels), where the Cardinal stands, and the last intrigue's result (the faction,
 * who won it and by how much, first and second, where the sheet went). */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var TRACKS = ["prestige", "income", "military", "money", "jewels"];
  var root = null;
  function mount(box) {
    root = box;
    root.appendChild(el("div", { class: "rl-tv" },
      el("div", { class: "tv-box" }, el("div", { class: "tv-panel-title", text: t("tv.rl_tracks") }), el("div", { id: "rl-tv-tracks" }),
        el("div", { class: "rl-tv-cardinal", id: "rl-tv-cardinal" })),
      el("div", { class: "tv-box" }, el("div", { class: "tv-panel-title", text: t("tv.rl_last_intrigue") }),
        el("div", { id: "rl-tv-intrigue" }))));
  }
  function faction(f) { var s = t("rl.faction_" + f); return s === "rl.faction_" + f ? f : s; }
  function update(view, client) {
    if (!root || !view || !view.state) return;
    var s = view.state, sm = view.summary || {};
    var box = document.getElementById("rl-tv-tracks");
    var players = s.order || client.match.players;
    box.textContent = "";
    box.appendChild(el("table", { class: "tv-table" },
      el("thead", null, el("tr", null, el("th", { text: t("scores.player") }),
        TRACKS.map(function (k) { return el("th", { class: "num", text: t("rl.track_" + k) }); }))),
      el("tbody", null, players.map(function (p) {
        var row = s.players[p] || {};
        return el("tr", { "data-player": p }, el("td", null, TV.who(p)),
          // money and jewels are behind each player's screen until the end: the room sees "—"
          TRACKS.map(function (k) { return el("td", { class: "num", "data-track": k, text: row[k] === undefined ? "" : row[k] === null ? "—" : String(row[k]) }); }));
      }))));
    var cardinal = sm.cardinal !== undefined ? sm.cardinal : s.cardinal;
    document.getElementById("rl-tv-cardinal").textContent = t("tv.rl_cardinal", { n: cardinal }) +
      (sm.intrigues_left !== undefined ? " · " + C.plural("tv.rl_left", sm.intrigues_left) : "");
    var ib = document.getElementById("rl-tv-intrigue"), last = (s.resolutions || [])[(s.resolutions || []).length - 1];
    ib.textContent = "";
    if (!last) { ib.appendChild(el("p", { class: "muted", text: t("tv.rl_no_intrigue") })); return; }
    var totals = last.totals || {}, other = last.faction;
    var winner = last.winner === "richelieu" ? "Richelieu" : faction(last.winner);
    ib.appendChild(el("div", { class: "rl-tv-result", text: t("tv.rl_intrigue", { faction: faction(last.faction), winner: winner,
      a: totals[last.winner], b: last.winner === "richelieu" ? totals[other] : totals.richelieu }) }));
    if (last.first) ib.appendChild(el("div", { text: t("tv.rl_places", { first: last.first, second: last.second || "–" }) }));
    if (last.sheet && last.sheet.to) ib.appendChild(el("div", { text: t("tv.rl_sheet", { player: last.sheet.to }) }));
  }
  TV.register("richelieu", { mount: mount, update: update });
})();
