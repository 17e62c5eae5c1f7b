/* Richelieu tracker (plugs into the match page through Companion.registerGame).
 * The tracks (prestige, income, military, money, jewels), the Cardinal and the actions of the player
 * whose turn it is (1 or 2, as the engine says); the intrigue-resolution form by taps (two cards, spaces left
 * to right: agents from a palette of colours and values, Grey Eminence, Queen; rewards), previewed as it is
 * filled in and applied by the engine; corrections; the
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
  var $ = K.$, base = K.base, send = K.send, who = K.who, fill = K.fill;
  var st = K.st, sm = K.sm;
  function fmtValue(v) { return v < 0 ? "−" + Math.abs(v) : String(v); }

  // -- end-game scoring (provisional until the end) in the scores box ---------------------------------------
  function drawStandings(box, id) {
    var standings = sm().standings;
    if (!box || !standings) return;
    var cols = ["prestige", "income", "military", "richelieu_sheets", "opposing_sets", "jewels"];
    var head = el("tr", null, el("th", { text: t("rl.col_place") }), el("th", { text: t("scores.player") }),
      cols.map(function (k) { return el("th", { class: "num", text: t("rl.col_" + k) }); }),
      el("th", { class: "num", text: t("scores.total") }), el("th", { class: "num", text: t("rl.col_money") }));
    // another player's money and jewels are behind their screen (docs/rulings.md#behind-the-screens): "—"
    // here, and no total or place for them until the end
    function shown(v) { return v === null || v === undefined ? "—" : String(v); }
    var rows = standings.players.map(function (p) {
      var b = p.breakdown, sets = 0;
      Object.keys(b.opposing_sets).forEach(function (f) { sets += b.opposing_sets[f]; });
      return el("tr", { "data-player": p.player, class: p.place === 1 ? "leader" : null, "data-hidden": p.total === null ? "true" : null },
        el("td", { class: "trk-place", text: p.place === null ? "" : String(p.place) }),
        el("td", null, who(p.player)),
        cols.map(function (k) {
          var v = k === "opposing_sets" ? sets : b[k];
          var title = k === "opposing_sets" ? FACTIONS.filter(function (f) { return b.opposing_sets[f]; }).map(function (f) { return t("rl.faction_" + f) + " " + b.opposing_sets[f]; }).join(", ") : null;
          return el("td", { class: "num", "data-part": k, title: title || null, text: shown(v) });
        }),
        el("td", { class: "num score", title: p.total === null ? C.plural("rl.board_total", p.board_total) : null, text: shown(p.total) }),
        el("td", { class: "num", "data-part": "money", text: shown(p.money) }));
    });
    C.patch(box, [el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: id },
      el("thead", null, head), el("tbody", null, rows))),
      standings.hidden ? el("p", { class: "small muted rl-behind-note", text: t("rl.behind_screen_note") }) : null]);
  }

  function renderStatus() {
    var s = sm(), text;
    if (s.final) text = t("rl.ended", { players: s.standings.winners.join(", ") });
    else text = C.plural("rl.status", s.turn.allowed, { player: s.turn.player, left: s.turn.left, cardinal: s.cardinal,
      done: s.intrigues_resolved, of: s.intrigues_resolved + s.intrigues_left });
    $("rl-status").textContent = text;
  }

  function renderTurn() {
    var s = sm(), turn = s.turn, box = $("rl-turn");
    box.hidden = !!s.final;
    if (s.final) return;
    var m = s.markers[turn.player];
    $("rl-turn-title").textContent = C.plural("rl.turn_title", turn.allowed, { player: turn.player });
    $("rl-turn-info").textContent = (m.behind_cardinal ? t("rl.behind") : t("rl.level_or_ahead")) + " · " +
      C.plural("rl.actions_left", turn.left) + (turn.done.length ? " · " + t("rl.done", { list: turn.done.map(function (a) { return t("rl.action_" + a); }).join(", ") }) : "");
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
    C.patch($("rl-spaces"), Object.keys(costs).map(function (k) {
      return el("button", { type: "button", class: "btn", "data-space": k, "aria-pressed": String(space.value === k),
        onclick: function () { space.value = k; renderTurn(); } }, t("rl.space_cost", { value: k, cost: costs[k] }));
    }));
    $("rl-place").textContent = place && space.value ? t("rl.place_on", { value: space.value }) : t("rl.place");
    $("rl-turn-end").textContent = t("rl.turn_end", { player: turn.player });
  }

  function renderTracks() {
    var s = st(), m = sm().markers, box = $("rl-tracks");
    var head = el("tr", null, el("th", { text: t("scores.player") }), TRACKS.map(function (k) { return el("th", { class: "num", text: t("rl.track_" + k) }); }),
      el("th", { text: t("rl.sheets") }));
    var rows = s.order.map(function (p) {
      var x = s.players[p], mk = m[p];
      var sheets = ["richelieu"].concat(FACTIONS).filter(function (k) { return x.cards[k]; }).map(function (k) { return t("rl.sheet_" + k) + "×" + x.cards[k]; }).join(" ");
      return el("tr", { "data-player": p, class: p === sm().turn.player && !sm().final ? "leader" : null },
        el("td", null, who(p)),
        el("td", { class: "num", "data-track": "prestige", title: C.plural("rl.marker", mk.tiles_30, { track: mk.track }), text: String(x.prestige) + (mk.behind_cardinal ? " ◂" : "") }),
        TRACKS.slice(1).map(function (k) {
          var hidden = x[k] === null || x[k] === undefined;
          return el("td", { class: "num" + (hidden ? " muted" : ""), "data-track": k, title: hidden ? t("rl.behind_screen") : null, text: hidden ? "—" : String(x[k]) });
        }),
        el("td", { class: "small", text: sheets || "—" }));
    });
    C.patch(box, [el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "rl-tracks-table" },
      el("thead", null, head), el("tbody", null, rows))),
      el("p", { class: "small muted", text: t("rl.cardinal_line", { n: st().cardinal, jewels: st().city_jewels }) })]);
  }

  // -- the intrigue form, by taps -----------------------------------------------------------------------------
  // Each card: its spaces as big buttons, left to right; the selected space (the first empty one by itself)
  // takes the next agent: tap a colour (it stays chosen), then a value; the Queen or the Grey Eminence; a
  // space tapped again is selected to change or clear it. Rewards: pick first or second place, tap a reward
  // (each tap adds 1; a reward's chip tapped takes 1 away). The preview follows every tap.
  var CARDS = { r: "richelieu_card", f: "faction_card" };
  var form = null;
  function blankCard(kind) {
    return { kind: kind, slots: [null, null, null, null], active: 0, colour: null, place: "first",
             rewards: { first: [], second: [] }, cardinal: 0 };
  }
  function resetForm() { form = { r: blankCard("richelieu_card"), f: blankCard("faction_card"), faction: form ? form.faction : "england" }; }
  function agents() {
    var names = st().order.slice();
    if (st().neutral) names.push(st().neutral);
    return names;
  }
  function firstEmpty(c, from) {
    for (var i = 0; i < c.slots.length; i++) { var j = (from + i) % c.slots.length; if (!c.slots[j]) return j; }
    return null;
  }
  function slotText(x) {
    if (!x) return "—";
    if (x.piece) return x.piece === "queen" ? t("rl.queen") : t("rl.eminence");
    return x.player + " " + fmtValue(x.value);
  }
  function tap(cls, text, on, extra) {
    var b = el("button", Object.assign({ type: "button", class: "btn rl-tap " + cls, text: text }, extra || {}));
    b.addEventListener("click", function () { on(); drawForm(); previewSoon(); });
    return b;
  }
  function drawCard(key) {
    var c = form[key], box = $(key === "r" ? "rl-card-r" : "rl-card-f");
    var body = box.querySelector(".rl-form");
    if (!body) { body = el("div", { class: "rl-form" }); box.appendChild(body); }
    body.textContent = "";
    // how many spaces the card has
    body.appendChild(el("div", { class: "trk-row rl-count" }, el("span", { text: t("rl.slots_left_right") }), el("span", { class: "rl-stepper" },
      tap("rl-n-minus", "−", function () { if (c.slots.length > 1) { c.slots.pop(); if (c.active !== null && c.active >= c.slots.length) c.active = firstEmpty(c, 0); } }, { "aria-label": t("rl.slots_fewer") }),
      el("strong", { class: "rl-n", text: String(c.slots.length) }),
      tap("rl-n-plus", "+", function () { if (c.slots.length < 8) { c.slots.push(null); if (c.active === null) c.active = c.slots.length - 1; } }, { "aria-label": t("rl.slots_more") }))));
    // the spaces
    body.appendChild(el("div", { class: "rl-slots" }, c.slots.map(function (x, i) {
      var b = tap("rl-slot" + (c.active === i ? " active" : "") + (x ? " filled" : ""), "", function () { c.active = i; },
        { "data-i": String(i), "aria-pressed": c.active === i ? "true" : "false", "aria-label": t("rl.slot_n", { n: i + 1 }) + ": " + slotText(x) });
      b.appendChild(el("span", { class: "rl-slot-n", text: String(i + 1) }));
      if (x && x.player && swatch(x.player)) b.appendChild(swatch(x.player));
      b.appendChild(document.createTextNode(slotText(x)));
      return b;
    })));
    // the palette for the selected space
    if (c.active !== null) {
      body.appendChild(el("p", { class: "small rl-palette-title", text: t("rl.palette_for", { n: c.active + 1 }) }));
      body.appendChild(el("div", { class: "rl-palette rl-colours" }, agents().map(function (p) {
        var b = tap("rl-colour" + (c.colour === p ? " active" : ""), "", function () { c.colour = p; },
          { "data-player": p, "aria-pressed": c.colour === p ? "true" : "false" });
        if (swatch(p)) b.appendChild(swatch(p));
        b.appendChild(document.createTextNode(p));
        return b;
      })));
      var piece = key === "r" ? "queen" : "eminence";
      body.appendChild(el("div", { class: "rl-palette rl-values" }, VALUES.map(function (v) {
        return tap("rl-value", fmtValue(v), function () {
          if (!c.colour) { C.toast(t("rl.pick_colour"), true); return; }
          c.slots[c.active] = { player: c.colour, value: v };
          c.active = firstEmpty(c, c.active + 1);
        }, { "data-value": String(v), disabled: c.colour ? null : "disabled" });
      }), tap("rl-piece", key === "r" ? t("rl.queen") : t("rl.eminence"), function () {
        c.slots.forEach(function (x, i) { if (x && x.piece === piece) c.slots[i] = null; }); // one on the board
        c.slots[c.active] = { piece: piece };
        c.active = firstEmpty(c, c.active + 1);
      }, { "data-piece": piece }), tap("rl-clear", t("rl.clear"), function () { c.slots[c.active] = null; })));
    }
    // rewards printed on the card
    body.appendChild(el("div", { class: "rl-palette rl-places" }, ["first", "second"].map(function (pl) {
      return tap("rl-place-pick" + (c.place === pl ? " active" : ""), t(pl === "first" ? "rl.pick_first" : "rl.pick_second"),
        function () { c.place = pl; }, { "data-place": pl, "aria-pressed": c.place === pl ? "true" : "false" });
    })));
    ["first", "second"].forEach(function (pl) {
      var chips = c.rewards[pl].map(function (r, i) {
        return tap("rl-chip", t("rl.reward_" + r.type) + " ×" + r.amount, function () {
          r.amount -= 1; if (r.amount < 1) c.rewards[pl].splice(i, 1);
        }, { "data-place": pl, "data-reward": r.type, title: t("rl.chip_less") });
      });
      body.appendChild(el("p", { class: "small rl-chips", "data-place": pl },
        el("span", { text: t(pl === "first" ? "rl.first_place" : "rl.second_place") + " " }),
        chips.length ? chips : el("span", { class: "muted", text: "—" })));
    });
    body.appendChild(el("div", { class: "rl-palette rl-rewards" }, REWARDS.map(function (r) {
      return tap("rl-reward-btn", t("rl.reward_" + r), function () {
        var list = c.rewards[c.place], had = list.filter(function (x) { return x.type === r; })[0];
        if (had) { if (had.amount < 20) had.amount += 1; }
        else if (list.length < 4) list.push({ type: r, amount: 1 });
      }, { "data-reward": r });
    })));
    body.appendChild(el("div", { class: "trk-row rl-cardinal-row" }, el("span", { text: t("rl.cardinal_moves") }), el("span", { class: "rl-stepper" },
      tap("rl-cardinal-minus", "−", function () { if (c.cardinal > -10) c.cardinal -= 1; }, { "aria-label": t("rl.cardinal_back") }),
      el("strong", { class: "rl-cardinal", text: (c.cardinal > 0 ? "+" : "") + c.cardinal }),
      tap("rl-cardinal-plus", "+", function () { if (c.cardinal < 10) c.cardinal += 1; }, { "aria-label": t("rl.cardinal_on") }))));
  }
  function drawFaction() {
    var box = $("rl-factions");
    if (!box) return;
    box.textContent = "";
    FACTIONS.forEach(function (f) {
      box.appendChild(tap("rl-faction-btn" + (form.faction === f ? " active" : ""), t("rl.faction_" + f), function () { form.faction = f; },
        { "data-faction": f, "aria-pressed": form.faction === f ? "true" : "false" }));
    });
  }
  function drawForm() { if (!form) resetForm(); drawFaction(); drawCard("r"); drawCard("f"); }
  function swatch(p) { return K.swatch(p) || (p === st().neutral ? el("span", { class: "swatch rl-neutral" }) : null); }
  function cardData(c) {
    return { slots: c.slots.slice(), rewards: { first: c.rewards.first.map(function (r) { return { type: r.type, amount: r.amount }; }),
      second: c.rewards.second.map(function (r) { return { type: r.type, amount: r.amount }; }), cardinal: c.cardinal } };
  }
  function intrigueData() {
    if (!form) resetForm();
    var f = cardData(form.f);
    return { richelieu_card: cardData(form.r), faction_card: { faction: form.faction, slots: f.slots, rewards: f.rewards } };
  }
  var previewTimer = null, previewAsked = 0;
  function previewSoon() {
    if (sm().final || document.body.dataset.role === "viewer") return;
    if (previewTimer) clearTimeout(previewTimer);
    previewTimer = setTimeout(previewNow, 150);
  }
  function previewNow() {
    previewTimer = null;
    var n = ++previewAsked;
    return C.api("POST", base() + "/richelieu/preview", { data: intrigueData() }).then(function (p) {
      if (n === previewAsked) showPreview(p);
    }, function (e) {
      if (n !== previewAsked) return;
      $("rl-preview-box").textContent = "";
      $("rl-preview-box").appendChild(el("p", { class: "trk-bad", text: C.errorText(e) }));
    });
  }
  function showPreview(p) {
    var box = $("rl-preview-box"), r = p.result;
    box.textContent = "";
    if (!p.complete) {  // a form being filled in: how far it is, never an error
      var placed = p.placed.richelieu_card + p.placed.faction_card;
      box.appendChild(el("p", { class: "rl-progress", text: placed ? t("rl.preview_partial", {
        r: p.placed.richelieu_card, rn: p.slots.richelieu_card, f: p.placed.faction_card, fn: p.slots.faction_card }) : t("rl.preview_empty") }));
      return;
    }
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
    if (!form) {  // an empty form: said at once, without asking the Pi
      resetForm(); drawForm();
      showPreview({ complete: false, placed: { richelieu_card: 0, faction_card: 0 }, slots: { richelieu_card: 4, faction_card: 4 } });
    }
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
    $("rl-preview").addEventListener("click", previewNow);
    $("rl-resolve").addEventListener("click", function () {
      send("intrigue.resolve", intrigueData()).then(function (m) {
        if (!m) return;
        $("rl-preview-box").textContent = "";
        var last = m.view.state.resolutions[m.view.state.resolutions.length - 1];
        if (last) $("rl-preview-box").appendChild(el("p", { class: "trk-result", id: "rl-resolved", text: t("rl.resolved", {
          side: last.winner === "richelieu" ? t("rl.sheet_richelieu") : t("rl.faction_" + last.winner), player: last.sheet.to || "—" }) }));
        resetForm(); drawForm();
      });
    });
    $("rl-adj-send").addEventListener("click", function () {
      send("track.adjust", { player: $("rl-adj-player").value, track: $("rl-adj-track").value, delta: parseInt($("rl-adj-delta").value, 10) || 0 });
    });
    $("rl-game-end").addEventListener("click", function () {
      if (window.confirm(t("rl.game_end_confirm"))) send("game.end", {});
    });
  }

  // an intrigue in the history says who won it: the match's resolutions, in order, are the intrigue events in
  // effect (the history numbers them: e.nth); an undone one says only its faction's card
  function intrigueText(e) {
    var d = e.data || {}, faction = t("rl.faction_" + ((d.faction_card || {}).faction || ""));
    var res = client && client.view && client.view.state && e.nth !== undefined ? (client.view.state.resolutions || [])[e.nth] : null;
    if (!res || res.faction !== (d.faction_card || {}).faction) return t("rl.ev_intrigue", { faction: faction });
    var side = res.winner === "richelieu" ? t("rl.sheet_richelieu") : t("rl.faction_" + res.winner);
    return t("rl.ev_intrigue_won", { faction: faction, side: side, player: res.sheet && res.sheet.to ? res.sheet.to : "—" });
  }

  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      // the space is on the board (its printed value, what the agent cost); the agent's own value is not
      // recorded until the intrigue is resolved (face down: docs/rulings.md#behind-the-screens)
      case "action": return d.action === "place_agent" && d.space !== undefined ?
        t(d.space > 0 ? "rl.ev_place_down" : "rl.ev_place_up", { player: d.player, value: d.space }) :
        t("rl.ev_action", { player: d.player, action: t("rl.action_" + d.action) });
      case "turn.end": return t("rl.ev_turn_end", { player: d.player || "" });
      case "intrigue.resolve": return intrigueText(e);
      case "track.adjust": return d.delta === undefined ? t("rl.ev_adjust_hidden", { player: d.player, track: t("rl.track_" + d.track) }) :
        t("rl.ev_adjust", { player: d.player, track: t("rl.track_" + d.track), delta: (d.delta > 0 ? "+" : "") + d.delta });
      case "game.end": return t("rl.ev_game_end");
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe,
    scores: function (v) { return !!(v && v.summary && v.summary.standings); } });
})();
