/* roster.js: the club roster on the pages.
 *
 *   new match (/new): the club and the season the result feeds (default: the club's season of the game
 *     this year; "no season" allowed), and type-ahead on each player's name from the club's roster
 *     (GET /api/players?q=, case- and accent-insensitive); a name not on the roster offers to add it
 *     (organisers). CompanionRoster.extend(doc, list) adds club, season and the seats' roster ids to
 *     the new match's body. CompanionRoster.picker(o): that type-ahead, for the tournament pages too.
 *   roster (/players): add a player (organisers).
 *   player (/players/<id>): rename, short name, colour, merge a look-alike entry here, personal links.
 */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el, body = document.body;

  function showError(box, e) {
    if (!box) { C.toast(C.errorText(e), true); return; }
    box.textContent = C.errorText(e); box.hidden = false;
  }

  // -- new match ------------------------------------------------------------------------------
  var state = { clubs: [], seasons: [], club: null };

  function clubSelect(host) {
    var game = document.getElementById("game");
    var wrap = el("div", { id: "season-choice" });
    var clubLabel = el("label", { class: "field" }, t("new.club"));
    var club = el("select", { id: "club" });
    clubLabel.appendChild(club);
    var seasonLabel = el("label", { class: "field" }, t("new.season"));
    var season = el("select", { id: "season" });
    seasonLabel.appendChild(season);
    // the default for a game with no season this year yet: a short choice (it fits a 360 px phone), and what
    // it means said under it
    var note = el("span", { class: "muted small field-note", id: "season-note" });
    seasonLabel.appendChild(note);
    wrap.appendChild(clubLabel); wrap.appendChild(seasonLabel);
    host.appendChild(wrap);
    function sayNote() {
      note.textContent = season.value === "" ? t("new.season_auto_note", { game: t("game." + game.value), year: new Date().getFullYear() }) : "";
      note.hidden = !note.textContent;
    }
    season.addEventListener("change", sayNote);
    function fillSeasons() {
      state.club = club.value || null;
      season.textContent = "";
      var year = new Date().getFullYear(), chosen = null;
      var mine = state.seasons.filter(function (s) { return s.club_id === state.club && s.game === game.value; });
      mine.sort(function (a, b) { return b.year - a.year; });
      mine.forEach(function (s) {
        season.appendChild(el("option", { value: s.id, text: s.name.indexOf(String(s.year)) >= 0 ? s.name : s.name + " (" + s.year + ")" }));
        if (s.year === year && chosen === null) chosen = s.id;
      });
      if (chosen === null) season.appendChild(el("option", { value: "", text: t("new.season_auto") }));
      season.appendChild(el("option", { value: "none", text: t("new.no_season") }));
      season.value = chosen || "";
      seasonLabel.hidden = !state.club;
      sayNote();
    }
    state.clubs.forEach(function (c) { club.appendChild(el("option", { value: c.id, text: c.name })); });
    clubLabel.hidden = state.clubs.length < 2;
    club.addEventListener("change", fillSeasons);
    game.addEventListener("change", fillSeasons);
    fillSeasons();
  }

  // -- the roster picker: type-ahead on a player's name from a club's roster (GET /api/players?q=, case- and
  // accent-insensitive), one list under the name: a tap picks a roster player; a name not on the roster offers
  // "Add to the roster" to organisers, or says the player is a guest. Used by the new-match page, the
  // new-tournament form and a tournament's registration (tournaments.js), as CompanionRoster.picker(o):
  //   o.club(): the club's id; null: no list (o.anyClub: every club's roster, the only club's when one)
  //   o.pick(p, input): a roster player tapped, or just added;  o.taken(): roster ids not to offer
  //   o.place(box, input): where the list goes (default: right after the input); o.id: the list's id
  // It returns { attach(input), lookUp(input) (debounced), close(input) }.
  function picker(o) {
    var timer = null, asked = 0, pending = null;  // pending: the input whose look-up is to come or asked
    function close(input) {
      if (input && input._suggest) { input._suggest.remove(); input._suggest = null; }
    }
    function button(cls, text, extra, onclick) {
      return el("li", { role: "option" }, el("button", Object.assign({
        type: "button", class: "btn btn-small " + cls,
        onmousedown: function (ev) { ev.preventDefault(); },  // the name keeps the focus (and the keyboard)
        onclick: onclick
      }, extra), text));
    }
    function lookUp(input) {
      var q = input.value.trim(), club = o.club();
      if (!q || (!club && !o.anyClub)) { close(input); return; }
      var mine = ++asked;
      pending = input;
      C.api("GET", "/api/players?q=" + encodeURIComponent(q) + "&limit=8" + (club ? "&club=" + encodeURIComponent(club) : "")).then(function (r) {
        if (mine !== asked || document.activeElement !== input) return;
        close(input);
        var box = el("ul", { class: "roster-suggest", role: "listbox", id: o.id || null }), exact = false, taken = o.taken ? o.taken() : [];
        r.players.forEach(function (p) {
          if (p.name === q) exact = true;
          if (taken.indexOf(p.id) >= 0) return;
          box.appendChild(button("btn-ghost suggest", [p.colour ? el("span", { class: "swatch", style: "background:" + p.colour }) : null, p.name],
            { "data-roster-id": p.id }, function () { close(input); o.pick(p, input); }));
        });
        var home = club || r.club_id;
        if (!exact && home && body.dataset.role === "organiser") {
          box.appendChild(button("add-to-roster", t("new.add_to_roster", { name: q }), {}, function () {
            C.api("POST", "/api/players", { club: home, name: q }).then(function (p) {
              close(input); C.toast(t("new.added_to_roster", { name: p.name })); o.pick(p, input);
            }, function (e) { C.toast(C.errorText(e), true); });
          }));
        } else if (!exact && !r.players.length) {
          box.appendChild(el("li", { class: "muted small", text: t("new.guest") }));
        }
        if (!box.children.length) return;
        input._suggest = box;
        if (o.place) o.place(box, input); else input.after(box);
      }, function () { /* the roster is a help: typing a name still works */ });
    }
    // the list closed, and the look-up still to come with it (a name typed then Escape: no list 150 ms later,
    // moving the form under the next tap)
    function dismiss(input) {
      if (pending === input) { clearTimeout(timer); asked++; pending = null; }
      close(input);
    }
    function later(input) {
      clearTimeout(timer);
      pending = input;
      if (!input.value.trim()) { dismiss(input); return; }  // emptied: no list (nor a late answer)
      timer = setTimeout(function () { lookUp(input); }, 150);
    }
    return {
      lookUp: later, close: dismiss,
      attach: function (input) {
        input.addEventListener("input", function () { later(input); });
        input.addEventListener("keydown", function (ev) { if (ev.key === "Escape") dismiss(input); });
        input.addEventListener("blur", function () { setTimeout(function () { if (document.activeElement !== input) dismiss(input); }, 200); });
      }
    };
  }

  function pick(li, p) {
    var input = li.querySelector(".player-name");
    input.value = p.name;
    li.dataset.rosterId = p.id;
    li.dataset.rosterName = p.name;
    if (p.colour) li.querySelector(".player-colour").value = p.colour;
    li.classList.add("on-roster");
  }

  function initNew() {
    var list = document.getElementById("players"), host = document.getElementById("roster-choice");
    if (!list || !host) return;
    C.api("GET", "/api/seasons").then(function (r) {
      state.clubs = r.clubs; state.seasons = r.seasons;
      if (state.clubs.length) clubSelect(host);
    }, function () {});
    var names = picker({ club: function () { return state.club; },
                         pick: function (p, input) { pick(input.closest("li"), p); },
                         place: function (box, input) { input.closest("li").appendChild(box); } });
    list.addEventListener("input", function (ev) {
      if (!ev.target.classList.contains("player-name")) return;
      var li = ev.target.closest("li");
      if (li.dataset.rosterName !== ev.target.value) { delete li.dataset.rosterId; delete li.dataset.rosterName; li.classList.remove("on-roster"); }
      names.lookUp(ev.target);
    });
    list.addEventListener("focusout", function (ev) {
      if (!ev.target.classList.contains("player-name")) return;
      var input = ev.target;
      setTimeout(function () { if (document.activeElement !== input) names.close(input); }, 200);
    });
    list.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && ev.target.classList.contains("player-name")) names.close(ev.target);
    });
  }

  // the new match's body: its club, the season it feeds, the roster id of each seat
  function extend(doc, list) {
    var club = document.getElementById("club"), season = document.getElementById("season");
    if (!club || !club.value) return doc;
    doc.club = club.value;
    if (season && season.value) doc.season = season.value;
    var ids = [];
    Array.prototype.forEach.call(list.children, function (li) {
      var input = li.querySelector(".player-name");
      if (!input || !input.value.trim()) return;
      ids.push(li.dataset.rosterId && li.dataset.rosterName === input.value ? li.dataset.rosterId : null);
    });
    if (ids.some(function (x) { return x; })) doc.roster = ids;
    return doc;
  }

  // -- the roster page ------------------------------------------------------------------------------
  // the names the upgrade left over (organisers): one tap puts a name on a suggested entry, a new entry or
  // another roster player picked by type-ahead (POST /api/players/leftovers; an audit line each)
  function initLeftovers() {
    var box = document.getElementById("leftover-error");
    function place(li, choice) {
      var item = li.closest(".leftover"), doc = Object.assign({}, choice);
      if (item.dataset.match) { doc.match_id = item.dataset.match; doc.seat = parseInt(li.dataset.seat, 10); }
      else { doc.season_id = item.dataset.season; doc.match = item.dataset.seasonMatch; doc.name = li.dataset.name; }
      box.hidden = true;
      Array.prototype.forEach.call(li.querySelectorAll("button, input"), function (b) { b.disabled = true; });
      C.api("POST", "/api/players/leftovers", doc).then(function (r) {
        C.toast(t("players.leftover_placed", { name: r.assigned.name, player: r.assigned.player.name }));
        setTimeout(function () { location.reload(); }, 600);
      }, function (e) {
        Array.prototype.forEach.call(li.querySelectorAll("button, input"), function (b) { b.disabled = false; });
        showError(box, e);
      });
    }
    Array.prototype.forEach.call(document.querySelectorAll("#leftovers .leftover-name:not(.placed)"), function (li) {
      Array.prototype.forEach.call(li.querySelectorAll(".leftover-pick"), function (b) {
        b.addEventListener("click", function () { place(li, { player_id: b.dataset.playerId }); });
      });
      Array.prototype.forEach.call(li.querySelectorAll(".leftover-new"), function (b) {
        b.addEventListener("click", function () { place(li, { "new": true, club: b.dataset.club }); });
      });
      var other = li.querySelector(".leftover-other");
      if (other) picker({ club: function () { return li.dataset.club || null; }, anyClub: true,
                          place: function (list) { li.appendChild(list); },
                          pick: function (p) { place(li, { player_id: p.id }); } }).attach(other);
    });
  }

  function initRoster() {
    if (document.getElementById("leftovers")) initLeftovers();
    var form = document.getElementById("add-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var box = document.getElementById("admin-error");
      box.hidden = true;
      var input = document.getElementById("add-name"), doc = { name: input.value };
      if (body.dataset.clubId) doc.club = body.dataset.clubId;  // none yet: the first player makes the box's club
      C.api("POST", "/api/players", doc).then(function (p) {
        // the next name goes in at once: the new player joins the list on this page, the box is cleared
        body.dataset.clubId = p.club_id;
        var list = document.getElementById("roster");
        list.hidden = false;
        ["roster-empty", "no-club"].forEach(function (id) { var n = document.getElementById(id); if (n) n.hidden = true; });
        list.appendChild(C.el("li", { "data-player-id": p.id }, C.el("a", { href: "/players/" + encodeURIComponent(p.id), text: p.name })));
        input.value = "";
        input.focus();
        var go = document.getElementById("roster-new-match");  // two players or more: a match with them
        if (go && list.children.length >= 2) { go.href = "/new?roster=" + encodeURIComponent(p.club_id); go.parentNode.parentNode.hidden = false; }
        C.toast(C.t("players.added", { name: p.name }));
      }, function (e) { showError(box, e); });
    });
  }

  // -- the player page ------------------------------------------------------------------------------
  function initPlayer() {
    var id = body.dataset.playerId, box = document.getElementById("admin-error");
    var form = document.getElementById("rename-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault(); box.hidden = true;
      var colour = document.getElementById("edit-colour");
      var doc = { name: document.getElementById("edit-name").value, short_name: document.getElementById("edit-short").value.trim() };
      if (colour.value !== colour.defaultValue || form.dataset.hasColour) doc.colour = colour.value;  // no colour chosen: none
      C.api("PATCH", "/api/players/" + encodeURIComponent(id), doc).then(function () { location.reload(); },
        function (e) { showError(box, e); });
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-merge-from]"), function (b) {
      b.addEventListener("click", function () {
        if (!window.confirm(t("players.merge_confirm", { name: b.dataset.mergeName }))) return;
        C.api("POST", "/api/players/merge", { from: b.dataset.mergeFrom, into: id }).then(function () { location.reload(); },
          function (e) { showError(box, e); });
      });
    });
    var out = document.getElementById("link-out"), revoke = document.getElementById("revoke-links");
    document.getElementById("new-link").addEventListener("click", function () {
      C.api("POST", "/api/players/" + encodeURIComponent(id) + "/links").then(function (r) {
        out.textContent = "";
        out.appendChild(el("span", { text: t("players.link_made") + " " }));
        out.appendChild(el("code", { id: "link-url", text: r.url }));
        out.hidden = false; revoke.hidden = false;
        var count = document.getElementById("link-count"), n = (parseInt(count.dataset.n, 10) || 0) + 1;
        count.dataset.n = String(n);
        count.textContent = C.plural("players.links_live", n);
      }, function (e) { showError(box, e); });
    });
    revoke.addEventListener("click", function () {
      C.api("DELETE", "/api/players/" + encodeURIComponent(id) + "/links").then(function (r) {
        out.hidden = true; revoke.hidden = true;
        C.toast(C.plural("players.sessions_ended", r.sessions_ended));
        var count = document.getElementById("link-count");
        count.dataset.n = "0";
        count.textContent = C.plural("players.links_live", 0);
      }, function (e) { showError(box, e); });
    });
  }

  var page = body.dataset.page;
  if (page === "new") initNew();
  else if (page === "players") initRoster();
  else if (page === "player") initPlayer();
  window.CompanionRoster = { extend: extend, picker: picker };
})();
