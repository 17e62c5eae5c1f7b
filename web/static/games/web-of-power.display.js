/* Web of Power on the TV (/m/<id>/display, through CompanionTV.register).
 * - The standings (intermediate and final scoring, total, and what the monasteries would score now; the place
 *   once the match has ended: before, the official totals are 0 until a scoring and the rows keep the seats)
 *   and the table of countries (each player's monasteries and councillors), every player's column in full.
 * - The board when the match's board has roads and a photo (a board transcribed on the box, /boards): the
 *   photo, the roads, each monastery in its player's colour on its site and each player's chains now,
 *   redrawn on every event (the drawing is the tracker's, games/web-of-power.shared.js), the tables beside it.
 * - A scoring (the deck ran out): its breakdown takes the panel, revealed step by step (the monasteries of
 *   each country, each alliance, the chains, then the totals), every player's points of each part; it stays
 *   until the next placement. A TV switched on then shows it whole. While the table counts a final scoring's
 *   missing parts it says which. The final scoring's reveal ends before the ranking (js/display.js).
 * - Whose turn, the turn and the next scoring in the side column. Nothing on it writes. */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var B = window.WopBoard;
  var root = null, seen = null, started = false, timers = [], board = null, svg = null, follow = null;
  var scoringShown = null, revealUntil = 0;
  // a colour for every player: the match's, else one by seat (the pieces must differ)
  var SEAT = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  function colour(p) {
    var cl = TV.client(), i = cl && cl.match ? cl.match.players.indexOf(p) : -1;
    return TV.colour(p) || (i >= 0 ? SEAT[i % SEAT.length] : "#222");
  }
  function base() { return "/api/matches/" + encodeURIComponent(document.body.dataset.match); }
  function $(id) { return document.getElementById(id); }
  // a player's name as a column's head: the colour, the name on as many lines as it needs (never cut)
  // (beside a board: the initials, the standings above say whose they are)
  function initials(p) { return p.split(/[\s-]+/).filter(Boolean).map(function (w) { return w[0]; }).join("").slice(0, 3).toUpperCase(); }
  function head(p) {
    return el("th", { class: "num tv-col-player", title: p }, el("span", { class: "swatch", style: "background:" + colour(p) }),
      el("span", { class: "wop-tv-fullname", text: p }), el("span", { class: "wop-tv-initials", text: initials(p) }));
  }

  function mount(box) {
    root = box;
    svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("id", "wop-tv-svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", t("tv.wop_board"));
    root.appendChild(el("div", { class: "wop-tv", id: "wop-tv" },
      el("div", { class: "tv-box wop-tv-board", id: "wop-tv-board", hidden: true }, svg),
      el("div", { class: "wop-tv-side" },
        el("div", { class: "tv-box wop-tv-standings", id: "wop-tv-standings" }),
        el("div", { class: "tv-box", id: "wop-tv-countries-box" }, el("div", { class: "tv-panel-title" }, t("tv.wop_countries"),
          el("span", { class: "wop-tv-key", text: " · " + t("tv.wop_monasteries") + " / " + t("tv.wop_councillors") })),
          el("div", { id: "wop-tv-countries" }))),
      el("div", { class: "tv-box wop-tv-scoring", id: "wop-tv-scoring", hidden: true })));
    var side = $("tv-side-extra");
    if (side) side.appendChild(el("div", { class: "tv-status", id: "wop-tv-status" }));
    var tv = $("wop-tv");
    if (B) C.api("GET", base() + "/wop/board").then(function (b) {
      tv.dataset.board = B.onPhoto(b) && b.roads_known ? "photo" : "table";
      if (tv.dataset.board !== "photo") return;  // the template, or no roads or no photo: the tables alone
      board = b;
      var layer = B.draw(svg, b, "wop-tv-chains");
      follow = B.follower(base, function () { return board; }, function () { return layer; }, colour);
      $("wop-tv-board").hidden = false;
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

  function drawStandings(view, client) {
    var box = $("wop-tv-standings"), sm = view.summary || {}, sc = sm.scores;
    if (!box || !sc || !sc.ranking) return;
    var inter = {}, fin = {}, now = {};
    (sc.intermediate ? sc.intermediate.players : []).forEach(function (r) { inter[r.player] = r.total; });
    (sc.final ? sc.final.players : []).forEach(function (r) { fin[r.player] = r.total; });
    ((sc.preview || {}).players || []).forEach(function (r) { now[r.player] = r.points; });
    var playing = sm.phase === "play", ended = sm.phase === "ended", current = sm.turn ? sm.turn.player : sm.next_player;
    var order = ended ? sc.ranking : client.match.players.map(function (p) { return { player: p }; });
    var live = box;
    box = document.createElement("div");
    box.appendChild(el("table", { class: "tv-table", id: "wop-tv-totals" },
      el("thead", null, el("tr", null, ended ? el("th", { text: t("wop.col_place") }) : null, el("th", { text: t("scores.player") }),
        el("th", { class: "num", "data-col": "intermediate", text: t("wop.col_intermediate") }),
        el("th", { class: "num", "data-col": "final", text: t("wop.col_final") }),
        el("th", { class: "num", "data-col": "total", text: t("scores.total") }),
        playing ? el("th", { class: "num", "data-col": "now", text: t("tv.wop_col_now") }) : null)),
      el("tbody", null, order.map(function (r) {
        var p = r.player;
        return el("tr", { "data-player": p, class: playing && current === p ? "tv-current" : null },
          ended ? el("td", { class: "tv-place", text: String(r.place) }) : null,
          el("td", { class: "tv-name" }, el("span", { class: "swatch", style: "background:" + colour(p) }), p),
          el("td", { class: "num", "data-col": "intermediate", text: inter[p] === undefined ? "—" : String(inter[p]) }),
          el("td", { class: "num", "data-col": "final", text: fin[p] === undefined ? "—" : String(fin[p]) }),
          el("td", { class: "num wop-tv-m", "data-col": "total", text: String(sc.totals[p]) }),
          playing ? el("td", { class: "num muted", "data-col": "now", text: now[p] === undefined ? "" : String(now[p]) }) : null);
      }))));
    if (playing) box.appendChild(el("p", { class: "tv-note", text: t("tv.wop_now_note") }));
    if (sm.phase === "scoring") box.appendChild(el("p", { class: "tv-note tv-warn", text: t("wop.provisional") }));
    C.patch(live, Array.prototype.slice.call(box.childNodes));
  }

  function pair(m, c) { return el("span", { class: "wop-tv-pair" }, el("span", { class: "wop-tv-m", text: String(m || 0) }), " / ",
                                    el("span", { class: "wop-tv-c", text: String(c || 0) })); }
  function drawCountries(view, client) {
    var box = $("wop-tv-countries"), sm = view.summary || {};
    if (!box || !sm.countries) return;
    var players = client.match.players;
    C.patch(box, el("table", { class: "tv-table wop-tv-table" },
      el("thead", null, el("tr", null, el("th", { text: t("tv.wop_country") }), players.map(head))),
      el("tbody", null, sm.countries.map(function (c) {
        return el("tr", { "data-country": c.country }, el("td", { text: c.country }), players.map(function (p) {
          return el("td", { class: "num", "data-player": p }, pair((c.monasteries || {})[p], (c.councillors || {})[p]));
        }));
      }))));
  }

  // the side column: the turn, the next scoring, what a scoring still waits for
  function drawStatus(view) {
    var box = $("wop-tv-status"), sm = view.summary || {};
    if (!box) return;
    var lines = [];
    if (sm.phase === "play") {
      if (sm.current_turn) lines.push(t("tv.wop_turn", { n: sm.current_turn }));
      if (sm.next_scoring) lines.push(t(sm.next_scoring === "final" ? "tv.wop_next_final" : "tv.wop_next_intermediate"));
    } else if (sm.phase === "scoring") {
      lines.push(t("tv.wop_counting"));
      var miss = sm.missing || {};
      if ((miss.alliances || []).length) lines.push(t("tv.wop_missing_alliances", { list: miss.alliances.join(", ") }));
      if ((miss.chains || []).length) lines.push(t("tv.wop_missing_chains", { players: miss.chains.join(", ") }));
    }
    // (written only where a line changed: most events change none)
    C.patch(box, lines.map(function (s) { return el("div", { text: s }); }));
  }

  // the rows of a scoring: each country's monasteries (in the board's order), each alliance by its number,
  // the chains; then the totals
  function rowsOf(res) {
    var rows = [], index = {};
    function add(key, order, label) {
      if (!(key in index)) { index[key] = rows.length; rows.push({ label: label, order: order, points: {} }); }
      return rows[index[key]];
    }
    res.players.forEach(function (pl) {
      (pl.breakdown || []).forEach(function (b) {
        var row;
        if (b.kind === "monasteries") row = add("m:" + b.country, [0, 0], b.country);
        else if (b.kind === "alliance") row = add("a:" + b.number, [1, b.number], t("tv.wop_part_alliance", { number: b.number }));
        else row = add("chain", [2, 0], t("tv.wop_chains"));
        row.points[pl.player] = (row.points[pl.player] || 0) + b.points;
      });
    });
    return rows.map(function (r, i) { r.i = i; return r; }).sort(function (a, b) {
      return a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.i - b.i; });
  }
  function drawScoring(kind, res, client, animate, missing) {
    var box = $("wop-tv-scoring");
    if (!box) return;
    timers.forEach(clearTimeout); timers = [];
    var players = client.match.players;
    var total = {};
    res.players.forEach(function (p) { total[p.player] = p.total; });
    var rows = rowsOf(res);
    box.textContent = "";
    box.dataset.scoring = kind;
    delete box.dataset.revealed;
    box.appendChild(el("div", { class: "tv-panel-title", text: t(kind === "final" ? "tv.wop_scoring_final" : "tv.wop_scoring_intermediate") }));
    var tbody = el("tbody");
    var totals = el("tr", { class: "wop-tv-totals", hidden: animate ? true : null }, el("th", { text: t("tv.wop_total") }),
      players.map(function (p) { return el("td", { class: "num", "data-player": p, text: total[p] === undefined ? "" : String(total[p]) }); }));
    // as large as the panel's height allows for this many parts (2.2vh for the longest scorings, 3vh at most)
    var size = Math.min(3, Math.max(2.2, 72 / ((rows.length + 4) * 1.3)));
    box.appendChild(el("table", { class: "tv-table", style: "font-size:" + size.toFixed(2) + "vh" },
      el("thead", null, el("tr", null, el("th", { text: t("tv.wop_part") }), players.map(head))), tbody, el("tfoot", null, totals)));
    rows.forEach(function (r, i) {
      var tr = el("tr", { class: "wop-tv-part", hidden: animate ? true : null }, el("td", { text: r.label }),
        players.map(function (p) { return el("td", { class: "num", "data-player": p, text: r.points[p] === undefined ? "" : String(r.points[p]) }); }));
      tbody.appendChild(tr);
      if (animate) timers.push(setTimeout(function () { tr.hidden = false; tr.classList.add("tv-in"); }, TV.step * (i + 1)));
    });
    if (missing) box.appendChild(el("p", { class: "tv-note tv-warn", id: "wop-tv-missing", text: t("wop.final_incomplete") }));
    function done() { totals.hidden = false; totals.classList.add("tv-in"); box.dataset.revealed = "1"; revealUntil = 0; }
    if (animate) {
      revealUntil = Date.now() + TV.step * (rows.length + 1);
      timers.push(setTimeout(done, TV.step * (rows.length + 1)));
    } else done();
  }
  // the scoring takes the panel from the deck's end until the next placement (and while the table counts)
  function showScoring(on) {
    scoringShown = on;
    $("wop-tv-scoring").hidden = !on;
    $("wop-tv").classList.toggle("wop-tv-scoring-on", on);
  }

  function update(view, client) {
    if (!root || !view) return;
    var sm = view.summary || {}, sc = sm.scores || {};
    drawBoard(view, client);
    drawStandings(view, client);
    drawCountries(view, client);
    drawStatus(view);
    var kind = sc.final ? "final" : (sc.intermediate ? "intermediate" : null);
    var now = kind ? { kind: kind, json: JSON.stringify(sc[kind]), stage: kind + ":" + sm.phase } : null;
    var first = !started;
    started = true;
    if (now && (first || !seen || seen.json !== now.json)) {
      // revealed step by step when it comes (the deck's end) and when it is complete (the end); redrawn
      // at once when a part counted at the table is added, or on a TV switched on later
      var animate = !first && (!seen || seen.stage !== now.stage);
      drawScoring(kind, sc[kind], client, animate, kind === "final" && sm.phase === "scoring");
      if (!first || sm.phase !== "play") showScoring(true);
      else {  // switched on during play: the scoring only if nothing was placed since it
        showScoring(false);
        C.api("GET", base() + "/events?as=viewer&after=" + Math.max(0, view.seq - 1)).then(function (d) {
          var last = d.events[d.events.length - 1];
          if (last && (last.type === "deck.out" || last.type === "scoring.hand" || last.type === "chains")) showScoring(true);
        }, function () {});
      }
    }
    if (!now) showScoring(false);
    // play went on after the intermediate scoring: the countries again
    if (sm.phase === "play" && sm.turn && (sm.turn.placements || []).length) showScoring(false);
    seen = now;
  }

  TV.register("web-of-power", {
    mount: mount,
    update: update,
    // whose turn: the one placing, else the next
    turn: function (view) {
      var sm = view.summary || {};
      if (sm.phase !== "play") return null;
      return sm.turn ? sm.turn.player : sm.next_player;
    },
    // how long the final scoring's reveal still runs (the ranking comes after it)
    revealing: function () { return Math.max(0, revealUntil - Date.now()); },
    score: function (view, player) {
      var totals = ((view.summary || {}).scores || {}).totals || {};
      return totals[player] === undefined ? "" : C.plural("tv.points", totals[player]);
    }
  });
})();
