/* The board editor (/boards): a club transcribes its own Web of Power board on a photo of it.
 * Tap to add a site (in the country picked in the palette), drag from site to site for a road (or a sea
 * route in that mode), long-press a road to delete it, tap two coats of arms for an alliance and give it
 * its number. Pinch or wheel to zoom, drag the empty photo to pan. Delete, Esc, Ctrl+Z / Ctrl+Y.
 * Every change is checked by the server (the checker of `companion map check`); saving makes a version.
 * The document is schemas/web-of-power.map.schema.json; the sites' x, y are pixels of the photo. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var NS = "http://www.w3.org/2000/svg";
  // the app's colour for each country (the palette and the sites drawn in it)
  var COLOURS = { England: "#c0392b", Franken: "#8e44ad", Bayern: "#2471a3", Italien: "#1e8449", Aragon: "#d35400",
    Frankreich: "#2e4053", Lothringen: "#b7950b", Schwaben: "#6e2c00", Burgund: "#a93226" };
  var EXTRA = ["#117a65", "#7d3c98", "#5d6d7e", "#cb4335"];
  var PHOTO_SIDE = 1600, BLANK = { width: 1600, height: 1100 };

  var S = {
    boards: [], book: null, limit: 0, board: null, doc: null, photo: null, url: null,
    mode: "site", country: null, selected: null, arms: [], undo: [], redo: [], dirty: false,
    view: null, check: null, checkTimer: null, checkSeq: 0
  };
  function $(id) { return document.getElementById(id); }
  function colourOf(cid) {
    if (COLOURS[cid]) return COLOURS[cid];
    var i = S.doc ? S.doc.countries.map(function (c) { return c.id; }).indexOf(cid) : 0;
    return EXTRA[Math.max(0, i) % EXTRA.length];
  }
  function organiser() { return document.body.dataset.role === "organiser"; }
  function fail(e) { C.toast(C.errorText(e), true); }
  function clone(x) { return JSON.parse(JSON.stringify(x)); }

  // -- the document ------------------------------------------------------------------------------------
  function sites() {
    var out = [];
    S.doc.countries.forEach(function (c, ci) {
      c.sites.forEach(function (s, j) {
        if (typeof s === "string") s = c.sites[j] = { id: s };
        out.push({ site: s, country: c.id, ci: ci, j: j });
      });
    });
    return out;
  }
  function findSite(id) { return sites().filter(function (s) { return s.site.id === id; })[0] || null; }
  function bookCount(cid) { return S.book && S.book.site_counts[cid] !== undefined ? S.book.site_counts[cid] : null; }
  function change(fn) {
    S.undo.push(JSON.stringify(S.doc));
    if (S.undo.length > 200) S.undo.shift();
    S.redo = [];
    fn();
    normalise();
    S.dirty = true;
    render();
    scheduleCheck();
  }
  // a country with sites drawn lists them all (no site_count); one without keeps what is known of its count
  function normalise() {
    S.doc.countries.forEach(function (c) {
      if (c.sites.length) delete c.site_count;
      else if (!("site_count" in c)) c.site_count = bookCount(c.id);
    });
    if (S.doc.roads && !S.doc.roads.length) S.doc.roads = null;
    if (S.doc.sea_routes && !S.doc.sea_routes.length) delete S.doc.sea_routes;
  }
  function undo() {
    if (!S.undo.length) return;
    S.redo.push(JSON.stringify(S.doc));
    S.doc = JSON.parse(S.undo.pop());
    S.selected = null; S.dirty = true; render(); scheduleCheck();
  }
  function redo() {
    if (!S.redo.length) return;
    S.undo.push(JSON.stringify(S.doc));
    S.doc = JSON.parse(S.redo.pop());
    S.selected = null; S.dirty = true; render(); scheduleCheck();
  }
  function newSiteId(cid) {
    var used = {};
    sites().forEach(function (s) { used[s.site.id] = true; });
    for (var n = 1; ; n++) if (!used[cid + n]) return cid + n;
  }
  function addSite(x, y) {
    if (S.placing) { // a site known by name (the rule book's) put where it is on the photo
      var id0 = S.placing;
      S.placing = null;
      change(function () { var f = findSite(id0); if (f) { f.site.x = Math.round(x); f.site.y = Math.round(y); } });
      select({ kind: "site", id: id0 });
      return;
    }
    var cid = S.country;
    if (!cid) { C.toast(t("boards.pick_country"), true); return; }
    var id = newSiteId(cid);
    change(function () {
      var c = S.doc.countries.filter(function (k) { return k.id === cid; })[0];
      c.sites.push({ id: id, x: Math.round(x), y: Math.round(y) });
    });
    select({ kind: "site", id: id });
  }
  function pairIndex(list, a, b) {
    for (var i = 0; list && i < list.length; i++) {
      if ((list[i][0] === a && list[i][1] === b) || (list[i][0] === b && list[i][1] === a)) return i;
    }
    return -1;
  }
  function addLine(kind, a, b) {
    if (a === b) return;
    var key = kind === "sea" ? "sea_routes" : "roads";
    if (pairIndex(S.doc[key], a, b) >= 0) { C.toast(t("boards.line_exists"), true); return; }
    change(function () {
      if (!S.doc[key]) S.doc[key] = [];
      S.doc[key].push([a, b]);
    });
  }
  function removeSelected() {
    var sel = S.selected;
    if (!sel) return;
    change(function () {
      if (sel.kind === "site") {
        var found = findSite(sel.id);
        if (found) S.doc.countries[found.ci].sites.splice(found.j, 1);
        ["roads", "sea_routes"].forEach(function (key) {
          if (S.doc[key]) S.doc[key] = S.doc[key].filter(function (r) { return r[0] !== sel.id && r[1] !== sel.id; });
        });
      } else {
        var key = sel.kind === "sea" ? "sea_routes" : "roads";
        var i = pairIndex(S.doc[key], sel.a, sel.b);
        if (i >= 0) S.doc[key].splice(i, 1);
      }
    });
    select(null);
  }
  function select(sel) {
    S.selected = sel;
    var box = $("bd-site-edit");
    box.hidden = !(sel && sel.kind === "site");
    if (sel && sel.kind === "site") {
      var f = findSite(sel.id);
      if (!f) { box.hidden = true; return; }
      $("bd-site-name").value = f.site.name || "";
      var cs = $("bd-site-country");
      cs.textContent = "";
      S.doc.countries.forEach(function (c) { cs.appendChild(el("option", { value: c.id, text: c.id })); });
      cs.value = f.country;
    }
    renderMap();
  }

  // -- drawing ---------------------------------------------------------------------------------------
  function size() { return S.photo ? { width: S.photo.width, height: S.photo.height } : BLANK; }
  function unit() { var z = size(); return Math.max(z.width, z.height) / 100; }
  function svgEl(tag, attrs) {
    var n = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] !== null && attrs[k] !== undefined) n.setAttribute(k, attrs[k]); });
    return n;
  }
  function setView() {
    var v = S.view;
    $("bd-svg").setAttribute("viewBox", [v.x, v.y, v.w, v.h].join(" "));
  }
  function resetView() {
    var z = size();
    S.view = { x: 0, y: 0, w: z.width, h: z.height };
    $("bd-stage").style.aspectRatio = z.width + " / " + z.height; // the photo fills the frame, no grey bands
    setView();
  }
  function renderMap() {
    var svg = $("bd-svg"), z = size(), u = unit();
    svg.textContent = "";
    if (S.url) svg.appendChild(svgEl("image", { href: S.url, x: 0, y: 0, width: z.width, height: z.height, id: "bd-image" }));
    else {
      svg.appendChild(svgEl("rect", { x: 0, y: 0, width: z.width, height: z.height, fill: "#f4efe2" }));
      svg.appendChild(svgEl("text", { x: z.width / 2, y: z.height / 2, "text-anchor": "middle", "font-size": 3 * u, fill: "#999" }))
        .textContent = t("boards.no_photo");
    }
    var pos = {};
    sites().forEach(function (s) { pos[s.site.id] = s; });
    [["roads", "road"], ["sea_routes", "sea"]].forEach(function (kv) {
      (S.doc[kv[0]] || []).forEach(function (r, k) {
        var a = pos[r[0]], b = pos[r[1]];
        if (!a || !b || a.site.x === undefined || b.site.x === undefined) return;
        var sel = S.selected && S.selected.kind === kv[1] && pairIndex([[S.selected.a, S.selected.b]], r[0], r[1]) === 0;
        svg.appendChild(svgEl("line", { x1: a.site.x, y1: a.site.y, x2: b.site.x, y2: b.site.y, "stroke-width": kv[1] === "road" ? 0.9 * u : 0.6 * u,
          class: "bd-" + kv[1] + (sel ? " selected" : ""), "data-kind": kv[1], "data-k": k, "data-a": r[0], "data-b": r[1] }));
      });
    });
    var placed = sites().filter(function (s) { return s.site.x !== undefined; });
    placed.forEach(function (s) {
      var sel = S.selected && S.selected.kind === "site" && S.selected.id === s.site.id;
      svg.appendChild(svgEl("circle", { cx: s.site.x, cy: s.site.y, r: 1.4 * u, fill: colourOf(s.country), "stroke-width": 0.3 * u,
        class: "bd-site" + (sel ? " selected" : ""), "data-site": s.site.id, "data-ci": s.ci, "data-j": s.j }));
    });
    // each site's name where it covers no other name and no other site (above, below, right, left, then
    // further out): two sites side by side ("Frankreich1", "Frankreich2") keep both names legible
    labelPlaces(placed, u).forEach(function (p) {
      svg.appendChild(svgEl("text", { x: p.x, y: p.y, "text-anchor": p.anchor, "font-size": 1.6 * u, class: "bd-label",
        "data-label": p.id })).textContent = p.text;
    });
    if (S.rubber) svg.appendChild(svgEl("line", { x1: S.rubber.x1, y1: S.rubber.y1, x2: S.rubber.x2, y2: S.rubber.y2, class: "bd-rubber", "stroke-width": 0.4 * u }));
    setView();
    highlightProblems();
  }
  // where each site's name goes: boxes estimated from the text's length (a sans-serif letter is about 0.6 of
  // the font size wide), the first candidate spot that overlaps no name placed before and no site's dot
  function labelPlaces(list, u) {
    var fs = 1.6 * u, h = fs, dot = 1.6 * u, boxes = [], out = [];
    var dots = list.map(function (s) { return { x0: s.site.x - dot, y0: s.site.y - dot, x1: s.site.x + dot, y1: s.site.y + dot }; });
    function hits(b) {
      return boxes.concat(dots).some(function (o) { return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1; });
    }
    list.forEach(function (s) {
      var text = s.site.name || s.site.id, w = 0.6 * fs * text.length, x = s.site.x, y = s.site.y, best = null;
      [1, 1.8, 2.6].some(function (k) {
        var d = 2 * u * k;
        var spots = [["middle", x, y - d], ["middle", x, y + d + 0.8 * h], ["start", x + d, y + 0.35 * h], ["end", x - d, y + 0.35 * h]];
        return spots.some(function (sp) {
          var x0 = sp[0] === "middle" ? sp[1] - w / 2 : sp[0] === "start" ? sp[1] : sp[1] - w;
          var b = { x0: x0, y0: sp[2] - h, x1: x0 + w, y1: sp[2] + 0.2 * h };
          if (hits(b)) return false;
          best = { anchor: sp[0], x: sp[1], y: sp[2], box: b };
          return true;
        });
      });
      if (!best) {  // crowded all round: above, as before
        var x0 = x - w / 2;
        best = { anchor: "middle", x: x, y: y - 2 * u, box: { x0: x0, y0: y - 2 * u - h, x1: x0 + w, y1: y - 2 * u } };
      }
      boxes.push(best.box);
      out.push({ id: s.site.id, text: text, anchor: best.anchor, x: best.x, y: best.y });
    });
    return out;
  }
  function renderCountries() {
    var box = $("bd-countries");
    box.textContent = "";
    if (!S.country || !S.doc.countries.some(function (c) { return c.id === S.country; })) S.country = S.doc.countries[0].id;
    S.doc.countries.forEach(function (c) {
      var n = c.sites.length, count = c.sites.length ? n : (c.site_count === null || c.site_count === undefined ? "?" : "0/" + c.site_count);
      box.appendChild(el("button", { type: "button", class: "bd-country", "data-country": c.id, style: "background:" + colourOf(c.id),
        "aria-pressed": String(S.country === c.id), text: c.id + " · " + count }));
    });
  }
  // sites named but not on the photo yet (Chorin and Obra come from the rule book): tap one, then the photo
  function renderUnplaced() {
    var box = $("bd-unplaced"), list = sites().filter(function (s) { return s.site.x === undefined || s.site.y === undefined; });
    box.hidden = !list.length;
    var ul = $("bd-unplaced-list");
    ul.textContent = "";
    list.forEach(function (s) {
      ul.appendChild(el("button", { type: "button", class: "bd-country", "data-place": s.site.id, style: "background:" + colourOf(s.country),
        "aria-pressed": String(S.placing === s.site.id), text: (s.site.name || s.site.id) + " · " + s.country }));
    });
  }
  function renderArms() {
    var box = $("bd-arms");
    box.textContent = "";
    S.doc.countries.forEach(function (c) {
      box.appendChild(el("button", { type: "button", class: "bd-country bd-arm", "data-arm": c.id, style: "background:" + colourOf(c.id),
        "aria-pressed": String(S.arms.indexOf(c.id) >= 0), text: c.id }));
    });
    var pick = $("bd-alliance-pick");
    pick.hidden = S.arms.length !== 2;
    if (S.arms.length === 2) {
      $("bd-alliance-pair").textContent = S.arms[0] + " – " + S.arms[1];
      var sel = $("bd-alliance-number"), first = null;
      sel.textContent = "";
      var numbers = S.doc.alliances.map(function (a) { return a.number; });
      var total = Math.max(15, numbers.length ? Math.max.apply(null, numbers) : 0);
      for (var n = 1; n <= total; n++) {
        var a = allianceOf(n);
        if (!first && (!a || !a.countries)) first = n;
        sel.appendChild(el("option", { value: String(n), text: String(n) + (a && a.countries ? " (" + a.countries.join("–") + ")" : "") }));
      }
      sel.value = String(first || 1);
    }
    var list = $("bd-alliances");
    list.textContent = "";
    S.doc.alliances.slice().sort(function (a, b) { return a.number - b.number; }).forEach(function (a) {
      var book = S.book && S.book.alliances[String(a.number)];
      var fromBook = book && a.countries && a.countries.slice().sort().join() === book.slice().sort().join();
      var sea = el("input", { type: "checkbox", class: "bd-sea-flag", "data-number": String(a.number) });
      sea.checked = !!a.sea_route;
      var li = el("li", { "data-number": String(a.number) },
        el("strong", { text: a.number + ": " }),
        el("span", { class: "bd-pair", text: a.countries ? a.countries.join(" – ") : t("boards.unknown") }),
        fromBook ? el("span", { class: "bd-book-badge", text: t("boards.from_book") }) : null,
        " ", el("label", { class: "trk-inline" }, sea, " " + t("boards.sea_route")),
        a.countries ? el("button", { type: "button", class: "btn btn-small btn-ghost bd-clear", "data-number": String(a.number), "aria-label": t("boards.clear_alliance", { number: a.number }), text: "×" }) : null);
      list.appendChild(li);
    });
  }
  function allianceOf(n) { return S.doc.alliances.filter(function (a) { return a.number === n; })[0] || null; }
  function setAlliance() {
    var n = parseInt($("bd-alliance-number").value, 10), pair = S.arms.slice();
    if (pair.length !== 2) return;
    change(function () {
      var a = allianceOf(n);
      if (!a) { a = { number: n, countries: null }; S.doc.alliances.push(a); S.doc.alliances.sort(function (x, y) { return x.number - y.number; }); }
      a.countries = pair;
    });
    S.arms = [];
    renderArms();
  }
  function renderBook() {
    var ul = $("bd-book-list"), b = S.book;
    ul.textContent = "";
    if (!b) return;
    ul.appendChild(el("li", { text: t("boards.book_countries", { list: b.countries.join(", ") }) }));
    Object.keys(b.site_counts).forEach(function (c) { ul.appendChild(el("li", { text: C.plural("boards.book_sites", b.site_counts[c], { country: c }) })); });
    Object.keys(b.alliances).forEach(function (n) { ul.appendChild(el("li", { text: t("boards.book_alliance", { number: n, a: b.alliances[n][0], b: b.alliances[n][1] }) })); });
    ul.appendChild(el("li", { text: t("boards.book_sea", { list: b.sea_routes.join(", ") }) }));
    ul.appendChild(el("li", { text: t("boards.book_cards", { list: b.card_colours.map(function (k) { return k.countries.join("/") + " " + k.cards; }).join("; ") }) }));
  }
  function renderHead() {
    var b = S.board;
    $("bd-name").value = S.doc.name || b.name;
    $("bd-version").textContent = t("boards.version", { version: b.version, latest: b.latest }) + (S.dirty ? " · " + t("boards.unsaved") : "");
    var status = S.check ? S.check.status : b.status;
    $("bd-status").textContent = t("boards.status_" + status);
    $("bd-status").dataset.status = status;
    $("bd-default-note").textContent = b["default"] ? t("boards.is_default") : "";
    $("bd-export").href = "/api/boards/" + b.id + "/export?version=" + b.version;
    $("bd-export-photo").href = "/api/boards/" + b.id + "/export?photo=1&version=" + b.version;
    $("bd-export-photo").hidden = !b.photo;
    $("bd-undo").disabled = !S.undo.length;
    $("bd-redo").disabled = !S.redo.length;
    $("bd-delete").disabled = !S.selected;
    Array.prototype.forEach.call(document.querySelectorAll(".bd-tools [data-mode]"), function (b2) { b2.setAttribute("aria-pressed", String(b2.dataset.mode === S.mode)); });
    $("bd-hint").textContent = t("boards.hint_" + S.mode);
  }
  function render() { renderHead(); renderCountries(); renderUnplaced(); renderArms(); renderMap(); renderProblems(); }

  // -- the checker -------------------------------------------------------------------------------------
  function scheduleCheck() {
    clearTimeout(S.checkTimer);
    S.pending = true;
    S.checkTimer = setTimeout(runCheck, 300);
  }
  function runCheck() {
    if (!organiser()) return Promise.resolve();
    var seq = ++S.checkSeq;
    S.pending = true;
    return C.api("POST", "/api/boards/check", { board: S.doc }).then(function (r) {
      if (seq !== S.checkSeq) return;
      S.check = r;
      S.pending = false;
      renderHead();
      renderProblems();
    }, function (e) { if (seq === S.checkSeq) S.pending = false; fail(e); });
  }
  // "$.board.roads[3][1]" -> what it points at in the editor
  function target(path) {
    var p = path.replace(/^\$\.board/, "$"), m;
    if ((m = /^\$\.countries\[(\d+)\]\.sites\[(\d+)\]/.exec(p))) return "[data-ci='" + m[1] + "'][data-j='" + m[2] + "']";
    if ((m = /^\$\.roads\[(\d+)\]/.exec(p))) return "line[data-kind='road'][data-k='" + m[1] + "']";
    if ((m = /^\$\.sea_routes\[(\d+)\]/.exec(p))) return "line[data-kind='sea'][data-k='" + m[1] + "']";
    if ((m = /^\$\.alliances\[(\d+)\]/.exec(p))) {
      var a = S.doc.alliances[+m[1]];
      return a ? "#bd-alliances li[data-number='" + a.number + "']" : null;
    }
    if ((m = /^\$\.countries\[(\d+)\]/.exec(p))) {
      var c = S.doc.countries[+m[1]];
      return c ? "#bd-countries [data-country='" + c.id + "']" : null;
    }
    return null;
  }
  // the checker's sentences (English, companion/games/wop_board.py) in the page's language; one it does not
  // know stays as the checker wrote it
  var PROBLEMS = [
    [/^the rule book says (.+) has (\d+) sites, not (\d+)$/, "book_sites", ["country", "book", "n"], "book"],
    [/^countries unknown for alliance\(s\) (.+): they score nothing until transcribed$/, "alliances_unknown", ["list"]],
    [/^roads unknown: chains are entered by hand$/, "roads_unknown", []],
    [/^(\d+) site\(s\) on no road: (.+)$/, "lonely", ["n", "list"], "n"],
    [/^site count unknown for (.+)$/, "count_unknown", ["list"]],
    [/^unknown site '(.+)'$/, "unknown_site", ["site"]],
    [/^site '(.+)' is listed twice$/, "site_twice", ["site"]],
    [/^road '(.+)'-'(.+)' is listed twice$/, "road_twice", ["a", "b"]],
    [/^a road from '(.+)' to itself$/, "road_self", ["site"]],
    [/^the rule book says alliance (\d+) is (.+)-(.+)$/, "book_alliance", ["number", "a", "b"]],
    [/^the rule book says alliance (\d+) crosses water \(a sea route\)$/, "book_sea", ["number"]],
    [/^the rule book says alliance (\d+) is not a sea route$/, "book_not_sea", ["number"]],
    [/^(\d+) site\(s\) not placed on the drawing yet: (.+)$/, "unplaced", ["n", "list"], "n"],
    [/^the road network falls into (\d+) separate parts$/, "parts", ["n"]],
    [/^alliance (\d+) joins the same countries as alliance (\d+)$/, "alliance_same", ["number", "other"]],
    [/^the rule book's card colours are: (.+)$/, "book_cards", ["list"]],
    [/^(.+): (\d+) of (\d+) sites are not named yet$/, "unnamed", ["country", "n", "count"], "count"]
  ];
  function problemText(pr) {
    for (var i = 0; i < PROBLEMS.length; i++) {
      var m = PROBLEMS[i][0].exec(pr.message);
      if (!m) continue;
      var vars = {};
      PROBLEMS[i][2].forEach(function (k, j) { vars[k] = m[j + 1]; });
      var counted = PROBLEMS[i][3];  // the count the sentence's noun agrees with ("1 site", "2 sites")
      if (counted) return t("boards.p_" + PROBLEMS[i][1] + "." + C.pluralForm(Number(vars[counted])), vars);
      return t("boards.p_" + PROBLEMS[i][1], vars);
    }
    return pr.message;
  }
  function renderProblems() {
    var r = S.check;
    var errs = $("bd-errors"), warns = $("bd-warnings");
    errs.textContent = ""; warns.textContent = "";
    if (!r) return;
    r.errors.forEach(function (pr) { errs.appendChild(el("li", { class: "bd-error", "data-path": pr.path, text: "✖ " + problemText(pr) })); });
    r.warnings.forEach(function (pr) { warns.appendChild(el("li", { class: "bd-warning", "data-path": pr.path, text: "⚠ " + problemText(pr) })); });
    if (!r.errors.length && !r.warnings.length) warns.appendChild(el("li", { text: t("boards.no_problems") }));
    var k = r.counts || {};
    $("bd-counts").textContent = t("boards.counts", { sites: C.plural("boards.n_sites", k.sites || 0),
      roads: k.roads === null || k.roads === undefined ? t("boards.roads_unknown") : C.plural("boards.n_roads", k.roads),
      alliances: C.plural("boards.n_alliances", k.alliances || 0, { known: k.alliances_known || 0 }) });
    highlightProblems();
  }
  function highlightProblems() {
    document.querySelectorAll(".bd-problem").forEach(function (n) { n.classList.remove("bd-problem"); });
    if (!S.check) return;
    S.check.errors.forEach(function (pr) {
      var sel = target(pr.path);
      if (sel) document.querySelectorAll(sel).forEach(function (n) { n.classList.add("bd-problem"); });
    });
  }

  // -- pointer: tap, drag, long-press, pinch, pan --------------------------------------------------------
  var pointers = {}, gesture = null;
  function toSvg(ev) {
    var svg = $("bd-svg"), pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    var m = svg.getScreenCTM();
    return m ? pt.matrixTransform(m.inverse()) : { x: 0, y: 0 };
  }
  function siteAt(ev) {
    var n = document.elementFromPoint(ev.clientX, ev.clientY);
    return n && n.classList && n.classList.contains("bd-site") ? n.getAttribute("data-site") : null;
  }
  function lineAt(ev) {
    var n = document.elementFromPoint(ev.clientX, ev.clientY);
    return n && n.tagName === "line" && n.dataset.kind ? n : null;
  }
  function zoomAt(factor, cx, cy) {
    var v = S.view, z = size();
    var w = Math.min(Math.max(v.w / factor, z.width / 20), z.width * 2), h = w * v.h / v.w;
    S.view = { x: cx - (cx - v.x) * w / v.w, y: cy - (cy - v.y) * h / v.h, w: w, h: h };
    setView();
  }
  function onDown(ev) {
    if (!organiser()) return;
    $("bd-svg").setPointerCapture(ev.pointerId);
    pointers[ev.pointerId] = { x: ev.clientX, y: ev.clientY };
    var ids = Object.keys(pointers);
    if (ids.length === 2) { // pinch
      clearTimeout(gesture && gesture.timer);
      var a = pointers[ids[0]], b = pointers[ids[1]];
      gesture = { kind: "pinch", dist: Math.hypot(a.x - b.x, a.y - b.y) };
      S.rubber = null;
      return;
    }
    if (ids.length > 2) return;
    var p = toSvg(ev), site = siteAt(ev), line = lineAt(ev);
    gesture = { kind: "tap", x: ev.clientX, y: ev.clientY, p: p, site: site, line: line, view: clone(S.view), moved: false };
    if (site && (S.mode === "road" || S.mode === "sea")) gesture.kind = "line";
    if (line) {
      gesture.timer = setTimeout(function () { // long-press: delete the road
        if (gesture && !gesture.moved && gesture.line === line) {
          select({ kind: line.dataset.kind, a: line.dataset.a, b: line.dataset.b });
          removeSelected();
          C.toast(t("boards.road_deleted"));
          gesture = null;
        }
      }, 650);
    }
  }
  function onMove(ev) {
    if (!pointers[ev.pointerId]) return;
    pointers[ev.pointerId] = { x: ev.clientX, y: ev.clientY };
    if (!gesture) return;
    if (gesture.kind === "pinch") {
      var ids = Object.keys(pointers);
      if (ids.length < 2) return;
      var a = pointers[ids[0]], b = pointers[ids[1]], d = Math.hypot(a.x - b.x, a.y - b.y);
      var mid = toSvg({ clientX: (a.x + b.x) / 2, clientY: (a.y + b.y) / 2 });
      if (gesture.dist > 0) zoomAt(d / gesture.dist, mid.x, mid.y);
      gesture.dist = d;
      return;
    }
    if (Math.hypot(ev.clientX - gesture.x, ev.clientY - gesture.y) > 8) gesture.moved = true;
    if (gesture.kind === "line") {
      var f = findSite(gesture.site), p = toSvg(ev);
      S.rubber = { x1: f.site.x, y1: f.site.y, x2: p.x, y2: p.y };
      renderMap();
    } else if (gesture.moved) { // pan the photo
      var svg = $("bd-svg"), rect = svg.getBoundingClientRect();
      var scale = Math.max(gesture.view.w / rect.width, gesture.view.h / rect.height);
      S.view = { x: gesture.view.x - (ev.clientX - gesture.x) * scale, y: gesture.view.y - (ev.clientY - gesture.y) * scale,
        w: gesture.view.w, h: gesture.view.h };
      setView();
    }
  }
  function onUp(ev) {
    delete pointers[ev.pointerId];
    var g = gesture;
    if (!g) return;
    clearTimeout(g.timer);
    if (g.kind === "pinch") { if (!Object.keys(pointers).length) gesture = null; return; }
    gesture = null;
    if (g.kind === "line") {
      S.rubber = null;
      var end = siteAt(ev);
      if (end && end !== g.site) addLine(S.mode, g.site, end);
      else if (!g.moved) select({ kind: "site", id: g.site });
      else renderMap();
      return;
    }
    if (g.moved) return;
    if (g.site) select({ kind: "site", id: g.site });
    else if (g.line) select({ kind: g.line.dataset.kind, a: g.line.dataset.a, b: g.line.dataset.b });
    else if (S.mode === "site") addSite(g.p.x, g.p.y);
    else select(null);
    renderHead();
  }
  function onCancel(ev) { delete pointers[ev.pointerId]; if (gesture) clearTimeout(gesture.timer); gesture = null; S.rubber = null; renderMap(); }
  function onWheel(ev) {
    ev.preventDefault();
    var p = toSvg(ev);
    zoomAt(ev.deltaY < 0 ? 1.2 : 1 / 1.2, p.x, p.y);
  }
  function onKey(ev) {
    if (!S.doc || /^(INPUT|SELECT|TEXTAREA)$/.test(ev.target.tagName)) return;
    var k = ev.key, ctrl = ev.ctrlKey || ev.metaKey;
    if (ctrl && (k === "z" || k === "Z") && !ev.shiftKey) { ev.preventDefault(); undo(); }
    else if (ctrl && (k === "y" || k === "Y" || ((k === "z" || k === "Z") && ev.shiftKey))) { ev.preventDefault(); redo(); }
    else if (k === "Delete" || k === "Backspace") { if (S.selected) { ev.preventDefault(); removeSelected(); } }
    else if (k === "Escape") { S.arms = []; S.rubber = null; gesture = null; select(null); renderArms(); renderHead(); }
  }

  // -- photo -------------------------------------------------------------------------------------------
  // a picked file's size in pixels, read from its header (PNG, JPEG, WebP, GIF) before anything decodes it:
  // a small file of huge pixels (a decompression bomb) decoded here cost the browser a gigabyte (a Pi's
  // kiosk has 512 MB). PICK_PIXELS lets a 50-megapixel camera's photo through (shrunk below to PHOTO_SIDE);
  // null: a format whose header this does not read
  var PICK_PIXELS = 52000000;
  function headerSize(file) {
    return file.slice(0, 1048576).arrayBuffer().then(function (buf) { return pixelsOf(new DataView(buf)); });
  }
  function pixelsOf(d) {
    var n = d.byteLength, i;
    function ascii(at, len) { var s = ""; for (var k = 0; k < len && at + k < n; k++) s += String.fromCharCode(d.getUint8(at + k)); return s; }
    if (n >= 24 && d.getUint32(0) === 0x89504E47 && ascii(12, 4) === "IHDR") return { w: d.getUint32(16), h: d.getUint32(20) };
    if (n >= 10 && ascii(0, 4) === "GIF8") return { w: d.getUint16(6, true), h: d.getUint16(8, true) };
    if (n >= 30 && ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP") {
      var kind = ascii(12, 4);
      if (kind === "VP8 ") return { w: d.getUint16(26, true) & 0x3fff, h: d.getUint16(28, true) & 0x3fff };
      if (kind === "VP8L") {
        var b = d.getUint32(21, true);
        return { w: (b & 0x3fff) + 1, h: ((b >>> 14) & 0x3fff) + 1 };
      }
      if (kind === "VP8X") {
        return { w: (d.getUint8(24) | d.getUint8(25) << 8 | d.getUint8(26) << 16) + 1,
                 h: (d.getUint8(27) | d.getUint8(28) << 8 | d.getUint8(29) << 16) + 1 };
      }
      return null;
    }
    if (n >= 4 && d.getUint16(0) === 0xFFD8) {  // JPEG: its segments up to the frame's header (SOFn)
      i = 2;
      while (i + 4 <= n) {
        if (d.getUint8(i) !== 0xFF) return null;
        var m = d.getUint8(i + 1);
        if (m === 0xFF) { i += 1; continue; }
        if (m === 0xD8 || m === 0x01 || (m >= 0xD0 && m <= 0xD7)) { i += 2; continue; }
        var len = d.getUint16(i + 2);
        if (m >= 0xC0 && m <= 0xCF && m !== 0xC4 && m !== 0xC8 && m !== 0xCC) {
          return i + 9 <= n ? { w: d.getUint16(i + 7), h: d.getUint16(i + 5) } : null;
        }
        if (m === 0xDA || len < 2) return null;
        i += 2 + len;
      }
    }
    return null;
  }
  // decoded with the camera's orientation applied, shrunk to PHOTO_SIDE on the long side, as JPEG
  function decode(file) {
    if (window.createImageBitmap) {
      return createImageBitmap(file, { imageOrientation: "from-image" }).catch(function () { return viaImg(file); });
    }
    return viaImg(file);
  }
  function viaImg(file) {
    return new Promise(function (ok, no) {
      var img = new Image(), url = URL.createObjectURL(file);
      img.onload = function () { ok(img); };
      img.onerror = function () { no(new Error(t("boards.photo_bad"))); };
      img.src = url;
    });
  }
  function shrink(file) {
    return decode(file).then(function (img) {
      var w = img.width, h = img.height, k = Math.min(1, PHOTO_SIDE / Math.max(w, h));
      var cv = document.createElement("canvas");
      cv.width = Math.round(w * k); cv.height = Math.round(h * k);
      cv.getContext("2d").drawImage(img, 0, 0, cv.width, cv.height);
      var qualities = [0.85, 0.7, 0.55, 0.4];
      function attempt(i) {
        return new Promise(function (ok) { cv.toBlob(ok, "image/jpeg", qualities[i]); }).then(function (blob) {
          if (blob.size > S.limit && i + 1 < qualities.length) return attempt(i + 1);
          return blob;
        });
      }
      return attempt(0);
    });
  }
  function uploadPhoto(file) {
    var go = S.dirty ? save() : Promise.resolve(true);
    return go.then(function (ok) {
      if (!ok) return;
      return headerSize(file).then(function (px) {
        if (!px) throw new C.ApiError(0, { error: t("boards.photo_bad") });
        if (px.w * px.h > PICK_PIXELS) {
          C.toast(t("boards.photo_too_many_pixels", { w: px.w, h: px.h, mp: Math.floor(PICK_PIXELS / 1e6) }), true);
          return false;
        }
        return true;
      }).then(function (fits) { return fits && shrink(file); }).then(function (blob) {
        if (!blob) return;
        if (blob.size > S.limit) { C.toast(t("boards.photo_too_big", { mb: Math.round(S.limit / 1048576) }), true); return; }
        return fetch("/api/boards/" + S.board.id + "/photo?expected_version=" + S.board.version, {
          method: "PUT", credentials: "same-origin", headers: { "Content-Type": "image/jpeg", "Accept": "application/json" }, body: blob
        }).then(function (resp) {
          return resp.json().then(function (data) { if (!resp.ok) throw new C.ApiError(resp.status, data); return data; });
        }).then(function (b) { show(b, true); C.toast(t("boards.photo_saved")); });
      });
    }).catch(function (e) { fail(e instanceof C.ApiError ? e : new C.ApiError(0, { error: t("boards.photo_bad") })); });
  }

  // -- boards: load, save, new, default, import ------------------------------------------------------
  function loadList(pick) {
    return C.api("GET", "/api/boards").then(function (r) {
      S.boards = r.boards; S.book = r.book; S.limit = r.photo_limit;
      var sel = $("bd-select");
      sel.textContent = "";
      sel.appendChild(el("option", { value: "", text: r.boards.length ? "—" : t("boards.none_yet") }));
      r.boards.forEach(function (b) {
        sel.appendChild(el("option", { value: b.id, text: b.name + " · v" + b.latest + " · " + t("boards.status_" + b.status) + (b["default"] ? " ★" : "") }));
      });
      if (pick) sel.value = pick;
      renderBook();
      return r;
    }, fail);
  }
  function open(id, version) {
    if (!id) { $("bd-editor").hidden = true; return Promise.resolve(); }
    return C.api("GET", "/api/boards/" + id + (version ? "/versions/" + version : "")).then(function (b) { show(b, true); }, fail);
  }
  function show(b, fresh) {
    S.board = b; S.doc = b.board; S.check = b.check; S.dirty = false;
    if (fresh) { S.undo = []; S.redo = []; S.selected = null; S.arms = []; }
    var newPhoto = (b.photo && b.photo.url) !== (S.photo && S.photo.url);
    S.photo = b.photo; S.url = b.photo ? b.photo.url : null;
    normalise();
    $("bd-editor").hidden = false;
    $("bd-select").value = b.id;
    if (newPhoto || !S.view) resetView();
    render();
    $("bd-site-edit").hidden = true;
  }
  function save() {
    var name = $("bd-name").value.trim();
    if (name) S.doc.name = name;
    var body = { board: S.doc, expected_version: S.board.latest };
    if (name && name !== S.board.name) body.name = name;
    return C.api("POST", "/api/boards/" + S.board.id + "/versions", body).then(function (b) {
      show(b, false);
      loadList(b.id);
      C.toast(t("boards.saved", { version: b.version }));
      return true;
    }, function (e) { fail(e); return false; });
  }
  // "+ New board" opens the form on the page, its name ready to change; Create makes the board
  function askName(open) {
    var form = $("bd-new-form");
    form.hidden = !open;
    $("bd-new").setAttribute("aria-expanded", String(open));
    if (open) { var input = $("bd-new-name"); input.focus(); input.select(); }
  }
  function create(ev) {
    if (ev) ev.preventDefault();
    var name = $("bd-new-name").value.trim();
    if (!name) { C.toast(t("boards.new_name_needed"), true); $("bd-new-name").focus(); return; }
    C.api("POST", "/api/boards", { name: name }).then(function (b) {
      askName(false);
      loadList(b.id).then(function () { show(b, true); });
    }, fail);
  }
  function makeDefault() {
    var body = { board_id: S.board.id };
    C.api("PUT", "/api/boards/default", body).then(function () {
      S.board["default"] = true; renderHead(); loadList(S.board.id); C.toast(t("boards.default_set"));
    }, fail);
  }
  function importFile(file) {
    var reader = new FileReader();
    reader.onload = function () {
      var doc;
      try { doc = JSON.parse(reader.result); } catch (e) { C.toast(t("boards.import_bad"), true); return; }
      var club = $("bd-import-club").value;
      C.api("POST", "/api/boards/import" + (club ? "?club=" + encodeURIComponent(club) : ""), doc).then(function (b) {
        C.toast(t("boards.imported", { name: b.name }));
        loadList(b.id).then(function () { show(b, true); });
      }, fail);
    };
    reader.readAsText(file);
  }
  function loadClubs() {
    C.api("GET", "/api/seasons").then(function (r) {
      var sel = $("bd-import-club");
      (r.clubs || []).forEach(function (c) { sel.appendChild(el("option", { value: c.id, text: c.name })); });
    }, function () { /* no seasons API: the box's own boards only */ });
  }

  function init() {
    var root = $("bd-root");
    if (!root) return;
    $("bd-select").addEventListener("change", function (ev) {
      if (S.dirty && !window.confirm(t("boards.discard"))) { ev.target.value = S.board.id; return; }
      open(ev.target.value);
    });
    $("bd-new").addEventListener("click", function () { askName($("bd-new-form").hidden); });
    $("bd-new-form").addEventListener("submit", create);
    $("bd-new-cancel").addEventListener("click", function () { askName(false); });
    $("bd-save").addEventListener("click", save);
    $("bd-make-default").addEventListener("click", makeDefault);
    $("bd-undo").addEventListener("click", undo);
    $("bd-redo").addEventListener("click", redo);
    $("bd-delete").addEventListener("click", removeSelected);
    $("bd-zoom-in").addEventListener("click", function () { zoomAt(1.4, S.view.x + S.view.w / 2, S.view.y + S.view.h / 2); });
    $("bd-zoom-out").addEventListener("click", function () { zoomAt(1 / 1.4, S.view.x + S.view.w / 2, S.view.y + S.view.h / 2); });
    document.querySelectorAll(".bd-tools [data-mode]").forEach(function (b) {
      b.addEventListener("click", function () { S.mode = b.dataset.mode; renderHead(); });
    });
    $("bd-countries").addEventListener("click", function (ev) {
      var b = ev.target.closest("[data-country]");
      if (!b) return;
      S.country = b.dataset.country;
      S.mode = "site";
      renderCountries(); renderHead();
    });
    $("bd-unplaced-list").addEventListener("click", function (ev) {
      var b = ev.target.closest("[data-place]");
      if (!b) return;
      S.placing = S.placing === b.dataset.place ? null : b.dataset.place;
      S.mode = "site";
      renderUnplaced(); renderHead();
    });
    $("bd-arms").addEventListener("click", function (ev) {
      var b = ev.target.closest("[data-arm]");
      if (!b) return;
      var cid = b.dataset.arm, i = S.arms.indexOf(cid);
      if (i >= 0) S.arms.splice(i, 1);
      else { if (S.arms.length === 2) S.arms = []; S.arms.push(cid); }
      renderArms();
    });
    $("bd-alliance-set").addEventListener("click", setAlliance);
    $("bd-alliances").addEventListener("click", function (ev) {
      var b = ev.target.closest(".bd-clear");
      if (b) change(function () { allianceOf(+b.dataset.number).countries = null; });
    });
    $("bd-alliances").addEventListener("change", function (ev) {
      var c = ev.target.closest(".bd-sea-flag");
      if (c) change(function () {
        var a = allianceOf(+c.dataset.number);
        if (c.checked) a.sea_route = true; else delete a.sea_route;
      });
    });
    $("bd-site-name").addEventListener("change", function (ev) {
      var sel = S.selected, v = ev.target.value.trim();
      if (!sel || sel.kind !== "site") return;
      change(function () { var f = findSite(sel.id); if (v) f.site.name = v; else delete f.site.name; });
    });
    $("bd-site-country").addEventListener("change", function (ev) {
      var sel = S.selected, to = ev.target.value;
      if (!sel || sel.kind !== "site") return;
      change(function () {
        var f = findSite(sel.id);
        S.doc.countries[f.ci].sites.splice(f.j, 1);
        S.doc.countries.filter(function (c) { return c.id === to; })[0].sites.push(f.site);
      });
    });
    $("bd-errors").addEventListener("click", flash);
    $("bd-warnings").addEventListener("click", flash);
    $("bd-photo").addEventListener("change", function (ev) { if (ev.target.files[0]) uploadPhoto(ev.target.files[0]); ev.target.value = ""; });
    $("bd-import").addEventListener("change", function (ev) { if (ev.target.files[0]) importFile(ev.target.files[0]); ev.target.value = ""; });
    var svg = $("bd-svg");
    svg.addEventListener("pointerdown", onDown);
    svg.addEventListener("pointermove", onMove);
    svg.addEventListener("pointerup", onUp);
    svg.addEventListener("pointercancel", onCancel);
    svg.addEventListener("wheel", onWheel, { passive: false });
    svg.addEventListener("contextmenu", function (ev) { ev.preventDefault(); });
    document.addEventListener("keydown", onKey);
    window.addEventListener("beforeunload", function (ev) { if (S.dirty) { ev.preventDefault(); ev.returnValue = ""; } });
    if (!organiser()) { // a player or viewer may look at the boards, not change them
      ["bd-new", "bd-save", "bd-make-default", "bd-photo-label", "bd-undo", "bd-redo", "bd-delete"].forEach(function (id) { $(id).hidden = true; });
      document.querySelector(".bd-import").hidden = true;
    } else loadClubs();
    var want = new URLSearchParams(location.search).get("board");
    loadList().then(function (r) {
      if (!r) return;
      var pick = want || (r.boards.filter(function (b) { return b["default"]; })[0] || r.boards[r.boards.length - 1] || {}).id;
      if (pick) open(pick);
    });
  }
  function flash(ev) {
    var li = ev.target.closest("[data-path]");
    if (!li) return;
    var sel = target(li.dataset.path);
    if (!sel) return;
    document.querySelectorAll(sel).forEach(function (n) {
      n.classList.remove("bd-problem"); void n.getBoundingClientRect(); n.classList.add("bd-problem");
      if (n.scrollIntoView) n.scrollIntoView({ block: "nearest" });
    });
  }

  // for tests and scripts: the editor's state, and whether a check is still on its way
  window.CompanionBoards = { state: S, render: render, check: runCheck, open: open, busy: function () { return !!S.pending; } };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
