/* Richelieu tracker (plugs into the match page through Companion.registerGame).
 * The tracks (prestige, income, military, money, jewels), the Cardinal and the actions of the player
 * whose turn it is (1 or 2, as the engine says); the intrigue-resolution form (two cards, slots left to
 * right: agents, Grey Eminence, Queen; rewards), previewed and applied by the engine; corrections; the
 * end-game scoring with its breakdown. Numbers come from companion/games/richelieu.py. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var GAME = "richelieu";
  var root = null, client = null;
  var TRACKS = ["prestige", "income", "military", "money", "jewels"];
  var FACTIONS = ["england", "france", "habsburg", "protestants"];
  var REWARDS = ["prestige", "money", "income", "military", "place_agent", "corruption", "eminence", "queen"];
  var VALUES = [3, 2, 1, -2];

  var K = C.trackerKit(function () { return client; });
  var $ = K.$, base = K.base, done = K.done, send = K.send, colour = K.colour, who = K.who, opt = K.opt, fill = K.fill;
  var st = K.st, sm = K.sm;
  function fmtValue(v) { return v < 0 ? "−" + Math.abs(v) : String(v); }

  // -- end-game scoring (provisional until the end) in the scores box ---------------------------------------
  function drawStandings(box, id) {
    var standings = sm().standings;
    if (!box || !standings) return;
    box.textContent = "";
    var cols = ["prestige", "income", "military", "richelieu_sheets", "opposing_sets", "jewels"];
    var head = el("tr", null, el("th", { text: t("rl.col_place") }), el("th", { text: t("scores.player") }),
      cols.map(function (k) { return el("th", { class: "num", text: t("rl.col_" + k) }); }),
      el("th", { class: "num", text: t("scores.total") }), el("th", { class: "num", text: t("rl.col_money") }));
    var rows = standings.players.map(function (p) {
      var b = p.breakdown, sets = 0;
      Object.keys(b.opposing_sets).forEach(function (f) { sets += b.opposing_sets[f]; });
      return el("tr", { "data-player": p.player, class: p.place === 1 ? "leader" : null },
        el("td", { class: "trk-place", text: String(p.place) }),
        el("td", null, who(p.player)),
        cols.map(function (k) {
          var v = k === "opposing_sets" ? sets : b[k];
          var title = k === "opposing_sets" ? FACTIONS.filter(function (f) { return b.opposing_sets[f]; }).map(function (f) { return t("rl.faction_" + f) + " " + b.opposing_sets[f]; }).join(", ") : null;
          return el("td", { class: "num", "data-part": k, title: title || null, text: String(v) });
        }),
        el("td", { class: "num score", text: String(p.total) }),
        el("td", { class: "num", text: String(p.money) }));
    });
    box.appendChild(el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: id },
      el("thead", null, head), el("tbody", null, rows))));
  }

  function renderStatus() {
    var s = sm(), text;
    if (s.final) text = t("rl.ended", { players: s.standings.winners.join(", ") });
    else text = t("rl.status", { player: s.turn.player, n: s.turn.allowed, left: s.turn.left, cardinal: s.cardinal,
      done: s.intrigues_resolved, of: s.intrigues_resolved + s.intrigues_left });
    $("rl-status").textContent = text;
  }

  function renderTurn() {
    var s = sm(), turn = s.turn, box = $("rl-turn");
    box.hidden = !!s.final;
    if (s.final) return;
    var m = s.markers[turn.player];
    $("rl-turn-title").textContent = t("rl.turn_title", { player: turn.player, n: turn.allowed });
    $("rl-turn-info").textContent = (m.behind_cardinal ? t("rl.behind") : t("rl.level_or_ahead")) + " · " +
      t("rl.actions_left", { n: turn.left }) + (turn.done.length ? " · " + t("rl.done", { list: turn.done.map(function (a) { return t("rl.action_" + a); }).join(", ") }) : "");
    var next = turn.next || {};
    function button(id, action, label) {
      var b = $(id), info = next[action];
      b.disabled = !info;
      b.textContent = label(info);
    }
    button("rl-income", "income", function (i) { return t("rl.action_income") + (i ? " +" + i.gain : ""); });
    button("rl-commission", "commission", function (i) { return t("rl.action_commission") + (i ? " (−" + i.cost + ")" : ""); });
    button("rl-buy", "buy_jewel", function (i) { return t("rl.action_buy_jewel") + (i ? " (−" + i.cost + ")" : ""); });
    button("rl-sell", "sell_jewel", function (i) { return t("rl.action_sell_jewel") + (i ? " (+" + i.gain + ")" : ""); });
    var place = next.place_agent, space = $("rl-space");
    var costs = place ? place.costs : {};
    fill(space, Object.keys(costs).map(function (k) { return { value: k, label: t("rl.space_cost", { value: k, cost: costs[k] }) }; }));
    $("rl-place").disabled = !place;
    space.disabled = !place;
    // the spaces as big buttons: one tap chooses the space, "Place" (at the bottom) places the agent
    var picks = $("rl-spaces");
    picks.textContent = "";
    Object.keys(costs).forEach(function (k) {
      picks.appendChild(el("button", { type: "button", class: "btn", "data-space": k, "aria-pressed": String(space.value === k),
        onclick: function () { space.value = k; renderTurn(); } }, t("rl.space_cost", { value: k, cost: costs[k] })));
    });
    $("rl-place").textContent = place && space.value ? t("rl.place_on", { value: space.value }) : t("rl.place");
    $("rl-turn-end").textContent = t("rl.turn_end", { player: turn.player });
  }

  function renderTracks() {
    var s = st(), m = sm().markers, box = $("rl-tracks");
    box.textContent = "";
    var head = el("tr", null, el("th", { text: t("scores.player") }), TRACKS.map(function (k) { return el("th", { class: "num", text: t("rl.track_" + k) }); }),
      el("th", { text: t("rl.sheets") }));
    var rows = s.order.map(function (p) {
      var x = s.players[p], mk = m[p];
      var sheets = ["richelieu"].concat(FACTIONS).filter(function (k) { return x.cards[k]; }).map(function (k) { return t("rl.sheet_" + k) + "×" + x.cards[k]; }).join(" ");
      return el("tr", { "data-player": p, class: p === sm().turn.player && !sm().final ? "leader" : null },
        el("td", null, who(p)),
        el("td", { class: "num", "data-track": "prestige", title: t("rl.marker", { n: mk.track, tiles: mk.tiles_30 }), text: String(x.prestige) + (mk.behind_cardinal ? " ◂" : "") }),
        TRACKS.slice(1).map(function (k) { return el("td", { class: "num", "data-track": k, text: String(x[k]) }); }),
        el("td", { class: "small", text: sheets || "—" }));
    });
    box.appendChild(el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "rl-tracks-table" },
      el("thead", null, head), el("tbody", null, rows))));
    box.appendChild(el("p", { class: "small muted", text: t("rl.cardinal_line", { n: st().cardinal, jewels: st().city_jewels }) }));
  }

  // -- the intrigue form -------------------------------------------------------------------------------------
  function agents() {
    var names = st().order.slice();
    if (st().neutral) names.push(st().neutral);
    return names;
  }
  function slotSelect(kind) {
    var sel = el("select", { class: "rl-slot", "aria-label": t("rl.slot") }, opt("", "—"));
    agents().forEach(function (p) { VALUES.forEach(function (v) { sel.appendChild(opt(p + "|" + v, p + " " + fmtValue(v))); }); });
    sel.appendChild(opt(kind === "richelieu_card" ? "queen" : "eminence", kind === "richelieu_card" ? t("rl.queen") : t("rl.eminence")));
    return sel;
  }
  function rewardRow(place) {
    var type = el("select", { class: "rl-reward-type", "aria-label": t("rl.reward") }, opt("", "—"),
      REWARDS.map(function (r) { return opt(r, t("rl.reward_" + r)); }));
    var amount = el("input", { type: "number", class: "trk-die rl-reward-amount", min: "1", max: "20", value: "1", inputmode: "numeric", "aria-label": t("rl.amount") });
    return el("div", { class: "trk-row rl-reward", "data-place": place }, type, amount);
  }
  function buildCard(box, kind) {
    var count = el("select", { class: "rl-slot-count", "aria-label": t("rl.slots") });
    for (var i = 1; i <= 8; i++) count.appendChild(opt(i, String(i), i === 4));
    var slots = el("div", { class: "rl-slots" });
    function draw() {
      var n = parseInt(count.value, 10);
      while (slots.children.length < n) slots.appendChild(slotSelect(kind));
      while (slots.children.length > n) slots.removeChild(slots.lastChild);
    }
    count.addEventListener("change", draw);
    box.appendChild(el("div", { class: "trk-row" }, el("span", { text: t("rl.slots_left_right") }), count));
    box.appendChild(slots);
    box.appendChild(el("p", { class: "small", text: t("rl.first_place") }));
    box.appendChild(rewardRow("first")); box.appendChild(rewardRow("first"));
    box.appendChild(el("p", { class: "small", text: t("rl.second_place") }));
    box.appendChild(rewardRow("second")); box.appendChild(rewardRow("second"));
    box.appendChild(el("label", { class: "trk-inline" }, t("rl.cardinal_moves"),
      el("input", { type: "number", class: "rl-cardinal", min: "-10", max: "10", value: "0", inputmode: "numeric" })));
    draw();
  }
  function readCard(box) {
    var slots = Array.prototype.map.call(box.querySelectorAll(".rl-slot"), function (s) {
      if (!s.value) return null;
      if (s.value === "queen" || s.value === "eminence") return { piece: s.value };
      var bits = s.value.split("|");
      return { player: bits.slice(0, -1).join("|"), value: parseInt(bits[bits.length - 1], 10) };
    });
    var rewards = { first: [], second: [], cardinal: parseInt(box.querySelector(".rl-cardinal").value, 10) || 0 };
    Array.prototype.forEach.call(box.querySelectorAll(".rl-reward"), function (row) {
      var type = row.querySelector(".rl-reward-type").value, amount = parseInt(row.querySelector(".rl-reward-amount").value, 10);
      if (type) rewards[row.dataset.place].push({ type: type, amount: amount >= 1 ? amount : 1 });
    });
    return { slots: slots, rewards: rewards };
  }
  function intrigueData() {
    var r = readCard($("rl-card-r")), f = readCard($("rl-card-f"));
    f = { faction: $("rl-faction").value, slots: f.slots, rewards: f.rewards };
    return { richelieu_card: r, faction_card: f };
  }
  function showPreview(p) {
    var box = $("rl-preview-box"), r = p.result;
    box.textContent = "";
    var winner = r.winner === "richelieu" ? t("rl.sheet_richelieu") : t("rl.faction_" + r.winner);
    box.appendChild(el("p", null, el("strong", { text: t("rl.preview_winner", { side: winner }) }), " " +
      Object.keys(r.totals).map(function (k) { return (k === "richelieu" ? t("rl.sheet_richelieu") : t("rl.faction_" + k)) + " " + r.totals[k]; }).join(" · ")));
    box.appendChild(el("p", { text: t("rl.preview_places", { first: r.first || "—", second: r.second || "—", sheet: r.sheet.to || "—" }) }));
    var lines = Object.keys(p.changes).map(function (name) {
      var c = p.changes[name];
      return el("li", { "data-player": name }, who(name), ": " + Object.keys(c).map(function (k) {
        if (k === "sheets") return Object.keys(c.sheets).map(function (s) { return "+" + c.sheets[s] + " " + t("rl.sheet_" + s); }).join(", ");
        return t("rl.track_" + k) + " " + (c[k] > 0 ? "+" : "") + c[k];
      }).join(", "));
    });
    if (lines.length) box.appendChild(el("ul", { id: "rl-preview-changes" }, lines));
    r.reward_actions.forEach(function (a) { box.appendChild(el("p", { class: "small", text: t("rl.preview_action", { player: a.player, reward: t("rl.reward_" + a.type), n: a.amount }) })); });
    r.forfeited.forEach(function (a) { box.appendChild(el("p", { class: "small muted", text: t("rl.preview_forfeit", { place: a.place }) })); });
    box.appendChild(el("p", { class: "small", text: t("rl.preview_cardinal", { from: p.cardinal.before, to: p.cardinal.after }) + (p.ends_match ? " · " + t("rl.preview_last") : "") }));
  }

  function update(view, cl) {
    client = cl;
    if (!view || !view.summary) return;
    drawStandings(document.getElementById("scores"), "rl-standings");
    if (!root) return;
    var s = sm();
    renderStatus();
    renderTurn();
    renderTracks();
    $("rl-intrigue").hidden = !!s.final;
    $("rl-adjust").hidden = !!s.final;
    $("rl-game-end").hidden = !!s.final;
    $("rl-final-title").textContent = s.final ? t("rl.final") : t("rl.final_now");
    drawStandings($("rl-final"), "rl-final-table");
    fill($("rl-adj-player"), st().order.map(function (p) { return { value: p, label: p }; }));
    if (!$("rl-card-r").querySelector(".rl-slots")) { buildCard($("rl-card-r"), "richelieu_card"); buildCard($("rl-card-f"), "faction_card"); }
  }

  function mount(r, cl) {
    root = r; client = cl;
    function action(kind, extra) {
      return function () { send("action", Object.assign({ player: sm().turn.player, action: kind }, extra ? extra() : {})); };
    }
    $("rl-income").addEventListener("click", action("income"));
    $("rl-commission").addEventListener("click", action("commission"));
    $("rl-buy").addEventListener("click", action("buy_jewel"));
    $("rl-sell").addEventListener("click", action("sell_jewel"));
    $("rl-place").addEventListener("click", action("place_agent", function () { return { space: parseInt($("rl-space").value, 10) }; }));
    $("rl-turn-end").addEventListener("click", function () { send("turn.end", { player: sm().turn.player }); });
    $("rl-preview").addEventListener("click", function () {
      C.api("POST", base() + "/richelieu/preview", { data: intrigueData() }).then(showPreview, function (e) {
        $("rl-preview-box").textContent = "";
        $("rl-preview-box").appendChild(el("p", { class: "trk-bad", text: C.errorText(e) }));
      });
    });
    $("rl-resolve").addEventListener("click", function () {
      send("intrigue.resolve", intrigueData()).then(function (m) {
        if (!m) return;
        $("rl-preview-box").textContent = "";
        var last = m.view.state.resolutions[m.view.state.resolutions.length - 1];
        if (last) $("rl-preview-box").appendChild(el("p", { class: "trk-result", id: "rl-resolved", text: t("rl.resolved", {
          side: last.winner === "richelieu" ? t("rl.sheet_richelieu") : t("rl.faction_" + last.winner), player: last.sheet.to || "—" }) }));
        Array.prototype.forEach.call(document.querySelectorAll("#rl-intrigue .rl-slot, #rl-intrigue .rl-reward-type"), function (s) { s.value = ""; });
        Array.prototype.forEach.call(document.querySelectorAll("#rl-intrigue .rl-cardinal"), function (s) { s.value = "0"; });
      });
    });
    $("rl-adj-send").addEventListener("click", function () {
      send("track.adjust", { player: $("rl-adj-player").value, track: $("rl-adj-track").value, delta: parseInt($("rl-adj-delta").value, 10) || 0 });
    });
    $("rl-game-end").addEventListener("click", function () {
      if (window.confirm(t("rl.game_end_confirm"))) send("game.end", {});
    });
  }

  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      case "action": return t("rl.ev_action", { player: d.player, action: t("rl.action_" + d.action) }) + (d.space !== undefined ? " (" + d.space + ")" : "");
      case "turn.end": return t("rl.ev_turn_end", { player: d.player || "" });
      case "intrigue.resolve": return t("rl.ev_intrigue", { faction: t("rl.faction_" + ((d.faction_card || {}).faction || "")) });
      case "track.adjust": return t("rl.ev_adjust", { player: d.player, track: t("rl.track_" + d.track), delta: (d.delta > 0 ? "+" : "") + d.delta });
      case "game.end": return t("rl.ev_game_end");
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe });
})();
