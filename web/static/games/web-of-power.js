/* Web of Power tracker (plugs into the match page through Companion.registerGame).
 * Each turn's placements (a monastery on a site or into a country, or councillors), counts per country,
 * councillor caps, remaining supply, the engine's warnings for illegal turns; "the deck ran out" runs the
 * intermediate scoring the first time and the final one the second, with the per-country, per-alliance
 * and per-chain breakdown; totals add up across both. With roads on the board the SVG shows the pieces;
 * without, chain lengths are entered by hand. Numbers come from companion/games/web_of_power.py. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var GAME = "web-of-power";
  var root = null, client = null, board = null, boardReq = null, piece = "monastery";

  var K = C.trackerKit(function () { return client; });
  var $ = K.$, base = K.base, done = K.done, send = K.send, colour = K.colour, who = K.who, opt = K.opt, fill = K.fill;
  var st = K.st, sm = K.sm;
  function players() { return client.match.players; }
  function mons(n) { return C.plural("wop.n_monasteries", n); }
  function cons(n) { return C.plural("wop.n_councillors", n); }
  function pieces(piece, n) { return piece === "councillor" ? cons(n) : mons(n); }
  // the shipped board's name in the page's language (a club's own board keeps its name)
  var SHIPPED_BOARD = "Web of Power: transcription TEMPLATE (incomplete, not the full board)";
  function boardName(name) { return name === SHIPPED_BOARD ? t("wop.board_shipped") : name; }
  // the engine's warnings (English, companion/games/web_of_power.py) in the page's language; a warning it
  // does not know stays as the engine wrote it
  var WARNINGS = [
    [/^(.+) played out of turn: it was (.+)'s turn$/, function (m) { return t("wop.w_out_of_turn", { player: m[1], next: m[2] }); }],
    [/^(.+) placed in (\d+) countries in one turn \(at most (\d+)\): (.+)$/, function (m) { return t("wop.w_countries", { player: m[1], n: m[2], max: m[3], list: m[4] }); }],
    [/^(.+) placed (\d+) pieces in one turn \(at most 2\)$/, function (m) { return t("wop.w_pieces", { player: m[1], n: m[2] }); }],
    [/^(.+) had no monastery: only monasteries may be placed there this turn$/, function (m) { return t("wop.w_empty_councillor", { country: m[1] }); }],
    [/^(.+) had no monastery: at most (\d+) monastery\(ies\) there this turn$/, function (m) { return C.plural("wop.w_empty_count", +m[2], { country: m[1] }); }],
    [/^(.+): (\d+) councillor\(s\), more than the (\d+) allowed \(the most monasteries of one player there\)$/, function (m) { return t("wop.w_cap", { country: m[1], councillors: cons(+m[2]), cap: m[3] }); }],
    [/^alliance\(s\) (.+) not scored: their countries are unknown on this board$/, function (m) { return C.plural("wop.w_alliances", m[1].split(", ").length, { list: m[1] }); }],
    [/^(.+): chains not computed \(monasteries given by country, not by site\)$/, function (m) { return t("wop.w_chains_by_country", { player: m[1] }); }],
    [/^the board's roads are unknown: chains count only when entered by hand \(none entered for (.+)\)$/, function (m) { return t("wop.w_roads_unknown", { players: m[1] }); }],
    [/^Web of Power is for (\d+)-(\d+) players, not (\d+)$/, function (m) { return t("wop.w_players", { min: m[1], max: m[2], n: m[3] }); }],
    [/^chains are scored only at the final scoring: ignored$/, function () { return t("wop.w_chains_final"); }]
  ];
  function warnText(message) {
    for (var i = 0; i < WARNINGS.length; i++) { var m = WARNINGS[i][0].exec(message); if (m) return WARNINGS[i][1](m); }
    return message;
  }

  function loadBoard() {
    if (boardReq) return boardReq;
    boardReq = C.api("GET", base() + "/wop/board").then(function (b) {
      board = b;
      $("wop-svg").innerHTML = b.svg; // our own server's SVG (escaped by the engine)
      return b;
    }, function (e) { boardReq = null; C.toast(C.errorText(e), true); });
    return boardReq;
  }

  // -- scores: intermediate, final, total; the breakdown by country, alliance and chain -----------------------
  function renderScores() {
    var box = document.getElementById("scores"), s = sm();
    if (!box || !s.scores) return;
    var sc = s.scores, inter = {}, fin = {}, place = {};
    (sc.intermediate ? sc.intermediate.players : []).forEach(function (r) { inter[r.player] = r.total; });
    (sc.final ? sc.final.players : []).forEach(function (r) { fin[r.player] = r.total; });
    sc.ranking.forEach(function (r) { place[r.player] = r.place; });
    var now = {};
    sc.preview.players.forEach(function (r) { now[r.player] = r.points; });
    box.textContent = "";
    var head = el("tr", null, el("th", { text: t("wop.col_place") }), el("th", { text: t("scores.player") }),
      el("th", { class: "num", text: t("wop.col_intermediate") }), el("th", { class: "num", text: t("wop.col_final") }),
      el("th", { class: "num", text: t("scores.total") }), el("th", { class: "num", text: t("wop.col_now") }));
    var rows = sc.ranking.map(function (r) {
      var p = r.player;
      return el("tr", { "data-player": p, class: place[p] === 1 && (sc.intermediate || sc.final) ? "leader" : null },
        el("td", { class: "trk-place", text: String(place[p]) }),
        el("td", null, who(p)),
        el("td", { class: "num", "data-col": "intermediate", text: inter[p] === undefined ? "—" : String(inter[p]) }),
        el("td", { class: "num", "data-col": "final", text: fin[p] === undefined ? "—" : String(fin[p]) }),
        el("td", { class: "num score", "data-col": "total", text: String(sc.totals[p]) }),
        el("td", { class: "num muted", "data-col": "now", text: String(now[p]) }));
    });
    box.appendChild(el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "wop-totals" },
      el("thead", null, head), el("tbody", null, rows))));
  }

  function describeEntry(e) {
    if (e.kind === "monasteries") return t("wop.bd_country", { country: e.country, monasteries: mons(e.monasteries), rank: e.rank, points: e.points });
    if (e.kind === "alliance") return t("wop.bd_alliance", { number: e.number, a: e.countries[0], b: e.countries[1], points: e.points });
    if (e.kind === "chain") return t("wop.bd_chain", { monasteries: mons(e.sites ? e.sites.length : e.length), points: e.points });
    return e.kind + " " + e.points;
  }
  function renderBreakdown() {
    var box = $("wop-breakdown"), sc = sm().scores;
    box.textContent = "";
    ["intermediate", "final"].forEach(function (kind) {
      var res = sc[kind];
      if (!res) return;
      var sec = el("div", { class: "wop-scoring", "data-scoring": kind }, el("h4", { text: t("wop.scoring_" + kind) }));
      res.players.forEach(function (r) {
        sec.appendChild(el("details", { class: "trk-details", "data-player": r.player },
          el("summary", null, who(r.player), " · ", el("strong", { class: "wop-points", text: String(r.total) }), " " + C.plural("wop.points_word", r.total)),
          el("ul", { class: "small" }, r.breakdown.map(function (e) { return el("li", { "data-kind": e.kind, text: describeEntry(e) }); }))));
      });
      (res.warnings || []).forEach(function (w) { sec.appendChild(el("p", { class: "trk-warn small", text: warnText(w) })); });
      box.appendChild(sec);
    });
    if (!box.children.length) box.appendChild(el("p", { class: "muted small", text: t("wop.no_scoring") }));
  }

  function renderStatus() {
    var s = sm(), text;
    if (s.phase === "ended") {
      var win = s.scores.ranking.filter(function (r) { return r.place === 1; }).map(function (r) { return r.player; });
      text = t("wop.ended", { players: win.join(", ") });
    } else if (s.turn) text = C.plural("wop.status_turn", s.turn.placements.length, { player: s.turn.player });
    else text = t("wop.status_next", { player: s.next_player });
    $("wop-status").textContent = text;
    var note = $("wop-board-note");
    note.hidden = !!(s.board && s.board.complete);
    if (s.board && !s.board.complete) note.textContent = t("wop.board_template", { name: boardName(s.board.name) });
  }

  function renderTurn() {
    var s = sm(), v = st(), ended = s.phase === "ended";
    $("wop-turn").hidden = ended;
    if (ended || !board) return;
    var sel = $("wop-player");
    var want = sel.dataset.touched ? sel.value : (s.turn ? s.turn.player : s.next_player);
    fill(sel, players().map(function (p) { return { value: p, label: p }; }), want);
    $("wop-piece-monastery").setAttribute("aria-pressed", String(piece === "monastery"));
    $("wop-piece-councillor").setAttribute("aria-pressed", String(piece === "councillor"));
    var country = $("wop-country");
    fill(country, s.countries.map(function (c) {
      var label = c.country + " · " + (piece === "monastery" ? (c.free_sites === null ? c.monasteries_total + " ⌂" : C.plural("wop.free", c.free_sites))
        : C.plural("wop.room", c.councillor_room));
      return { value: c.country, label: label };
    }));
    var sites = (board.sites[country.value] || []).filter(function (id) { return !v.sites[id]; });
    var bySite = piece === "monastery" && (board.sites[country.value] || []).length > 0;
    $("wop-site-box").hidden = !bySite;
    $("wop-count-box").hidden = bySite;
    fill($("wop-site"), sites.map(function (id) { return { value: id, label: id }; }));
    var c = s.countries.filter(function (x) { return x.country === country.value; })[0];
    $("wop-country-info").textContent = c ? t("wop.country_info", { monasteries: mons(c.monasteries_total),
      sites: C.plural("wop.n_sites", c.sites === null ? "?" : c.sites), councillors: cons(c.councillors_total), cap: c.councillor_cap }) : "";
    var player = sel.value, sup = s.supply[player];
    $("wop-place").disabled = (piece === "monastery" ? sup.monasteries : sup.councillors) < 1 || (bySite && !sites.length);
    $("wop-turn-info").textContent = s.turn ? t("wop.turn_so_far", { player: s.turn.player,
      list: s.turn.placements.map(function (pl) { return pieces(pl.piece, pl.count) + " " + (pl.site || pl.country); }).join(", ") }) : "";
    $("wop-turn-end").hidden = !s.turn;
    $("wop-turn-end").textContent = s.turn ? t("wop.turn_end", { player: s.turn.player }) : "";
    $("wop-swap").hidden = !!s.turn;
    $("wop-swap").textContent = t("wop.swap", { player: s.next_player });
    var warn = $("wop-warnings");
    warn.textContent = "";
    (s.warnings || []).slice(-5).forEach(function (w) { warn.appendChild(el("li", { class: "trk-bad", text: "#" + w.seq + " " + warnText(w.message) })); });
  }

  function renderDeck() {
    var s = sm(), ended = s.phase === "ended";
    $("wop-deck").hidden = ended;
    if (ended) return;
    $("wop-deck-info").textContent = t("wop.deck_info", { cards: C.plural("wop.n_cards", s.deck.cards),
      removed: C.plural("wop.n_removed", s.deck.removed_per_colour), outs: C.plural("wop.n_times", s.deck_outs) });
    $("wop-deck-out").textContent = s.next_scoring === "intermediate" ? t("wop.deck_out_1") : t("wop.deck_out_2");
    var byHand = s.board && !s.board.roads_known && s.next_scoring === "final";
    $("wop-chains").hidden = !byHand;
    var box = $("wop-chain-inputs");
    if (byHand && !box.children.length) {
      players().forEach(function (p) {
        box.appendChild(el("label", { class: "trk-inline" }, p + " ", el("input", { type: "text", class: "wop-chain", "data-player": p,
          inputmode: "numeric", placeholder: "5, 4", value: (s.hand_chains[p] || []).join(", ") })));
      });
    }
  }
  function readChains() {
    var out = {}, bad = null;
    Array.prototype.forEach.call(document.querySelectorAll("#wop-chain-inputs .wop-chain"), function (i) {
      var text = i.value.trim();
      if (!text) return;
      var lengths = text.split(/[ ,;]+/).filter(Boolean).map(function (x) { return parseInt(x, 10); });
      if (lengths.some(function (n) { return !(n >= 4); })) bad = i.dataset.player;
      out[i.dataset.player] = lengths;
    });
    if (bad) { C.toast(t("wop.chains_bad", { player: bad }), true); return null; }
    return out;
  }

  function renderCountries() {
    var s = sm(), box = $("wop-countries");
    box.textContent = "";
    var ps = players();
    var head = el("tr", null, el("th", { text: t("wop.country") }), ps.map(function (p) { return el("th", { class: "num" }, who(p)); }),
      el("th", { class: "num", text: t("wop.col_sites") }), el("th", { class: "num", text: t("wop.col_councillors") }));
    var rows = s.countries.map(function (c) {
      return el("tr", { "data-country": c.country }, el("td", { text: c.country }),
        ps.map(function (p) {
          var m = c.monasteries[p] || 0, k = c.councillors[p] || 0;
          return el("td", { class: "num", "data-player": p, text: (m || k) ? m + (k ? " · " + k + "♜" : "") : "" });
        }),
        el("td", { class: "num", text: c.monasteries_total + "/" + (c.sites === null ? "?" : c.sites) }),
        el("td", { class: "num" + (c.councillors_total > c.councillor_cap ? " trk-bad" : ""), text: c.councillors_total + "/" + c.councillor_cap }));
    });
    box.appendChild(el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "wop-country-table" },
      el("thead", null, head), el("tbody", null, rows))));
    var sup = $("wop-supply");
    sup.textContent = "";
    sup.appendChild(el("p", { class: "small", id: "wop-supply-line" }, el("strong", { text: t("wop.supply") + ": " }),
      ps.map(function (p, i) { return el("span", { "data-player": p }, (i ? " · " : ""), who(p), " " + t("wop.supply_of", { monasteries: mons(s.supply[p].monasteries), councillors: cons(s.supply[p].councillors) })); })));
    // the board drawing: site circles coloured by holder
    if (board) {
      var marks = document.querySelectorAll("#wop-svg svg circle[r='8'][fill='#c04030'], #wop-svg svg circle[data-site]");
      if (marks.length === board.site_order.length) {
        board.site_order.forEach(function (id, i) {
          var holder = st().sites[id];
          marks[i].setAttribute("data-site", id);
          marks[i].setAttribute("fill", holder ? (colour(holder) || "#222") : "#fff");
          marks[i].setAttribute("stroke-width", holder ? "3" : "1");
        });
      }
    }
  }

  function update(view, cl) {
    client = cl;
    if (!view || !view.summary) return;
    renderScores();
    if (!root) return;
    if (!board) { loadBoard().then(function () { if (client.view) update(client.view, client); }); }
    renderStatus();
    renderTurn();
    renderDeck();
    renderBreakdown();
    renderCountries();
    $("wop-board").hidden = !(sm().board && sm().board.roads_known);
  }

  function mount(r, cl) {
    root = r; client = cl;
    $("wop-player").addEventListener("change", function (ev) { ev.target.dataset.touched = "1"; renderTurn(); });
    $("wop-piece-monastery").addEventListener("click", function () { piece = "monastery"; renderTurn(); });
    $("wop-piece-councillor").addEventListener("click", function () { piece = "councillor"; renderTurn(); });
    $("wop-country").addEventListener("change", renderTurn);
    $("wop-place").addEventListener("click", function () {
      var data = { player: $("wop-player").value, piece: piece };
      if (!$("wop-site-box").hidden) data.site = $("wop-site").value;
      else { data.country = $("wop-country").value; data.count = parseInt($("wop-count").value, 10); }
      send("place", data);
    });
    $("wop-turn-end").addEventListener("click", function () {
      send("turn.end", { player: sm().turn.player }).then(function (m) { if (m) $("wop-player").dataset.touched = ""; });
    });
    $("wop-swap").addEventListener("click", function () { send("turn.end", { player: sm().next_player }); });
    $("wop-deck-out").addEventListener("click", function () {
      var data = {};
      if (!$("wop-chains").hidden) { var ch = readChains(); if (!ch) return; if (Object.keys(ch).length) data.chains = ch; }
      send("deck.out", data);
    });
    $("wop-game-end").addEventListener("click", function () {
      if (!window.confirm(t("wop.game_end_confirm"))) return;
      var data = {};
      if (!$("wop-chains").hidden) { var ch = readChains(); if (!ch) return; if (Object.keys(ch).length) data.chains = ch; }
      send("game.end", data);
    });
    loadBoard();
  }

  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      case "place": return t("wop.ev_place", { player: d.player, pieces: pieces(d.piece, d.count || 1), where: d.site || d.country });
      case "turn.end": return t("wop.ev_turn_end", { player: d.player || "" });
      case "deck.out": return t("wop.ev_deck_out");
      case "game.end": return t("wop.ev_game_end");
      case "chains": return t("wop.ev_chains", { player: d.player, list: (d.lengths || []).join(", ") });
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe });
})();
