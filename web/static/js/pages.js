/* pages.js: the controllers of the generic pages (home, new match, match, display, tournament,
 * join, login). Game trackers live in web/static/games/<game>.js and use window.Companion. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var body = document.body;

  // -- everywhere: theme, language, sign-out ---------------------------------------------
  var theme = null;
  try { theme = localStorage.getItem("theme"); } catch (e) { theme = null; }
  if (theme) document.documentElement.setAttribute("data-theme", theme);
  var themeBtn = document.getElementById("theme-toggle");
  if (themeBtn) themeBtn.addEventListener("click", function () {
    var dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    var cur = document.documentElement.getAttribute("data-theme") || (dark ? "dark" : "light");
    var next = cur === "dark" ? "light" : "dark";
    document.documentElement.setAttribute("data-theme", next);
    try { localStorage.setItem("theme", next); } catch (e) { /* private mode */ }
  });
  var menu = document.getElementById("menu-toggle");
  if (menu) menu.addEventListener("click", function () {
    var top = document.getElementById("top"), open = !top.classList.contains("open");
    top.classList.toggle("open", open);
    menu.setAttribute("aria-expanded", String(open));
  });
  var logout = document.getElementById("logout");
  if (logout) logout.addEventListener("click", function () {
    C.api("POST", "/api/auth/logout").then(function () { location.href = "/"; }, function (e) { C.toast(C.errorText(e), true); });
  });

  function colourOf(match, player) { return (match.colours || {})[player]; }
  function swatch(colour) { return colour ? el("span", { class: "swatch", style: "background:" + colour }) : null; }
  // dates in the page's language, with the browser's regional variant when it is the same language (en-GB: 30/11/26)
  var lang = body.dataset.lang || "en", nav = navigator.language || "";
  var locale = nav.toLowerCase().split("-")[0] === lang ? nav : lang;
  var whenFormat = null;  // made once: the history writes every event's time again on each event
  function when(iso) {
    if (!iso) return "";
    var d = new Date(iso);
    if (isNaN(d)) return iso;
    if (!whenFormat) {
      try { whenFormat = new Intl.DateTimeFormat(locale, { dateStyle: "short", timeStyle: "short" }); }
      catch (e) { return d.toLocaleString(locale, { dateStyle: "short", timeStyle: "short" }); }
    }
    return whenFormat.format(d);
  }
  // a text or a flag written only when it changes: a page takes every event, and a write of the same words
  // still costs the browser a new layout and paint of that line
  function setText(node, s) { if (node && node.textContent !== s) node.textContent = s; }
  function setHidden(node, h) { h = !!h; if (node && node.hidden !== h) node.hidden = h; }
  function gameName(g) { var s = t("game." + g); return s === "game." + g ? g : s; }
  // a phase in words: the clock's (phase.*), or a game's own (gphase.<game>.<phase>); never the raw name
  function phaseName(p, game) {
    if (game) { var g = t("gphase." + game + "." + p); if (g !== "gphase." + game + "." + p) return g; }
    var s = t("phase." + p);
    return s === "phase." + p ? "" : s;
  }

  // -- scores and clock (match, display, tournament) -------------------------------------
  function renderScores(live, view, match) {
    // the game's tracker draws this box itself (its own columns): not drawn twice on every event
    var game = C.game(body.dataset.game || "");
    if (game && game.scores && game.scores(view)) return;
    var box = document.createElement("div");
    scoresInto(box, view, match);
    C.patch(live, Array.prototype.slice.call(box.childNodes));
  }
  function scoresInto(box, view, match) {
    if (view && view.tracking === "result") { renderResult(box, view, match || {}); return; }
    var summary = view && view.summary;
    var scores = summary && (summary.scores || summary.points);
    if (scores && typeof scores === "object" && !Array.isArray(scores)) {
      var breakdown = summary.breakdown && typeof summary.breakdown === "object" ? summary.breakdown : null;
      var cols = [];
      if (breakdown) {
        Object.keys(breakdown).forEach(function (p) {
          var b = breakdown[p];
          if (b && typeof b === "object") Object.keys(b).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); });
        });
      }
      var names = Object.keys(scores);
      var top = Math.max.apply(null, names.map(function (n) { return typeof scores[n] === "number" ? scores[n] : -Infinity; }));
      var head = el("tr", null, el("th", { text: t("scores.player") }),
        cols.map(function (k) { var s = t("breakdown." + k); return el("th", { class: "num", text: s === "breakdown." + k ? k : s }); }),
        el("th", { class: "num", text: t("scores.total") }));
      var rows = names.map(function (n) {
        var b = breakdown && breakdown[n] || {};
        return el("tr", { class: scores[n] === top && names.length > 1 ? "leader" : null, "data-player": n },
          el("td", null, swatch(colourOf(match || {}, n)), n),
          cols.map(function (k) { return el("td", { class: "num", text: b[k] === undefined ? "" : typeof b[k] === "number" ? C.num(b[k]) : String(b[k]) }); }),
          el("td", { class: "num score", text: typeof scores[n] === "number" ? C.num(scores[n]) : String(scores[n]) }));
      });
      box.appendChild(el("div", { class: "table-wrap" }, el("table", { class: "scores" }, el("thead", null, head), el("tbody", null, rows))));
      var extra = Object.keys(summary).filter(function (k) { return ["scores", "points", "breakdown"].indexOf(k) < 0; });
      if (extra.length) box.appendChild(kv(summary, extra));
    } else if (summary && typeof summary === "object") {
      box.appendChild(kv(summary, Object.keys(summary)));
    } else if (view && view.state && typeof view.state === "object") {
      box.appendChild(kv(view.state, Object.keys(view.state)));
    } else {
      box.appendChild(el("p", { class: "muted", text: t("scores.none") }));
    }
  }
  // a match recorded by its final result only: the places entered by hand (docs/rulings.md, "Final result only")
  function renderResult(box, view, match) {
    if (!view.result) { box.appendChild(el("p", { class: "muted", id: "result-waiting", text: t("result.waiting") })); return; }
    box.appendChild(el("p", { class: "result-by-hand", id: "result-by-hand", text: t(view.corrected ? "result.by_organiser" : "result.by_hand") }));
    var rows = view.result.map(function (r) {
      return el("tr", { "data-player": r.player, class: r.place === 1 ? "leader" : null },
        el("td", { class: "num score", text: String(r.place) }),
        el("td", null, swatch(colourOf(match, r.player)), r.player,
          r.objective ? el("span", { class: "muted small", text: " · " + t("result.objective") }) : null,
          r.eliminated ? el("span", { class: "muted small", text: " · " + t("result.eliminated") }) : null));
    });
    box.appendChild(el("div", { class: "table-wrap" }, el("table", { class: "scores", id: "result-ranking" },
      el("thead", null, el("tr", null, el("th", { class: "num", text: t("result.col_place") }), el("th", { text: t("scores.player") }))),
      el("tbody", null, rows))));
  }
  // Generic rendering of a summary: scalars as text, lists of records and objects keyed by player as
  // tables, other objects as a definition list (recursively, a few levels deep).
  function label(prefix, k) { var s = t(prefix + k); return s === prefix + k ? String(k).replace(/_/g, " ") : s; }
  function isPlain(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function scalar(v) {
    if (v === null || v === undefined) return "–";
    if (typeof v === "boolean") return v ? "✓" : "–";
    if (typeof v === "number") return C.num(v);
    return String(v);
  }
  function compact(v) {
    if (!isPlain(v) && !Array.isArray(v)) return scalar(v);
    if (Array.isArray(v)) return v.map(compact).join(", ");
    return Object.keys(v).map(function (k) { return label("summary.", k) + " " + compact(v[k]); }).join(" · ");
  }
  function table(rows, firstKey) {
    var cols = [];
    rows.forEach(function (r) { Object.keys(r[1]).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); }); });
    return el("div", { class: "table-wrap" }, el("table", { class: "scores" },
      el("thead", null, el("tr", null, firstKey !== null ? el("th", { text: firstKey }) : null,
        cols.map(function (k) { return el("th", { text: label("summary.", k) }); }))),
      el("tbody", null, rows.map(function (r) {
        return el("tr", null, firstKey !== null ? el("td", { text: r[0] }) : null, cols.map(function (k) {
          var v = r[1][k];
          return el("td", { class: typeof v === "number" ? "num" : null, text: compact(v) });
        }));
      }))));
  }
  function renderValue(v, depth) {
    if (Array.isArray(v)) {
      if (v.length && v.every(isPlain)) return table(v.map(function (r, i) { return [String(i + 1), r]; }), null);
      return document.createTextNode(v.length ? v.map(compact).join(", ") : "–");
    }
    if (isPlain(v)) {
      var keys = Object.keys(v);
      if (keys.length && keys.every(function (k) { return isPlain(v[k]); }) && depth < 3)
        return table(keys.map(function (k) { return [k, v[k]]; }), "");
      if (depth >= 3) return document.createTextNode(compact(v));
      return kv(v, keys, depth + 1);
    }
    return document.createTextNode(scalar(v));
  }
  function kv(obj, keys, depth) {
    var dl = el("dl", { class: "kv" });
    keys.forEach(function (k) {
      var shown = renderValue(obj[k], depth || 0);
      var wide = shown.nodeType === 1 && (shown.classList.contains("table-wrap") || shown.tagName === "DL");
      dl.appendChild(el("dt", { class: wide ? "wide" : null, text: label("summary.", k) }));
      dl.appendChild(el("dd", { class: wide ? "wide" : null }, shown));
    });
    return dl;
  }

  // What the clock panel says besides the time: phase, round, whose turn (or roll), the end, and a note
  // for the table when the time is up. Ticks carry the clock's view too, so the phase turns at 0:00.
  function endedText(by) {
    by = by || {};
    if (by.reason === "objective" && by.player) return t("clock.ended_objective", { player: by.player });
    if (by.reason === "final-roll" && by.player) return t("clock.ended_roll", { player: by.player });
    return t("clock.ended");
  }
  function turnText(v) {
    if (v.ended) return endedText(v.ended_by);
    if (v.awaiting_roll) return t("clock.awaiting_roll", { player: v.awaiting_roll, n: v.final_threshold });
    return v.current_player ? t("clock.turn", { player: v.current_player }) : "";
  }
  // an alert of the clock runner (15-minutes, 5-minutes, time-up, ended) in words
  function alertText(d, players) {
    var a = d && d.alert;
    if (a === "time-up") return t("clock.time_up", { player: (players || [])[0] || "" });
    if (a === "15-minutes" || a === "5-minutes") return C.plural("clock.minutes_left", parseInt(a, 10));
    if (a === "ended") return endedText(d.ended_by);
    return d && d.message ? d.message : t("clock.alert");
  }
  // the words of a pause's reason (stored as a key: power-lost, server-stopped) or the reason as typed

  // A local ticker between server ticks: the server's view says remaining_seconds at seq time.
  function ClockView(root) {
    this.root = root; this.remaining = null; this.running = false; this.base = 0; this.timer = null;
    this.v = {}; this.players = []; this.pausedBy = null;
    var self = this;
    // a page that knows it is offline stops counting (the Pi's clock is the truth) and says so
    document.addEventListener("companion:online", function (ev) {
      if (!ev.detail && self.running && self.remaining !== null) {  // keep the time shown when the link dropped
        self.remaining -= (Date.now() - self.base) / 1000; self.base = Date.now();
      }
      self.draw();
    });
  }
  ClockView.prototype.set = function (view) {
    var q = function (id) { return document.getElementById(id); };
    var clock = view && view.clock;
    var panel = q("clock-panel");
    var noClock = document.body.classList.contains("no-clock");
    this.hasClock = !!clock;
    if (!clock) { setHidden(panel, true); C.wakeLock(false); this.stop(); if (!noClock) document.body.classList.add("no-clock"); return; }
    if (noClock) document.body.classList.remove("no-clock");
    setHidden(panel, false);
    if (view.players) this.players = view.players;
    this.remaining = clock.remaining_seconds;
    this.running = !!clock.running && !view.ended;
    this.base = Date.now();
    this.v = { phase: view.phase, round: view.round, ended: view.ended, ended_by: view.ended_by,
               awaiting_roll: view.awaiting_roll, final_threshold: view.final_threshold,
               current_player: view.current_player };
    C.wakeLock(this.running);
    this.draw();
    var self = this;
    if (this.running && !this.timer) this.timer = setInterval(function () { self.draw(); }, 500);
    if (!this.running) this.stop();
  };
  ClockView.prototype.tick = function (d) {
    var c = d && (d.clock || (typeof d.remaining_seconds === "number" ? d : null));
    if (!c || typeof c.remaining_seconds !== "number") return;
    this.remaining = c.remaining_seconds; this.base = Date.now();
    if (d.clock) this.running = !!c.running && !d.ended;
    if (d.phase) {  // a tick is the clock's view now: the phase turns when the time runs out
      var v = this.v;
      ["phase", "round", "ended", "ended_by", "awaiting_roll", "final_threshold", "current_player"].forEach(function (k) {
        if (d[k] !== undefined) v[k] = d[k];
      });
    }
    this.draw();
  };
  ClockView.prototype.stop = function () { if (this.timer) { clearInterval(this.timer); this.timer = null; } };
  ClockView.prototype.draw = function () {
    var q = function (id) { return document.getElementById(id); };
    var out = q("clock-remaining");
    // a match without the clock: its lines are the page's (the TV says whose turn it is there), not the clock's
    if (!out || this.hasClock === false) return;
    var r = this.remaining, v = this.v, offline = C.isOffline();
    if (r !== null && r !== undefined && this.running && !offline) r = r - (Date.now() - this.base) / 1000;
    setText(out, C.formatSeconds(r === null || r === undefined ? null : Math.max(0, r)));
    out.classList.toggle("clock-low", r !== null && r !== undefined && r < 300);
    // the phone's countdown reaches 0 a moment before the server's next tick says so
    var phase = v.phase === "regular" && this.running && r !== null && r !== undefined && r <= 0 ? "finishing-round" : v.phase;
    setText(q("clock-phase"), v.ended || !phase ? "" : phaseName(phase));
    setText(q("clock-round"), v.round && !v.ended ? t("clock.round", { n: v.round }) : "");
    setText(q("clock-turn"), turnText(v));
    var note = q("clock-note");
    if (note) {
      var paused = !this.running && !v.ended && phase && phase !== "setup";
      var text = offline && this.running ? t("clock.offline") :
        (phase === "finishing-round" && !v.ended ? t("clock.time_up", { player: this.players[0] || "" }) :
          (paused && this.pausedBy !== null ? (this.pausedBy ? t("clock.paused_because", { reason: C.pauseReason(this.pausedBy) }) : t("clock.paused")) : ""));
      setText(note, text);
      setHidden(note, !text);
    }
  };

  // -- home -------------------------------------------------------------------------------
  function matchItem(m) {
    var b = m.brief || {};
    var players = m.players.map(function (p) { return el("span", null, swatch(colourOf(m, p)), p); });
    var sep = [];
    players.forEach(function (p, i) { if (i) sep.push(", "); sep.push(p); });
    return el("li", { "data-id": m.id },
      el("a", { class: "match-item", href: "/m/" + encodeURIComponent(m.id) },
        el("div", { class: "title" }, gameName(m.game) + (m.label ? " · " + m.label : "")),
        el("div", { class: "small" }, sep),
        el("div", { class: "small muted" }, t("status." + m.status) + " · " + when(m.created_at),
          b.clock ? [" · ", el("span", { class: "home-clock", "data-clock-for": m.id, text: C.formatSeconds(b.clock.remaining_seconds) })] : null,
          b.current_player ? " · " + t("clock.turn", { player: b.current_player }) : null)));
  }
  function initHome() {
    var open = document.getElementById("open-matches"), recent = document.getElementById("recent-matches");
    var cards = {};
    function draw() {
      var list = Object.keys(cards).map(function (k) { return cards[k]; });
      list.sort(function (a, b) { return a.created_at < b.created_at ? 1 : (a.created_at > b.created_at ? -1 : (a.id < b.id ? -1 : 1)); });
      open.textContent = ""; recent.textContent = "";
      var o = list.filter(function (m) { return m.status === "open"; }), r = list.filter(function (m) { return m.status !== "open"; });
      o.forEach(function (m) { open.appendChild(matchItem(m)); });
      r.slice(0, 20).forEach(function (m) { recent.appendChild(matchItem(m)); });
      if (!o.length) open.appendChild(el("li", { class: "muted empty", text: t("home.none_open") }));
      if (!r.length) recent.appendChild(el("li", { class: "muted empty", text: t("home.none_recent") }));
    }
    var asked = false;
    function load() {
      asked = true;
      return C.api("GET", "/api/matches?limit=60").then(function (d) {
        cards = {};
        d.matches.forEach(function (m) { cards[m.id] = m; });
        draw();
      }, function (e) { open.textContent = ""; open.appendChild(el("li", { class: "error-text", text: C.errorText(e) })); });
    }
    // the list is asked for once the stream is open (each time it opens: a reconnect): the stream then holds
    // every change made after that answer, so none falls between the two. A stream that cannot open yet (the
    // Pi's streams full, the Wi-Fi) does not keep the list from the page: it is asked for then.
    C.stream("/api/stream", {
      open: load,
      down: function () { if (!asked) load(); },
      match: function (m) { cards[m.id] = Object.assign({}, cards[m.id] || {}, m); draw(); },
      // the clocks of the tables in play tick on the list too (the runner's ticks, once a second)
      tick: function (d) {
        var m = d && cards[d.match_id], c = d && d.clock;
        if (!m || !c || typeof c.remaining_seconds !== "number") return;
        m.brief = Object.assign({}, m.brief || {}, { clock: c });
        var span = document.querySelector('.home-clock[data-clock-for="' + d.match_id + '"]');
        if (span) span.textContent = C.formatSeconds(c.remaining_seconds); else draw();
      }
    });
  }

  // -- new match ----------------------------------------------------------------------------
  var PALETTE = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  function initNew() {
    var list = document.getElementById("players"), form = document.getElementById("new-form");
    var errBox = document.getElementById("form-error");
    function row(name) {
      var i = list.children.length;
      var li = el("li", null,
        el("input", { type: "text", class: "player-name", maxlength: "40", placeholder: t("new.player_n", { n: i + 1 }), value: name || "", "aria-label": t("new.player_n", { n: i + 1 }) }),
        el("input", { type: "color", class: "player-colour", value: PALETTE[i % PALETTE.length], "aria-label": t("new.colour") }),
        el("button", { type: "button", class: "btn btn-ghost", title: t("new.up"), "aria-label": t("new.up"), onclick: function () { if (li.previousElementSibling) list.insertBefore(li, li.previousElementSibling); } }, "↑"),
        el("button", { type: "button", class: "btn btn-ghost", title: t("new.remove"), "aria-label": t("new.remove"), onclick: function () { li.remove(); } }, "✕"));
      list.appendChild(li);
      return li;
    }
    var game = document.getElementById("game"), clock = document.getElementById("opt-clock");
    // as many rows as the last table of the game had (the box's count, pages.py starting_rows); a game chosen
    // later adds the rows it lacks and drops the empty ones it has too many of
    var rows = {}, most = {};
    try { rows = JSON.parse(list.dataset.rows || "{}"); most = JSON.parse(list.dataset.max || "{}"); } catch (e) {}
    function syncRows() {
      var want = rows[game.value] || 3;
      while (list.children.length < want) row("");
      for (var i = list.children.length - 1; i >= want; i--) {
        var li = list.children[i];
        if (!li.querySelector(".player-name").value.trim() && li.querySelector(".player-name") !== document.activeElement) li.remove();
        else break;
      }
    }
    syncRows();
    game.addEventListener("change", syncRows);
    // from the roster page's "A match with these players": the rows hold the club's roster (as many as the
    // game takes), each seat linked to its roster player
    var fromRoster = new URLSearchParams(location.search).get("roster");
    if (fromRoster !== null) C.api("GET", "/api/players?limit=8" + (fromRoster ? "&club=" + encodeURIComponent(fromRoster) : "")).then(function (r) {
      var max = most[game.value] || 8;
      r.players.slice(0, max).forEach(function (p, i) {
        var li = list.children[i] || row("");
        li.querySelector(".player-name").value = p.name;
        li.dataset.rosterId = p.id; li.dataset.rosterName = p.name; li.classList.add("on-roster");
        if (p.colour) li.querySelector(".player-colour").value = p.colour;
      });
      for (var i = list.children.length - 1; i >= Math.min(r.players.length, max) && i >= 1; i--) list.children[i].remove();
    }, function () { /* the names are typed then */ });
    document.getElementById("add-player").addEventListener("click", function () {
      if (list.children.length < 8) row("").querySelector("input").focus();
    });
    function syncClock() { clock.checked = game.value === "conquest-italy"; }
    game.addEventListener("change", syncClock); syncClock();
    // Web of Power: the boards transcribed on the box (/boards), the club's default chosen
    var boardSel = document.getElementById("board"), boardField = document.getElementById("board-field");
    function syncBoard() { boardField.hidden = game.value !== "web-of-power" || boardSel.options.length < 2; }
    C.api("GET", "/api/boards").then(function (r) {
      r.boards.forEach(function (b) {
        boardSel.appendChild(el("option", { value: b.id, text: b.name + " · v" + b.latest + " · " + t("boards.status_" + b.status) }));
        if (b["default"] && !b.club_id) boardSel.value = b.id;
      });
      syncBoard();
    }, function () { /* no boards: the installed template */ });
    game.addEventListener("change", syncBoard);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      errBox.hidden = true;
      var players = [], colours = {};
      Array.prototype.forEach.call(list.children, function (li) {
        var n = li.querySelector(".player-name").value.trim();
        if (n) { players.push(n); colours[n] = li.querySelector(".player-colour").value; }
      });
      var options;
      try { options = JSON.parse(document.getElementById("options-json").value || "{}"); }
      catch (e) { errBox.textContent = t("new.bad_options"); errBox.hidden = false; return; }
      if (options === null || typeof options !== "object" || Array.isArray(options)) { errBox.textContent = t("new.bad_options"); errBox.hidden = false; return; }
      if (document.getElementById("opt-result").checked) { options.tracking = "result"; delete options.clock; }
      else if (clock.checked !== (game.value === "conquest-italy") || options.clock !== undefined) {
        if (options.clock === undefined) options.clock = clock.checked;
      }
      var diceSel = document.getElementById("opt-dice");  // where the dice come from (docs/dice.md)
      if (diceSel && diceSel.value !== "pi" && options.dice === undefined && !options.tracking) options.dice = diceSel.value;
      if (!boardField.hidden && options.board === undefined && options.board_id === undefined) options.board_id = boardSel.value || null;
      var doc = { game: game.value, players: players, colours: colours, options: options };
      if (window.CompanionRoster) window.CompanionRoster.extend(doc, list);  // club, season, roster ids (roster.js)
      var label = document.getElementById("label").value.trim();
      if (label) doc.label = label;
      var btn = document.getElementById("create");
      btn.disabled = true;
      C.api("POST", "/api/matches", doc).then(function (m) {
        location.href = "/m/" + encodeURIComponent(m.id);
      }, function (e) {
        btn.disabled = false;
        errBox.textContent = C.errorText(e);
        errBox.hidden = false;
      });
    });
  }

  // -- match page -----------------------------------------------------------------------------
  // what the page's first requests would answer, written into the page by the server (pages.py first_load:
  // the match as this phone sees it, its history, the table's dice): used once, at the load; every later
  // read (a reconnect, a conflict) asks the box as before
  function firstLoad() {
    try { var node = document.getElementById("first-load"); return node ? JSON.parse(node.textContent) : null; }
    catch (e) { return null; }
  }
  // the first load is drawn once every script of the page ran, as the box's answer was: the game's tracker
  // registers after this script, and its words for the history (describe) and its first view come with it
  function scriptsRan() {
    return new Promise(function (done) {
      if (document.readyState === "complete") { done(); return; }
      document.addEventListener("DOMContentLoaded", function () { done(); });
      window.addEventListener("load", function () { done(); });
    });
  }
  function initMatch() {
    var id = body.dataset.match, game = body.dataset.game;
    var clock = new ClockView();
    var historyBox = document.getElementById("history");
    var events = [];
    var client = new C.MatchClient(id, {
      view: function (view, cl) {
        setText(document.getElementById("seq"), String(view.seq));
        setText(document.getElementById("match-status"), t(cl.ended() ? "status.ended" : "status.open"));
        seatParts(cl);
        document.getElementById("undo").disabled = !view.seq; // nothing recorded: nothing to undo
        renderScores(document.getElementById("scores"), view, cl.match);
        clock.set(view);
      },
      conflict: function () { loadHistory(); }
    });
    // the match has ended: nobody sits down any more ("Who are you?" and the code to sit go); its end taken
    // back (an undo): they come back, as a reload would show them. A page opened on the ended match has neither
    // (the server draws them while the match is open): the first time the match is open again, the page's
    // own parts are asked for once and put in their places.
    // A phone whose seat an organiser freed asks for "Who are you?" the same way (seats.freed: its page was
    // drawn seated, without the card).
    var seats = null, drawnEnded = body.dataset.drawnStatus === "ended", asking = false;
    function seatParts(cl) {
      var ended = cl.ended(), who = document.getElementById("who-card"), qr = document.getElementById("table-qr");
      if (who) who.hidden = ended || !!(cl.match && cl.match.seat);
      if (qr) qr.hidden = ended;
      var freed = seats && seats.freed && !who && !(cl.match && cl.match.seat);
      if (ended || !(drawnEnded || freed) || asking) return;
      asking = true;
      C.pageParts("/m/" + encodeURIComponent(id), ["who-card", "table-qr"]).then(function (parts) {
        drawnEnded = asking = false;
        if (seats) seats.freed = false;
        var card = document.getElementById("seat-card");
        if (parts["who-card"] && !document.getElementById("who-card")) {
          var at = document.getElementById("conflict");
          at.parentNode.insertBefore(parts["who-card"], at);
        }
        if (parts["table-qr"] && card && !document.getElementById("table-qr")) card.appendChild(parts["table-qr"]);
        if (seats) seats.wire();
        seatParts(cl);  // as the match is now (it may have ended again meanwhile)
      }, function () { asking = false; });  // the Pi away: asked again at the next view
    }
    var baseView = client.hooks.view;
    client.hooks.view = function (view, cl) { baseView(view, cl); clockButtons(view, cl); seasonCard(view); drawHelped(); };
    // a finished match: what season counts it (GET .../result), and the organiser's add to / take out of
    // a season of its game (PUT /api/matches/<id>/season)
    var seasonShown = null;
    function seasonCard(view) {
      var card = document.getElementById("match-season");
      if (!card) return;
      if (!view.ended) { card.hidden = true; seasonShown = null; return; }
      if (seasonShown === client.seq) return;
      seasonShown = client.seq;
      var mid = id;
      Promise.all([C.api("GET", "/api/matches/" + encodeURIComponent(mid) + "/result"),
                   body.dataset.role === "organiser" ? C.api("GET", "/api/seasons") : Promise.resolve(null)]).then(function (got) {
        var res = got[0], all = got[1], game = document.getElementById("game-tracker").dataset.game;
        if (!res.ended) return;
        var year = new Date().getFullYear();
        setText(document.getElementById("match-season-state"),
          res.season_state === "counted" ? t("match.season_counted", { season: res.season }) :
          res.season_state === "none" ? t("match.season_none") : t("match.season_waiting", { game: t("game." + game), year: year }));
        var actions = document.getElementById("match-season-actions");
        actions.textContent = "";
        function put(season, label, cls) {
          actions.appendChild(el("button", { type: "button", class: "btn btn-small " + (cls || ""), text: label, onclick: function (ev) {
            ev.target.disabled = true;
            C.api("PUT", "/api/matches/" + encodeURIComponent(mid) + "/season", { season: season }).then(function () {
              C.toast(t("common.saved")); seasonShown = null; seasonCard(view);
            }, function (e) { ev.target.disabled = false; C.toast(C.errorText(e), true); });
          } }));
        }
        if (all) {
          if (res.season_state === "counted") put("none", t("match.season_remove"), "btn-danger");
          all.seasons.filter(function (s) { return s.game === game && s.id !== res.season_id; }).forEach(function (s) {
            put(s.id, t("match.season_add", { season: s.name }), "btn-primary");
          });
        }
        card.hidden = false;
      }, function () {});
    }

    var lastView = null;
    function clockButtons(view, cl) {
      // a final roll newly owed: a tone (not for the view the page opened with)
      if (lastView && view.awaiting_roll && view.awaiting_roll !== lastView.awaiting_roll) sound("final-roll");
      lastView = view;
      var c = view.clock, ended = !!view.ended;
      // a phone never tapped plays no alert (the browser's rule): the clock box's line offers to tap (js/sounds.js)
      var so = document.getElementById("sound-offer");
      if (so && window.CompanionSound) {
        window.CompanionSound.offer(so, { offer: t("sound.offer"), on: t("sound.on"), muted: t("sound.muted") });
        so.style.visibility = c && !ended ? "" : "hidden";  // (its place kept)
      }
      var show = function (id, on) { setHidden(document.getElementById(id), !on); };
      show("clock-start", c && view.phase === "setup" && !ended);
      show("clock-pause", c && c.running && !ended);
      show("clock-resume", c && !c.running && view.phase !== "setup" && !ended);
      show("turn-end", c && c.running && !ended && !view.awaiting_roll);
      show("final-roll", c && !ended && !!view.awaiting_roll);
      var pl = document.getElementById("power-lost");
      if (pl) { var flag = cl.match && cl.match.power_lost; setHidden(pl, !flag); if (flag) setText(pl, C.plural("clock.power_lost", Math.floor((flag.remaining_seconds || 0) / 60))); }
    }
    function clockAction(id, fn) {
      var b = document.getElementById(id);
      if (b) b.addEventListener("click", function () {
        fn().then(function () { C.toast(t("match.saved")); }, function (e) { C.toast(C.errorText(e), true); });
      });
    }
    clockAction("clock-start", function () { return client.send("clock.start", {}); });
    clockAction("clock-pause", function () { return client.send("clock.pause", {}); });
    clockAction("clock-resume", function () { return client.send("clock.resume", {}); });
    clockAction("turn-end", function () {
      var data = { player: lastView && lastView.current_player };
      if (lastView && lastView.phase === "final-rounds") {
        // in the final rounds a turn with fewer than 2 conquests owes a roll: the clock needs the count
        var answer = window.prompt(t("clock.conquered_prompt"), "0");
        if (answer === null) return Promise.reject(new Error(t("clock.cancelled")));
        var n = parseInt(answer, 10);
        if (!(n >= 0)) return Promise.reject(new Error(t("clock.conquered_prompt")));
        data.conquered = n;
      }
      return client.send("turn.end", data);
    });
    clockAction("final-roll", function () {
      var D = window.CompanionDice;
      if (D && D.smart()) return D.roll("final-roll", {});  // the table's smart dice (js/dice-live.js)
      return client._write("/api/matches/" + encodeURIComponent(id) + "/final-roll", { expected_seq: client.seq });
    });
    window.companionMatch = client; // for game trackers and tests

    // what undo would take back now (the latest event in effect) and what redo would record again (the
    // event the match's last event, an undo, took back)
    var inEffect = null, redoable = null;
    var role = body.dataset.role || "viewer";
    // the box rolled these dice, or read them from the table's smart dice: undoing them is the organiser's
    function isPiRoll(e) { return !!(e && e.data && (e.data.rolled_by === "pi" || e.data.rolled_by === "dice")); }
    // The history: drawn whole when loaded (a page opened, a reconnect, a conflict) or when an undo takes an
    // event back (the undone row reads as undone, the words of every row are made again); any other event
    // adds its row on top, the rows below it unchanged (what they say depends only on the events before
    // them and the state after them, and an event that is not an undo takes nothing back).
    var stack = [], nth = {};
    function historyRow(e, undone) {
      // an undone roll of the Pi's dice is said plainly: they were rolled again
      var reroll = undone && isPiRoll(e) ? el("span", { class: "rerolled", title: t("match.rerolled_title"), text: t("match.rerolled") }) : null;
      // a move recorded for another seat says from whose phone it came (docs/rulings.md#playing-for-another-seat)
      var by = e.by && e.by["for"] ? e.by : null;
      var from = by ? el("span", { class: "from-phone", text: " — " + (by.seat ? t("match.from_phone", { seat: by.seat }) :
        t(by.role === "organiser" ? "match.from_organiser" : "match.from_helper")) }) : null;
      return el("li", { value: String(e.seq), class: undone ? "undone" : null, "data-seq": String(e.seq), "data-type": e.type },
        C.describeEvent(game, e), from, reroll, el("span", { class: "when", text: when(e.at) }));
    }
    // why the clock is paused (the last pause or resume in effect): said under the clock
    function clockPausedBy() {
      for (var i = stack.length - 1; i >= 0; i--) {
        var e = stack[i];
        if (e.type === "clock.pause" || e.type === "clock.resume") return e.type === "clock.pause" ? ((e.data || {}).reason || "") : null;
      }
      return null;
    }
    var drawnContext = null;
    function historyContext() { return (client.match && client.match.seat || "") + "|" + client.ended(); }
    function drawHistory() {
      historyBox.textContent = "";
      drawnContext = historyContext();
      // which events an undo took back: walk forward keeping a stack of events in effect
      var undone = {}, lastBack = null;
      stack = [];
      events.forEach(function (e) {
        // an undo names what it took back (e.undid, for the words of the history)
        if (e.type === "undo") { var back = stack.pop(); lastBack = back || null; if (back) undone[back.seq] = e.seq; e.undid = back || null; }
        else { stack.push(e); lastBack = null; }
        delete e.nth;
      });
      // each event in effect knows its place among the events of its type in effect (e.nth: the game's
      // state lists some results in that order, such as Richelieu's resolutions)
      nth = {};
      stack.forEach(function (e) { e.nth = nth[e.type] = (nth[e.type] === undefined ? 0 : nth[e.type] + 1); });
      inEffect = stack.length ? stack[stack.length - 1] : null;
      redoable = lastBack;
      drawUndoRedo();
      clock.pausedBy = clockPausedBy();
      clock.draw();
      var rows = document.createDocumentFragment();
      for (var i = events.length - 1; i >= 0; i--) rows.appendChild(historyRow(events[i], !!undone[events[i].seq]));
      historyBox.appendChild(rows);
      if (!events.length) historyBox.appendChild(el("li", { class: "muted empty", text: t("match.no_events") }));
      drawHelped();
    }
    // one more event, not an undo: its row on top
    function appendHistory(e) {
      events.push(e);
      stack.push(e);
      e.nth = nth[e.type] = (nth[e.type] === undefined ? 0 : nth[e.type] + 1);
      inEffect = e;
      redoable = null;
      drawUndoRedo();
      if (e.type === "clock.pause" || e.type === "clock.resume") { clock.pausedBy = clockPausedBy(); clock.draw(); }
      var empty = historyBox.querySelector("li.empty");
      if (empty) empty.remove();
      historyBox.insertBefore(historyRow(e, false), historyBox.firstChild);
      drawHelped();
    }
    function loadHistory() {
      // a failed load (the Pi away) keeps the history shown; the next reconnect loads it again
      return C.api("GET", "/api/matches/" + encodeURIComponent(id) + "/events").then(function (d) { events = d.events; drawHistory(); return true; },
        function () { return false; });
    }
    function addEvent(e) {
      if (!e) return;
      if (events.length && e.seq <= events[events.length - 1].seq) return;
      if (events.length && e.seq !== events[events.length - 1].seq + 1) { loadHistory(); return; }
      if (!events.length && e.seq !== 1) { loadHistory(); return; }
      // an undo, or a page whose seat or end changed since the history was drawn (what the rows may say of
      // the state: a secret of this seat, what the end reveals): every row again
      if (e.type === "undo" || historyContext() !== drawnContext) { events.push(e); drawHistory(); return; }
      appendHistory(e);
    }
    client.hooks.written = addEvent;

    // generic event form (hidden when the game has its own tracker script: its event types are then not asked for)
    var typeSel = document.getElementById("event-type"), generic = document.getElementById("generic-event");
    if (!(generic && generic.hidden)) C.api("GET", "/api/games").then(function (d) {
      var g = d.games.filter(function (x) { return x.id === game; })[0];
      (g ? g.event_types : []).forEach(function (ty) {
        var label = t("event." + ty);
        typeSel.appendChild(el("option", { value: ty, text: label === "event." + ty ? ty : label }));
      });
    }, function () {});
    document.getElementById("event-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var data;
      try { data = JSON.parse(document.getElementById("event-data").value || "{}"); }
      catch (e) { C.toast(t("match.bad_data"), true); return; }
      client.send(typeSel.value, data).then(function () { C.toast(t("match.saved")); }, function (e) { C.toast(C.errorText(e), true); });
    });
    // undo asks first, saying in words what it takes back; the Pi's dice are the organiser's to undo
    var confirmBox = document.getElementById("undo-confirm"), undoYes = document.getElementById("undo-yes");
    var redoBtn = document.getElementById("redo");
    function closeConfirm() { confirmBox.hidden = true; }
    function drawUndoRedo() {
      if (redoBtn) {
        setHidden(redoBtn, !redoable || role === "viewer" || client.ended());
        if (redoable) {
          var what = t("match.redo_what", { what: C.describeEvent(game, redoable) });
          redoBtn.title = what; redoBtn.setAttribute("aria-label", what);
        }
      }
      if (!confirmBox.hidden && (!inEffect || String(inEffect.seq) !== confirmBox.dataset.seq)) closeConfirm();
    }
    document.getElementById("undo").addEventListener("click", function () {
      if (!inEffect) { C.toast(t("match.undo_nothing"), true); return; }
      var pi = isPiRoll(inEffect) && role !== "organiser";
      document.getElementById("undo-confirm-text").textContent = t("match.undo_confirm", { what: C.describeEvent(game, inEffect) }) +
        (pi ? " " + t("match.undo_pi_organiser") : "");
      undoYes.hidden = pi;
      confirmBox.dataset.seq = String(inEffect.seq);
      confirmBox.hidden = false;
      (pi ? document.getElementById("undo-no") : undoYes).focus();
    });
    document.getElementById("undo-no").addEventListener("click", closeConfirm);
    undoYes.addEventListener("click", function () {
      closeConfirm();
      client.undo().then(function () { C.toast(t("match.undone")); }, function (e) { C.toast(C.errorText(e), true); });
    });
    if (redoBtn) redoBtn.addEventListener("click", function () {
      client._write("/api/matches/" + encodeURIComponent(id) + "/redo", { expected_seq: client.seq }).then(function () {
        C.toast(t("match.redone"));
      }, function (e) { C.toast(C.errorText(e), true); });
    });
    // A move recorded for this phone's seat from another phone (docs/rulings.md#playing-for-another-seat):
    // said over the top of the page (fixed: nothing under a finger moves), in words, with its undo. Only a
    // phone seated as that seat shows it, from the events as this phone may see them. The move shown is the
    // latest in effect recorded for this seat by another phone since this seat's own phone last recorded;
    // "Seen" puts it away on this phone. Its undo is the match's one undo: offered while that move is the
    // latest in effect (the undo says so to the box with the seq this page shows: a move recorded meanwhile
    // refuses it, 409); once later moves followed, it says they must be undone first; the Pi's draws are
    // the organiser's to undo.
    var helpedBox = document.getElementById("helped"), helpedShown = null;
    var helpedKey = "companion.helped." + id;
    function helpedSeen() { try { return parseInt(localStorage.getItem(helpedKey) || "0", 10) || 0; } catch (e) { return 0; } }
    function helpedMove() {
      var seat = client.match && client.match.seat;
      if (!seat || client.ended()) return null;
      for (var i = stack.length - 1; i >= 0; i--) {
        var by = stack[i].by;
        if (!by) continue;
        if (by["for"] === seat) return stack[i].seq > helpedSeen() ? stack[i] : null;
        if (by.seat === seat) return null;  // this seat's own phone recorded since
      }
      return null;
    }
    function drawHelped() {
      if (!helpedBox) return;
      var e = helpedMove();
      helpedShown = e;
      if (!e) { setHidden(helpedBox, true); return; }
      var by = e.by, what = C.describeEvent(game, e);
      setText(document.getElementById("helped-text"), by.seat ? t("helped.by_seat", { seat: by.seat, what: what }) :
        t(by.role === "organiser" ? "helped.by_organiser" : "helped.by_helper", { what: what }));
      var latest = inEffect === e, pi = isPiRoll(e) && role !== "organiser";
      var note = document.getElementById("helped-note");
      setText(note, !latest ? t("helped.later") : pi ? t("match.undo_pi_organiser") : "");
      setHidden(note, latest && !pi);
      setHidden(document.getElementById("helped-undo"), !latest || pi);
      setHidden(helpedBox, false);
    }
    if (helpedBox) {
      document.getElementById("helped-ok").addEventListener("click", function () {
        if (helpedShown) { try { localStorage.setItem(helpedKey, String(helpedShown.seq)); } catch (e) { /* private mode */ } }
        setHidden(helpedBox, true);
      });
      document.getElementById("helped-undo").addEventListener("click", function (ev) {
        if (!helpedShown || inEffect !== helpedShown) { drawHelped(); return; }
        ev.target.disabled = true;
        client.undo().then(function () { C.toast(t("match.undone")); }, function (e) { C.toast(C.errorText(e), true); })
          .then(function () { ev.target.disabled = false; drawHelped(); });
      });
    }
    // The organiser's choice of who a player's phone records for (PUT /api/matches/<id>/phones); every open page
    // hears it (the stream's `phones`): the organiser's radios, a player's note that each phone plays its own seat
    function showPhones(rule) {
      if (client.match) client.match.options = Object.assign({}, client.match.options || {}, { phones: rule });
      Array.prototype.forEach.call(document.querySelectorAll("#phones-rule-set input[name=phones]"), function (r) { r.checked = r.value === rule; });
      setHidden(document.getElementById("phones-rule"), rule !== "own-seat");
      // a game's page redraws the controls that act for another seat (disabled, or live again)
      document.dispatchEvent(new CustomEvent("companion:phones", { detail: rule }));
    }
    Array.prototype.forEach.call(document.querySelectorAll("#phones-rule-set input[name=phones]"), function (r) {
      r.addEventListener("change", function () {
        if (!r.checked) return;
        var before = r.value === "own-seat" ? "any-seat" : "own-seat";
        C.api("PUT", "/api/matches/" + encodeURIComponent(id) + "/phones", { phones: r.value }).then(function () {
          showPhones(r.value);
          C.toast(t(r.value === "own-seat" ? "phones.saved_own" : "phones.saved_any"));
        }, function (e) { showPhones(before); C.toast(C.errorText(e), true); });
      });
    });
    seats = initSeats(id, client);

    var first = firstLoad();
    (first && first.match ? scriptsRan().then(function () { client.setMatch(first.match, true); }) : client.load()).then(function () {
      var plugin = C.game(game);
      var root = document.getElementById("game-tracker");
      function mount(p) { if (p && p.mount && !root.dataset.mounted) { root.dataset.mounted = "1"; try { p.mount(root, client); p.update && p.update(client.view, client); } catch (e) { console.error(e); } } }
      mount(plugin);
      document.addEventListener("companion:game", function (ev) { if (ev.detail === game) mount(C.game(game)); });
      if (!plugin && !root.children.length) root.hidden = true;
      var firstHistory = first && first.events ? Promise.resolve(true) : loadHistory();
      if (first && first.events) { events = first.events; drawHistory(); }
      var opened = false, loadedSeq = client.seq, snapshots = 0;
      client.follow({
        // a reconnect (the Wi-Fi, a restart of the Pi): the match again (its power-lost flag) and the history
        open: function () { if (opened) { client.load().catch(function () {}); loadHistory(); } opened = true; },
        event: function (d) { addEvent(d.event); },
        seats: function (d) { seats.follow(d); },
        phones: function (d) { if (d && d.phones) showPhones(d.phones); },
        // the stream's first snapshot at the match the page just loaded: the history asked for then covers it
        // (asked again only if that answer failed)
        snapshot: function (d) {
          snapshots += 1;
          if (snapshots === 1 && d && d.view && d.view.seq === loadedSeq) { firstHistory.then(function (ok) { if (!ok) loadHistory(); }); return; }
          loadHistory();
        },
        tick: function (d) { clock.tick(d); },
        alert: function (d) { C.toast(alertText(d, clock.players), true); sound(d && d.alert); }
      });
    }, function (e) { document.getElementById("scores").textContent = C.errorText(e); });
  }

  // a short tone for a clock alert (js/sounds.js; the TV plays its own in js/display.js)
  function sound(kind) { if (window.CompanionSound && kind) window.CompanionSound.play(kind); }
  // -- seats: "Who are you?" (a player's phone, once), the organiser's seats and phones ----------------------
  function initSeats(id, client) {
    var base = "/api/matches/" + encodeURIComponent(id), role = body.dataset.role || "viewer", claiming = 0;
    var out = { wire: wire, follow: follow, freed: false };
    function seated(m) {
      client.setMatch(m); // the tracker draws this seat's secret at once
      showSeat(m);
    }
    function showSeat(m) {
      var who = document.getElementById("who-card"), mine = document.getElementById("my-seat");
      var peers = document.getElementById("seat-peers");
      if (who && m.seat) who.hidden = true;
      if (mine) { mine.textContent = m.seat ? t("seat.you_are", { player: m.seat }) : ""; mine.hidden = !m.seat; }
      if (m.seat && window.companionSeats) window.companionSeats.reload();
      else if (!m.seat && peers) peers.hidden = true;
    }
    // a button of "Who are you?" said taken or free where it is (no button moves under a finger); a free one
    // is tapped once the page's script wired it
    function mark(b, taken) {
      var p = b.dataset.player;
      b.classList.toggle("btn-primary", !taken);
      b.textContent = taken ? p + " · " + t("seat.taken") : p;
      if (taken) { b.disabled = true; delete b.dataset.free; }
      else if (b.dataset.wired) b.disabled = false;
      else b.dataset.free = "1";
    }
    // The table's seats as they change (the match stream's `seats`: when it opens, then at each seat taken,
    // given or freed, or a seated phone signed out): "Who are you?" marks each seat taken or free; this
    // phone's own seat given or freed by an organiser is drawn as a reload would draw it; the lists of seats
    // an organiser or a seated phone has open are read again.
    function follow(d) {
      var taken = {};
      (d.taken || []).forEach(function (p) { taken[p] = true; });
      Array.prototype.forEach.call(document.querySelectorAll("#who-card .who-btn"), function (b) {
        if (!!taken[b.dataset.player] !== !b.classList.contains("btn-primary")) mark(b, !!taken[b.dataset.player]);
      });
      var had = (client.match && client.match.seat) || null, now = d.seat || null;
      if (role === "player" && client.match && had !== now && !claiming) {
        out.freed = !now;
        client.load().then(showSeat, function () {});
      }
      if (admin && admin.open) loadSeats();
      if (peers && peers.open && !peers.hidden) loadPeers();
    }
    // the buttons of "Who are you?" and the organiser's new code for this table: wired now, and again for the
    // parts put in the page later (each button once)
    function wire() {
      Array.prototype.forEach.call(document.querySelectorAll("#who-card .who-btn"), function (b) {
        if (b.dataset.wired) return;
        b.dataset.wired = "1";
        b.addEventListener("click", function () {
          claiming += 1;
          C.api("PUT", base + "/seat", { player: b.dataset.player }).then(function (m) { claiming -= 1; seated(m); }, function (e) {
            claiming -= 1;
            // in words: the seat went to another phone meanwhile, or this phone sits elsewhere already
            if (e.status === 409) C.toast(t("seat.taken_by_other", { player: b.dataset.player }), true);
            else if (e.status === 403) C.toast(t("seat.ask_organiser"), true);
            else C.toast(C.errorText(e), true);
            if (e.status === 409) mark(b, true);
          });
        });
        if (b.dataset.free) { b.disabled = false; delete b.dataset.free; } // wired now: a tap is heard
      });
      var renew = document.getElementById("new-table-code"); // an organiser: this table's code only
      if (renew && !renew.dataset.wired) {
        renew.dataset.wired = "1";
        renew.addEventListener("click", function () {
          C.api("POST", "/api/auth/join-tokens", { match_id: id, revoke_others: true }).then(function () { location.reload(); },
            function (e) { C.toast(C.errorText(e), true); });
        });
      }
    }
    wire();
    var sel = document.getElementById("seat"); // an organiser's own phone
    if (sel) sel.addEventListener("change", function (ev) {
      C.api("PUT", base + "/seat", { player: ev.target.value || null }).then(function (m) { client.setMatch(m); loadSeats(); },
        function (e) { C.toast(C.errorText(e), true); });
    });
    var list = document.getElementById("seat-list"), admin = document.getElementById("seats-admin");
    function loadSeats() {
      if (!list) return;
      Promise.all([C.api("GET", base + "/seats"), C.api("GET", "/api/auth/sessions")]).then(function (r) {
        var seats = r[0].seats, phones = r[1].sessions.filter(function (s) { return s.role === "player" && (!s.match_id || s.match_id === id); });
        list.textContent = "";
        seats.forEach(function (s) {
          var n = (s.phones || []).length;
          var li = el("li", { "data-player": s.player }, el("strong", { text: s.player }), " · ",
            el("span", { class: "muted", text: n ? C.plural("seat.phones", n) : t("seat.no_phone") }),
            s.taken ? el("span", { class: "seat-confirmed muted", text: " · " + confirmedWords(s) }) : null,
            n ? el("ul", { class: "seat-phones" }, s.phones.map(function (p) {
              return el("li", { "data-session": p.session, class: p.this_phone ? "this-phone" : null, text: phoneWords(p, s.player) });
            })) : null);
          if (s.may_confirm) li.appendChild(confirmButton(s, loadSeats));
          if (n) li.appendChild(el("button", { type: "button", class: "btn btn-small seat-free", onclick: function () {
            C.api("DELETE", base + "/seats/" + encodeURIComponent(s.player)).then(function () { C.toast(t("seat.freed")); loadSeats(); },
              function (e) { C.toast(C.errorText(e), true); });
          } }, t("seat.free_seat")));
          var pick = el("select", { class: "seat-phone" }, el("option", { value: "", text: t("seat.pick_phone") }),
            phones.map(function (p) {
              var at = Object.keys(p.seats || {}).filter(function (k) { return k === id; }).map(function (k) { return p.seats[k]; })[0];
              return el("option", { value: p.id, text: phoneWords(p, at || p.player) });
            }));
          function give(share) {
            if (!pick.value) { C.toast(t("seat.pick_phone_first"), true); pick.focus(); return; }
            C.api("PUT", base + "/seats/" + encodeURIComponent(s.player), { session: pick.value, share: share }).then(function () {
              C.toast(t("seat.moved")); loadSeats();
            }, function (e) { C.toast(C.errorText(e), true); });
          }
          // "Give to phone": a labelled field, then what to do with it (that phone alone, or beside its phones)
          li.appendChild(el("label", { class: "field seat-give" }, t("seat.give"), pick));
          li.appendChild(el("button", { type: "button", class: "btn btn-small seat-move", onclick: function () { give(false); } }, t("seat.move")));
          li.appendChild(el("button", { type: "button", class: "btn btn-small seat-share", onclick: function () { give(true); } }, t("seat.share")));
          list.appendChild(li);
        });
      }, function (e) { list.textContent = C.errorText(e); });
    }
    if (admin) admin.addEventListener("toggle", function () { if (admin.open) loadSeats(); });
    if (admin && admin.open) loadSeats();  // (a new match's page opens it: the organiser hands out the seats)
    // the table's link sent to a phone: the browser's own share sheet where it has one, else copied, said so
    var shareLink = document.getElementById("table-share");
    if (shareLink) shareLink.addEventListener("click", function () {
      var url = shareLink.dataset.url;
      if (navigator.share) { navigator.share({ url: url, title: document.title }).catch(function () {}); return; }
      copyText(url).then(function () { C.toast(t("seat.link_copied")); },
        function () { C.toast(t("seat.link_copy_failed"), true); selectText(document.querySelector("#table-qr .join-url code")); });
    });
    function copyText(text) {
      if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
      // a plain http page on the box's Wi-Fi has no clipboard API: the old way, through a hidden field
      return new Promise(function (resolve, reject) {
        var area = el("textarea", { readonly: "", style: "position:fixed;top:0;left:0;opacity:0" });
        area.value = text;
        document.body.appendChild(area);
        area.select();
        var ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        area.remove();
        if (ok) resolve(); else reject(new Error("copy"));
      });
    }
    function selectText(node) {
      if (!node || !window.getSelection) return;
      var r = document.createRange(); r.selectNodeContents(node);
      var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
    }
    // whose the seat's phone is, as the organiser or the others at the table said (docs/rulings.md#seats)
    function confirmedWords(s) {
      if (s.confirmed_by === "organiser") return t("seat.confirmed_organiser");
      if (s.confirmed) return t("seat.confirmed_players", { players: s.confirmed_by_players.join(", ") });
      return t("seat.unconfirmed");
    }
    function confirmButton(s, then) {
      return el("button", { type: "button", class: "btn btn-small seat-confirm", "data-player": s.player, onclick: function () {
        C.api("POST", base + "/seats/" + encodeURIComponent(s.player) + "/confirm").then(function () {
          C.toast(t("seat.confirmed_toast", { player: s.player })); then();
        }, function (e) { C.toast(C.errorText(e), true); });
      } }, t("seat.confirm", { player: s.player }));
    }
    // a seated player's phone: who sits at this table, and "Yes, that is Bruno's phone"
    var peers = document.getElementById("seat-peers"), peerList = document.getElementById("peer-list");
    function loadPeers() {
      if (!peers || !peerList) return;
      C.api("GET", base + "/seats").then(function (doc) {
        if (!doc.seat) { peers.hidden = true; return; }
        peers.hidden = false;
        peerList.textContent = "";
        doc.seats.forEach(function (s) {
          var words = s.player === doc.seat ? t("seat.yours") : !s.taken ? t("seat.free") :
            (s.devices || []).map(function (d) { return phoneWords(d, s.player); }).join("; ");
          var li = el("li", { "data-player": s.player }, el("strong", { text: s.player }), " · ",
            el("span", { class: "muted", text: words }),
            s.taken ? el("span", { class: "seat-confirmed muted", text: " · " + confirmedWords(s) }) : null);
          if (s.may_confirm) li.appendChild(confirmButton(s, loadPeers));
          peerList.appendChild(li);
        });
        var mine = doc.seats.filter(function (s) { return s.player === doc.seat; })[0];
        var note = document.getElementById("seat-mine-confirmed");
        if (note && mine) note.textContent = mine.confirmed ? confirmedWords(mine) :
          C.plural("seat.ask_confirm", mine.needed || 1);
      }, function () {});
    }
    // the list is asked for when the box is opened, not at every load of the page (the page shows the box
    // when this phone sits: the server wrote it so, and a seat taken here shows it)
    if (peers) peers.addEventListener("toggle", function () { if (peers.open) loadPeers(); });
    window.companionSeats = { reload: function () { if (peers) { peers.hidden = false; if (peers.open) loadPeers(); } } };
    // a phone in words: whose it is (its seat, or the roster player of its personal link), when it signed in,
    // its system and browser (when its browser said), and whether it is the phone reading this
    function phoneWords(p, name) {
      var at = new Date(p.joined_at || p.created_at), words = [name ? t("seat.phone_of", { player: name }) : t("seat.phone_unseated")];
      if (!isNaN(at)) words.push(t("seat.joined", { time: ("0" + at.getHours()).slice(-2) + ":" + ("0" + at.getMinutes()).slice(-2) }));
      if (p.device) words.push(p.device);
      if (p.this_phone || p.current) words.push(t("seat.this_phone"));
      return words.join(" · ");
    }
    return out;
  }

  function initCard() {
    var b = document.getElementById("print-card");
    if (b) b.addEventListener("click", function () { window.print(); });
  }

  // -- display page ------------------------------------------------------------------------------
  // The TV beside the table: the clock (or, for a game without one, the scoreboard alone), the phase, whose
  // turn or whose final roll and the total that ends the match, then the dice of that roll.
  function finalRollText(e, threshold, ended) {
    var dice = (e.data && e.data.dice) || [];
    var total = dice.reduce(function (a, b) { return a + b; }, 0);
    return t(ended ? "clock.final_roll_ends" : "clock.final_roll_goes_on",
      { player: e.data.player, dice: dice.join(" + "), total: total, n: threshold });
  }
  function initDisplay() {
    var id = body.dataset.match;
    var clock = new ClockView();
    var threshold = null, rollBox = document.getElementById("final-roll-result");
    function showRoll(e, view) {
      if (!rollBox) return;
      if (!e || e.type !== "final.roll" || threshold === null) { rollBox.hidden = true; return; }
      rollBox.textContent = finalRollText(e, threshold, !!(view && view.ended));
      rollBox.hidden = false;
    }
    function tell(name, detail) { document.dispatchEvent(new CustomEvent("companion:tv-" + name, { detail: detail })); }
    var client = new C.MatchClient(id, {
      query: "?as=viewer&tv=1", // the whole room sees the TV: no secret on it, whoever opened it; tv=1: its sound
      view: function (view, cl) {
        renderScores(document.getElementById("scores"), view, cl.match); clock.set(view);
        if (view.awaiting_roll) { threshold = view.final_threshold; if (rollBox) rollBox.hidden = true; }
        tell("view", { view: view, client: cl });  // the TV's own panels (js/display.js)
      }
    });
    window.companionMatch = client; // for the TV's panels and tests, as on the match page
    // the game's script may register after the first view (scripts load in parallel): draw again then
    document.addEventListener("companion:game", function (ev) {
      if (ev.detail === body.dataset.game && client.view) client.setView(client.view, true);
    });
    client.load().then(function () {
      // the TV opened after the roll that ended the match: the dice and the total it was rolled against
      var v = client.view;
      if (v && v.seq && v.ended && v.ended_by && v.ended_by.reason === "final-roll") {
        C.api("GET", "/api/matches/" + encodeURIComponent(id) + "/events?as=viewer&after=" + (v.seq - 1)).then(function (d) {
          threshold = v.final_threshold;
          showRoll(d.events[d.events.length - 1], v);
        }, function () {});
      }
      client.loaded = true; // js/display.js may run after this (it then tells itself: see its end)
      tell("loaded", { view: v });
      client.follow({
        event: function (d) { showRoll(d.event, d.view); tell("event", { data: d }); },
        tick: function (d) { clock.tick(d); tell("tick", d); },
        alert: function (d) { C.toast(alertText(d, clock.players), true); tell("alert", d); },
        // the sound switched from another device (js/display.js); what was heard is kept on the client, for a
        // display.js that runs after the stream's head came (scripts load while the stream opens: under load
        // the head's tv-sound was told to nobody and the TV never followed the organiser's switch)
        tvSound: function (d) {
          var s = client.tvSound || {};
          if (typeof d.club_off === "boolean") s.club_off = d.club_off;
          if (typeof d.match_off === "boolean") s.match_off = d.match_off;
          client.tvSound = s;
          tell("sound", d);
        }
      });
    });
  }

  // -- tournament overview -----------------------------------------------------------------------------
  function initTournament() {
    // the club room's screen: every open table with its clock, phase and whose turn; a table whose time is
    // up (finishing round, last lap, final rounds) or that owes a final roll is drawn in the alert colour
    var box = document.getElementById("tables"), tables = {}, clocks = {}, live = {};
    var ALERT = ["finishing-round", "last-lap", "final-rounds"];
    function draw() {
      box.textContent = "";
      var list = Object.keys(tables).map(function (k) { return tables[k]; }).filter(function (m) { return m.status === "open"; });
      list.sort(function (a, b) { return (a.label || a.id).localeCompare(b.label || b.id, undefined, { numeric: true }); });
      if (!list.length) box.appendChild(el("p", { class: "muted", text: t("home.none_open") }));
      list.forEach(function (m) {
        var b = Object.assign({}, m.brief || {}, live[m.id] || {});
        var c = clocks[m.id] || b.clock;
        var owed = b.awaiting_roll, alert = !!owed || (b.clock && ALERT.indexOf(b.phase) >= 0);
        // whose turn is the name marked among the players; the line under them says a roll owed or a clock waiting
        var turn = owed ? t("clock.awaiting_roll", { player: owed, n: b.final_threshold || "" }) : "";
        // a table still setting up (its clock waits, or is armed to start when the set-up is done)
        var setup = b.clock && b.phase === "setup" && !b.ended;
        var phase = setup ? [t("tournament.setting_up")].concat(b.game_phase ? [phaseName(b.game_phase, m.game)] : []).join(" · ") :
          (b.phase ? phaseName(b.phase, m.game) : "");
        if (setup && b.armed) turn = t("tournament.clock_waits", { n: Math.round(b.clock.limit_seconds / 60) });
        // every name in full (they wrap, never cut); the one whose turn it is (or who owes the roll) marked
        var now = owed || b.current_player;
        box.appendChild(el("a", { class: "table-card match-item" + (alert ? " table-alert" : ""), href: "/m/" + encodeURIComponent(m.id) + "/display",
                                  "data-id": m.id, "data-alert": alert ? (owed ? "roll" : "time") : null },
          el("h2", { class: "table-head", text: (m.label || gameName(m.game)) }),
          m.label ? el("div", { class: "muted table-game", text: gameName(m.game) }) : null,
          el("div", { class: "table-clockline", hidden: c || phase ? null : true },
            c ? el("div", { class: "clock-big", text: C.formatSeconds(c.remaining_seconds) }) : null,
            el("div", { class: "table-phase", "data-setup": setup ? "1" : null, text: phase })),
          el("ul", { class: "table-players" }, m.players.map(function (p) {
            return el("li", { "data-player": p, class: p === now ? "table-now" : null,
                              title: p === now && !owed ? t("clock.turn", { player: p }) : null }, swatch(colourOf(m, p)), p);
          })),
          el("div", { class: "table-turn", text: turn })));
      });
      box.dataset.count = String(list.length);
    }
    var asked = false;
    function load() {
      asked = true;
      return C.api("GET", "/api/tournament").then(function (d) { tables = {}; d.tables.forEach(function (m) { tables[m.id] = m; }); draw(); },
        function (e) { box.textContent = C.errorText(e); });
    }
    // asked for once the stream is open, as the home page's list (initHome)
    C.stream("/api/stream", {
      open: load,
      down: function () { if (!asked) load(); },
      match: function (m) { tables[m.id] = Object.assign({}, tables[m.id] || {}, m); delete live[m.id]; draw(); },
      tick: function (d) {
        if (!d.match_id) return;
        var c = d.clock || (typeof d.remaining_seconds === "number" ? { remaining_seconds: d.remaining_seconds } : null);
        if (d.phase) live[d.match_id] = { phase: d.phase, awaiting_roll: d.awaiting_roll, final_threshold: d.final_threshold,
                                          current_player: d.current_player, armed: d.armed };
        if (c) { clocks[d.match_id] = c; draw(); }
      },
      alert: function (d) { if (window.CompanionSound && d && d.alert) window.CompanionSound.play(d.alert === "ended" ? "ended" : d.alert); }
    });
    var start = document.getElementById("start-round");
    if (start) start.addEventListener("click", function () {
      // the open tables whose clock waits to start; the others are said apart, each with why
      var ready = [], skipped = [];
      Object.keys(tables).map(function (k) { return tables[k]; }).filter(function (m) { return m.status === "open"; })
        .forEach(function (m) {
          var b = m.brief || {}, name = m.label || gameName(m.game);
          if (!b.clock) skipped.push(t("tournament.skip_no_clock", { table: name, game: gameName(m.game) }));
          else if (b.phase !== "setup") skipped.push(t("tournament.skip_started", { table: name }));
          else ready.push(m.id);
        });
      var said = skipped.length ? " " + t("tournament.skipped", { list: skipped.join("; ") }) : "";
      if (!ready.length) { C.toast(t("tournament.none_ready") + said, true); return; }
      C.api("POST", "/api/tournament/round", { match_ids: ready }).then(function (d) {
        // a table still setting up has its clock armed: it starts when that table's set-up is done
        var rows = (d && d.result) || [], armed = rows.filter(function (r) { return r.armed; }).length;
        var words = ready.length - armed ? C.plural("tournament.started_n", ready.length - armed) : t("tournament.started") + ":";
        if (armed) words += " " + C.plural("tournament.armed_n", armed);
        C.toast(words + said); load();
      }, function (e) { C.toast(C.errorText(e), true); });
    });
  }

  // -- join (QR) --------------------------------------------------------------------------------------
  function initJoin() {
    var btn = document.getElementById("new-join");
    if (btn) btn.addEventListener("click", function () {
      C.api("POST", "/api/auth/join-tokens", { revoke_others: true }).then(function () { location.reload(); },
        function (e) { C.toast(C.errorText(e), true); });
    });
    var viewers = document.getElementById("viewers-allowed");
    if (viewers) viewers.addEventListener("change", function () {
      C.api("PUT", "/api/auth/settings", { viewers_allowed: viewers.checked }).then(function () { C.toast(t("common.saved")); },
        function (e) { C.toast(C.errorText(e), true); viewers.checked = !viewers.checked; });
    });
    var exp = document.getElementById("join-expires");
    if (exp) exp.textContent = when(exp.getAttribute("datetime"));
    var list = document.getElementById("sessions");
    function loadSessions() {
      C.api("GET", "/api/auth/sessions").then(function (data) {
        list.textContent = "";
        if (!data.sessions.length) list.appendChild(C.el("li", { class: "muted", text: t("join.sessions_none") }));
        data.sessions.forEach(function (s) {
          var seats = Object.keys(s.seats || {}).map(function (k) { return s.seats[k]; });
          var words = [t(s.role === "organiser" ? "join.session_organiser" : "join.session_player")];
          if (s.current) words[0] += " (" + t("join.session_you") + ")";
          if (seats.length) words.push(t("join.session_seats", { seats: seats.join(", ") }));
          words.push(t("join.session_since", { when: when(s.created_at) }));
          var li = C.el("li", { "data-session": s.id }, C.el("span", { text: words.join(" · ") }));
          if (!s.current) {
            var end = C.el("button", { type: "button", class: "btn btn-small", text: t("join.session_end") });
            end.addEventListener("click", function () {
              C.api("DELETE", "/api/auth/sessions/" + s.id).then(function () { C.toast(t("join.session_ended")); loadSessions(); },
                function (e) { C.toast(C.errorText(e), true); });
            });
            li.appendChild(end);
          }
          list.appendChild(li);
        });
      }, function (e) { list.textContent = C.errorText(e); });
    }
    if (list) loadSessions();
    initWifi();
  }

  // -- sign-in / PIN --------------------------------------------------------------------------------------
  function initLogin() {
    var errBox = document.getElementById("form-error");
    // a 429's sentence says it all ("too many failed attempts: try again in 60 s"), in the page's language
    function fail(e) { errBox.textContent = C.errorText(e); errBox.hidden = false; C.markField(e); }
    function val(id) { var x = document.getElementById(id); return x ? x.value.trim() : undefined; }
    var login = document.getElementById("login-form");
    if (login) login.addEventListener("submit", function (ev) {
      ev.preventDefault(); errBox.hidden = true;
      C.api("POST", "/api/auth/login", { pin: val("pin"), now: new Date().toISOString() }).then(function () { location.href = "/"; }, fail);
    });
    var setup = document.getElementById("setup-form");
    if (setup) setup.addEventListener("submit", function (ev) {
      ev.preventDefault(); errBox.hidden = true;
      // the first PIN names the club too (the box has none yet): its own request, once the PIN is set
      var club = document.getElementById("club-name");
      C.api("POST", "/api/auth/pin", { pin: val("new-pin"), setup_code: val("setup-code") }).then(function () {
        if (!club) { location.href = "/join"; return; }
        C.api("POST", "/api/clubs", { name: club.value.trim() || club.defaultValue }).then(function () { location.href = "/join"; }, fail);
      }, fail);
    });
    var change = document.getElementById("pin-change-form");
    if (change) change.addEventListener("submit", function (ev) {
      ev.preventDefault(); errBox.hidden = true;
      C.api("POST", "/api/auth/pin", { pin: val("new-pin"), current_pin: val("current-pin") }).then(function () { C.toast(t("common.saved")); }, fail);
    });
  }

  // -- the box's time from an organiser's phone (the box's clock may have no source at a table offline) ----
  function boxTime() {
    if (body.dataset.role !== "organiser" || body.dataset.page === "display") return;
    var note = document.getElementById("box-time");
    // asked once per browser session, and on the pages that say it (home, /join)
    try { if (!note && sessionStorage.getItem("companion.box_time")) return; sessionStorage.setItem("companion.box_time", "1"); } catch (e) {}
    function say(bt) {
      if (!note || !bt) return;
      if (bt.adopted) { note.textContent = t("time.adopted", { when: when(bt.adopted.at) }); note.hidden = false; }
      else if (bt.synchronised === false) { note.textContent = t("time.unsynced"); note.hidden = false; }
    }
    C.api("GET", "/api/auth/me").then(function (me) {
      var bt = me.box_time;
      if (!bt || bt.synchronised !== false || bt.adopted) { say(bt); return; }
      C.api("POST", "/api/box/time", { now: new Date().toISOString() }).then(function (r) {
        say(r);
        if (r.adopted) C.toast(t("time.adopted", { when: when(r.adopted.to) }));
      }, function () { say(bt); });
    }, function () {});
  }
  boxTime();

  // -- the box's own Wi-Fi (the organiser's switch on /join) ---------------------------------------------
  function initWifi() {
    var box = document.getElementById("wifi-status"), btn = document.getElementById("wifi-toggle");
    if (!box || !btn) return;
    var on = false;
    function show(s) {
      var words = [];
      // in words for the club, not the developer's reason (kept as the line's title)
      if (!s.available) { words.push(t("wifi.unavailable_plain")); box.title = s.reason || ""; btn.hidden = true; }
      else {
        words.push(t({ hotspot: "wifi.mode_hotspot", venue: "wifi.mode_venue", none: "wifi.mode_none" }[s.mode] || "wifi.mode_none", { network: s.network || "" }));
        if (s.mode === "hotspot" && s.phones != null) words.push(C.plural("wifi.phones", s.phones));
        if (s.last_error) words.push(s.last_error);
        on = s.enabled; btn.textContent = t(on ? "wifi.turn_off" : "wifi.turn_on"); btn.hidden = false;
      }
      box.textContent = words.join(" ");
    }
    function load() { C.api("GET", "/api/wifi").then(show, function (e) { box.textContent = C.errorText(e); }); }
    btn.addEventListener("click", function () {
      btn.disabled = true;
      C.api("PUT", "/api/wifi", { hotspot: !on }).then(function (r) {
        box.textContent = r.hotspot ? t("wifi.switching_on", { ssid: r.ssid, password: r.password,
          url: "http://" + r.address + (location.port ? ":" + location.port : "") + "/" }) : t("wifi.switching_off");
        on = r.hotspot; btn.textContent = t(on ? "wifi.turn_off" : "wifi.turn_on");
      }, function (e) { C.toast(C.errorText(e), true); }).then(function () { btn.disabled = false; });
    });
    load();
  }

  var init = { home: initHome, "new": initNew, match: initMatch, display: initDisplay, tournament: initTournament,
               join: initJoin, login: initLogin, card: initCard }[body.dataset.page];
  if (init) init();
  window.CompanionPages = { renderScores: renderScores, ClockView: ClockView };
})();
