/* Web of Power on the TV (/m/<id>/display, through CompanionTV.register): the board when the match's board
 * has roads and a photo (a board transcribed on the box, /boards): the photo, the roads, each monastery in
 * its player's colour on its site and each player's chains now, redrawn on every event (the drawing is the
 * tracker's, games/web-of-power.shared.js); beside it the table of countries (each player's monasteries and
 * councillors), alone on the template board or one without a photo. After each scoring its breakdown is
 * revealed step by step: the monasteries of each country, each alliance, the chains, then the totals. A TV
 * switched on after a scoring shows it whole. Nothing on it writes. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var B = window.WopBoard;
  var root = null, seen = null, timers = [], board = null, svg = null, follow = null;
  // a colour for every player: the match's, else one by seat (the pieces must differ)
  var SEAT = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  function colour(p) {
    var cl = TV.client(), i = cl && cl.match ? cl.match.players.indexOf(p) : -1;
    return TV.colour(p) || (i >= 0 ? SEAT[i % SEAT.length] : "#222");
  }
  function base() { return "/api/matches/" + encodeURIComponent(document.body.dataset.match); }

  function mount(box) {
    root = box;
    svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("id", "wop-tv-svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", t("tv.wop_board"));
    root.appendChild(el("div", { class: "wop-tv", id: "wop-tv" },
      el("div", { class: "tv-box wop-tv-board", id: "wop-tv-board", hidden: true }, svg),
      el("div", { class: "wop-tv-side" },
        el("div", { class: "tv-box", id: "wop-tv-scoring", hidden: true }),
        el("div", { class: "tv-box" }, el("div", { class: "tv-panel-title", text: t("tv.wop_countries") }),
          // beside the board the table is narrower: what its numbers are is said once, above it
          el("div", { class: "wop-tv-key", text: t("tv.wop_monasteries") + " / " + t("tv.wop_councillors") }),
          el("div", { id: "wop-tv-countries" })))));
    var tv = document.getElementById("wop-tv");
    if (B) C.api("GET", base() + "/wop/board").then(function (b) {
      tv.dataset.board = B.onPhoto(b) && b.roads_known ? "photo" : "table";
      if (tv.dataset.board !== "photo") return;  // the template, or no roads or no photo: the table alone
      board = b;
      var layer = B.draw(svg, b, "wop-tv-chains");
      follow = B.follower(base, function () { return board; }, function () { return layer; }, colour);
      document.getElementById("wop-tv-board").hidden = false;
      tv.classList.add("wop-tv-with-board");
      document.body.classList.add("wop-tv-has-board");
      var cl = TV.client();
      if (cl && cl.view) drawBoard(cl.view, cl);
    }, function () { tv.dataset.board = "table"; });
  }
  // the monasteries on their sites and the chains now
  function drawBoard(view, client) {
    if (!board || !view.state) return;
    B.paint(svg, view.state.sites || {}, colour);
    follow(client);
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
    drawBoard(view, client);
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
