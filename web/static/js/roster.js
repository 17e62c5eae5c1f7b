/* roster.js: the club roster on the pages.
 *
 *   new match (/new): the club and the season the result feeds (default: the club's season of the game
 *     this year; "no season" allowed), and type-ahead on each player's name from the club's roster
 *     (GET /api/players?q=, case- and accent-insensitive); a name not on the roster offers to add it
 *     (organisers). CompanionRoster.extend(doc, list) adds club, season and the seats' roster ids to
 *     the new match's body.
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
    wrap.appendChild(clubLabel); wrap.appendChild(seasonLabel);
    host.appendChild(wrap);
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
    }
    state.clubs.forEach(function (c) { club.appendChild(el("option", { value: c.id, text: c.name })); });
    clubLabel.hidden = state.clubs.length < 2;
    club.addEventListener("change", fillSeasons);
    game.addEventListener("change", fillSeasons);
    fillSeasons();
  }

  function suggestBox(li) {
    var box = li.querySelector(".roster-suggest");
    if (!box) {
      box = el("ul", { class: "roster-suggest", role: "listbox" });
      li.appendChild(box);
    }
    return box;
  }

  function pick(li, p) {
    var input = li.querySelector(".player-name");
    input.value = p.name;
    li.dataset.rosterId = p.id;
    li.dataset.rosterName = p.name;
    if (p.colour) li.querySelector(".player-colour").value = p.colour;
    li.classList.add("on-roster");
    close(li);
  }

  function close(li) {
    var box = li.querySelector(".roster-suggest");
    if (box) box.remove();
  }

  var timer = null, asked = 0;
  function lookUp(li) {
    var input = li.querySelector(".player-name"), q = input.value.trim();
    if (li.dataset.rosterName !== input.value) { delete li.dataset.rosterId; delete li.dataset.rosterName; li.classList.remove("on-roster"); }
    if (!q || !state.club) { close(li); return; }
    var mine = ++asked;
    C.api("GET", "/api/players?club=" + encodeURIComponent(state.club) + "&q=" + encodeURIComponent(q) + "&limit=8").then(function (r) {
      if (mine !== asked || document.activeElement !== input) return;
      var box = suggestBox(li);
      box.textContent = "";
      var exact = false;
      r.players.forEach(function (p) {
        if (p.name === q) exact = true;
        box.appendChild(el("li", { role: "option" }, el("button", {
          type: "button", class: "btn btn-small btn-ghost suggest", "data-roster-id": p.id,
          onmousedown: function (ev) { ev.preventDefault(); },
          onclick: function () { pick(li, p); }
        }, p.colour ? el("span", { class: "swatch", style: "background:" + p.colour }) : null, p.name)));
      });
      if (!exact && body.dataset.role === "organiser") {
        box.appendChild(el("li", { role: "option" }, el("button", {
          type: "button", class: "btn btn-small add-to-roster",
          onmousedown: function (ev) { ev.preventDefault(); },
          onclick: function () {
            C.api("POST", "/api/players", { club: state.club, name: q }).then(function (p) {
              pick(li, p); C.toast(t("new.added_to_roster", { name: p.name }));
            }, function (e) { C.toast(C.errorText(e), true); });
          }
        }, t("new.add_to_roster", { name: q }))));
      } else if (!exact && !r.players.length) {
        box.appendChild(el("li", { class: "muted small", text: t("new.guest") }));
      }
      if (!box.children.length) close(li);
    }, function () { /* the roster is a help: typing a name still works */ });
  }

  function initNew() {
    var list = document.getElementById("players"), host = document.getElementById("roster-choice");
    if (!list || !host) return;
    C.api("GET", "/api/seasons").then(function (r) {
      state.clubs = r.clubs; state.seasons = r.seasons;
      if (state.clubs.length) clubSelect(host);
    }, function () {});
    list.addEventListener("input", function (ev) {
      if (!ev.target.classList.contains("player-name")) return;
      var li = ev.target.closest("li");
      clearTimeout(timer);
      timer = setTimeout(function () { lookUp(li); }, 150);
    });
    list.addEventListener("focusout", function (ev) {
      if (!ev.target.classList.contains("player-name")) return;
      var li = ev.target.closest("li");
      setTimeout(function () { if (!li.contains(document.activeElement)) close(li); }, 200);
    });
    list.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape" && ev.target.classList.contains("player-name")) close(ev.target.closest("li"));
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
  function initRoster() {
    var form = document.getElementById("add-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var box = document.getElementById("admin-error");
      box.hidden = true;
      C.api("POST", "/api/players", { club: body.dataset.clubId, name: document.getElementById("add-name").value }).then(function (p) {
        location.href = "/players/" + encodeURIComponent(p.id);
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
      }, function (e) { showError(box, e); });
    });
    revoke.addEventListener("click", function () {
      C.api("DELETE", "/api/players/" + encodeURIComponent(id) + "/links").then(function (r) {
        out.hidden = true; revoke.hidden = true;
        C.toast(C.plural("players.sessions_ended", r.sessions_ended));
        document.getElementById("link-count").textContent = C.plural("players.links_live", 0);
      }, function (e) { showError(box, e); });
    });
  }

  var page = body.dataset.page;
  if (page === "new") initNew();
  else if (page === "players") initRoster();
  else if (page === "player") initPlayer();
  window.CompanionRoster = { extend: extend };
})();
