/* Web of Power on the TV (/m/<id>/display, through CompanionTV.register): the table of countries (each
 * player's monasteries and councillors), and after each scoring its breakdown revealed step by step: the
 * monasteries of each country, each alliance, the chains, then the totals. (The board drawing comes with
 * the board editor.) A TV switched on after a scoring shows it whole. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var root = null, seen = null, timers = [];

  function mount(box) {
    root = box;
    root.appendChild(el("div", { class: "wop-tv" },
      el("div", { class: "tv-box", id: "wop-tv-scoring", hidden: true }),
      el("div", { class: "tv-box" }, el("div", { class: "tv-panel-title", text: t("tv.wop_countries") }),
        el("div", { id: "wop-tv-countries" }))));
  }
  function pair(m, c) { return el("span", { class: "wop-tv-pair" }, el("span", { class: "wop-tv-m", text: String(m || 0) }), " / ",
                                    el("span", { class: "wop-tv-c", text: String(c || 0) })); }
  function drawCountries(view, client) {
    var box = document.getElementById("wop-tv-countries"), sm = view.summary || {};
    if (!box || !sm.countries) return;
    var players = client.match.players;
    box.textContent = "";
    box.appendChild(el("table", { class: "tv-table wop-tv-table" },
      el("thead", null, el("tr", null, el("th", { text: t("tv.wop_country") }),
        players.map(function (p) { return el("th", { class: "num" }, TV.who(p)); })),
        el("tr", { class: "wop-tv-legend" }, el("th", null), players.map(function () {
          return el("th", { class: "num", text: t("tv.wop_monasteries") + " / " + t("tv.wop_councillors") }); }))),
      el("tbody", null, sm.countries.map(function (c) {
        return el("tr", { "data-country": c.country }, el("td", { text: c.country }), players.map(function (p) {
          return el("td", { class: "num", "data-player": p }, pair((c.monasteries || {})[p], (c.councillors || {})[p]));
        }));
      }))));
  }
  // the rows of a scoring: each country's monasteries, each alliance, the chains; then the totals
  function rowsOf(res) {
    var rows = [], index = {};
    function add(key, label) { if (!(key in index)) { index[key] = rows.length; rows.push({ label: label, points: {} }); } return rows[index[key]]; }
    res.players.forEach(function (pl) {
      (pl.breakdown || []).forEach(function (b) {
        var row;
        if (b.kind === "monasteries") row = add("m:" + b.country, t("tv.wop_part_monasteries", { country: b.country }));
        else if (b.kind === "alliance") row = add("a:" + b.number, t("tv.wop_part_alliance", { number: b.number }));
        else row = add("chain", t("tv.wop_chains"));
        row.points[pl.player] = (row.points[pl.player] || 0) + b.points;
      });
    });
    return rows;
  }
  function drawScoring(kind, res, client, animate) {
    var box = document.getElementById("wop-tv-scoring");
    if (!box) return;
    timers.forEach(clearTimeout); timers = [];
    var players = res.players.map(function (p) { return p.player; });
    var rows = rowsOf(res);
    box.textContent = "";
    box.dataset.scoring = kind;
    box.appendChild(el("div", { class: "tv-panel-title", text: t(kind === "final" ? "tv.wop_scoring_final" : "tv.wop_scoring_intermediate") }));
    var tbody = el("tbody");
    var totals = el("tr", { class: "wop-tv-totals", hidden: animate ? true : null }, el("th", { text: t("tv.wop_total") }),
      res.players.map(function (p) { return el("td", { class: "num", "data-player": p.player, text: String(p.total) }); }));
    box.appendChild(el("table", { class: "tv-table" }, el("thead", null, el("tr", null, el("th"),
      players.map(function (p) { return el("th", { class: "num" }, TV.who(p)); }))), tbody, el("tfoot", null, totals)));
    rows.forEach(function (r, i) {
      var tr = el("tr", { class: "wop-tv-part", hidden: animate ? true : null }, el("td", { text: r.label }),
        players.map(function (p) { return el("td", { class: "num", text: r.points[p] === undefined ? "" : String(r.points[p]) }); }));
      tbody.appendChild(tr);
      if (animate) timers.push(setTimeout(function () { tr.hidden = false; tr.classList.add("tv-in"); }, TV.step * (i + 1)));
    });
    if (animate) timers.push(setTimeout(function () { totals.hidden = false; totals.classList.add("tv-in"); box.dataset.revealed = "1"; },
                                        TV.step * (rows.length + 1)));
    else box.dataset.revealed = "1";
    box.hidden = false;
  }
  function update(view, client) {
    if (!root || !view) return;
    drawCountries(view, client);
    var sc = (view.summary || {}).scores || {};
    var now = { intermediate: sc.intermediate ? JSON.stringify(sc.intermediate) : null, final: sc.final ? JSON.stringify(sc.final) : null };
    var first = seen === null;
    ["intermediate", "final"].forEach(function (k) {
      if (now[k] && (first || !seen || seen[k] !== now[k])) {
        if (k === "intermediate" && now.final) return;  // the final scoring is the one to show
        drawScoring(k, sc[k], client, !first);
      }
    });
    seen = now;
  }
  TV.register("web-of-power", { mount: mount, update: update });
})();
