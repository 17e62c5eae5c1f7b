/* Rome Is Burning tracker (plugs into the match page through Companion.registerGame).
 * Turns 1-7: the deal (by the Pi, or the table's cards picked from the catalogue, each card once), the
 * moves (1d6 rolled by the Pi or at the table), steals, the turn's scores with their breakdown and the
 * emperor election (the old emperor decides a tie), the running totals. Every number comes from the
 * server (companion/games/rome_is_burning.py); writes carry the seq this phone saw. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var GAME = "rome-is-burning";
  var root = null, client = null, cat = null, catReq = null;

  var K = C.trackerKit(function () { return client; });
  var $ = K.$, base = K.base, done = K.done, send = K.send, colour = K.colour, who = K.who, opt = K.opt, fill = K.fill;
  function post(action, data) { return K.post("rome", action, data); }
  function types(name) { return cat && cat.byName[name] ? cat.byName[name] : ""; }
  function cardText(name) { var ty = types(name); return name + (ty ? " [" + ty + "]" : ""); }

  function loadCatalogue() {
    if (catReq) return catReq;
    catReq = C.api("GET", document.body.dataset.catalogueUrl || "/api/games/rome-is-burning/catalogue").then(function (c) {
      c.byName = {};
      c.cards.forEach(function (k) { c.byName[k.name] = k.types; });
      cat = c;
      return c;
    }, function (e) { catReq = null; C.toast(C.errorText(e), true); });
    return catReq;
  }

  var sm = K.sm, st = K.st;

  // -- the scores box: running totals, this turn's score, the emperor -------------------------------
  function renderScores() {
    var box = document.getElementById("scores"), s = sm();
    if (!box || !s.totals) return;
    var now = s.scores_now || {};
    var best = Math.max.apply(null, Object.keys(s.totals).map(function (p) { return s.totals[p]; }));
    var head = el("tr", null, el("th", { text: t("scores.player") }), el("th", { text: t("rb.col_role") }),
      el("th", { class: "num", text: t("rb.col_hand") }), el("th", { class: "num", text: t("rb.col_turn") }),
      el("th", { class: "num", text: t("scores.total") }));
    var rows = client.match.players.map(function (p) {
      var winner = (s.winners || []).indexOf(p) >= 0;
      return el("tr", { "data-player": p, class: (s.phase === "ended" ? winner : s.totals[p] === best && best > 0) ? "leader" : null },
        el("td", null, who(p), winner ? el("span", { class: "trk-badge", text: t("rb.winner") }) : null),
        el("td", { text: p === s.emperor ? "♛ " + t("rb.emperor") : t("rb.plebeian") }),
        el("td", { class: "num", text: String((s.hand_sizes || {})[p] || 0) }),
        el("td", { class: "num", text: now[p] === undefined ? "" : String(now[p]) }),
        el("td", { class: "num score", text: String(s.totals[p]) }));
    });
    C.patch(box, el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "rb-totals" },
      el("thead", null, head), el("tbody", null, rows))));
  }

  function renderStatus() {
    var s = sm(), text;
    if (s.phase === "ended") text = t("rb.ended", { players: (s.winners || []).join(", ") });
    else if (s.phase === "setup") text = t("rb.status_setup", { n: s.turn, of: s.turns });
    else if (s.phase === "election") text = t("rb.status_election", { n: s.turn });
    else text = s.to_move ? t("rb.status_move", { n: s.turn, player: s.to_move }) : t("rb.status_score", { n: s.turn });
    $("rb-status").textContent = text;
  }

  function renderSetup() {
    var s = sm(), players = client.match.players;
    var first = $("rb-first");
    fill(first, players.map(function (p) { return { value: p, label: p }; }), first.dataset.touched ? undefined : players[st().first]);
    var rows = $("rb-deal-rows");
    var need = players.length + 1;
    if (!cat || rows.children.length === need) return;
    rows.textContent = "";
    for (var i = 0; i < need; i++) {
      var space = el("select", { class: "rb-space", "aria-label": t("rb.space") + " " + (i + 1) });
      for (var k = 1; k < cat.ring; k++) space.appendChild(opt(k, t("rb.space") + " " + k, k === i + 1));
      var a = cardSelect(), b = cardSelect();
      rows.appendChild(el("div", { class: "trk-row rb-deal-row" }, space, a, b));
    }
    refreshDealOptions();
  }
  function cardSelect() {
    var sel = el("select", { class: "rb-card", onchange: refreshDealOptions }, opt("", "—"));
    cat.cards.forEach(function (c) { sel.appendChild(opt(c.name, c.name + " [" + c.types + "]")); });
    return sel;
  }
  function refreshDealOptions() {
    // a card can be on one space only: the cards chosen elsewhere are disabled
    var sels = Array.prototype.slice.call(document.querySelectorAll("#rb-deal-rows .rb-card"));
    var chosen = {};
    sels.forEach(function (s) { if (s.value) chosen[s.value] = s; });
    sels.forEach(function (s) {
      Array.prototype.forEach.call(s.options, function (o) { o.disabled = !!(o.value && chosen[o.value] && chosen[o.value] !== s); });
    });
  }

  function renderMoving() {
    var s = sm(), v = st();
    var mover = s.to_move;
    $("rb-move-title").textContent = mover ? t("rb.move_title", { player: mover }) : t("rb.all_taken");
    ["rb-roll-ccw", "rb-roll-cw", "rb-move-ccw", "rb-move-cw"].forEach(function (id) { $(id).disabled = !mover; });
    // in the thumb bar: the rolls while someone moves, then the turn's scoring
    $("rb-roll-ccw").hidden = $("rb-roll-cw").hidden = !mover;
    $("rb-score").hidden = !!mover;
    var lm = v.last_move;
    $("rb-last-move").textContent = lm ? t("rb.last_move", { player: lm.player, space: lm.space === 0 ? t("rb.palace") : lm.space,
      cards: lm.took.length ? lm.took.join(", ") : t("rb.nothing") }) : "";
    var steal = s.steal;
    $("rb-steal").hidden = !steal;
    if (steal) {
      $("rb-steal-text").textContent = t("rb.steal_text", { player: steal.player });
      var from = $("rb-steal-from");
      fill(from, steal.from.map(function (p) { return { value: p, label: p }; }));
      fill($("rb-steal-card"), (v.hands[from.value] || []).map(function (c) { return { value: c, label: cardText(c) }; }));
    }
  }

  function renderElection() {
    var d = sm().decision_needed;
    if (!d) return;
    $("rb-election-text").textContent = d.by === "table" ? t("rb.election_table", { players: d.candidates.join(", ") }) :
      t("rb.election_by", { player: d.by, players: d.candidates.join(", ") });
    C.patch($("rb-candidates"), d.candidates.map(function (p) {
      return el("button", { type: "button", class: "btn btn-primary", "data-player": p,
        onclick: function () { send("emperor.choose", { emperor: p }); } }, "♛ " + p);
    }));
  }

  function renderTurnScores() {
    var s = sm();
    $("rb-turn-scores").hidden = !s.turn_scores;
    // the view brings the turn's scores with their breakdown (the box's own, as GET .../rome/scores
    // answers): drawn with the rest of the view, nothing asked of the box on each event
    if (s.turn_scores) drawTurnScores(s.turn_scores);
  }
  // the table holds for the seq drawn (data-seq)
  function drawTurnScores(r) {
    $("rb-scores-title").textContent = t("rb.turn_scores", { n: r.turn });
    var head = el("tr", null, el("th", { text: t("scores.player") }), el("th", { class: "num", text: t("rb.col_cards") }),
      el("th", { class: "num", text: t("rb.col_extra") }), el("th", { text: t("rb.col_squares") }),
      el("th", { class: "num", text: t("rb.col_score") }));
    var rows = r.players.map(function (p) {
      var b = p.breakdown, sq = Object.keys(b.squares).map(function (k) { return k + "² " + b.squares[k]; }).join(" + ");
      return el("tr", { "data-player": p.player, class: r.candidates.indexOf(p.player) >= 0 ? "leader" : null },
        el("td", null, who(p.player), p.role === "emperor" ? " ♛" : null),
        el("td", { class: "num", text: String(b.cards) }),
        el("td", { class: "num", text: String(b.extra) + (p.role === "emperor" ? " B" : " A") }),
        el("td", { class: "small", text: sq || "—" }),
        el("td", { class: "num score", text: String(p.score) }));
    });
    C.patch($("rb-scores-body"), [el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "rb-turn-table", "data-seq": String(client.seq) },
      el("thead", null, head), el("tbody", null, rows))),
      r.new_emperor ? el("p", { class: "small", text: C.plural("rb.would_elect", r.emperor_points, { player: r.new_emperor }) }) : null]);
  }

  function renderBoard() {
    var s = sm(), v = st(), ring = $("rb-ring"), spaces = [];
    if (!cat) { ring.textContent = ""; return; }
    for (var i = 0; i < cat.ring; i++) {
      var pawns = client.match.players.filter(function (p) { return v.positions[p] === i; });
      var cards = v.spaces[i] || [];
      spaces.push(el("div", { class: "rb-space-box" + (i === 0 ? " rb-palace" : "") + (cards.length ? " rb-has" : ""), "data-space": String(i) },
        el("div", { class: "rb-space-n", text: i === 0 ? t("rb.palace") : String(i) }),
        cards.map(function (c) { return el("div", { class: "rb-card-name small", text: cardText(c) }); }),
        el("div", { class: "rb-pawns" }, pawns.map(function (p) { return el("span", { class: "rb-pawn", title: p, style: colour(p) ? "background:" + colour(p) : null, text: p.slice(0, 2) }); }))));
    }
    C.patch(ring, spaces);
    C.patch($("rb-hands"), client.match.players.map(function (p) {
      var h = v.hands[p] || [];
      return el("p", { "data-player": p }, el("strong", null, who(p)), ": ", h.length ? h.map(cardText).join(", ") : "—");
    }));
  }

  function renderHistory() {
    var box = $("rb-history"), h = st().history;
    if (!h.length) { C.patch(box, el("p", { class: "muted small", text: t("rb.no_turns") })); return; }
    var players = client.match.players;
    var head = el("tr", null, el("th", { text: t("rb.col_turn_n") }), players.map(function (p) { return el("th", { class: "num", text: p }); }),
      el("th", { text: t("rb.emperor") }));
    var rows = h.map(function (r) {
      return el("tr", null, el("td", { text: String(r.turn) }),
        players.map(function (p) { return el("td", { class: "num" + (p === r.new_emperor ? " score" : ""), text: String(r.scores[p]) }); }),
        el("td", { text: r.new_emperor + " +" + r.points }));
    });
    C.patch(box, el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "rb-history-table" },
      el("thead", null, head), el("tbody", null, rows))));
  }

  function update(view, cl) {
    client = cl;
    if (!view || !view.summary) return;
    renderScores();
    if (!root) return;
    if (!cat) { loadCatalogue().then(function () { if (client.view) update(client.view, client); }); }
    var s = sm();
    renderStatus();
    $("rb-setup").hidden = s.phase !== "setup";
    $("rb-moving").hidden = s.phase !== "moving";
    $("rb-election").hidden = s.phase !== "election";
    if (s.phase === "setup") renderSetup();
    if (s.phase === "moving") renderMoving();
    if (s.phase === "election") renderElection();
    renderTurnScores();
    renderBoard();
    renderHistory();
  }

  function mount(r, cl) {
    root = r; client = cl;
    $("rb-first").addEventListener("change", function (ev) { ev.target.dataset.touched = "1"; });
    $("rb-deal-pi").addEventListener("click", function () {
      post("deal", { first: $("rb-first").value }).then(function (m) { if (m) $("rb-first").dataset.touched = ""; });
    });
    $("rb-deal-send").addEventListener("click", function () {
      var spaces = {}, bad = false;
      Array.prototype.forEach.call(document.querySelectorAll("#rb-deal-rows .rb-deal-row"), function (row) {
        var sp = row.querySelector(".rb-space").value;
        var cards = Array.prototype.map.call(row.querySelectorAll(".rb-card"), function (s) { return s.value; }).filter(Boolean);
        if (cards.length !== 2 || spaces[sp]) bad = true;
        spaces[sp] = cards;
      });
      if (bad) { C.toast(t("rb.deal_incomplete"), true); return; }
      send("turn.setup", { spaces: spaces, first: $("rb-first").value }).then(function (m) {
        if (m) { $("rb-deal-rows").textContent = ""; $("rb-first").dataset.touched = ""; }
      });
    });
    function roll(dir) {
      return function () {
        var D = window.CompanionDice;
        if (D && D.smart()) {  // the table's smart die (js/dice-live.js): the box records the move when it lands
          D.roll("move", { player: sm().to_move, direction: dir }).then(null, function (e) { C.toast(C.errorText(e), true); });
          return;
        }
        post("move", { player: sm().to_move, direction: dir });
      };
    }
    function table(dir) {
      return function () {
        var d = parseInt($("rb-die").value, 10);
        if (!(d >= 1 && d <= 6)) { C.toast(t("rb.bad_die"), true); return; }
        send("move", { player: sm().to_move, die: d, direction: dir }).then(function (m) { if (m) $("rb-die").value = ""; });
      };
    }
    $("rb-roll-cw").addEventListener("click", roll("cw"));
    $("rb-roll-ccw").addEventListener("click", roll("ccw"));
    $("rb-move-cw").addEventListener("click", table("cw"));
    $("rb-move-ccw").addEventListener("click", table("ccw"));
    $("rb-steal-from").addEventListener("change", function () { renderMoving(); });
    $("rb-steal-send").addEventListener("click", function () {
      send("steal", { player: sm().steal.player, from: $("rb-steal-from").value, card: $("rb-steal-card").value });
    });
    $("rb-score").addEventListener("click", function () { send("turn.score", {}); });
    loadCatalogue();
  }

  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      case "turn.setup": return C.plural("rb.ev_setup", Object.keys(d.spaces || {}).length * 2) + (d.first ? " · " + t("rb.ev_first", { player: d.first }) : "");
      case "move": return t("rb.ev_move", { player: d.player, die: d.die, dir: d.direction === "cw" ? "↻" : "↺" }) +
        (d.rolled_by === "dice" ? " · " + t("dice.ev_read") : "");
      case "steal": return t("rb.ev_steal", { player: d.player, from: d.from, card: d.card });
      case "turn.score": return t("rb.ev_score") + (d.emperor_choice ? " (" + d.emperor_choice + ")" : "");
      case "emperor.choose": return t("rb.ev_choose", { player: d.emperor });
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe,
    scores: function (v) { return !!(v && v.summary && v.summary.totals); } });
})();
