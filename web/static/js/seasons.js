/* seasons.js: the organiser's forms of the fan-club championship pages (/seasons...): new club, new
 * season, a result played without the app, removing a match, club and season settings. Everything
 * else on these pages is rendered by the server. Errors name the field the server refused. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t;

  // the server names the refused field by its JSON path ($.results[1].place): say which box that is
  var FIELDS = { date: "season.date", year: "season.year", name: "season.name", club: "season.club", game: "season.game",
                 threshold: "season.threshold", player: "season.player", place: "season.place",
                 objective: "season.objective", eliminated: "season.eliminated" };
  function fieldLabel(path) {
    var m = /^\$\.results\[(\d+)\](?:\.(\w+))?/.exec(path || "");
    if (m) return t("season.row", { n: Number(m[1]) + 1 }) + (m[2] && FIELDS[m[2]] ? " · " + t(FIELDS[m[2]]) : "");
    m = /^\$\.points(?:\[?"?(\d+)"?\]?)?/.exec(path || "");
    if (m) return m[1] ? C.plural("season.table_for", Number(m[1])) : t("season.table_hint");
    m = /^\$\.bonus\.(objective|eliminated)/.exec(path || "");
    if (m) return t("season.bonus_" + m[1]);
    m = /^\$\.(\w+)/.exec(path || "");
    return m && FIELDS[m[1]] ? t(FIELDS[m[1]]) : null;
  }
  function showError(form, err) {
    var box = form.querySelector(".error-text");
    var label = err && err.status !== 401 && err.status !== 403 ? fieldLabel(err.field) : null;
    var text = label ? label + ": " + err.error : C.errorText(err);
    if (box) { box.textContent = text; box.hidden = false; } else { C.toast(text, true); }
  }
  function clearError(form) { var box = form.querySelector(".error-text"); if (box) box.hidden = true; }
  function value(form, name) { var n = form.querySelector("[name='" + name + "']"); return n ? n.value.trim() : ""; }
  function submit(form, build, method, path, done) {
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      clearError(form);
      var body;
      try { body = build(); } catch (e) { showError(form, { message: e.message }); return; }
      var btn = form.querySelector("[type=submit]");
      if (btn) btn.disabled = true;
      C.api(method, typeof path === "function" ? path() : path, body).then(function (res) {
        C.toast(t("common.saved"));
        done(res);
      }, function (err) { showError(form, err); }).then(function () { if (btn) btn.disabled = false; });
    });
  }
  function number(text, what) {
    var n = Number(String(text).replace(",", "."));
    if (text === "" || !isFinite(n)) throw new Error(t("season.bad_number", { what: what, text: text }));
    return n;
  }
  function need(ok, key) { if (!ok) throw new Error(t(key)); }

  var newClub = document.getElementById("new-club");
  if (newClub) submit(newClub, function () { need(value(newClub, "name"), "season.need_name"); return { name: value(newClub, "name") }; }, "POST", "/api/clubs",
    function () { location.reload(); });

  // a new season: a club name not known yet creates the club first, in the same step (the page says so)
  var newSeason = document.getElementById("new-season");
  if (newSeason) {
    var known = Array.prototype.map.call(document.querySelectorAll("#club-names option"), function (o) { return o.value; });
    var clubBox = newSeason.querySelector("[name=club]"), note = document.getElementById("new-club-note");
    var isNew = function (name) { return !!name && known.indexOf(name) < 0; };
    var syncNote = function () {
      var name = clubBox.value.trim();
      if (note) { note.hidden = !isNew(name); note.textContent = isNew(name) ? t("season.new_club_note", { name: name }) : ""; }
    };
    clubBox.addEventListener("input", syncNote);
    syncNote();
    newSeason.addEventListener("submit", function (ev) {
      ev.preventDefault();
      clearError(newSeason);
      var body;
      try {
        need(value(newSeason, "club"), "season.need_name");
        need(/^\d{4}$/.test(value(newSeason, "year")), "season.need_year");
        body = { club: value(newSeason, "club"), game: value(newSeason, "game"), year: parseInt(value(newSeason, "year"), 10) };
        if (value(newSeason, "name")) body.name = value(newSeason, "name");
      } catch (e) { showError(newSeason, { message: e.message }); return; }
      var btn = newSeason.querySelector("[type=submit]");
      btn.disabled = true;
      var club = isNew(body.club) ? C.api("POST", "/api/clubs", { name: body.club }).then(function () { known.push(body.club); })
        : Promise.resolve();
      club.then(function () { return C.api("POST", "/api/seasons", body); }).then(function (s) {
        C.toast(t("common.saved"));
        location.href = "/seasons/" + encodeURIComponent(s.id);
      }, function (err) { showError(newSeason, err); syncNote(); }).then(function () { btn.disabled = false; });
    });
  }

  var seasonId = document.body.dataset.seasonId;

  var result = document.getElementById("result-form");
  if (result && seasonId) {
    var rows = document.getElementById("result-rows");
    document.getElementById("add-row").addEventListener("click", function () {
      var last = rows.querySelector(".result-row:last-child");
      var copy = last.cloneNode(true);
      copy.querySelector("[name=player]").value = "";
      var place = copy.querySelector("[name=place]");
      place.value = String(rows.querySelectorAll(".result-row").length + 1);
      copy.querySelectorAll("input[type=checkbox]").forEach(function (c) { c.checked = false; });
      rows.appendChild(copy);
    });
    submit(result, function () {
      var results = [];
      rows.querySelectorAll(".result-row").forEach(function (tr) {
        var name = tr.querySelector("[name=player]").value.trim();
        if (!name) return;  // empty rows are ignored
        results.push({ player: name, place: parseInt(tr.querySelector("[name=place]").value, 10),
                       objective: tr.querySelector("[name=objective]").checked,
                       eliminated: tr.querySelector("[name=eliminated]").checked });
      });
      need(value(result, "date"), "season.need_date");
      need(results.length >= 2, "season.need_players");
      return { date: value(result, "date"), results: results };
    }, "POST", "/api/seasons/" + encodeURIComponent(seasonId) + "/results", function () { location.reload(); });
  }

  document.querySelectorAll("[data-remove]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      if (!window.confirm(t("season.remove_confirm"))) return;
      C.api("DELETE", "/api/seasons/" + encodeURIComponent(seasonId) + "/results/" + encodeURIComponent(btn.dataset.remove))
        .then(function () { location.reload(); }, function (err) { C.toast(C.errorText(err), true); });
    });
  });

  document.querySelectorAll("[data-add]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      btn.disabled = true;
      C.api("PUT", "/api/matches/" + encodeURIComponent(btn.dataset.add) + "/season", { season: seasonId })
        .then(function () { location.reload(); }, function (err) { btn.disabled = false; C.toast(C.errorText(err), true); });
    });
  });

  // the club's name (asked at the first PIN): renamed here
  var clubName = document.getElementById("club-name-form");
  if (clubName) submit(clubName, function () { need(value(clubName, "name"), "season.need_name"); return { name: value(clubName, "name") }; },
                       "PUT", clubName.dataset.put, function () { location.reload(); });

  var settings = document.getElementById("settings-form");
  if (settings) submit(settings, function () {
    var body = {}, points = {};
    settings.querySelectorAll("[data-players]").forEach(function (input) {
      var text = input.value.trim();
      if (!text) return;
      points[input.dataset.players] = text.split(/[;,\s]+/).filter(Boolean).map(function (x) {
        return number(x, C.plural("season.table_for", Number(input.dataset.players)));
      });
    });
    if (Object.keys(points).length) body.points = points;
    var pct = value(settings, "threshold");
    if (pct !== "") {
      var p = number(pct, t("season.threshold"));
      need(p >= 0 && p <= 100, "season.bad_threshold");
      body.threshold = Number((p / 100).toPrecision(12));
    }
    var bonus = {};
    if (value(settings, "bonus-objective") !== "") bonus.objective = number(value(settings, "bonus-objective"), t("season.bonus_objective"));
    if (value(settings, "bonus-eliminated") !== "") bonus.eliminated = number(value(settings, "bonus-eliminated"), t("season.bonus_eliminated"));
    if (Object.keys(bonus).length) body.bonus = bonus;
    return body;
  }, "PUT", settings.dataset.put, function () { location.reload(); });
})();
