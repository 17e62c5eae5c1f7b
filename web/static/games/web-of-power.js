/* Web of Power tracker (plugs into the match page through Companion.registerGame).
 * Each turn's placements (a monastery on a site or into a country, or councillors), counts per country,
 * councillor caps, remaining supply, the engine's warnings for illegal turns; "the deck ran out" runs the
 * intermediate scoring the first time and the final one the second, with the per-country, per-alliance
 * and per-chain breakdown; totals add up across both. With roads on the board the SVG shows the pieces;
 * without, chain lengths are entered by hand. A final scoring with parts the board cannot tell (unknown
 * alliances, chains without roads) names no winner: the page lists what is missing and offers a form to
 * enter it by hand ("scoring.hand"), then the match ends (the board's notice is said there, once, with a link to
 * the board editor). Warnings show their turn, the current turn's apart from the earlier ones; a placement
 * that would break a rule is said before it is recorded (POST .../wop/check, the engine's check_place) and
 * asked in the bar under the thumb: "Place anyway" records it with its warning. A turn with no placement
 * left that breaks no rule (summary turn.can_place) offers its end. The scores table ranks only once the
 * match has ended (before, the official totals are 0 until a scoring: no rank). Numbers come from
 * companion/games/web_of_power.py. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var GAME = "web-of-power";
  var root = null, client = null, board = null, boardReq = null, piece = "monastery";

  var K = C.trackerKit(function () { return client; });
  var $ = K.$, base = K.base, done = K.done, send = K.send, colour = K.colour, who = K.who, opt = K.opt, fill = K.fill;
  var st = K.st, sm = K.sm;
  function players() { return client.match.players; }
  function playing() { return sm().phase === "play"; }
  // "1–3, 5" from [1, 2, 3, 5]
  function ranges(ns) {
    var out = [], i = 0;
    while (i < ns.length) {
      var j = i;
      while (j + 1 < ns.length && ns[j + 1] === ns[j] + 1) j++;
      out.push(j - i >= 2 ? ns[i] + "–" + ns[j] : ns.slice(i, j + 1).join(", "));
      i = j + 1;
    }
    return out.join(", ");
  }
  function mons(n) { return C.plural("wop.n_monasteries", n); }
  function cons(n) { return C.plural("wop.n_councillors", n); }
  function pieces(piece, n) { return piece === "councillor" ? cons(n) : mons(n); }
  // the shipped board's name in the page's language (a club's own board keeps its name)
  var SHIPPED_BOARD = "Web of Power: transcription TEMPLATE (incomplete, not the full board)";
  function boardName(name) { return name === SHIPPED_BOARD ? t("wop.board_shipped") : name; }
  // the scoring's warnings (English, companion/games/web_of_power.py) in the page's language; a warning it
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
  function messageText(message) {
    for (var i = 0; i < WARNINGS.length; i++) { var m = WARNINGS[i][0].exec(message); if (m) return WARNINGS[i][1](m); }
    return message;
  }

  function loadBoard() {
    if (boardReq) return boardReq;
    boardReq = C.api("GET", base() + "/wop/board").then(function (b) {
      board = b;
      $("wop-svg").innerHTML = b.svg; // our own server's SVG (escaped by the engine)
      drawPhoto();
      return b;
    }, function (e) { boardReq = null; C.toast(C.errorText(e), true); });
    return boardReq;
  }

  // -- a board drawn on the box (/boards): its photo, the roads and the sites; tap a free site to place -------
  // (the drawing is shared with the TV: games/web-of-power.shared.js)
  var B = window.WopBoard, svgEl = B.el, photoZoom = 1;
  function photoUnit() { return B.unit(board); }
  function drawPhoto() {
    var box = $("wop-photo");
    if (!B.onPhoto(board)) { box.hidden = true; return; }
    box.hidden = false;
    var svg = $("wop-photo-svg");
    B.draw(svg, board, "wop-chain-layer");
    svg.style.width = (100 * photoZoom) + "%";
  }
  function paintPhoto() {
    if (!B.onPhoto(board) || !client.view) return;
    B.paint($("wop-photo-svg"), st().sites, colour);
  }
  // the chains each player has now, drawn in their colour under the sites (fetched once per new event)
  var followChains = B.follower(base, function () { return board; }, function () { return $("wop-chain-layer"); }, colour);
  function liveChains() { followChains(client); }
  // a tap within 24 px of a site (a 48 px target, whatever the photo's scale) means that site
  var TAP_REACH = 24;
  function tapSite(ev) {
    if (!playing()) return;
    var mark = ev.target.closest ? ev.target.closest("circle[data-site]") : null;
    var site = mark ? mark.getAttribute("data-site") : B.siteAt($("wop-photo-svg"), board, ev, TAP_REACH);
    if (!site) return;
    if (st().sites[site]) { C.toast(t("wop.site_taken", { site: site }), true); return; }
    placeAsked({ player: $("wop-player").value, piece: "monastery", site: site });
  }
  // the chain's sites joined by a thick line on the photo (or on the drawing when there is no photo)
  function showChain(chain) {
    var onPhoto = board && board.coords && board.photo, pts = [];
    if (onPhoto) chain.forEach(function (id) { if (board.coords[id]) pts.push(board.coords[id]); });
    else chain.forEach(function (id) {
      var c = document.querySelector("#wop-svg circle[data-site='" + (window.CSS && CSS.escape ? CSS.escape(id) : id) + "']");
      if (c) pts.push([+c.getAttribute("cx"), +c.getAttribute("cy")]);
    });
    document.querySelectorAll(".wop-chain-hl").forEach(function (n) { n.remove(); });
    var svg = onPhoto ? $("wop-chain-layer") : $("wop-svg").querySelector("svg");
    if (!svg || pts.length < 2) return;
    var width = onPhoto ? 1.2 * photoUnit() : 7;
    svg.appendChild(svgEl("polyline", { points: pts.map(function (p) { return p.join(","); }).join(" "), class: "wop-chain-hl",
      "stroke-width": width, "data-chain": chain.join(",") }));
    var where = onPhoto ? $("wop-photo") : $("wop-board");
    if (!onPhoto) $("wop-board").open = true;
    where.hidden = false;
    if (where.scrollIntoView) where.scrollIntoView({ block: "nearest" });
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
    // a rank only from the final ranking: during play the official totals are 0 until a scoring, and what the
    // monasteries would score now is no ranking (the rows keep the seat order)
    var ended = s.phase === "ended";
    var head = el("tr", null, ended ? el("th", { text: t("wop.col_place") }) : null, el("th", { text: t("scores.player") }),
      el("th", { class: "num", text: t("wop.col_intermediate") }), el("th", { class: "num", text: t("wop.col_final") }),
      el("th", { class: "num", text: t("scores.total") }), el("th", { class: "num wop-now", text: t("wop.col_now") }));
    var rows = (ended ? sc.ranking.map(function (r) { return r.player; }) : players()).map(function (p) {
      var lead = ended && place[p] === 1;
      return el("tr", { "data-player": p, class: lead ? "leader" : null },
        ended ? el("td", { class: "trk-place", text: String(place[p]) }) : null,
        el("td", null, who(p)),
        el("td", { class: "num", "data-col": "intermediate", text: inter[p] === undefined ? "—" : String(inter[p]) }),
        el("td", { class: "num", "data-col": "final", text: fin[p] === undefined ? "—" : String(fin[p]) }),
        el("td", { class: "num score", "data-col": "total", text: String(sc.totals[p]) }),
        el("td", { class: "num muted", "data-col": "now", text: String(now[p]) }));
    });
    C.patch(box, [el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "wop-totals" },
      el("thead", null, head), el("tbody", null, rows))),
      // points, not pieces: say so under the table
      el("p", { class: "small muted", id: "wop-now-note", text: t("wop.now_note") }),
      s.phase === "scoring" ? el("p", { class: "trk-warn small", id: "wop-provisional", text: t("wop.provisional") }) : null]);
  }

  function describeEntry(e) {
    if (e.kind === "monasteries") {
      // why the place is worth its points: the first takes all the monasteries there, the others the count above
      var place = [t("wop.place_1"), t("wop.place_2"), t("wop.place_3"), t("wop.place_4"), t("wop.place_5")][e.rank - 1] || String(e.rank);
      var v = { country: e.country, monasteries: mons(e.monasteries), place: place, points: e.points };
      if (e.rank === 1 && e.country_total !== undefined) return t("wop.bd_first", Object.assign(v, { total: e.country_total }));
      if (e.above !== undefined && e.above !== null) return t("wop.bd_lower", Object.assign(v, { above: e.above }));
      return t("wop.bd_place", v);
    }
    if (e.kind === "alliance" && !e.countries) return t("wop.bd_alliance_players", { number: e.number, points: e.points });
    if (e.kind === "alliance") return t(e.hand ? "wop.bd_alliance_hand" : "wop.bd_alliance", { number: e.number, a: e.countries[0], b: e.countries[1], points: e.points });
    if (e.kind === "chain") return t("wop.bd_chain", { monasteries: mons(e.sites ? e.sites.length : e.length), points: e.points });
    return e.kind + " " + e.points;
  }
  function renderBreakdown() {
    var live = $("wop-breakdown"), sc = sm().scores, box = document.createElement("div");
    ["intermediate", "final"].forEach(function (kind) {
      var res = sc[kind];
      if (!res) return;
      var sec = el("div", { class: "wop-scoring", "data-scoring": kind }, el("h4", { text: t("wop.scoring_" + kind) }));
      if (res.complete === false) sec.appendChild(el("p", { class: "trk-warn small wop-incomplete", text: t("wop.final_incomplete") }));
      res.players.forEach(function (r) {
        sec.appendChild(el("details", { class: "trk-details", "data-player": r.player },
          el("summary", null, who(r.player), " · ", el("strong", { class: "wop-points", text: String(r.total) }), " " + C.plural("wop.points_word", r.total)),
          el("ul", { class: "small" }, r.breakdown.map(function (e) {
            var li = el("li", { "data-kind": e.kind, text: describeEntry(e) });
            if (e.kind === "chain" && e.sites) {
              li.setAttribute("data-chain", e.sites.join(","));
              li.appendChild(el("button", { type: "button", class: "btn btn-small btn-ghost wop-chain-btn", text: t("wop.chain_show"),
                onclick: function () { showChain(e.sites); } }));
            }
            return li;
          }))));
      });
      (res.warnings || []).forEach(function (w) { sec.appendChild(el("p", { class: "trk-warn small", text: messageText(w) })); });
      box.appendChild(sec);
    });
    if (!box.children.length) box.appendChild(el("p", { class: "muted small", text: t("wop.no_scoring") }));
    C.patch(live, Array.prototype.slice.call(box.childNodes));
  }

  function renderStatus() {
    var s = sm(), text;
    if (s.phase === "ended") {
      var win = s.winners || [];
      text = win.length === 1 ? t("wop.ended", { players: win[0] }) : t("wop.ended_tie", { players: win.join(", ") });
    } else if (s.phase === "scoring") text = t("wop.status_scoring");
    else if (s.turn) text = C.plural("wop.status_turn", s.turn.placements.length, { player: s.turn.player });
    else text = t("wop.status_next", { player: s.next_player });
    $("wop-status").textContent = text;
  }

  function renderTurn() {
    var s = sm(), v = st(), ended = !playing();
    $("wop-turn").hidden = ended;
    if (ended) return;
    // (the board not come yet: the quick picks drawn from the summary, their room kept, disabled until it comes;
    // drawn later, they would push the form under them down under a finger)
    if (!board) { renderQuick(); return; }
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
    if (asking && asking.seq !== client.seq) closeAsk();  // the match moved on: what was asked is stale
    // no placement left that breaks no rule: the bar's button says so and offers the end of the turn
    var full = !!(s.turn && s.turn.can_place === false);
    $("wop-turn-end").hidden = !s.turn || !!asking;  // the bar at the bottom: the end of a turn with a placement, nothing before
    $("wop-turn-end").textContent = s.turn ? t(full ? "wop.turn_end_full" : "wop.turn_end", { player: s.turn.player }) : "";
    $("wop-turn-end").classList.toggle("wop-full", full);
    $("wop-swap").hidden = !!s.turn;  // a turn without a placement: asked in the turn box, never the bar's one button
    $("wop-swap").textContent = t("wop.swap", { player: s.next_player });
    renderQuick();
    renderWarnings(s);
  }

  // -- the quick placement: a country, then a free site, how many monasteries, or a councillor: two taps, the
  // second sends (no switching between monastery and councillor, and nothing to switch back) --
  var quickCountry = null;
  function renderQuick() {
    var s = sm(), v = st(), box = $("wop-quick-countries"), where = $("wop-quick-where");
    var player = s.turn ? s.turn.player : s.next_player, sup = s.supply[player] || {};
    $("wop-quick").hidden = !(sup.monasteries > 0 || sup.councillors > 0);
    $("wop-quick-hint").textContent = s.turn && s.turn.can_place === false ? t("wop.quick_hint_full", { player: player })
      : t("wop.quick_hint", { player: player });
    C.patch(box, s.countries.map(function (c) {
      var all = board ? board.sites[c.country] || [] : [];
      var sites = all.filter(function (id) { return !v.sites[id]; });
      var noMonastery = !(sup.monasteries > 0) || (all.length > 0 && !sites.length);
      var noCouncillor = !(sup.councillors > 0) || !(c.councillor_room > 0);
      // the country's name on its own line, what it has room for below: nothing runs out of the button
      return el("button", { type: "button", class: "btn wop-pick", "data-country": c.country,
        disabled: !board || (noMonastery && noCouncillor) ? "disabled" : null,
        "aria-pressed": String(c.country === quickCountry), onclick: function () { quickCountry = c.country === quickCountry ? null : c.country; renderQuick(); } },
        el("span", { class: "wop-pick-name", text: c.country }),
        el("span", { class: "small wop-pick-room", text: (c.free_sites === null ? c.monasteries_total + " ⌂" : C.plural("wop.free", c.free_sites)) +
          " · " + C.plural("wop.room", c.councillor_room) }));
    }));
    where.textContent = "";
    where.hidden = !quickCountry || !board;
    if (!quickCountry || !board) return;
    var c = s.countries.filter(function (x) { return x.country === quickCountry; })[0] || {};
    var all = board.sites[quickCountry] || [];
    // (placed or not placed after all: the choice closes)
    function place(extra) { placeAsked(Object.assign({ player: player }, extra), function () { quickCountry = null; renderQuick(); }); }
    if (sup.monasteries > 0) {
      if (all.length) {
        all.filter(function (id) { return !v.sites[id]; }).forEach(function (id) {
          where.appendChild(el("button", { type: "button", class: "btn btn-primary", "data-site": id, onclick: function () { place({ piece: "monastery", site: id }); } },
            t("wop.quick_site", { site: id })));
        });
      } else {
        [1, 2].forEach(function (n) {
          where.appendChild(el("button", { type: "button", class: "btn btn-primary", "data-count": String(n),
            onclick: function () { place({ piece: "monastery", country: quickCountry, count: n }); } }, mons(n) + " · " + quickCountry));
        });
      }
    }
    if (sup.councillors > 0 && c.councillor_room > 0) {
      where.appendChild(el("button", { type: "button", class: "btn btn-primary", "data-piece": "councillor",
        onclick: function () { place({ piece: "councillor", country: quickCountry }); } }, t("wop.quick_councillor", { country: quickCountry })));
    }
    markBreaks(where, player);
  }

  // -- a placement that would break a rule: said before it is recorded, asked in the bar under the thumb -------
  // the engine's answer for a placement as of the match's seq (companion/games/web_of_power.py check_place)
  var checks = {};
  function checkKey(data) { return client.seq + "|" + JSON.stringify(data); }
  function checkAll(list) {
    var want = list.filter(function (d) { return !checks[checkKey(d)]; });
    if (want.length) {
      var asked = C.api("POST", base() + "/wop/check", { data: { placements: want } });
      if (Object.keys(checks).length > 200) checks = {};
      want.forEach(function (d, i) {
        checks[checkKey(d)] = asked.then(function (r) { return Object.assign({ seq: r.seq }, r.checks[i]); });
        checks[checkKey(d)].catch(function () { delete checks[checkKey(d)]; });
      });
    }
    return Promise.all(list.map(function (d) { return checks[checkKey(d)]; }));
  }
  // the quick picks' placements checked as soon as they show: a pick that breaks a rule says so before its tap
  function markBreaks(where, player) {
    var buttons = Array.prototype.slice.call(where.querySelectorAll(".btn"));
    if (!buttons.length) return;
    var seq = client.seq, list = buttons.map(function (b) { return pickData(b, player); });
    checkAll(list).then(function (res) {
      if (client.seq !== seq) return;
      res.forEach(function (r, i) {
        // (a colour and a title, no words added: the pick keeps its size, nothing moves)
        var b = buttons[i], breaks = !!(r && r.warnings.length && r.seq === seq);
        b.classList.toggle("wop-breaks", breaks);
        if (breaks) b.title = r.warnings.map(askText).join("; "); else b.removeAttribute("title");
      });
    }, function () {});
  }
  function pickData(b, player) {
    if (b.dataset.site) return { player: player, piece: "monastery", site: b.dataset.site };
    if (b.dataset.piece === "councillor") return { player: player, piece: "councillor", country: quickCountry };
    return { player: player, piece: "monastery", country: quickCountry, count: parseInt(b.dataset.count, 10) };
  }
  // the warning as a question: what the placement would break (the engine's English when the kind is new)
  function askText(w) { return ruleText("wop.ask_", w); }
  // placing: the placements under way (checked, or sent and not yet answered); placingSeq: the seq shown when
  // the last one began
  var asking = null, placing = 0, placingSeq = -1;
  function closeAsk() {
    asking = null;
    $("wop-ask").hidden = true;
    if (client && client.view) renderTurn();
  }
  // a placement, checked first: without a warning it is sent; with one the table is asked (the table is the
  // truth: "Place anyway" records it with its warning; the check failing, the write alone decides)
  function placeAsked(data, after) {
    if (asking) return;
    // a second tap before this phone has shown anything newer (a double tap) is refused as a write refuses
    // one (js/companion.js _write): said, never silently dropped; a tap on a newer state the stream showed goes
    if (placing && client.seq === placingSeq) { C.toast(t("common.wait"), true); return; }
    placing++;
    var seq = placingSeq = client.seq;
    function go() {
      return send("place", data).then(function (m) { placing--; if (m && after) after(m); });
    }
    checkAll([data]).then(function (res) {
      var r = res[0];
      if (client.seq !== seq) { placing--; return placeAsked(data, after); }  // asked of an older match: again
      // (the box is ahead of this phone: the write says so, with the fresh state, as any stale write)
      if (!r || !r.warnings.length || r.seq !== client.seq) return go();
      placing--;
      asking = { seq: client.seq, data: data, after: after };
      var list = $("wop-ask-list");
      list.textContent = "";
      r.warnings.forEach(function (w) { list.appendChild(el("li", { "data-kind": w.kind, text: askText(w) })); });
      $("wop-ask").hidden = false;
      renderTurn();
      $("wop-ask-no").focus();
    }, go);
  }

  // a warning in the page's language, recorded (warn_) or asked before (ask_): the engine's English message when
  // the kind is unknown
  function ruleText(prefix, w) {
    var v = w.values || {};
    switch (w.kind) {
      case "out_of_turn": case "countries": case "pieces": case "empty_councillor": return t(prefix + w.kind, v);
      case "empty_count": return t(prefix + (v.limit === 1 ? "empty_count_one" : "empty_count_other"), v);
      case "cap": return t(prefix + (v.n === 1 ? "cap_one" : "cap_other"), v);
    }
    return w.message;
  }
  function warnText(w) { return ruleText("wop.warn_", w); }

  // the warnings of the current turn in the turn box; the earlier ones folded away below, each with its turn
  function renderWarnings(s) {
    var all = s.warnings || [], now = all.filter(function (w) { return w.current; }),
      old = all.filter(function (w) { return !w.current; }).reverse();
    function item(w, cls) {
      return el("li", { class: cls, "data-turn": String(w.turn), "data-seq": String(w.seq), text: t("wop.warn_turn", { turn: w.turn, message: warnText(w) }) });
    }
    var warn = $("wop-warnings");
    warn.textContent = "";
    now.forEach(function (w) { warn.appendChild(item(w, "trk-bad")); });
    var box = $("wop-warnings-old"), list = $("wop-warnings-old-list");
    box.hidden = !old.length;
    $("wop-warnings-old-title").textContent = old.length === 1 ? t("wop.warnings_old_one", { n: 1 })
      : t("wop.warnings_old_other", { n: old.length });
    list.textContent = "";
    old.forEach(function (w) { list.appendChild(item(w, "muted")); });
  }

  function renderDeck() {
    var s = sm(), ended = !playing();
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
        box.appendChild(el("label", { class: "trk-inline" }, p + " ", el("input", { type: "text", class: "wop-chain", "data-player": p, "data-field": "$.data.chains." + p,
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

  // -- the scoring step: what the board cannot tell, entered by hand -------------------------------------
  var handKey = null;
  function leaders() {
    // players with the most councillors (ties included) in two countries or more: only they can score an alliance
    var lead = {};
    sm().countries.forEach(function (c) {
      var top = 0;
      Object.keys(c.councillors).forEach(function (p) { top = Math.max(top, c.councillors[p]); });
      if (top > 0) Object.keys(c.councillors).forEach(function (p) { if (c.councillors[p] === top) lead[p] = (lead[p] || 0) + 1; });
    });
    return players().filter(function (p) { return lead[p] >= 2; });
  }
  function renderHand() {
    var s = sm(), box = $("wop-hand"), miss = s.phase === "scoring" ? s.missing : null;
    box.hidden = !miss;
    if (!miss) { handKey = null; return; }
    // the board's notice, once, here: what the table enters is what the board does not know
    $("wop-board-note").hidden = !!(s.board && s.board.complete);
    $("wop-board-note-text").textContent = s.board ? t("wop.board_note", { name: boardName(s.board.name) }) : "";
    var ul = $("wop-missing");
    ul.textContent = "";
    var na = miss.alliances.length, nc = miss.chains.length;
    if (na) ul.appendChild(el("li", { id: "wop-missing-alliances", text: na === 1 ? t("wop.missing_alliances_one", { list: ranges(miss.alliances) })
      : t("wop.missing_alliances_other", { n: na, list: ranges(miss.alliances) }) }));
    if (nc) ul.appendChild(el("li", { id: "wop-missing-chains", text: nc === 1 ? t("wop.missing_chains_one", { list: miss.chains[0] })
      : t("wop.missing_chains_other", { n: nc, list: miss.chains.join(", ") }) }));
    var key = JSON.stringify(miss);
    if (key === handKey) return; // keep what the table is typing
    handKey = key;
    var typed = handTyped(); // another phone entered a part: rebuild, keeping what is typed here
    var names = s.countries.map(function (c) { return c.country; }), lead = leaders();
    function countrySelect(cls) {
      return el("select", { class: cls, "aria-label": t("wop.country") }, el("option", { value: "", text: "—" }),
        names.map(function (c) { return el("option", { value: c, text: c }); }));
    }
    var al = $("wop-hand-alliances");
    al.textContent = "";
    miss.alliances.forEach(function (n) {
      var how = el("select", { class: "wop-al-how", "aria-label": t("wop.alliance_n", { number: n }) },
        [["", t("wop.al_how_unset")], ["countries", t("wop.al_how_countries")], ["players", t("wop.al_how_players")],
          ["nobody", t("wop.al_how_nobody")]].map(function (o) { return el("option", { value: o[0], text: o[1] }); }));
      var pair = el("div", { class: "trk-row wop-al-countries", hidden: true }, countrySelect("wop-al-a"), " + ", countrySelect("wop-al-b"));
      var who = el("div", { class: "wop-al-players", hidden: true },
        lead.map(function (p) { return el("label", { class: "trk-inline" }, el("input", { type: "checkbox", class: "wop-al-player", value: p }), " ", p); }),
        el("label", { class: "trk-inline" }, t("wop.al_points") + " ", el("input", { type: "number", class: "wop-al-points", min: "2", inputmode: "numeric" })),
        el("p", { class: "small muted", text: t("wop.al_points_hint") }));
      how.addEventListener("change", function () { pair.hidden = how.value !== "countries"; who.hidden = how.value !== "players"; });
      al.appendChild(el("div", { class: "wop-al", role: "group", "aria-label": t("wop.alliance_n", { number: n }), "data-number": String(n) },
        el("span", { class: "wop-al-name", text: t("wop.alliance_n", { number: n }) }), how, pair, who));
    });
    var ch = $("wop-hand-chains");
    ch.textContent = "";
    if (miss.chains.length) ch.appendChild(el("p", { class: "small", text: t("wop.chains_hand_hint") }));
    miss.chains.forEach(function (p) {
      ch.appendChild(el("label", { class: "field" }, t("wop.chains_of", { player: p }) + " ",
        el("input", { type: "text", class: "wop-hand-chain", "data-player": p, "data-field": "$.data.chains." + p, inputmode: "numeric", placeholder: "5, 4" })));
    });
    handRestore(typed);
  }
  function handTyped() {
    var out = { alliances: {}, chains: {} };
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-alliances .wop-al"), function (f) {
      out.alliances[f.dataset.number] = {
        how: f.querySelector(".wop-al-how").value, a: f.querySelector(".wop-al-a").value, b: f.querySelector(".wop-al-b").value,
        players: Array.prototype.filter.call(f.querySelectorAll(".wop-al-player"), function (c) { return c.checked; }).map(function (c) { return c.value; }),
        points: f.querySelector(".wop-al-points").value };
    });
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-chains .wop-hand-chain"), function (i) { out.chains[i.dataset.player] = i.value; });
    return out;
  }
  function handRestore(typed) {
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-alliances .wop-al"), function (f) {
      var v = typed.alliances[f.dataset.number];
      if (!v) return;
      var how = f.querySelector(".wop-al-how");
      how.value = v.how;
      f.querySelector(".wop-al-a").value = v.a;
      f.querySelector(".wop-al-b").value = v.b;
      Array.prototype.forEach.call(f.querySelectorAll(".wop-al-player"), function (c) { c.checked = v.players.indexOf(c.value) >= 0; });
      f.querySelector(".wop-al-points").value = v.points;
      how.dispatchEvent(new Event("change"));
    });
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-chains .wop-hand-chain"), function (i) {
      if (typed.chains[i.dataset.player] !== undefined) i.value = typed.chains[i.dataset.player];
    });
  }
  function readHand() {
    var alliances = [], chains = {}, bad = null;
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-alliances .wop-al"), function (f) {
      if (bad) return;
      var n = parseInt(f.dataset.number, 10), how = f.querySelector(".wop-al-how").value;
      if (how === "countries") {
        var a = f.querySelector(".wop-al-a").value, b = f.querySelector(".wop-al-b").value;
        if (!a || !b || a === b) bad = t("wop.hand_pick_two", { number: n });
        else alliances.push({ number: n, countries: [a, b] });
      } else if (how === "players") {
        var who = Array.prototype.filter.call(f.querySelectorAll(".wop-al-player"), function (c) { return c.checked; })
          .map(function (c) { return c.value; });
        var pts = parseInt(f.querySelector(".wop-al-points").value, 10);
        if (!who.length || !(pts >= 2)) bad = t("wop.hand_pick_players", { number: n });
        else alliances.push({ number: n, players: who, points: pts });
      } else if (how === "nobody") alliances.push({ number: n, players: [] });
    });
    Array.prototype.forEach.call(document.querySelectorAll("#wop-hand-chains .wop-hand-chain"), function (i) {
      var text = i.value.trim();
      if (bad || !text) return;
      var lengths = text === "0" ? [] : text.split(/[ ,;]+/).filter(Boolean).map(function (x) { return parseInt(x, 10); });
      if (lengths.some(function (x) { return !(x >= 4); })) bad = t("wop.chains_bad", { player: i.dataset.player });
      chains[i.dataset.player] = lengths;
    });
    if (bad) { C.toast(bad, true); return null; }
    var data = {};
    if (alliances.length) data.alliances = alliances;
    if (Object.keys(chains).length) data.chains = chains;
    if (!Object.keys(data).length) { C.toast(t("wop.hand_nothing"), true); return null; }
    return data;
  }

  function renderCountries() {
    var s = sm(), box = $("wop-countries");
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
    C.patch(box, el("div", { class: "trk-scroll" }, el("table", { class: "scores trk-compact", id: "wop-country-table" },
      el("thead", null, head), el("tbody", null, rows))));
    C.patch($("wop-supply"), el("p", { class: "small", id: "wop-supply-line" }, el("strong", { text: t("wop.supply") + ": " }),
      ps.map(function (p, i) { return el("span", { "data-player": p }, (i ? " · " : ""), who(p), " " + t("wop.supply_of", { monasteries: mons(s.supply[p].monasteries), councillors: cons(s.supply[p].councillors) })); })));
    // the board drawing: site circles coloured by holder
    if (board) {
      // each site's circle names its site (data-site, written by the server's drawing)
      document.querySelectorAll("#wop-svg svg circle[data-site]").forEach(function (mark) {
        var holder = st().sites[mark.getAttribute("data-site")];
        var fillWith = holder ? (colour(holder) || "#222") : "#fff", width = holder ? "3" : "1";
        if (mark.getAttribute("fill") !== fillWith) mark.setAttribute("fill", fillWith);
        if (mark.getAttribute("stroke-width") !== width) mark.setAttribute("stroke-width", width);
      });
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
    renderHand();
    renderBreakdown();
    renderCountries();
    paintPhoto();
    liveChains();
    $("wop-photo").hidden = !(board && board.photo && board.coords);
    $("wop-photo-hint").hidden = !playing();
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
      placeAsked(data);
    });
    $("wop-ask-no").addEventListener("click", function () {
      var a = asking;
      closeAsk();
      if (a && a.after) a.after(null);  // (the quick pick's choice is closed too: nothing half chosen is left)
    });
    $("wop-ask-yes").addEventListener("click", function () {
      var a = asking;
      if (!a) return;
      asking = null;
      $("wop-ask").hidden = true;
      placing++; placingSeq = client.seq;
      send("place", a.data).then(function (m) { placing--; if (m && a.after) a.after(m); renderTurn(); });
    });
    $("wop-turn-end").addEventListener("click", function () {
      send("turn.end", { player: sm().turn.player }).then(function (m) { if (m) $("wop-player").dataset.touched = ""; });
    });
    $("wop-swap").addEventListener("click", function () { send("turn.end", { player: sm().next_player }); });
    $("wop-deck-out").addEventListener("click", function () {
      var data = {};
      if (!$("wop-chains").hidden) { var ch = readChains(); if (!ch) return; if (Object.keys(ch).length) data.chains = ch; }
      // a scoring for the whole table (the second one ends the match): asked first
      if (!window.confirm(t(sm().next_scoring === "intermediate" ? "wop.deck_out_1_confirm" : "wop.deck_out_2_confirm"))) return;
      send("deck.out", data);
    });
    $("wop-hand-finish").addEventListener("click", function () {
      var data = readHand();
      if (data) send("scoring.hand", data);
    });
    $("wop-game-end").addEventListener("click", function () {
      if (!window.confirm(t("wop.game_end_confirm"))) return;
      var data = {};
      if (!$("wop-chains").hidden) { var ch = readChains(); if (!ch) return; if (Object.keys(ch).length) data.chains = ch; }
      send("game.end", data);
    });
    $("wop-photo-svg").addEventListener("click", tapSite);
    $("wop-photo-in").addEventListener("click", function () { photoZoom = Math.min(4, photoZoom * 1.5); $("wop-photo-svg").style.width = (100 * photoZoom) + "%"; });
    $("wop-photo-out").addEventListener("click", function () { photoZoom = Math.max(1, photoZoom / 1.5); $("wop-photo-svg").style.width = (100 * photoZoom) + "%"; });
    loadBoard();
  }

  function chainList(lengths) { return lengths && lengths.length ? lengths.join(", ") : t("wop.no_chain"); }

  function describe(e) {
    var d = e.data || {};
    switch (e.type) {
      case "place": return t("wop.ev_place", { player: d.player, pieces: pieces(d.piece, d.count || 1), where: d.site || d.country });
      case "turn.end": return t("wop.ev_turn_end", { player: d.player || "" });
      case "deck.out": return t("wop.ev_deck_out");
      case "game.end": return t("wop.ev_game_end");
      case "chains": return t("wop.ev_chains", { player: d.player, list: chainList(d.lengths) });
      case "scoring.hand": {
        var parts = (d.alliances || []).map(function (a) {
          if (a.countries) return t("wop.ev_al_countries", { number: a.number, a: a.countries[0], b: a.countries[1] });
          if (a.players && a.players.length) return t("wop.ev_al_players", { number: a.number, players: a.players.join(", "), points: a.points });
          return t("wop.ev_al_nobody", { number: a.number });
        });
        Object.keys(d.chains || {}).forEach(function (p) { parts.push(t("wop.ev_chains", { player: p, list: chainList(d.chains[p]) })); });
        return t("wop.ev_hand", { list: parts.join("; ") });
      }
    }
    return null;
  }

  C.registerGame(GAME, { mount: mount, update: update, describe: describe,
    scores: function (v) { return !!(v && v.summary && v.summary.scores); } });
})();
