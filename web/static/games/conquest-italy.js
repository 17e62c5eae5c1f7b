/* Conquest of Italy tracker (plugs into the match page through Companion.registerGame).
 * The page only collects and shows: dice, deals, odds, reinforcements and the ranking come from the
 * server (companion/web/trackers.py -> companion/games/conquest_italy.py). Every write carries the
 * seq this phone saw; a stale one gets the conflict banner and the fresh state (MatchClient). */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var GAME = "conquest-italy";
  var root = null, client = null, map = null, mapReq = null;
  var placeDraft = {}, reinforceDraft = {}, trade = [];
  var lastOddsKey = null, lastCalcKey = null, rankingSeq = -1, objectiveSeq = "", objectiveAnswer = null, ranking = null;

  var K = C.trackerKit(function () { return client; });
  var $ = K.$, base = K.base, done = K.done, send = K.send, colour = K.colour, who = K.who, opt = K.opt, fill = K.fill;
  var swatch = K.swatch;
  function post(action, data) { return K.post("conquest", action, data); }
  // a probability in the page's language; never "100.0%" for a battle that can still be lost, nor "0.0%" for
  // one that can still be won
  function pct(x, canFail, canWin) {
    if (canFail === undefined) canFail = x < 1;
    if (canWin === undefined) canWin = x > 0;
    if (canFail && x > 0.9995) return "> " + C.num(99.9, 1) + "%";
    if (canWin && x < 0.0005) return "< " + C.num(0.1, 1) + "%";
    return C.num(Math.round(x * 1000) / 10, 1) + "%";
  }
  function clear(obj) { Object.keys(obj).forEach(function (k) { delete obj[k]; }); }
  function dieFaces(list) { return (list || []).join(" "); }

  // -- reading the view ----------------------------------------------------------------------
  var st = K.st, summary = K.sm;
  function owned(p) { var s = st(), out = []; (map ? map.cities.map(function (c) { return c.name; }) : Object.keys(s.owner)).forEach(function (c) { if (s.owner[c] === p) out.push(c); }); return out; }
  function cityInfo(name) { return map ? map.byName[name] : null; }
  function alive(p) { return st().eliminated.indexOf(p) < 0; }
  // the turn as the game keeps it (summary.turn: player, step, conquests, card_owed, actions), or null when the
  // turns are not tracked (the clock has not started, or the table does not record the map)
  function turnInfo() { return summary().turn || null; }
  function allows(action) { var tn = turnInfo(); return !tn || tn.actions.indexOf(action) >= 0; }
  // nothing to place (the 125 cap, or fewer than 3 cities and no region): the server lets the combats begin at
  // once; the reinforcements stay offered only for a trade of three cards
  function nothingDue(tn) { return !!tn && tn.step === "reinforce" && tn.actions.indexOf("combat") >= 0; }
  function currentPlayer() {
    var tn = turnInfo();
    if (tn) return tn.player;
    var sel = $("ci-player");
    return sel && sel.value ? sel.value : (client.view.current_player || client.match.players[0]);
  }
  function usesClock() { return !!client.view.clock; }

  // -- map ------------------------------------------------------------------------------------------
  function loadMap() {
    if (mapReq) return mapReq;
    // (the page names the map's address with its content's hash: the browser keeps it from one load to the next)
    mapReq = C.api("GET", document.body.dataset.mapUrl || base() + "/conquest/map").then(function (m) {
      m.byName = {};
      m.cities.forEach(function (c) { m.byName[c.name] = c; });
      map = m;
      var box = $("ci-map");
      if (box) { box.innerHTML = m.svg; translateLegend(box); nameMap(box, m); } // our own server's SVG (escaped by the engine)
      return m;
    }, function (e) { mapReq = null; C.toast(C.errorText(e), true); });
    return mapReq;
  }
  // the engine draws the map's legend in English (the same SVG serves `companion map check --svg`):
  // the phone shows it in the page's language; a line it does not know stays as drawn
  var LEGEND = { "number = city value": "ci.legend_value", "B/M/T = basil/mozzarella/tomato card": "ci.legend_cards",
    "square = airport (pizza joker)": "ci.legend_airport", "grey = land border": "ci.legend_land",
    "dashed blue = sea route": "ci.legend_sea", "sets: B+M+T = 10": "ci.legend_sets",
    "+2 per traded card of a held city": "ci.legend_held" };
  var SETS = ["three_basil", "three_mozzarella", "three_tomato", "joker_two_alike", "joker_two_different", "two_jokers", "three_jokers"];
  // the drawing's title (its accessible name) is the map's own: the box's default map is named in the page's language
  function nameMap(box, m) {
    if (!m["default"]) return;
    var title = box.querySelector("svg > title");
    if (title) title.textContent = t("ci.map_default");
    // and the legend's heading, which the engine draws with the same name
    Array.prototype.forEach.call(box.querySelectorAll("svg > text"), function (node) {
      if (!node.children.length && node.textContent === m.name) node.textContent = t("ci.map_default");
    });
  }
  function translateLegend(box) {
    Array.prototype.forEach.call(box.querySelectorAll("svg > text"), function (node) {
      if (node.children.length) return; // a city's name with its card mark
      var s = node.textContent, m;
      if (LEGEND[s]) { node.textContent = t(LEGEND[s]); return; }
      if ((m = /^(.+): \+(-?\d+) \((\d+) cities\)$/.exec(s))) { node.textContent = C.plural("ci.legend_region", Number(m[3]), { name: m[1], bonus: m[2] }); return; }
      if ((m = /^([a-z ]+) = (-?\d+)$/.exec(s)) && SETS.indexOf(m[1].replace(/ /g, "_")) >= 0)
        node.textContent = t("ci.legend_set", { kind: t("ci.set_" + m[1].replace(/ /g, "_")), n: m[2] });
    });
  }
  function targets(src, attacker) {
    var info = cityInfo(src), s = st();
    if (!info) return [];
    var out = info.land.concat(info.sea);
    if (info.airport) map.airports.forEach(function (a) { if (a !== src && out.indexOf(a) < 0) out.push(a); });
    return out.filter(function (c) { return s.owner[c] && s.owner[c] !== attacker; });
  }

  // -- steppers (placement and reinforcements) ------------------------------------------------------
  function steppers(box, cities, draft, due, onchange) {
    Object.keys(draft).forEach(function (c) { if (cities.indexOf(c) < 0) delete draft[c]; });
    var total = 0;
    Object.keys(draft).forEach(function (c) { total += draft[c]; });
    C.patch(box, cities.map(function (c) {
      var n = draft[c] || 0;
      function set(v) { v = Math.max(0, v); if (v) draft[c] = v; else delete draft[c]; onchange(); }
      return el("div", { class: "trk-step" + (n ? " on" : ""), "data-city": c },
        el("span", { class: "trk-step-name" }, c, el("span", { class: "muted small", text: " · " + (st().units[c] || 0) })),
        el("button", { type: "button", class: "btn btn-small", "aria-label": "- " + c, onclick: function () { set(n - 1); } }, "−"),
        el("span", { class: "trk-step-n", text: String(n) }),
        el("button", { type: "button", class: "btn btn-small", "aria-label": "+ " + c, onclick: function () { set(n + 1); } }, "+"),
        el("button", { type: "button", class: "btn btn-small btn-ghost", title: t("ci.all_here"), onclick: function () {
          Object.keys(draft).forEach(function (k) { delete draft[k]; }); if (due > 0) draft[c] = due; onchange(); } }, "⇥"));
    }));
    return total;
  }

  // -- rendering --------------------------------------------------------------------------------------
  function renderStatus() {
    var s = st(), v = client.view, sm = summary(), text;
    if (v.ended || sm.ended) {
      var by = v.ended_by || {};
      text = s.objective_completed ? t("ci.ended_objective", { player: s.objective_completed }) :
        (by.reason === "final-roll" ? t("ci.ended_roll", { player: by.player }) : t("clock.ended"));
    } else if (s.phase === "deal") text = t("ci.phase_deal");
    else if (s.phase === "place") text = C.plural("ci.phase_place", sm.placement_due, { player: sm.next_placer });
    else if (v.awaiting_roll) text = t("ci.awaiting_roll", { player: v.awaiting_roll, n: v.final_threshold });
    else if (v.current_player || turnInfo()) text = t("clock.turn", { player: v.current_player || turnInfo().player });
    // (a viewer's page has no such button: it is told the table starts the clock)
    else if (usesClock() && v.phase === "setup") text = document.body.dataset.role === "viewer" ? t("ci.clock_not_started_viewer", { button: $("ci-clock-start").textContent }) :
      t("ci.clock_not_started", { button: $("ci-clock-start").textContent });
    else text = t("ci.phase_play");
    // this phone's player is out: said first, in words (docs/rulings.md#conquest-elimination)
    var seat = client.match && client.match.seat, out = (s.eliminations || []).filter(function (e) { return e.player === seat; })[0];
    var banner = $("ci-out");
    if (!banner) {
      banner = el("p", { class: "banner banner-warn", id: "ci-out", role: "alert", hidden: true });
      $("ci-status").parentNode.insertBefore(banner, $("ci-status"));
    }
    banner.hidden = !out || !!(v.ended || sm.ended);
    if (out) banner.textContent = t("ci.you_are_out", { player: out.player, by: out.by || "—", city: out.city || "—" });
    // a tournament round started at this table before its set-up: the clock starts by itself when it is done
    if (v.armed && (s.phase === "deal" || s.phase === "place") && !(v.ended || sm.ended))
      text += " · " + t("ci.clock_armed", { n: Math.round(v.clock.limit_seconds / 60) });
    $("ci-status").textContent = text;
  }

  function renderScores() {
    var box = document.getElementById("scores");
    if (!box) return;
    var sm = summary();
    if (!sm.players) return;
    if (ranking && client.ended()) { drawRanking(ranking, box); return; }
    var head = el("tr", null, ["scores.player", "ci.col_territories", "ci.col_units", "ci.col_regions", "ci.col_cards",
      "ci.col_reinforcements", "ci.col_conquests", "ci.col_objective"].map(function (k, i) {
      return el("th", { class: i ? "num" : null, text: t(k) }); }));
    var rows = sm.players.map(function (p) {
      return el("tr", { "data-player": p.player, class: p.eliminated ? "trk-out" : null },
        el("td", null, who(p.player), p.eliminated ? el("span", { class: "muted small", text: " " + t("ci.eliminated") }) : null),
        el("td", { class: "num", text: String(p.territories) }),
        el("td", { class: "num", text: String(p.units) }),
        el("td", { class: "num", text: p.regions.length ? p.regions.join(", ") : "0" }),
        el("td", { class: "num", text: String(p.cards) }),
        el("td", { class: "num", text: p.reinforcements === null ? (st().phase === "play" ? "" : String(p.reserve)) : String(p.reinforcements) }),
        el("td", { class: "num", text: String(p.conquests) }),
        // the card is recorded (secret), not completed: said in words, never a tick that reads as "done"
        el("td", { class: "num", "data-objective": p.objective_set ? "recorded" : "none", text: p.objective_set ? t("ci.objective_recorded") : "—" }));
    });
    C.patch(box, el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "ci-summary" }, el("thead", null, head), el("tbody", null, rows))));
  }

  // -- the deal by the cards: the table dealt the real cards; one player at a time taps the cities on theirs --
  var dealDraft = {}, dealFor = null;
  function dealWant() {
    // one card each from the last player backwards: the last players get the extra ones (deal_counts)
    var players = client.match.players, k = players.length, n = map.cities.length, out = {};
    players.slice().reverse().forEach(function (p, pos) { out[p] = Math.floor(n / k) + (pos < n % k ? 1 : 0); });
    return out;
  }
  function dealHas(p) { return Object.keys(dealDraft).filter(function (c) { return dealDraft[c] === p; }).length; }
  function dealLeft() { return map.cities.filter(function (c) { return !dealDraft[c.name]; }).map(function (c) { return c.name; }); }
  // the one player still short, when the cities left are exactly theirs: "the rest" goes to them
  function dealRest() {
    var want = dealWant(), short = client.match.players.filter(function (p) { return dealHas(p) < want[p]; });
    if (short.length !== 1) return null;
    return dealLeft().length === want[short[0]] - dealHas(short[0]) ? short[0] : null;
  }
  function renderDeal() {
    if (!map) return;
    var players = client.match.players, want = dealWant();
    if (!dealFor) dealFor = players[0];
    var tabs = $("ci-deal-players");
    tabs.textContent = "";
    players.forEach(function (p) {
      tabs.appendChild(el("button", { type: "button", class: "btn btn-small", "data-player": p, "aria-pressed": String(p === dealFor),
        onclick: function () { dealFor = p; renderDeal(); } }, swatch(p), p + " " + dealHas(p) + "/" + want[p]));
    });
    var grid = $("ci-deal-grid"), chips = [];
    map.regions.forEach(function (r) {
      chips.push(el("h4", { text: r.name }));
      r.cities.forEach(function (c) {
        var holder = dealDraft[c];
        chips.push(el("button", { type: "button", class: "btn ci-chip" + (holder === dealFor ? " mine" : holder ? " other" : ""),
          "data-city": c, "aria-pressed": String(holder === dealFor), onclick: function () { dealTap(c); } },
          el("span", { text: c }), el("span", { class: "ci-chip-who", text: holder || "" })));
      });
    });
    C.patch(grid, chips);
    var rest = dealRest(), left = dealLeft().length, b = $("ci-deal-send");
    b.textContent = rest ? C.plural("ci.deal_send_rest", left, { player: rest }) : t("ci.deal_send");
    b.disabled = !!left && !rest;
  }
  function dealTap(c) {
    var want = dealWant(), players = client.match.players;
    if (dealDraft[c] === dealFor) delete dealDraft[c];
    else if (dealHas(dealFor) < want[dealFor]) dealDraft[c] = dealFor;
    else { C.toast(C.plural("ci.deal_full", want[dealFor], { player: dealFor }), true); return; }
    if (dealHas(dealFor) === want[dealFor]) {
      // this player's cards are all in: on to the next one still short
      var next = players.filter(function (p) { return dealHas(p) < want[p]; })[0];
      if (next) dealFor = next;
    }
    renderDeal();
  }

  // -- the set-up placements: one tap per unit, or the rest of the 5 on one city; sent when complete --
  var placeFor = null;
  function placeTotal() { var n = 0; Object.keys(placeDraft).forEach(function (c) { n += placeDraft[c]; }); return n; }
  function renderPlace() {
    var sm = summary(), p = sm.next_placer, due = sm.placement_due || 0;
    // the clock waits for the set-up; only the organiser may start it before, on purpose
    $("ci-override").hidden = !(usesClock() && document.body.dataset.role === "organiser");
    var key = p + "|" + st().reserve[p];  // a new placement round: a fresh draft
    if (placeFor !== key) { clear(placeDraft); placeFor = key; }
    $("ci-place-title").textContent = C.plural("ci.place_title", due, { player: p });
    var total = placeTotal(), left = due - total, box = $("ci-place-list");
    var cities = Object.keys(placeDraft);
    $("ci-place-draft").textContent = cities.length ? cities.map(function (c) { return c + " +" + placeDraft[c]; }).join(", ") +
      " · " + C.plural("ci.place_left", left) : "";
    $("ci-place-clear").hidden = !cities.length;
    C.patch(box, owned(p).map(function (c) {
      return el("div", { class: "ci-place-row", "data-city": c },
        el("button", { type: "button", class: "btn ci-unit", "aria-label": t("ci.place_one", { city: c }), onclick: function () { placeUnits(c, 1); } },
          el("span", null, c, el("span", { class: "muted small", text: " · " + (st().units[c] || 0) })),
          el("span", { class: "ci-plus", text: placeDraft[c] ? "+" + placeDraft[c] : "+" })),
        el("button", { type: "button", class: "btn ci-rest", "aria-label": t("ci.place_rest", { city: c, n: left }), onclick: function () { placeUnits(c, left); } },
          "⇥ " + left));
    }));
  }
  function placeUnits(c, n) {
    var sm = summary(), p = sm.next_placer, due = sm.placement_due || 0;
    if (n <= 0 || client.busy) return;
    placeDraft[c] = (placeDraft[c] || 0) + n;
    var total = placeTotal();
    if (total < due) { renderPlace(); return; }
    var placements = {};
    Object.keys(placeDraft).forEach(function (k) { placements[k] = placeDraft[k]; });
    clear(placeDraft);
    send("setup.place", { player: p, placements: placements }).then(function () { renderPlace(); });
  }

  function swapText(list) {
    return list.map(function (w) { return t("ci.swap", { gives: w.gives, player: w.player, gets: w.gets, other: w.other }); }).join("; ");
  }
  function showSwaps(list) {
    var box = $("ci-swaps");
    box.hidden = !(list && list.length);
    if (list && list.length) box.textContent = t("ci.swaps_told", { swaps: swapText(list) });
  }

  function renderPlayers() {
    var v = client.view, players = client.match.players.filter(alive), tn = turnInfo();
    var sel = $("ci-player");
    // while the game keeps the turns, only its player acts: no choosing someone else
    $("ci-player-field").hidden = !!tn || !started();
    var want = tn ? tn.player : (sel.dataset.touched ? sel.value : (v.current_player || sel.value));
    fill(sel, players.map(function (p) { return { value: p, label: p }; }), want);
    var hint = $("ci-step");
    hint.hidden = !tn;
    if (tn) hint.textContent = (nothingDue(tn) ? t("ci.step_nothing_due", { player: tn.player }) :
      tn.step === "attack" ? C.plural("ci.step_attack", tn.conquests, { player: tn.player }) :
      t("ci.step_" + tn.step, { player: tn.player, n: tn.conquests })) +
      (tn.card_owed ? " · " + t("ci.card_owed") : "");
  }
  function started() { return usesClock() ? client.view.phase !== "setup" : !!st().started; }

  // only the actions the turn's step allows are offered (the server refuses the others anyway)
  function renderSteps() {
    var tn = turnInfo(), on = started() && !client.view.awaiting_roll;
    var tradable = ((st().hands || {})[currentPlayer()] || []).length >= 3;
    $("ci-reinforce").hidden = !on || !allows("reinforce") || (nothingDue(tn) && !tradable);
    $("ci-combat").hidden = !on || !allows("combat");
    $("ci-attack").hidden = $("ci-combat").hidden;
    $("ci-move").hidden = !on || !allows("move");
    $("ci-cards").hidden = !on || (tn ? !allows("card.draw") : false);
  }

  function renderTurn() {
    var v = client.view, p = currentPlayer(), clockOn = usesClock();
    $("ci-clock-controls").hidden = false;
    var started = clockOn && v.phase !== "setup";
    var running = clockOn && v.clock && v.clock.running;
    $("ci-clock-start").hidden = !clockOn || started;
    $("ci-clock-minutes").parentNode.hidden = !clockOn || started;
    // the minutes the clock was set to (a tournament's, kept when its start is undone), until typed over
    var mins = $("ci-clock-minutes");
    if (clockOn && !started && v.clock && !mins.dataset.touched) mins.value = String(Math.round(v.clock.limit_seconds / 60));
    $("ci-clock-pause").hidden = !running || v.ended;
    $("ci-clock-resume").hidden = !started || running || v.ended;
    var te = $("ci-turn-end");
    te.hidden = !started || v.ended || !!v.awaiting_roll || !allows("turn.end");
    te.textContent = t("ci.turn_end", { player: v.current_player || p });
    var fin = $("ci-final");
    fin.hidden = !v.awaiting_roll || v.ended;
    if (v.awaiting_roll) $("ci-final-text").textContent = t("ci.final_text", { player: v.awaiting_roll, n: v.final_threshold });
  }

  function renderReinforce() {
    var p = currentPlayer(), s = st();
    var hand = s.hands[p] || [];
    trade = trade.filter(function (c) { return hand.indexOf(c) >= 0; });
    var box = $("ci-trade");
    box.textContent = "";
    if (hand.length) {
      box.appendChild(el("p", { class: "small", text: t("ci.trade_hint") }));
      hand.forEach(function (c) {
        var on = trade.indexOf(c) >= 0;
        box.appendChild(el("label", { class: "check trk-card" },
          el("input", { type: "checkbox", value: c, checked: on ? "checked" : null, onchange: function (ev) {
            if (ev.target.checked) { if (trade.indexOf(c) < 0) trade.push(c); } else trade = trade.filter(function (x) { return x !== c; });
            lastCalcKey = null; renderReinforce(); } }),
          cardLabel(c)));
      });
    }
    // a phone that shows no reinforcements now (another step of the turn) asks the box nothing: they are
    // asked for again when the step comes back
    if ($("ci-reinforce").hidden) { lastCalcKey = null; return; }
    var key = p + "|" + client.seq + "|" + trade.join(",");
    if (key === lastCalcKey) return;
    lastCalcKey = key;
    // the calculation without a trade comes with the view (the box's own, as GET .../conquest/reinforcements
    // answers): drawn at once; a trade of three cards is asked for
    var row = trade.length === 3 ? null : (summary().players || []).filter(function (x) { return x.player === p; })[0];
    if (row && row.reinforcements_now) { drawCalc(p, row.reinforcements_now); return; }
    // until the box answers for this event, the list on screen is the last event's (another player's
    // cities, another count): its taps would be lost when the answer redraws it, so they wait
    Array.prototype.forEach.call($("ci-reinforce-list").querySelectorAll("button"), function (b) { b.disabled = true; });
    $("ci-reinforce-send").disabled = true;
    var q = "?player=" + encodeURIComponent(p) + (trade.length === 3 ? trade.map(function (c) { return "&trade=" + encodeURIComponent(c); }).join("") : "");
    C.api("GET", base() + "/conquest/reinforcements" + q).then(function (r) { drawCalc(p, r); },
      function (e) { $("ci-reinforce-calc").textContent = C.errorText(e); });
  }
  // what player p receives (r: the box's calculation) and the steppers to place it
  function drawCalc(p, r) {
    var parts = [C.plural("ci.calc_base", r.territories, { base: r.base })];
    r.regions.forEach(function (g) { parts.push(g.name + " +" + g.bonus); });
    if (r.trade) parts.push(t("ci.calc_trade", { value: r.trade.value, bonus: r.trade.held_bonus }));
    C.patch($("ci-reinforce-calc"), el("p", null, el("strong", { text: C.plural("ci.calc_total", r.placeable) }), " = " + parts.join(" + ") +
      (r.not_placed ? " · " + C.plural("ci.calc_cap", r.not_placed) : "")));
    var due = r.placeable;
    var draw = function () {
      var total = steppers($("ci-reinforce-list"), owned(p), reinforceDraft, due, draw);
      var b = $("ci-reinforce-send");
      b.textContent = t("ci.reinforce_send", { n: total, due: due });
      b.disabled = total !== due;
      b.dataset.due = String(due);
    };
    draw();
  }

  function cardLabel(c) {
    if (c.indexOf("joker:") === 0) return "★ " + t("ci.joker") + " (" + c.slice(6) + ")";
    var info = cityInfo(c);
    return c + (info ? " · " + t("ci.symbol_" + info.card) : "");
  }

  function renderCombat() {
    var p = currentPlayer(), s = st();
    var from = $("ci-from"), to = $("ci-to");
    var srcs = owned(p).filter(function (c) { return s.units[c] >= 2 && targets(c, p).length; });
    // nothing is chosen for the player: both lists start on "choose", and a choice is kept only while it is
    // still an attack (after a conquest the city is the player's own: the player picks the next attack)
    fill(from, [{ value: "", label: t("ci.choose") }].concat(srcs.map(function (c) { return { value: c, label: c + " (" + s.units[c] + ")" }; })));
    var tg = from.value ? targets(from.value, p) : [];
    // a closed list shows its choice in one line, cut where it is longer: the city and its units there, whose
    // city it is under it (a long name wraps)
    fill(to, [{ value: "", label: t("ci.choose") }].concat(tg.map(function (c) { return { value: c, label: c + " (" + s.units[c] + ")" }; })));
    $("ci-to-owner").textContent = to.value ? t("ci.to_owner", { player: s.owner[to.value] }) : "";
    $("ci-attack").disabled = !from.value || !to.value;
    $("ci-attack").textContent = from.value && to.value ? t("ci.attack_pair", { from: from.value, to: to.value }) : t("ci.attack");
    renderTargets(p, from.value, to.value);
    var maxDice = from.value ? Math.min(3, s.units[from.value] - 1) : 0;
    var nd = $("ci-ndice");
    var wanted = nd.dataset.touched ? nd.value : String(maxDice);
    var opts = [];
    for (var i = maxDice; i >= 1; i--) opts.push({ value: i, label: String(i) });
    fill(nd, opts, wanted);
    $("ci-move-in").placeholder = nd.value || "";  // empty: as many units move in as dice attacked
    var defend = to.value ? Math.min(3, s.units[to.value]) : 0;
    tableDice($("ci-adice"), parseInt(nd.value, 10) || 0, "ci-a");
    tableDice($("ci-ddice"), defend, "ci-d");
    smartDefault();
    var table = diceMode() === "table";
    $("ci-table-dice").hidden = !table;
    odds(from.value, to.value);
    renderLastCombat();
  }
  // the table's smart dice (js/dice-live.js): a third way to roll, the one chosen when the match's dice are smart
  var Dice = function () { return window.CompanionDice; };
  function diceMode() { return document.querySelector("input[name=ci-dice-mode]:checked").value; }
  function smartDefault() {
    var smart = !!(Dice() && Dice().smart());
    $("ci-dice-smart-label").hidden = !smart;
    var box = document.querySelector("input[name=ci-dice-mode][value=smart]");
    if (smart && !box.dataset.chosen) { box.dataset.chosen = "1"; box.checked = true; }
    if (!smart && box.checked) document.querySelector("input[name=ci-dice-mode][value=pi]").checked = true;
    $("ci-final-pi").textContent = t(smart ? "ci.final_dice" : "ci.final_pi");
  }
  // the roll the dice could not finish: the faces read so far go in the fields, the table types the rest
  function byHand(w) {
    if (!w || (w.state !== "timeout" && w.state !== "refused")) return;
    if (w.what === "combat") {
      document.querySelector("input[name=ci-dice-mode][value=table]").checked = true;
      renderCombat();
      var fillIn = function (box, faces) {
        Array.prototype.forEach.call(box.querySelectorAll("input"), function (i, k) { i.value = faces && faces[k] ? faces[k] : ""; });
      };
      fillIn($("ci-adice"), (w.faces || {}).attack);
      fillIn($("ci-ddice"), (w.faces || {}).defend);
    } else if (w.what === "final-roll") {
      var f = (w.faces || {}).any || [];
      $("ci-final-d1").value = f[0] || ""; $("ci-final-d2").value = f[1] || "";
    }
  }
  // every attack the player can make, as big buttons (most units against fewest first): one tap chooses it
  function renderTargets(p, src, dst) {
    var s = st(), box = $("ci-targets"), pairs = [];
    owned(p).forEach(function (c) {
      if (s.units[c] < 2) return;
      targets(c, p).forEach(function (d) { pairs.push([c, d, s.units[c] - s.units[d]]); });
    });
    pairs.sort(function (a, b) { return b[2] - a[2] || (a[0] + a[1] < b[0] + b[1] ? -1 : 1); });
    C.patch(box, pairs.map(function (x) {
      return el("button", { type: "button", class: "btn", "data-from": x[0], "data-to": x[1], "aria-pressed": String(x[0] === src && x[1] === dst),
        onclick: function () {
          $("ci-from").value = x[0]; $("ci-ndice").dataset.touched = ""; renderCombat();
          $("ci-to").value = x[1]; renderCombat();
        } }, el("span", { text: x[0] + " " + s.units[x[0]] + " → " + x[1] + " " + s.units[x[1]] }), el("span", { class: "small", text: s.owner[x[1]] }));
    }));
  }
  function tableDice(box, n, prefix) {
    if (box.children.length === n) return;
    var old = Array.prototype.map.call(box.children, function (i) { return i.value; });
    box.textContent = "";
    for (var i = 0; i < n; i++) {
      box.appendChild(el("input", { type: "number", class: "trk-die", min: "1", max: "6", inputmode: "numeric", id: prefix + i,
        "aria-label": t("ci.die") + " " + (i + 1), value: old[i] || "" }));
    }
  }
  function odds(src, dst) {
    var box = $("ci-odds");
    if (!src || !dst) { box.textContent = ""; box.style.minHeight = ""; delete box.dataset.pair; lastOddsKey = null; return; }
    var key = src + "|" + dst + "|" + client.seq;
    if (key === lastOddsKey) return;
    lastOddsKey = key;
    // a new attack's line is written at once, its units known and dashes where its figures will be, and keeps
    // that height: the dice and the Attack button under it do not move when the box answers (a new event on
    // the same attack leaves the last figures until the new ones come)
    var s = st(), pair = src + "|" + dst + "|" + s.units[src] + "|" + s.units[dst];
    if (box.dataset.pair !== pair) {
      box.dataset.pair = pair;
      box.textContent = t("ci.odds", { p: "––––%", a: s.units[src], d: s.units[dst], left: "–––", def: "–––" });
      box.classList.add("pending");
      delete box.dataset.p;
      box.style.minHeight = "";
      box.style.minHeight = box.offsetHeight + "px";
    }
    C.api("GET", base() + "/conquest/odds?from=" + encodeURIComponent(src) + "&to=" + encodeURIComponent(dst)).then(function (o) {
      if (key !== lastOddsKey) return;
      box.classList.remove("pending");
      box.textContent = t("ci.odds", { p: pct(o.p_conquer, o.can_fail, o.can_win), a: o.attacker, d: o.defender,
        left: C.num(o.expected_attacker_remaining, 1), def: C.num(o.expected_defender_remaining, 1) });
      box.dataset.p = String(o.p_conquer);
    }, function (e) { if (key === lastOddsKey) { box.classList.remove("pending"); box.textContent = C.errorText(e); } });
  }
  function renderLastCombat() {
    var lc = st().last_combat, box = $("ci-last-combat");
    if (!lc) { box.textContent = ""; return; }
    C.patch(box, [el("p", null, el("strong", { text: lc.from + " → " + lc.to + ": " }),
      el("span", { class: "trk-dice", text: dieFaces(lc.attacker_dice) }), " " + t("ci.vs") + " ",
      el("span", { class: "trk-dice", text: dieFaces(lc.defender_dice) })),
      el("p", { text: t("ci.losses", { attacker: lc.attacker, a: lc.attacker_losses, defender: lc.defender, d: lc.defender_losses }) +
        (lc.conquered ? " · " + C.plural("ci.conquered", lc.moved, { city: lc.to }) : "") })]);
  }

  function renderMove() {
    var p = currentPlayer(), s = st();
    var from = $("ci-move-from"), to = $("ci-move-to");
    var srcs = owned(p).filter(function (c) { return s.units[c] >= 2; });
    fill(from, srcs.map(function (c) { return { value: c, label: c + " (" + s.units[c] + ")" }; }));
    var info = cityInfo(from.value);
    var dsts = info ? info.land.concat(info.sea).filter(function (c) { return s.owner[c] === p; }) : [];
    fill(to, dsts.map(function (c) { return { value: c, label: c + " (" + s.units[c] + ")" }; }));
    $("ci-move-units").max = from.value ? String(s.units[from.value] - 1) : "1";
    $("ci-move-send").disabled = !from.value || !to.value;
  }

  function renderCards() {
    var p = currentPlayer(), s = st();
    var hand = s.hands[p] || [];
    var row = (summary().players || []).filter(function (r) { return r.player === p; })[0];
    // another player's cards are theirs: this phone knows how many, not which (docs/rulings.md)
    $("ci-hand").textContent = t("ci.hand", { player: p }) + ": " + (s.hands[p] === undefined && s.hands_hidden ?
      C.plural("ci.hand_hidden", row ? row.cards : 0) : hand.length ? hand.map(cardLabel).join(", ") : "—");
    var taken = {};
    Object.keys(s.hands).forEach(function (q) { s.hands[q].forEach(function (c) { taken[c] = q; }); });
    // traded cards went under the deck: they come up only once the cards above them are drawn
    var under = (s.under || []).filter(function (c) { return !taken[c]; });
    var deck = map.cards.filter(function (c) { return !taken[c] && under.indexOf(c) < 0; });
    if (!deck.length && under.length) deck = [under[0]];
    fill($("ci-card"), deck.map(function (c) { return { value: c, label: cardLabel(c) }; }));
  }

  function renderFix() {
    var s = st();
    // a hand correction of the map is outside the rules: the organiser's alone (the server refuses it too)
    $("ci-fix").hidden = document.body.dataset.role !== "organiser";
    var city = $("ci-fix-city");
    fill(city, map.cities.map(function (c) { return { value: c.name, label: c.name + " (" + (s.owner[c.name] || "—") + ", " + (s.units[c.name] || 0) + ")" }; }));
    fill($("ci-fix-player"), client.match.players.map(function (p) { return { value: p, label: p }; }),
      $("ci-fix-player").dataset.touched ? undefined : s.owner[city.value]);
  }

  function renderTerritories() {
    var s = st(), box = $("ci-terr-table");
    if (!map) { box.textContent = ""; return; }
    var rows = [];
    map.regions.forEach(function (r) {
      rows.push(el("tr", { class: "trk-group" }, el("th", { colspan: "4", text: r.name + " · +" + r.bonus })));
      r.cities.forEach(function (c) {
        var p = s.owner[c], info = cityInfo(c);
        rows.push(el("tr", { "data-city": c }, el("td", { text: c }),
          el("td", { class: "small muted", text: t("ci.symbol_" + info.card) + " · " + info.value }),
          el("td", null, p ? who(p) : "—"), el("td", { class: "num", text: s.units[c] ? String(s.units[c]) : "" })));
      });
    });
    C.patch(box, el("table", { class: "scores trk-table" }, el("tbody", null, rows)));
    // colour the SVG's city marks (drawn in the map's city order) by holder (a mark whose holder is the same
    // is left alone)
    var marks = document.querySelectorAll("#ci-map svg circle.city, #ci-map svg rect.airport");
    if (marks.length === map.cities.length) {
      map.cities.forEach(function (c, i) {
        var p = s.owner[c.name], stroke = p ? (colour(p) || "#000") : "#222", width = p ? "5" : "1";
        if (marks[i].getAttribute("stroke") !== stroke) marks[i].setAttribute("stroke", stroke);
        if (marks[i].getAttribute("stroke-width") !== width) marks[i].setAttribute("stroke-width", width);
      });
    }
  }

  function renderSecret() {
    var box = $("ci-secret-body"), seat = client.match.seat, s = st();
    // the match has ended: no objective to enter any more (one recorded stays shown, now public)
    var recorded = seat && ((summary().players || []).filter(function (r) { return r.player === seat; })[0] || {}).objective_set;
    $("ci-secret").hidden = !!(client.ended() && !recorded);
    if (client.ended() && !recorded) return;
    if (!seat) {
      box.textContent = "";
      box.appendChild(el("p", { class: "muted", text: t("ci.secret_need_seat") }));
      return;
    }
    // whether the seat has an objective is public (the summary); its cities come with this phone's own view,
    // or from the server for this seat when the view at hand has none (an organiser's phone, or a live
    // update rendered for another seat)
    var row = (summary().players || []).filter(function (r) { return r.player === seat; })[0];
    if (!row || !row.objective_set) {
      if (box.dataset.form === seat) return; // keep the ticks being chosen
      box.dataset.form = seat;
      box.textContent = "";
      if (!map) return;
      var details = el("details", { class: "trk-details", id: "ci-obj-form" }, el("summary", null, t("ci.secret_enter")));
      box.appendChild(details);
      details.appendChild(el("p", { class: "small", text: t("ci.secret_choose", { player: seat }) }));
      objectiveForm(details, seat, false);
      return;
    }
    box.dataset.form = "";
    var mine = (s.objectives || {})[seat], progress = s.objective_progress, own = !!(mine && progress);
    // The cities and their progress come with this phone's own view. The server alone says whether this phone
    // may replace an objective recorded before it sat here (docs/rulings.md#seats): that changes only with
    // this seat's objective, the seat, the end, or the seat's confirmation. So it is asked when one of the
    // first three changed, and after each event only while the answer said "once the seat is confirmed"
    // (not after every event by every phone). A view without this seat's cities (an organiser's phone) asks
    // at each seq, as the cities' progress then comes from the server.
    var key = seat + "|" + (own ? mine.join(",") : "seq " + client.seq) + "|" + !!client.ended();
    var o = objectiveAnswer && objectiveAnswer.key === key ? objectiveAnswer.o : null;
    if (o && o.may_reset_once_confirmed && objectiveAnswer.seq !== client.seq) o = null;
    function draw(o) {
      if (own) drawSecret(box, seat, mine, progress, o ? o.may_reset : undefined);
      else if (o) drawSecret(box, seat, o.objective, o.progress, o.may_reset);
    }
    if (o) { draw(o); return; }  // (drawn again as it was: a reload's second drawing keeps the offer)
    draw(objectiveAnswer && objectiveAnswer.key === key ? objectiveAnswer.o : null);
    var asked = key + "|" + client.seq;
    if (objectiveSeq === asked) return;
    objectiveSeq = asked;
    var seq = client.seq;
    C.api("GET", base() + "/conquest/objective").then(function (a) {
      if (a.player !== client.match.seat) return;
      objectiveAnswer = { key: key, seq: seq, o: a };
      if (client.seq === seq && client.match.seat === seat) renderSecret();
    }, function () {});
  }
  // the ticks of an objective's cities, sent as objective.set (``replace``: the one recorded before)
  function objectiveForm(box, seat, replace) {
    var grid = el("div", { class: "trk-grid", id: replace ? "ci-obj-reset-grid" : "ci-obj-grid" });
    map.cities.forEach(function (c) {
      grid.appendChild(el("label", { class: "check trk-card" }, el("input", { type: "checkbox", value: c.name }), c.name + " (" + c.value + ")"));
    });
    box.appendChild(grid);
    box.appendChild(el("button", { type: "button", class: "btn btn-primary", id: replace ? "ci-obj-reset-send" : "ci-obj-send", onclick: function () {
      var cities = Array.prototype.filter.call(grid.querySelectorAll("input"), function (i) { return i.checked; }).map(function (i) { return i.value; });
      if (!cities.length) { C.toast(t("ci.secret_none"), true); return; }
      var data = { player: seat, cities: cities };
      if (replace) data.replace = true;
      send("objective.set", data);
    } }, t("ci.secret_save")));
  }
  function drawSecret(box, seat, cities, progress, mayReset) {
    var open = document.getElementById("ci-obj-reset");
    if (open && open.open && mayReset !== false) return; // keep the ticks being chosen
    box.textContent = "";
    if (!cities || !progress) return;
    if (mayReset && map) {
      // a guest on this seat recorded it before this phone sat: the seat is confirmed, so record the real one
      var reset = el("details", { class: "trk-details", id: "ci-obj-reset" },
        el("summary", null, t("ci.secret_reset")));
      reset.appendChild(el("p", { class: "small", text: t("ci.secret_reset_note", { player: seat }) }));
      objectiveForm(reset, seat, true);
      box.appendChild(el("p", { class: "banner banner-warn", id: "ci-obj-before", text: t("ci.secret_before", { player: seat }) }));
      box.appendChild(reset);
    }
    box.appendChild(el("p", { class: "small muted", text: t("ci.secret_private", { player: seat }) }));
    box.appendChild(el("ul", { class: "trk-objective", id: "ci-objective" }, cities.map(function (c) {
      var held = progress.held.indexOf(c) >= 0;
      return el("li", { class: held ? "held" : null, "data-city": c }, (held ? "✓ " : "○ ") + c);
    })));
    box.appendChild(el("p", { text: C.plural("ci.secret_progress", cities.length, { held: progress.held.length, points: C.plural("tv.points", progress.points) }) }));
    if (progress.complete && !client.ended()) {
      box.appendChild(el("p", { class: "banner banner-warn", id: "ci-objective-done", role: "alert", text: t("ci.secret_complete") }));
      if (st().phase === "play") {
        box.appendChild(el("button", { type: "button", class: "btn btn-primary btn-big", id: "ci-objective-declare", onclick: function () {
          // it ends the match at once for the whole table: asked first
          if (!window.confirm(t("ci.declare_confirm", { player: seat }))) return;
          send("objective.completed", { player: seat });
        } }, t("ci.secret_declare")));
      }
    }
  }

  function renderRanking() {
    // the match page has its ranking section; the TV page (no tracker) shows the ranking in its scores
    var sec = $("ci-ranking"), ended = client.ended();
    if (sec) sec.hidden = !ended;
    if (!ended || rankingSeq === client.seq) return;
    rankingSeq = client.seq;
    C.api("GET", base() + "/conquest/ranking").then(function (r) {
      ranking = r; drawRanking(r, $("ci-ranking-body")); drawRanking(r, document.getElementById("scores"));
    }, function (e) { var b = $("ci-ranking-body"); if (b) b.textContent = C.errorText(e); });
  }
  function drawRanking(r, box) {
    if (!box) return;
    box.textContent = "";
    var winners = r.players.filter(function (p) { return p.place === 1; }).map(function (p) { return p.player; });
    if (winners.length) box.appendChild(el("p", { class: "trk-winner", "data-winners": winners.join("|"),
      text: C.plural("ci.winner", winners.length, { players: winners.join(", ") }) }));
    var head = el("tr", null, ["ci.col_place", "scores.player", "ci.col_obj_points", "ci.col_other_points", "ci.col_objective_cities"].map(function (k, i) {
      return el("th", { class: i > 1 ? "num" : null, text: t(k) }); }));
    var rows = r.players.map(function (p) {
      return el("tr", { "data-player": p.player, class: p.place === 1 ? "leader" : null },
        el("td", { class: "trk-place", text: String(p.place) }),
        el("td", null, who(p.player), p.objective ? el("span", { class: "trk-badge", text: t("ci.objective_done") }) : null,
          p.eliminated ? el("span", { class: "muted small", text: " " + t("ci.eliminated") }) : null),
        el("td", { class: "num score", text: String(p.objective_points) }),
        el("td", { class: "num", text: String(p.other_points) }),
        el("td", { class: "num", text: p.objective_cities_held + "/" + p.objective_cities }));
    });
    box.appendChild(el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-ranking trk-compact" }, el("thead", null, head), el("tbody", null, rows))));
    if (r.note) box.appendChild(el("p", { class: "small muted", text: r.note }));
  }

  var knownOut = null;  // the eliminations this page has said (a new one is said once, as it happens)
  function sayEliminations(s) {
    var list = s.eliminations || [];
    if (knownOut !== null) list.forEach(function (e) {
      if (knownOut.indexOf(e.player + "|" + e.seq) < 0)
        C.toast(t("ci.is_eliminated_by", { player: e.player, by: e.by || "—", city: e.city || "—" }), true);
    });
    knownOut = list.map(function (e) { return e.player + "|" + e.seq; });
  }
  function update(view, cl) {
    client = cl;
    if (!view || !view.state) return;
    if (root) sayEliminations(view.state);
    renderScores();
    if (!root) { renderRanking(); return; } // the display page shows scores (the ranking at the end) only
    if (!map) { loadMap().then(function () { if (client.view) update(client.view, client); }); }
    var s = view.state, ended = view.ended || (view.summary || {}).ended;
    renderStatus();
    $("ci-deal").hidden = s.phase !== "deal" || ended;
    $("ci-place").hidden = s.phase !== "place" || ended;
    $("ci-play").hidden = s.phase !== "play" || ended;
    if (s.phase !== "play" || ended) { $("ci-clock-controls").hidden = true; $("ci-final").hidden = true; }
    if (map) {
      renderSecret();
      if (s.phase === "deal") renderDeal();
      if (s.phase === "place") renderPlace();
      if (s.phase === "play" && !ended) {
        renderPlayers(); renderTurn(); renderSteps(); renderReinforce(); renderCombat(); renderMove(); renderCards(); renderFix();
      }
      renderTerritories();
    }
    ownSeat(s, ended);
    renderRanking();
  }
  // A match set to "each phone plays its own seat" (docs/rulings.md#playing-for-another-seat): on a seated
  // player's phone the controls that act for another seat (the placement due, the turn's steps, the final
  // roll) are disabled where they are (nothing moves), the reason said in words on the line above them; they
  // are live again when the organiser allows helping (the stream's `phones`). The organiser's phone keeps them.
  var GUARDED = ["ci-place", "ci-reinforce", "ci-combat", "ci-thumb", "ci-move", "ci-cards", "ci-final"];
  function ownSeat(s, ended) {
    var m = client.match || {}, seat = m.seat, v = client.view, p = null;
    if (document.body.dataset.role === "player" && seat && (m.options || {}).phones === "own-seat" && !ended) {
      if (s.phase === "place") p = summary().next_placer;
      else if (s.phase === "play" && started()) p = v.awaiting_roll || currentPlayer();
    }
    var other = p && p !== seat ? p : null, lifted = false;
    GUARDED.forEach(function (id) {
      var box = $(id);
      if (!box) return;
      Array.prototype.forEach.call(box.querySelectorAll("button, input, select"), function (c) {
        if (other && !c.disabled) { c.disabled = true; c.dataset.ownSeat = "1"; }
        else if (!other && c.dataset.ownSeat) { delete c.dataset.ownSeat; c.disabled = false; lifted = true; }
      });
    });
    var why = other ? " · " + t("ci.own_seat_other", { player: other }) : "";
    if (why && s.phase === "place") $("ci-place-title").textContent += why;
    if (why && s.phase === "play") { var hint = $("ci-step"); hint.textContent += why; hint.hidden = false; }
    if (why && v.awaiting_roll) $("ci-final-text").textContent += why;
    if (lifted) update(client.view, client);  // each control's own state again (a choice still to make, a sum)
  }
  document.addEventListener("companion:phones", function () { if (client && client.view && root) update(client.view, client); });

  function mount(r, cl) {
    root = r; client = cl;
    // the buttons used every turn (start, pause, end of turn, the final roll) live under the clock,
    // on the phone's first screen
    var panel = document.getElementById("clock-panel");
    // on the phone's first screen (above the line offering the sound, js/sounds.js: a button does not move for it)
    var so = document.getElementById("sound-offer");
    if (panel) { panel.insertBefore($("ci-clock-controls"), so); panel.insertBefore($("ci-final"), so); }
    // the end of the turn goes beside the attack, in the thumb bar at the bottom of a phone's screen
    $("ci-thumb").appendChild($("ci-attack"));
    $("ci-thumb").appendChild($("ci-turn-end"));
    $("ci-deal-pi").addEventListener("click", function () { post("deal", {}); });
    $("ci-deal-send").addEventListener("click", function () {
      var rest = dealRest(), owner = {};
      if (rest) dealLeft().forEach(function (c) { dealDraft[c] = rest; });
      var missing = dealLeft().length;
      if (missing) { C.toast(C.plural("ci.deal_missing", missing), true); return; }
      Object.keys(dealDraft).forEach(function (c) { owner[c] = dealDraft[c]; });
      // the Pi keeps the table's cards and fixes the majority rule with the book's swaps, which it tells
      post("deal", { owner: owner }).then(function (m) { if (m) { clear(dealDraft); showSwaps(m.swaps); } else renderDeal(); });
    });
    $("ci-place-clear").addEventListener("click", function () { clear(placeDraft); renderPlace(); });
    $("ci-player").addEventListener("change", function (ev) { ev.target.dataset.touched = "1"; clear(reinforceDraft); trade = []; lastCalcKey = null; update(client.view, client); });
    $("ci-clock-minutes").addEventListener("input", function (ev) { ev.target.dataset.touched = "1"; });
    $("ci-clock-start").addEventListener("click", function () {
      var n = parseInt($("ci-clock-minutes").value, 10);
      send("clock.start", isNaN(n) ? {} : { limit_minutes: n });
    });
    $("ci-override-send").addEventListener("click", function () {
      if (window.confirm(t("ci.override_confirm"))) send("clock.start", { override: true });
    });
    $("ci-clock-pause").addEventListener("click", function () { send("clock.pause", {}); });
    $("ci-clock-resume").addEventListener("click", function () { send("clock.resume", {}); });
    $("ci-turn-end").addEventListener("click", function () {
      var p = client.view.current_player || currentPlayer();
      post("turn-end", { player: p }).then(function (m) { if (m) { $("ci-player").dataset.touched = ""; clear(reinforceDraft); trade = []; } });
    });
    $("ci-final-pi").addEventListener("click", function () {
      if (Dice() && Dice().smart()) {
        Dice().roll("final-roll", { player: client.view.awaiting_roll }).then(null, function (e) { C.toast(C.errorText(e), true); });
        return;
      }
      done(client._write(base() + "/final-roll", { expected_seq: client.seq, player: client.view.awaiting_roll }));
    });
    if (Dice()) {
      Dice().on(function (w) { byHand(w); if (client.view && (!w || w.state !== "waiting")) update(client.view, client); });
      Dice().ready.then(function () { if (client.view) update(client.view, client); });
    }
    $("ci-final-send").addEventListener("click", function () {
      var a = parseInt($("ci-final-d1").value, 10), b = parseInt($("ci-final-d2").value, 10);
      if (!(a >= 1 && a <= 6 && b >= 1 && b <= 6)) { C.toast(t("ci.bad_dice"), true); return; }
      send("final.roll", { player: client.view.awaiting_roll, dice: [a, b] });
    });
    $("ci-reinforce-send").addEventListener("click", function () {
      var placements = {};
      Object.keys(reinforceDraft).forEach(function (c) { placements[c] = reinforceDraft[c]; });
      var data = { player: currentPlayer(), placements: placements };
      if (trade.length === 3) data.trade = trade.slice();
      send("reinforce", data).then(function (m) { if (m) { clear(reinforceDraft); trade = []; } });
    });
    $("ci-from").addEventListener("change", function () { $("ci-ndice").dataset.touched = ""; renderCombat(); });
    $("ci-to").addEventListener("change", renderCombat);
    $("ci-ndice").addEventListener("change", function (ev) { ev.target.dataset.touched = "1"; renderCombat(); });
    Array.prototype.forEach.call(document.querySelectorAll("input[name=ci-dice-mode]"), function (r) { r.addEventListener("change", renderCombat); });
    $("ci-attack").addEventListener("click", function () {
      var data = { player: currentPlayer(), from: $("ci-from").value, to: $("ci-to").value };
      var mv = parseInt($("ci-move-in").value, 10);
      if (mv >= 1) data.move = mv;
      if (diceMode() === "smart") {
        data.dice = parseInt($("ci-ndice").value, 10);
        Dice().roll("combat", data).then(null, function (e) { C.toast(C.errorText(e), true); });
        return;
      }
      if (diceMode() === "table") {
        var read = function (box) { return Array.prototype.map.call(box.querySelectorAll("input"), function (i) { return parseInt(i.value, 10); }); };
        var a = read($("ci-adice")), d = read($("ci-ddice"));
        if (a.concat(d).some(function (x) { return !(x >= 1 && x <= 6); })) { C.toast(t("ci.bad_dice"), true); return; }
        data.attack_dice = a; data.defend_dice = d;
      } else {
        data.dice = parseInt($("ci-ndice").value, 10);
      }
      post("combat", data).then(function (m) {
        if (m) Array.prototype.forEach.call(document.querySelectorAll("#ci-adice input, #ci-ddice input"), function (i) { i.value = ""; });
      });
    });
    $("ci-move-from").addEventListener("change", renderMove);
    $("ci-move-send").addEventListener("click", function () {
      send("move", { player: currentPlayer(), from: $("ci-move-from").value, to: $("ci-move-to").value,
        units: parseInt($("ci-move-units").value, 10) || 0 });
    });
    $("ci-card-send").addEventListener("click", function () { send("card.draw", { player: currentPlayer(), card: $("ci-card").value }); });
    $("ci-fix-city").addEventListener("change", function () { $("ci-fix-player").dataset.touched = ""; renderFix(); });
    $("ci-fix-player").addEventListener("change", function (ev) { ev.target.dataset.touched = "1"; });
    $("ci-fix-send").addEventListener("click", function () {
      send("territory.set", { city: $("ci-fix-city").value, player: $("ci-fix-player").value, units: parseInt($("ci-fix-units").value, 10) || 0 });
    });
    loadMap();
  }

  // " · Carla is eliminated" after the event that took a player's last city (the state's eliminations)
  function outBy(seq) {
    var s = client && client.view && client.view.state;
    return ((s && s.eliminations) || []).filter(function (x) { return x.seq === seq; })
      .map(function (x) { return " · " + t("ci.is_eliminated", { player: x.player }); }).join("");
  }
  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      case "setup.deal": return t("ci.ev_deal") + (d.swaps && d.swaps.length ? " · " + t("ci.swaps_told", { swaps: swapText(d.swaps) }) : "");
      case "setup.place": case "reinforce":
        return t(e.type === "reinforce" ? "ci.ev_reinforce" : "ci.ev_place", { player: d.player }) + ": " +
          Object.keys(d.placements || {}).map(function (c) { return c + " +" + d.placements[c]; }).join(", ") +
          (d.trade ? " · " + t("ci.ev_trade", { cards: d.trade.join(", ") }) : "");
      case "combat": return t("ci.ev_combat", { from: d.from, to: d.to, a: dieFaces(d.attack_dice), d: dieFaces(d.defend_dice) }) +
        (d.rolled_by === "dice" ? " · " + t("dice.ev_read") : "") + outBy(e.seq);
      case "move": return C.plural("ci.ev_move", d.units, { from: d.from, to: d.to });
      case "card.draw": return d.card === undefined ? t("ci.ev_card_hidden", { player: d.player }) : t("ci.ev_card", { player: d.player, card: d.card });
      case "territory.set": return t("ci.ev_fix", { city: d.city, player: d.player, n: d.units });
      case "objective.set": return t("ci.ev_objective_set", { player: d.player || "?" });
      case "objective.completed": return t("ci.ev_objective_done", { player: d.player });
      case "turn.end": return C.plural("ci.ev_turn_end", d.conquered === undefined ? "?" : d.conquered, { player: d.player }) +
        (d.card ? " · " + t("ci.ev_turn_card", { card: d.card }) : Array.isArray(e.hidden) && e.hidden.indexOf("card") >= 0 ? " · " + t("ci.ev_turn_card_hidden") : "");
      case "final.roll": return t("ci.ev_final_roll", { player: d.player, dice: dieFaces(d.dice) }) +
        (d.rolled_by === "dice" ? " · " + t("dice.ev_read") : "");
      case "clock.start": return t(d.override ? "ci.ev_clock_start_override" : "ci.ev_clock_start", { n: d.limit_minutes || 120 });
      case "clock.arm": return t("ci.ev_clock_arm", { n: d.limit_minutes || 120 });
      case "undo": return e.undid ? t("ci.ev_undo_of", { what: C.describeEvent(GAME, e.undid) }) : t("ci.ev_undo");
      case "clock.pause": return t("ci.ev_clock_pause") + (d.reason ? " (" + C.pauseReason(d.reason) + ")" : "");
      case "clock.resume": return t("ci.ev_clock_resume");
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe,
    scores: function (v) { return !!(v && v.state && v.summary && v.summary.players); } });
})();
