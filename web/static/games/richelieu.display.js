/* Richelieu on the TV (/m/<id>/display, through CompanionTV.register): one table of every player (place, the
 * tracks, money and jewels, the sheets won, the total if the game ended now), the last intrigue's result (the
 * faction, who won it and by how much, first and second, where the sheet went); whose turn, the Cardinal and
 * the intrigues left in the side column. The TV shows what the table sees: a value behind a player's screen
 * (money, jewels until the end) is "—", never a guess; a total the view does not give is left out. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var TRACKS = ["prestige", "income", "military", "money", "jewels"];
  var root = null;
  function $(id) { return document.getElementById(id); }
  function mount(box) {
    root = box;
    root.appendChild(el("div", { class: "rl-tv" },
      el("div", { class: "tv-box" }, el("div", { id: "rl-tv-tracks" })),
      el("div", { class: "tv-box" }, el("div", { class: "tv-panel-title", text: t("tv.rl_last_intrigue") }),
        el("div", { id: "rl-tv-intrigue" }))));
    var side = $("tv-side-extra");
    if (side) side.appendChild(el("div", { class: "tv-status", id: "rl-tv-cardinal" }));
  }
  function faction(f) { var s = t("rl.faction_" + f); return s === "rl.faction_" + f ? f : s; }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function sheets(row) {
    var c = row && row.cards;
    if (isNum(c)) return c;
    if (!c || typeof c !== "object") return null;
    var n = 0, ok = true;
    Object.keys(c).forEach(function (k) { if (isNum(c[k])) n += c[k]; else ok = false; });
    return ok ? n : null;
  }
  function update(view, client) {
    if (!root || !view || !view.state) return;
    var s = view.state, sm = view.summary || {};
    var players = s.order || client.match.players, rows = s.players || {};
    var standing = {};
    ((sm.standings || {}).players || []).forEach(function (r) { standing[r.player] = r; });
    // the tracks the view gives (money and jewels are behind each player's screen until the end: the room
    // sees "—", as at the table)
    var cols = TRACKS.filter(function (k) { return players.every(function (p) { var v = (rows[p] || {})[k]; return isNum(v) || v === null; }); });
    var withSheets = players.every(function (p) { return sheets(rows[p]) !== null; });
    var withTotal = players.every(function (p) { return standing[p] && isNum(standing[p].total); });
    var order = withTotal ? players.slice().sort(function (a, b) { return standing[a].place - standing[b].place || players.indexOf(a) - players.indexOf(b); }) : players;
    var current = sm.turn && !sm.final ? sm.turn.player : null;
    var box = document.createElement("div");
    box.appendChild(el("table", { class: "tv-table", id: "rl-tv-table" },
      el("thead", null, el("tr", null, withTotal ? el("th", { text: t("rl.col_place") }) : null, el("th", { text: t("scores.player") }),
        cols.map(function (k) { return el("th", { class: "num", "data-track": k, text: t("rl.track_" + k) }); }),
        withSheets ? el("th", { class: "num", text: t("tv.rl_sheets") }) : null,
        withTotal ? el("th", { class: "num", text: t(sm.final ? "scores.total" : "tv.rl_total_now") }) : null)),
      el("tbody", null, order.map(function (p) {
        var row = rows[p] || {};
        return el("tr", { "data-player": p, class: current === p ? "tv-current" : null },
          withTotal ? el("td", { class: "tv-place", text: String(standing[p].place) }) : null,
          el("td", { class: "tv-name" }, TV.swatch(TV.colour(p)), p),
          cols.map(function (k) { return el("td", { class: "num", "data-track": k, text: row[k] === null ? "—" : String(row[k]) }); }),
          withSheets ? el("td", { class: "num", "data-col": "sheets", text: String(sheets(row)) }) : null,
          withTotal ? el("td", { class: "num tv-total", "data-col": "total", text: String(standing[p].total) }) : null);
      }))));
    if (withTotal && !sm.final) box.appendChild(el("p", { class: "tv-note", text: t("tv.rl_total_note") }));
    C.patch($("rl-tv-tracks"), Array.prototype.slice.call(box.childNodes));
    var cardinal = sm.cardinal !== undefined ? sm.cardinal : s.cardinal;
    // the cardinal's and the last intrigue's lines, written only where they changed (most events change none)
    C.patch($("rl-tv-cardinal"), [el("div", { text: t("tv.rl_cardinal", { n: cardinal }) }),
      sm.intrigues_left !== undefined ? el("div", { text: C.plural("tv.rl_left", sm.intrigues_left) }) : null,
      current && sm.turn && isNum(sm.turn.left) && sm.turn.left > 0 ? el("div", { text: C.plural("tv.rl_actions_left", sm.turn.left) }) : null]);
    var ib = $("rl-tv-intrigue"), last = (s.resolutions || [])[(s.resolutions || []).length - 1];
    if (!last) { C.patch(ib, el("p", { class: "muted", text: t("tv.rl_no_intrigue") })); return; }
    var totals = last.totals || {}, other = last.faction;
    var winner = last.winner === "richelieu" ? "Richelieu" : faction(last.winner);
    C.patch(ib, [el("div", { class: "rl-tv-result", text: t("tv.rl_intrigue", { faction: faction(last.faction), winner: winner,
      a: totals[last.winner], b: last.winner === "richelieu" ? totals[other] : totals.richelieu }) }),
      last.first ? el("div", { text: t("tv.rl_places", { first: last.first, second: last.second || "–" }) }) : null,
      last.sheet && last.sheet.to ? el("div", { text: t("tv.rl_sheet", { player: last.sheet.to }) }) : null]);
  }
  TV.register("richelieu", {
    mount: mount,
    update: update,
    turn: function (view) { var sm = view.summary || {}; return sm.turn && !sm.final ? sm.turn.player : null; },
    score: function (view, player) {
      var r = (((view.summary || {}).standings || {}).players || []).filter(function (x) { return x.player === player; })[0];
      return r && isNum(r.total) ? C.plural("tv.points", r.total) : "";
    }
  });
})();
