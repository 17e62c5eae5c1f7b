/* tournaments.js: the tournament pages (/tournaments, /tournaments/<id>): the list and the new-tournament
 * form; a tournament's players, rounds (seat the next one, swap two seats by hand before it starts, start
 * it), its standings. The seating and the standings come from the server (companion/core/tournament.py). */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var roster = window.CompanionRoster;  // the roster picker (js/roster.js, loaded first)
  var body = document.body, organiser = body.dataset.role === "organiser";
  function gameName(g) { var s = t("game." + g); return s === "game." + g ? g : s; }
  function fail(e) { C.toast(C.errorText(e), true); }
  var STATUS = { seated: function () { return t("tday.status_seated"); }, playing: function () { return t("tday.status_playing"); },
                 ended: function () { return t("tday.status_ended"); } };

  // -- the list and the form ----------------------------------------------------------------------------
  function initList() {
    var list = document.getElementById("tday-list");
    C.api("GET", "/api/tournaments").then(function (d) {
      list.textContent = "";
      if (!d.tournaments.length) list.appendChild(el("li", { class: "muted empty", text: t("tday.none") }));
      d.tournaments.forEach(function (x) {
        list.appendChild(el("li", { "data-id": x.id }, el("a", { class: "match-item", href: "/tournaments/" + encodeURIComponent(x.id) },
          el("div", { class: "title", text: x.name }),
          el("div", { class: "small muted", text: x.date + " · " + gameName(x.game) }))));
      });
    }, function (e) { list.textContent = C.errorText(e); });
    var form = document.getElementById("tday-new");
    if (!form) return;
    var date = form.querySelector("[name=date]");
    if (!date.value) date.value = new Date().toISOString().slice(0, 10);
    // the players: picked from the club's roster by type-ahead (the new-match page's picker, roster.js), a new
    // name put on the roster from the same list, or registered as typed (a guest)
    var chosen = [], clubSel = document.getElementById("tday-new-club"), who = document.getElementById("tday-new-player");
    var chips = document.getElementById("tday-new-players");
    function drawChosen() {
      chips.textContent = "";
      chosen.forEach(function (p, i) {
        chips.appendChild(el("li", { "data-player": p.name, "data-roster-id": p.player_id || null, class: p.player_id ? "on-roster" : null },
          el("span", { text: p.name }),
          el("button", { type: "button", class: "btn btn-small btn-ghost", "aria-label": t("tday.remove_player", { player: p.name }), text: "×",
                         onclick: function () { chosen.splice(i, 1); drawChosen(); } })));
      });
      document.getElementById("tday-new-count").textContent = chosen.length ? C.plural("tday.players_count", chosen.length) : "";
    }
    function choose(name, pid) {
      name = name.trim();
      if (!name) return;
      if (chosen.some(function (p) { return p.name === name || (pid && p.player_id === pid); })) {
        C.toast(t("tday.already_registered", { player: name }), true);
      } else {
        chosen.push(pid ? { name: name, player_id: pid } : { name: name });
        drawChosen();
      }
      who.value = "";
      who.focus();
    }
    var names = roster.picker({
      club: function () { return clubSel.value || null; }, id: "tday-new-suggest",
      place: function (box, input) { input.parentNode.after(box); },  // under the name and its button
      taken: function () { return chosen.map(function (p) { return p.player_id; }).filter(Boolean); },
      pick: function (p) { choose(p.name, p.id); }
    });
    names.attach(who);
    who.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); names.close(who); choose(who.value, null); }
    });
    document.getElementById("tday-new-add").addEventListener("click", function () { names.close(who); choose(who.value, null); });
    C.api("GET", "/api/seasons").then(function (r) {
      r.clubs.forEach(function (c) { clubSel.appendChild(el("option", { value: c.id, text: c.name })); });
      document.getElementById("tday-new-club-field").hidden = r.clubs.length < 2;
    }, function () {});
    clubSel.addEventListener("change", function () {  // one club's roster per tournament
      chosen = chosen.filter(function (p) { return !p.player_id; }); drawChosen();
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var box = form.querySelector(".error-text");
      box.hidden = true;
      function v(n) { return form.querySelector("[name=" + n + "]").value.trim(); }
      if (!v("name")) { box.textContent = t("tday.err_name"); box.hidden = false; return; }
      if (!v("date")) { box.textContent = t("tday.err_date"); box.hidden = false; return; }
      var doc = { name: v("name"), date: v("date"), game: v("game"), table_size: parseInt(v("table_size"), 10),
                  rounds: parseInt(v("rounds"), 10),
                  players: chosen.map(function (p) { return p.player_id ? p : p.name; }) };
      if (v("clock_minutes")) doc.clock_minutes = parseInt(v("clock_minutes"), 10);
      C.api("POST", "/api/tournaments", doc).then(function (x) { location.href = "/tournaments/" + encodeURIComponent(x.id); },
        function (e) {
          var label = { "$.table_size": "tday.table_size", "$.rounds": "tday.rounds", "$.players": "tday.players",
                        "$.clock_minutes": "tday.clock_minutes", "$.date": "tday.date", "$.name": "tday.name" };
          var f = (e.field || "").replace(/\[\d+\](\.player_id)?$/, "");
          box.textContent = (label[f] ? t(label[f]) + ": " : "") + C.errorText(e);
          box.hidden = false;
        });
    });
  }

  // -- one tournament -----------------------------------------------------------------------------------
  function initDay() {
    var id = body.dataset.tournament, doc = null, picked = null;
    var base = "/api/tournaments/" + encodeURIComponent(id);
    function draw() {
      var players = document.getElementById("tday-players");
      players.textContent = "";
      // before round 1 a name is taken off the list; afterwards a player withdraws (results kept, never seated
      // again) and can come back; a late arrival is registered between rounds, seated from the next one
      var started = doc.round_list.length > 0, gone = doc.withdrawn || [];
      doc.players.forEach(function (p, i) {
        var pid = (doc.player_ids || [])[i], out = gone.indexOf(p) >= 0;
        var li = el("li", { "data-player": p, "data-roster-id": pid || null,
                            class: [pid ? "on-roster" : "", out ? "tday-withdrawn" : ""].join(" ").trim() || null },
          pid ? el("a", { href: "/players/" + encodeURIComponent(pid), text: p }) : el("span", { text: p }),
          out ? el("span", { class: "muted small", text: " · " + t("tday.withdrawn") }) : null);
        if (organiser && !doc.finished && !out) li.appendChild(el("button", { type: "button", class: "btn btn-small btn-ghost tday-withdraw",
          "aria-label": t(started ? "tday.withdraw_player" : "tday.remove_player", { player: p }), text: started ? t("tday.withdraw") : "×",
          onclick: function () {
            if (started && !window.confirm(t("tday.withdraw_confirm", { player: p }))) return;
            C.api("DELETE", base + "/players/" + encodeURIComponent(p)).then(function (d) {
              set(d); if (started) C.toast(t("tday.withdrew", { player: p }));
            }, fail);
          } }));
        if (organiser && !doc.finished && out) li.appendChild(el("button", { type: "button", class: "btn btn-small btn-ghost tday-back",
          text: t("tday.back"), onclick: function () { register(p, null); } }));
        players.appendChild(li);
      });
      document.getElementById("tday-count").textContent = C.plural("tday.players_count", doc.players.length - gone.length);
      var add = document.getElementById("tday-add");
      if (add) add.hidden = !!doc.finished;
      var hint = document.getElementById("tday-add-hint");
      if (hint) { hint.hidden = !!doc.finished; hint.textContent = t(started ? "tday.add_hint_late" : "tday.add_hint"); }
      var seat = document.getElementById("tday-seat");
      if (seat) seat.hidden = doc.next_round === null;
      var rounds = document.getElementById("tday-rounds");
      rounds.textContent = "";
      var swapping = false;
      doc.round_list.slice().reverse().forEach(function (r) {
        var canSwap = organiser && r.status === "seated";
        swapping = swapping || canSwap;
        var head = el("div", { class: "row-between" },
          el("h3", { text: t("tday.round_n", { n: r.round }) + " · " + STATUS[r.status]() }),
          el("span", { class: "head-actions" },
            el("a", { class: "btn btn-small btn-ghost", href: "/tournaments/" + encodeURIComponent(id) + "/print?round=" + r.round,
                      text: t("tday.print_round") }),
            organiser && r.status === "playing" ? el("a", { class: "btn btn-small btn-ghost", "data-cards": String(r.round),
              href: "/tournaments/" + encodeURIComponent(id) + "/rounds/" + r.round + "/cards", text: t("tday.print_cards") }) : null,
            canSwap ? el("button", { type: "button", class: "btn btn-small btn-primary", "data-start": String(r.round),
              text: t("tday.start_round", { n: r.round }), onclick: function () { start(r.round); } }) : null));
        var grid = el("div", { class: "tday-tables" });
        r.tables.forEach(function (table, k) {
          var m = r.matches[k];
          grid.appendChild(el("div", { class: "tday-table", "data-table": String(k + 1) },
            el("div", { class: "row-between" }, el("strong", { text: t("tday.table_n", { n: k + 1 }) }),
              m ? el("span", { class: "small" },
                el("a", { href: "/m/" + encodeURIComponent(m.match_id), text: t("tday.open_match") }), " · ",
                el("a", { href: "/m/" + encodeURIComponent(m.match_id) + "/display", text: t("tday.open_tv") }),
                organiser && m.status === "open" ? [" · ", el("a", { href: "/m/" + encodeURIComponent(m.match_id) + "#result-correction",
                  class: "tday-enter-result", text: t("tday.enter_result") })] : null,
                organiser && m.status === "open" ? tvButton(m.match_id) : null) : null),
            el("ol", null, table.map(function (p) {
              var res = m && m.results ? m.results.filter(function (x) { return x.player === p; })[0] : null;
              var on = picked && picked.round === r.round && picked.player === p;
              var item = el("li", { "data-player": p, class: on ? "picked" : null },
                canSwap ? el("button", { type: "button", class: "btn btn-small btn-ghost tday-seat-btn", text: p,
                                         "aria-pressed": on ? "true" : "false",
                                         onclick: function () { pick(r, k, p); } }) : el("span", { text: p }),
                res ? el("span", { class: "muted small", text: " · " + res.place }) : null);
              return item;
            }))));
        });
        var bye = (r.sitting_out || []).length ? el("p", { class: "small tday-sitting-out", "data-sitting-out": r.sitting_out.join("|"),
          text: C.plural("tday.sitting_out", r.sitting_out.length, { players: r.sitting_out.join(", ") }) }) : null;
        rounds.appendChild(el("div", { class: "tday-round", "data-round": String(r.round) }, head, bye, grid));
      });
      document.getElementById("tday-swap-hint").hidden = !swapping;
      var tb = document.querySelector("#tday-standings tbody");
      tb.textContent = "";
      doc.standings.forEach(function (r) {
        tb.appendChild(el("tr", { "data-player": r.player, class: r.rank === 1 && doc.round_list.length ? "leader" : null },
          el("td", { class: "num", text: String(r.rank) }),
          el("td", null, r.player, r.withdrawn ? el("span", { class: "muted small", text: " · " + t("tday.withdrawn") }) : null),
          el("td", { class: "num", text: C.num(r.points) }),
          el("td", { class: "num", text: r.game_points === null ? "–" : C.num(r.game_points) }),
          el("td", { class: "num", text: String(r.head_to_head) }),
          el("td", { class: "num", text: String(r.matches) }), el("td", { class: "num", text: String(r.wins) })));
      });
    }
    // the TVs' sound, switched from this phone (companion/web/tv.py): one table's, or every TV's
    var tv = { off: false, muted: [] };
    function tvButton(mid) {
      var off = tv.muted.indexOf(mid) >= 0;
      return el("button", { type: "button", class: "btn btn-small btn-ghost tv-sound", "data-tv-sound": mid,
        "aria-pressed": off ? "true" : "false", text: off ? t("tday.tv_sound_off") : t("tday.tv_sound_on"),
        title: off ? t("tv.unmute") : t("tv.mute"),
        onclick: function () {
          C.api("PUT", "/api/matches/" + encodeURIComponent(mid) + "/tv/sound", { off: !off }).then(function () {
            C.toast(t(off ? "tday.tv_sound_back" : "tday.tv_silenced")); loadTv();
          }, fail);
        } });
    }
    function drawTvAll() {
      var b = document.getElementById("tday-tv-all");
      if (!b) return;
      b.textContent = tv.off ? t("tday.tv_all_on") : t("tday.tv_all_off");
      b.setAttribute("aria-pressed", tv.off ? "true" : "false");
    }
    function loadTv() {
      if (!organiser) return null;
      return C.api("GET", "/api/tv/sound").then(function (d) { tv.off = d.off; tv.muted = d.muted_matches; drawTvAll(); if (doc) draw(); }, function () {});
    }
    var tvAll = document.getElementById("tday-tv-all");
    if (tvAll) tvAll.addEventListener("click", function () {
      C.api("PUT", "/api/tv/sound", { off: !tv.off }).then(function (d) {
        C.toast(t(d.off ? "tday.tv_all_silenced" : "tday.tv_all_back")); tv.off = d.off; drawTvAll();
      }, fail);
    });
    loadTv();
    function set(d) { doc = d; draw(); return d; }
    var asked = false;
    function load() { asked = true; return C.api("GET", base).then(set, fail); }
    function pick(r, k, p) {
      if (!picked || picked.round !== r.round) { picked = { round: r.round, table: k, player: p }; draw(); return; }
      if (picked.player === p) { picked = null; draw(); return; }
      var a = picked; picked = null;
      var tables = r.tables.map(function (x) { return x.slice(); });
      var i = tables[a.table].indexOf(a.player), j = tables[k].indexOf(p);
      tables[a.table][i] = p; tables[k][j] = a.player;
      C.api("PUT", base + "/rounds/" + r.round, { tables: tables }).then(function (d) {
        set(d); C.toast(t("tday.swapped", { a: a.player, b: p }));
      }, function (e) { fail(e); draw(); });
    }
    function start(n) {
      // it creates the round's matches and starts the clocks: asked first (one tap too many, not a round too soon)
      if (!window.confirm(t("tday.start_confirm", { n: n }))) return;
      C.api("POST", base + "/rounds/" + n + "/start", {}).then(function (d) {
        set(d);
        var said = t("tday.started", { n: n });
        if ((d.armed || []).length) said += " " + t("tday.armed");
        if (d.skipped.length) said += " " + t("tday.skipped_no_clock", { game: gameName(d.game) });
        C.toast(said);
      }, fail);
    }
    var seat = document.getElementById("tday-seat");
    if (seat) seat.addEventListener("click", function () {
      if (doc && doc.players.length < 3) { C.toast(t("tday.need_players"), true); return; }
      C.api("POST", base + "/rounds", {}).then(set, fail);
    });
    var add = document.getElementById("tday-add");
    // type-ahead from the club roster (the new-match page's picker, roster.js): a tap registers the roster
    // player (their id goes with the name); a new name is registered as typed, or first put on the roster
    var names = roster.picker({
      club: function () { return doc && doc.club_id; }, anyClub: true, id: "tday-suggest",
      place: function (box) { add.after(box); },  // under the name and its button
      taken: function () { return ((doc && doc.player_ids) || []).filter(Boolean); },
      pick: function (p) { register(p.name, p.id); }
    });
    function register(name, pid) {
      var input = add.querySelector("[name=player]"), body = { player: name };
      if (pid) body.player_id = pid;
      return C.api("POST", base + "/players", body).then(function (d) { input.value = ""; names.close(input); set(d); input.focus(); }, fail);
    }
    if (add) {
      var input = add.querySelector("[name=player]");
      names.attach(input);
      add.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var name = input.value.trim();
        if (!name) return;
        register(name, null);
      });
    }
    // the round's matches end at the tables: follow the club-wide stream and reload the standings. The day is
    // read once the stream is open (each time it opens: what ended while this page was away is read then), or
    // at once if it cannot open, as the home page's list (js/pages.js, initHome)
    var pending = null;
    C.stream("/api/stream", {
      open: load,
      down: function () { if (!asked) load(); },
      match: function () {
        if (!pending) pending = setTimeout(function () { pending = null; load(); }, 400);
      }
    });
  }

  if (body.dataset.page === "tournaments") initList();
  if (body.dataset.page === "tournament-day") initDay();
})();
