/* display.js: the TV beside a table (/m/<id>/display), on top of the generic clock and scoreboard of
 * pages.js: the game's own panel (web/static/games/<game>.display.js registers it with
 * CompanionTV.register), the final roll (whose roll, the total that ends the match, then the dice with a
 * short reveal), the ranking revealed from last to first with the winner's name large and the season
 * points each place earned, the alert colour, sounds, the light/dark and mute toggles, and the table's QR
 * code when the server has one (/m/<id>/qr.svg: the page says so with data-src). pages.js hands over every
 * view, event, tick and alert with the DOM events companion:tv-view, -event, -tick and -alert.
 *
 * A reveal step lasts 1.2 s; ?reveal=MS changes it (the browser tests use a short one). */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el, body = document.body;
  var id = body.dataset.match, game = body.dataset.game;
  var params = new URLSearchParams(location.search);
  var STEP = Math.max(0, parseInt(params.get("reveal") || "1200", 10) || 0);
  var plugins = {}, client = null, mounted = false;
  var $ = function (x) { return document.getElementById(x); };

  // -- dice faces ------------------------------------------------------------------------------------
  var PIPS = { 1: [[50, 50]], 2: [[28, 28], [72, 72]], 3: [[28, 28], [50, 50], [72, 72]],
               4: [[28, 28], [72, 28], [28, 72], [72, 72]], 5: [[28, 28], [72, 28], [50, 50], [28, 72], [72, 72]],
               6: [[28, 26], [72, 26], [28, 50], [72, 50], [28, 74], [72, 74]] };
  var NS = "http://www.w3.org/2000/svg";
  function die(n, kind) {
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 100 100");
    svg.setAttribute("class", "tv-die" + (kind ? " tv-die-" + kind : ""));
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", n ? String(n) : "?");
    svg.setAttribute("data-value", n ? String(n) : "");
    var r = document.createElementNS(NS, "rect");
    r.setAttribute("x", "4"); r.setAttribute("y", "4"); r.setAttribute("width", "92"); r.setAttribute("height", "92");
    r.setAttribute("rx", "16"); r.setAttribute("class", "tv-die-body");
    svg.appendChild(r);
    if (PIPS[n]) PIPS[n].forEach(function (p) {
      var c = document.createElementNS(NS, "circle");
      c.setAttribute("cx", String(p[0])); c.setAttribute("cy", String(p[1])); c.setAttribute("r", "9");
      c.setAttribute("class", "tv-pip");
      svg.appendChild(c);
    });
    else {
      var q = document.createElementNS(NS, "text");
      q.setAttribute("x", "50"); q.setAttribute("y", "66"); q.setAttribute("text-anchor", "middle");
      q.setAttribute("class", "tv-die-q"); q.textContent = "?";
      svg.appendChild(q);
    }
    return svg;
  }
  function dice(list, kind) { return el("span", { class: "tv-dice" }, (list || []).map(function (n) { return die(n, kind); })); }
  function swatch(colour) { return colour ? el("span", { class: "swatch", style: "background:" + colour }) : null; }
  function colourOf(p) { return ((client && client.match && client.match.colours) || {})[p]; }
  function who(p) { return el("span", { class: "tv-who" }, swatch(colourOf(p)), p); }
  function sound(kind) { if (window.CompanionSound) window.CompanionSound.play(kind); }

  // -- plugins -----------------------------------------------------------------------------------------
  // a panel that registers after the first view (scripts load in parallel): the page is drawn again with it
  // (whose turn it is and the other lines its view handler writes below), not only the panel
  function register(g, plugin) {
    plugins[g] = plugin;
    var was = mounted;
    mount();
    if (!was && mounted && client && client.view) client.setView(client.view, true);
  }
  function mount() {
    var p = plugins[game], root = $("tv-game");
    if (!p || mounted || !client || !client.view || !root) return;
    if (client.view.tracking === "result") return;  // a match recorded by its result only: the places alone
    mounted = true;
    body.classList.add("tv-has-panel");
    root.hidden = false;
    try { p.mount(root, client); p.update(client.view, client); } catch (e) { console.error(e); }
  }

  // -- theme and mute ------------------------------------------------------------------------------------
  var themeBtn = $("tv-theme");
  if (themeBtn) themeBtn.addEventListener("click", function () {
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    var cur = document.documentElement.getAttribute("data-theme") || (dark ? "dark" : "light");
    var next = cur === "dark" ? "light" : "dark";
    document.documentElement.setAttribute("data-theme", next);
    try { localStorage.setItem("theme", next); } catch (e) { /* private mode */ }
  });
  var muteBtn = $("tv-mute");
  function drawMute() {
    if (!muteBtn || !window.CompanionSound) return;
    var m = window.CompanionSound.muted();
    muteBtn.textContent = "♪";  // struck through when muted (css)
    muteBtn.setAttribute("aria-pressed", m ? "true" : "false");
    muteBtn.setAttribute("aria-label", t(m ? "tv.unmute" : "tv.mute"));
    muteBtn.title = t(m ? "tv.unmute" : "tv.mute");
  }
  if (muteBtn) muteBtn.addEventListener("click", function () {
    window.CompanionSound.setMuted(!window.CompanionSound.muted()); drawMute();
  });
  // a kiosk URL may start it muted: /m/<id>/display?sound=off
  if (params.get("sound") === "off" && window.CompanionSound) window.CompanionSound.setMuted(true);
  drawMute();
  // an organiser switches the sound from another device (PUT /api/tv/sound, /api/matches/<id>/tv/sound):
  // each switch is obeyed (silent when the club's or this table's is off, sounding when both are on); the ♪
  // button above keeps working in between (the last word wins). The stream's head carries both (a TV
  // switched on later starts silent if either is off; one that reconnects follows what changed meanwhile).
  var remote = { club_off: false, match_off: false }, remoteOff = null;
  document.addEventListener("companion:tv-sound", function (ev) {
    var d = ev.detail || {}, head = typeof d.club_off === "boolean" && typeof d.match_off === "boolean";
    if (typeof d.club_off === "boolean") remote.club_off = d.club_off;
    if (typeof d.match_off === "boolean") remote.match_off = d.match_off;
    var off = remote.club_off || remote.match_off;
    if (!window.CompanionSound) return;
    if (!head || (remoteOff === null ? off : off !== remoteOff)) window.CompanionSound.setMuted(off);
    remoteOff = off;
    body.dataset.remoteSound = off ? "off" : "on";
    drawMute();
  });

  // -- a clock of an hour or more (h:mm:ss) takes a smaller size, so it stays within its column ----------
  var clockOut = $("clock-remaining");
  if (clockOut && window.MutationObserver) {
    var fit = function () { clockOut.classList.toggle("clock-long", clockOut.textContent.length > 5); };
    new MutationObserver(fit).observe(clockOut, { childList: true, characterData: true, subtree: true });
    fit();
  }


  // -- the final roll ----------------------------------------------------------------------------------------
  var roll = { threshold: null, owed: null, timer: null, shownSeq: 0 };
  function rollPanel() { return $("tv-roll"); }
  function showOwed(view) {
    var box = rollPanel();
    if (!box) return;
    if (roll.timer) return; // a reveal is running: it finishes first
    box.textContent = "";
    box.dataset.state = "owed";
    box.appendChild(el("div", { class: "tv-roll-who" }, t("tv.roll_owed", { player: view.awaiting_roll })));
    box.appendChild(el("div", { class: "tv-roll-target", text: t("tv.roll_target", { n: view.final_threshold }) }));
    box.appendChild(dice([0, 0], "waiting"));
    box.hidden = false;
    body.classList.add("tv-alert");
  }
  function showRoll(ev, threshold, animate) {
    var box = rollPanel();
    if (!box || !ev || !ev.data) return;
    var d = ev.data.dice || [], total = d.reduce(function (a, b) { return a + b; }, 0);
    var ends = threshold !== null && total <= threshold;
    box.textContent = "";
    box.dataset.state = "rolling";
    box.appendChild(el("div", { class: "tv-roll-who" }, t("tv.roll_of", { player: ev.data.player })));
    box.appendChild(el("div", { class: "tv-roll-target", text: t("tv.roll_target", { n: threshold }) }));
    var faces = dice([0, 0], "rolling");
    box.appendChild(faces);
    var verdict = el("div", { class: "tv-roll-verdict" });
    box.appendChild(verdict);
    box.hidden = false;
    function reveal() {
      roll.timer = null;
      box.dataset.state = ends ? "ends" : "goes-on";
      box.replaceChild(dice(d, ends ? "ends" : "goes-on"), faces);
      verdict.textContent = t(ends ? "tv.roll_ends" : "tv.roll_goes_on", { total: total, n: threshold });
      if (ends) sound("ended");
    }
    if (roll.timer) clearTimeout(roll.timer);
    if (animate && STEP > 0) roll.timer = setTimeout(reveal, STEP);
    else reveal();
  }

  // -- the end: the ranking from last to first -----------------------------------------------------------
  var ranking = { shown: false, timers: [], seq: null };
  function pts(v) {
    if (v === null || v === undefined) return "";
    return (v > 0 ? "+" : "") + C.plural("tv.points", Math.round(v * 100) / 100);
  }
  // a text as large as it can be, up to max px, within its box's width and at most `lines` lines
  // (set in vh: the same on a screen of another size)
  function fitText(node, max, min, lines) {
    var size = max, vh = window.innerHeight / 100;
    node.style.fontSize = (size / vh) + "vh";
    while (size > min) {
      var lh = parseFloat(getComputedStyle(node).lineHeight) || size * 1.1;
      if (node.scrollWidth <= node.clientWidth + 1 && node.getBoundingClientRect().height <= lh * lines + 2) break;
      size = Math.max(min, Math.floor(size * 0.92));
      node.style.fontSize = (size / vh) + "vh";
    }
  }
  function fitWinner() {
    var name = document.querySelector(".tv-winner-name"), list = document.querySelector(".tv-ranking-list");
    if (!name || !list) return;
    var room = window.innerHeight - list.getBoundingClientRect().bottom - window.innerHeight * 0.12;
    fitText(name, Math.max(window.innerHeight * 0.05, Math.min(window.innerHeight * 0.11, room / 2.2)), window.innerHeight * 0.035, 2);
  }
  var refit = null;
  window.addEventListener("resize", function () { if (refit) clearTimeout(refit); refit = setTimeout(fitWinner, 100); });
  function hideRanking() {
    ranking.timers.forEach(clearTimeout); ranking.timers = [];
    ranking.shown = false; ranking.seq = null;
    var box = $("tv-ranking");
    if (box) { box.hidden = true; box.textContent = ""; delete box.dataset.revealed; delete box.dataset.order; }
    body.classList.remove("tv-ended", "tv-ranked");
    if ($("tv-playlog")) $("tv-playlog").hidden = true;
  }
  // the finished match's play log link as a QR code (docs/playlog.md), in the side column where the table's
  // join code was: every player scans it to save the match in BG Stats
  function showPlaylog() {
    var box = $("tv-playlog"), img = $("tv-playlog-img");
    if (!box || !img) return;
    img.onload = function () { box.hidden = false; };
    img.src = "/api/matches/" + encodeURIComponent(id) + "/playlog.svg?seq=" + encodeURIComponent(String(client.seq || ""));
  }
  function showRanking() {
    if (ranking.shown) return;
    ranking.shown = true;
    var p = plugins[game], wait = mounted && p && p.revealing ? p.revealing() : 0;
    // the dice of the roll that ended the match show first, and stay a moment; a game's own reveal (Web of
    // Power's final scoring) ends first
    if (roll.timer || wait > 0) {
      ranking.timers.push(setTimeout(function () { ranking.shown = false; showRanking(); }, roll.timer ? STEP * 3 : wait));
      return;
    }
    var seq = client ? client.seq : null;
    C.api("GET", "/api/matches/" + encodeURIComponent(id) + "/result").then(function (res) {
      var box = $("tv-ranking");
      if (!ranking.shown || (client && client.seq !== seq)) return;  // taken back meanwhile, or asked again
      if (!box || !res.ended || !res.results.length) { ranking.shown = false; return; }
      body.classList.add("tv-ended", "tv-ranked");
      var plugin = mounted ? plugins[game] : null;
      body.classList.add("tv-ended");
      box.textContent = "";
      box.hidden = false;
      var rows = res.results.slice().sort(function (a, b) { return b.place - a.place; });
      var winners = res.results.filter(function (r) { return r.place === 1; }).map(function (r) { return r.player; });
      box.appendChild(el("h2", { class: "tv-ranking-title", text: t("tv.ranking") }));
      var scored = !!(plugin && plugin.score && client && rows.some(function (r) { return plugin.score(client.view, r.player); }));
      // standings points only for a season that counts the match (none promised before it is in one)
      var counted = res.season_state === "counted";
      box.classList.toggle("tv-no-points", !counted);
      box.classList.toggle("tv-no-score", !scored);
      // what the two numbers of a row are: the game's score, the points it earns in the standings
      box.appendChild(el("div", { class: "tv-rank-head", "aria-hidden": "true" }, el("span"), el("span"),
        el("span", { class: "tv-rank-score", text: scored ? t("tv.rank_score") : "" }),
        el("span", { class: "tv-rank-points", text: counted ? t("tv.rank_points") : "" })));
      var list = el("ol", { class: "tv-ranking-list", reversed: true });
      box.appendChild(list);
      var big = el("div", { class: "tv-winner", hidden: true });
      box.appendChild(big);
      rows.forEach(function (r, i) {
        var li = el("li", { class: "tv-rank" + (r.place === 1 ? " tv-rank-first" : ""), "data-player": r.player,
                            "data-place": String(r.place), hidden: true },
          el("span", { class: "tv-rank-place", text: String(r.place) }),
          el("span", { class: "tv-rank-name" }, who(r.player),
            el("span", { class: "tv-rank-notes", text: [r.objective ? t("tv.objective") : "", r.eliminated ? t("tv.eliminated") : "",
              plugin && plugin.note && client ? plugin.note(client.view, r.player) : ""].filter(Boolean).join(" · ") })),
          el("span", { class: "tv-rank-score", text: plugin && plugin.score && client ? (plugin.score(client.view, r.player) || "") : "" }),
          el("span", { class: "tv-rank-points", text: counted ? pts(r.points) : "" }));
        list.insertBefore(li, list.firstChild);  // last place at the bottom, revealed first
        ranking.timers.push(setTimeout(function () {
          li.hidden = false; li.classList.add("tv-in");
          box.dataset.order = (box.dataset.order ? box.dataset.order + "," : "") + r.place;  // the order shown, for tests
        }, STEP * i));
      });
      ranking.timers.push(setTimeout(function () {
        big.textContent = "";
        big.appendChild(el("span", { class: "tv-winner-label", text: t(winners.length === 1 ? "tv.winner" : "tv.winners") }));
        var name = el("span", { class: "tv-winner-name", text: winners.join(" · ") });
        big.appendChild(name);
        // points are promised only for a season that counts them; a match left to a season not made yet says so
        if (res.season) big.appendChild(el("span", { class: "tv-winner-season", text: t("tv.season_points", { season: res.season }) }));
        else if (res.season_state === "waiting") big.appendChild(el("span", { class: "tv-winner-season", text: t("tv.no_season_yet") }));
        big.hidden = false;
        fitWinner();  // as large as the room left under the list allows, on two lines at most
        box.dataset.revealed = "1";
        showPlaylog();
        sound("ended");
      }, STEP * rows.length));
    }, function () { ranking.shown = false; });
  }

  // a TV switched on after the end has no code to sit (the server draws it while the match is open): the end
  // taken back, it is asked for once and put where a reload would show it
  var drawnEnded = body.dataset.drawnStatus === "ended", askingCode = false;
  function tableCodeBack() {
    if (!drawnEnded || askingCode) return;
    askingCode = true;
    C.pageParts("/m/" + encodeURIComponent(id) + "/display", ["table-qr"]).then(function (parts) {
      drawnEnded = askingCode = false;
      var box = $("tv-qrs");
      if (parts["table-qr"] && box && !$("table-qr")) box.appendChild(parts["table-qr"]);
    }, function () { askingCode = false; });  // the Pi away: asked again at the next view
  }

  // -- following the match -------------------------------------------------------------------------------------
  var lastPhase = null, announcedOwed = null;
  // the alert colour: the time is up (the clock's phases after the regular one) or a final roll is owed
  function alerting(v) {
    return !!v.awaiting_roll || (!v.ended && ["finishing-round", "last-lap", "final-rounds"].indexOf(v.phase) >= 0);
  }
  document.addEventListener("companion:tv-tick", function (ev) {
    var d = ev.detail || {};
    if (d.phase) body.classList.toggle("tv-alert", alerting(d));
  });
  document.addEventListener("companion:tv-view", function (ev) {
    client = ev.detail.client;
    var view = ev.detail.view;
    mount();
    var p = plugins[game];
    if (mounted && p && p.update) { try { p.update(view, client); } catch (e) { console.error(e); } }
    body.classList.toggle("tv-alert", alerting(view));
    var ended = client.ended();
    if (!view.clock && $("clock-turn")) {  // a game without the clock: whose turn, said by the game's panel
      var who_ = !ended && mounted && p && p.turn ? p.turn(view, client) : null;
      $("clock-turn").textContent = ended ? t("tv.match_over") : (who_ ? t("clock.turn", { player: who_ }) : "");
    }
    if (ended) body.classList.add("tv-ended");
    else if (ranking.shown || body.classList.contains("tv-ended")) hideRanking();  // the end was taken back
    if (!ended) tableCodeBack();
    if (view.awaiting_roll) {
      roll.threshold = view.final_threshold;
      if (announcedOwed !== view.awaiting_roll + "@" + view.seq) { announcedOwed = view.awaiting_roll + "@" + view.seq; showOwed(view); sound("final-roll"); }
    } else if (rollPanel() && rollPanel().dataset.state === "owed") {
      rollPanel().hidden = true;
    }
    lastPhase = view.phase;
    if (ended) setTimeout(showRanking, 0);  // after this event's own panels (the roll's dice)
  });
  document.addEventListener("companion:tv-event", function (ev) {
    var d = ev.detail.data || {}, e = d.event;
    if (!e) return;
    if (e.type === "final.roll") { showRoll(e, roll.threshold, true); }
    else if (rollPanel() && rollPanel().dataset.state !== "owed" && !(d.view && d.view.awaiting_roll)) {
      rollPanel().hidden = true;  // the game went on: the dice of the last roll make room
    }
    var p = plugins[game];
    if (mounted && p && p.event) { try { p.event(e, d.view, client); } catch (err) { console.error(err); } }
  });
  document.addEventListener("companion:tv-alert", function (ev) {
    var a = ev.detail && ev.detail.alert;
    if (a === "15-minutes" || a === "5-minutes" || a === "time-up") sound(a);
  });
  // a TV switched on after the roll that ended the match: that roll's dice, without the suspense
  document.addEventListener("companion:tv-loaded", function (ev) {
    var v = ev.detail.view;
    if (v && v.ended && v.ended_by && v.ended_by.reason === "final-roll" && v.seq) {
      C.api("GET", "/api/matches/" + encodeURIComponent(id) + "/events?after=" + (v.seq - 1)).then(function (d) {
        var last = d.events[d.events.length - 1];
        if (last && last.type === "final.roll") showRoll(last, v.final_threshold, false);
      }, function () {});
    }
  });

  // the box's first answer may come before this script runs (the page's scripts load while the match is asked
  // for): its view and its "loaded" were told to nobody, so they are told again now that someone listens
  var early = window.companionMatch;
  if (early && early.view) {
    client = early;
    early.setView(early.view, true);
    if (early.loaded) document.dispatchEvent(new CustomEvent("companion:tv-loaded", { detail: { view: early.view } }));
  }
  // and the sound switches the stream told before this script listened (its head's, and any after): obeyed now
  if (early && early.tvSound) document.dispatchEvent(new CustomEvent("companion:tv-sound", { detail: early.tvSound }));

  window.CompanionTV = { register: register, die: die, dice: dice, who: who, swatch: swatch, step: STEP,
                         colour: colourOf, client: function () { return client; } };
})();
