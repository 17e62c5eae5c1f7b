/* Conquest of Italy on the TV (/m/<id>/display, through CompanionTV.register): the map the whole height of the
 * screen, every territory filled with its holder's colour and its unit count, redrawn on every view, the
 * cities' names placed where they cover no other name or city (readable from 4 m); in the side column the
 * players (territories, units, whole regions, how many cards, the objective recorded or completed: what the
 * table sees, never which cards or which objective) and the last combat (who attacked whom, the dice as dice
 * faces, the losses). The final roll and the ranking are the TV's own (js/display.js). */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var FALLBACK = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  var NAME_SIZE = 22, MARK_R = 19;  // in the map's units (about px at 1080 lines): as games/conquest-italy.layout.js
  var root = null, map = null, marks = [], labels = [], lastCombatKey = null;

  function colourOf(client, p) {
    var c = ((client.match && client.match.colours) || {})[p];
    if (c) return c;
    var i = (client.match ? client.match.players : []).indexOf(p);
    return i >= 0 ? FALLBACK[i % FALLBACK.length] : "#888";
  }
  // a readable number on any colour: white on dark fills, black on light ones
  function ink(hex) {
    var m = /^#?([0-9a-f]{6})$/i.exec(hex || "");
    if (!m) return "#fff";
    var n = parseInt(m[1], 16), r = n >> 16, g = (n >> 8) & 255, b = n & 255;
    return (0.299 * r + 0.587 * g + 0.114 * b) > 150 ? "#111" : "#fff";
  }

  // -- the drawing for the room: each city near its place, moved apart where they crowd, each name where it
  //    covers no other name or city (games/conquest-italy.layout.js), worked out in a Worker: the page is not
  //    held while it runs. Its answer is kept (localStorage): a TV that loads the page again draws at once ------
  var worker = null, asked = 0, waiting = {}, KEPT = "companion.ci-tv-layout";
  function layoutScript() { return document.body.dataset.mapLayout || "/static/games/conquest-italy.layout.js"; }
  function onThisPage(cities) {  // no Worker here: the same script, run by the page itself
    return new Promise(function (ok, no) {
      if (window.CompanionMapLayout) return ok(window.CompanionMapLayout(cities));
      var sc = document.createElement("script");
      sc.src = layoutScript();
      sc.onload = function () { try { ok(window.CompanionMapLayout(cities)); } catch (e) { no(e); } };
      sc.onerror = no;
      document.head.appendChild(sc);
    });
  }
  function inWorker(cities) {
    if (!worker) {
      try { worker = new Worker(layoutScript()); } catch (e) { worker = "none"; return onThisPage(cities); }
      worker.onmessage = function (e) { var w = waiting[e.data.id]; delete waiting[e.data.id]; if (w) w.ok(e.data.result); };
      worker.onerror = function (e) {  // (a Worker that cannot start: each question answered by the page)
        if (e && e.preventDefault) e.preventDefault();
        worker.terminate();
        worker = "none";
        var all = waiting; waiting = {};
        Object.keys(all).forEach(function (id) { onThisPage(all[id].cities).then(all[id].ok, all[id].no); });
      };
    }
    return new Promise(function (ok, no) {
      var id = ++asked;
      waiting[id] = { ok: ok, no: no, cities: cities };
      worker.postMessage({ id: id, cities: cities });
    });
  }
  function layout(cities) {
    var key = layoutScript() + " " + JSON.stringify(cities), kept = null;  // (the script's hash in its address)
    try { kept = JSON.parse(localStorage.getItem(KEPT) || "null"); } catch (e) { kept = null; }
    if (kept && kept.key === key) return Promise.resolve(kept.result);
    var run = typeof Worker === "function" && worker !== "none" ? inWorker(cities).catch(function () { return onThisPage(cities); }) : onThisPage(cities);
    return run.then(function (result) {
      try { localStorage.setItem(KEPT, JSON.stringify({ key: key, result: result })); } catch (e) { /* (private mode, full) */ }
      return result;
    });
  }
  // a name's width in the map's units: its font (the drawing's, at the names' size) measured on a canvas, no
  // layout of the page needed (within 0.2 of the SVG's own measure)
  var pen = null;
  function nameWidth(svg, name) {
    try {
      if (!pen) {
        pen = document.createElement("canvas").getContext("2d");
        pen.font = NAME_SIZE + "px " + (svg.getAttribute("font-family") || "sans-serif");
      }
      return pen.measureText(name).width;
    } catch (e) { return name.length * NAME_SIZE * 0.55; }
  }

  // -- the legend of the map's own signs (a square: an airport; a dashed line: a sea route), in a free place of
  //    the map: no city, name or line under it, looked for from the top right (the Adriatic on the box's map);
  //    where there is none, under the map -----------------------------------------------------------------
  var NS = "http://www.w3.org/2000/svg", ROW = 34, SYM = 30, GAP = 8, EDGE = 6;
  function node(tag, attrs) { var n = document.createElementNS(NS, tag); Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); }); return n; }
  function overlap(a, b) {
    var w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1), h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
    return w > 0 && h > 0 ? w * h : 0;
  }
  function crosses(sg, r) {  // a segment through a box (Liang-Barsky)
    var t0 = 0, t1 = 1, dx = sg[2] - sg[0], dy = sg[3] - sg[1];
    var p = [-dx, dx, -dy, dy], q = [sg[0] - r.x1, r.x2 - sg[0], sg[1] - r.y1, r.y2 - sg[1]];
    for (var i = 0; i < 4; i++) {
      if (p[i] === 0) { if (q[i] < 0) return false; continue; }
      var u = q[i] / p[i];
      if (p[i] < 0) { if (u > t1) return false; if (u > t0) t0 = u; } else { if (u < t0) return false; if (u < t1) t1 = u; }
    }
    return true;
  }
  function legend(svg, cities, lines, box) {
    var sea = lines.filter(function (l) { return l.ln.getAttribute("stroke-dasharray"); })[0], items = [];
    if (cities.some(function (c) { return !c.round; })) items.push(["airport", t("tv.ci_legend_airport")]);
    if (sea) items.push(["sea", t("tv.ci_legend_sea")]);
    if (!items.length) return;
    var g = node("g", { id: "ci-tv-legend", class: "ci-tv-legend" });
    svg.appendChild(g);
    var texts = items.map(function (it) { var x = node("text", { class: "ci-tv-legend-text" }); x.textContent = it[1]; g.appendChild(x); return x; });
    var w = SYM + GAP + Math.max.apply(null, texts.map(function (x) { return nameWidth(svg, x.textContent); }));
    var h = items.length * ROW, blocks = [], segs = [], spot = null;
    cities.forEach(function (c) {
      blocks.push({ x1: c.x - MARK_R, y1: c.y - MARK_R, x2: c.x + MARK_R, y2: c.y + MARK_R });
      if (c.at) blocks.push(c.at.box);
    });
    lines.forEach(function (l) { if (l.a && l.b) segs.push([l.a.x, l.a.y, l.b.x, l.b.y]); });
    function free(r) { return !blocks.some(function (b) { return overlap(b, r) > 0; }) && !segs.some(function (sg) { return crosses(sg, r); }); }
    for (var y = box.y1; !spot && y + h + 2 * EDGE <= box.y2; y += 8)
      for (var x = box.x2 - w - 2 * EDGE; x >= box.x1; x -= 8) {
        var r = { x1: x, y1: y, x2: x + w + 2 * EDGE, y2: y + h + 2 * EDGE };
        if (free(r)) { spot = r; break; }
      }
    if (!spot) { spot = { x1: box.x1, y1: box.y2, x2: box.x1 + w + 2 * EDGE, y2: box.y2 + h + 2 * EDGE }; box.y2 = spot.y2; }
    items.forEach(function (it, i) {
      var x0 = spot.x1 + EDGE, yc = spot.y1 + EDGE + i * ROW + ROW / 2;
      if (it[0] === "airport") g.insertBefore(node("rect", { x: x0 + SYM / 2 - 10, y: yc - 10, width: 20, height: 20, fill: "#bbb", stroke: "#111", "stroke-width": 2 }), texts[i]);
      else g.insertBefore(node("line", { x1: x0, y1: yc, x2: x0 + SYM, y2: yc, stroke: sea.ln.getAttribute("stroke") || "#1f77b4",
        "stroke-width": sea.ln.getAttribute("stroke-width") || 1.5, "stroke-dasharray": sea.ln.getAttribute("stroke-dasharray") }), texts[i]);
      texts[i].setAttribute("x", (x0 + SYM + GAP).toFixed(1)); texts[i].setAttribute("y", (yc + 7).toFixed(1));
    });
  }

  function mount(box, client) {
    root = box;
    document.body.classList.add("tv-map");
    root.appendChild(el("div", { class: "ci-tv" }, el("div", { class: "ci-tv-map", id: "ci-tv-map" })));
    var side = document.getElementById("tv-side-extra");
    if (side) {
      // (the page draws its box, empty, its room kept for the players' table: web/templates/display.html)
      if (!document.getElementById("ci-tv-players")) side.appendChild(el("div", { class: "tv-box ci-tv-players", id: "ci-tv-players" }));
      side.appendChild(el("div", { class: "tv-box ci-tv-combat", id: "ci-tv-combat", hidden: true }));
    }
    C.api("GET", document.body.dataset.mapUrl || "/api/matches/" + encodeURIComponent(client.id) + "/conquest/map").then(function (m) {
      map = m;
      var holder = document.getElementById("ci-tv-map"), drawing = document.createElement("div");
      drawing.innerHTML = m.svg;  // our own server's SVG (names escaped by the engine), put in the page once drawn
      var svg = drawing.querySelector("svg"), title = svg && svg.querySelector("title");
      if (!svg) return;
      // its title (the map's accessible name) is the map's own: the box's default map, in the page's language
      if (title && m["default"]) title.textContent = C.t("ci.map_default");
      // the engine's legend (region colours) is on the right: the TV colours by holder, so it goes
      svg.setAttribute("viewBox", "0 0 878 1000");
      Array.prototype.forEach.call(svg.querySelectorAll("text[x], rect[x]"), function (n) {
        if (parseFloat(n.getAttribute("x")) >= 878) n.remove();  // the legend (drawn in English) goes too
      });
      svg.removeAttribute("width"); svg.removeAttribute("height");
      svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
      var found = svg.querySelectorAll("circle.city, rect.airport");
      marks = []; labels = [];
      if (found.length !== m.cities.length) { holder.appendChild(svg); return; }
      var cities = [], at = {};
      Array.prototype.forEach.call(found, function (mk, i) {
        var name = m.cities[i].name, value = mk.nextElementSibling, title = value && value.nextElementSibling;
        var round = mk.tagName.toLowerCase() === "circle";
        var x = round ? +mk.getAttribute("cx") : +mk.getAttribute("x") + 10, y = round ? +mk.getAttribute("cy") : +mk.getAttribute("y") + 10;
        mk.setAttribute("data-city", name);
        if (value) { value.setAttribute("class", "ci-tv-units"); value.setAttribute("data-city", name); }
        if (title) {
          title.setAttribute("class", "ci-tv-name"); title.setAttribute("data-city", name);
          title.textContent = name;  // the card's letter is for the phones: the TV shows the name alone
        }
        var c = { hx: x, hy: y, mark: mk, round: round, value: value, text: title, w: title ? nameWidth(svg, name) : null };
        at[x.toFixed(1) + "," + y.toFixed(1)] = c;
        cities.push(c);
        marks.push(mk); labels.push(value);
      });
      // the borders and sea routes follow their cities
      var lines = Array.prototype.map.call(svg.querySelectorAll("line"), function (ln) {
        return { ln: ln, a: at[(+ln.getAttribute("x1")).toFixed(1) + "," + (+ln.getAttribute("y1")).toFixed(1)],
                 b: at[(+ln.getAttribute("x2")).toFixed(1) + "," + (+ln.getAttribute("y2")).toFixed(1)] };
      });
      draw(client.view, client);  // (the holders' colours and units, on the drawing not shown yet)
      layout(cities.map(function (c) { return { hx: c.hx, hy: c.hy, w: c.w }; })).then(function (res) {
        var box = res.box;
        cities.forEach(function (c, i) {
          var p = res.places[i];
          c.x = p[0]; c.y = p[1];
          if (c.round) { c.mark.setAttribute("cx", c.x.toFixed(1)); c.mark.setAttribute("cy", c.y.toFixed(1)); c.mark.setAttribute("r", String(MARK_R)); }
          else { c.mark.setAttribute("x", (c.x - MARK_R).toFixed(1)); c.mark.setAttribute("y", (c.y - MARK_R).toFixed(1));
                 c.mark.setAttribute("width", String(2 * MARK_R)); c.mark.setAttribute("height", String(2 * MARK_R)); }
          if (c.value) { c.value.setAttribute("x", c.x.toFixed(1)); c.value.setAttribute("y", (c.y + 8).toFixed(1)); }
          c.at = p.length > 2 ? { box: { x1: p[5], y1: p[6], x2: p[7], y2: p[8] } } : null;
          if (c.text && c.at) {
            c.text.setAttribute("x", p[2].toFixed(1)); c.text.setAttribute("y", p[3].toFixed(1));
            c.text.setAttribute("text-anchor", p[4]);
          }
        });
        lines.forEach(function (l) {
          if (l.a) { l.ln.setAttribute("x1", l.a.x.toFixed(1)); l.ln.setAttribute("y1", l.a.y.toFixed(1)); }
          if (l.b) { l.ln.setAttribute("x2", l.b.x.toFixed(1)); l.ln.setAttribute("y2", l.b.y.toFixed(1)); }
        });
        legend(svg, cities, lines, box);
        svg.setAttribute("viewBox", [box.x1, box.y1, box.x2 - box.x1, box.y2 - box.y1].map(function (v) { return Math.round(v); }).join(" "));
        svg.style.aspectRatio = Math.round(box.x2 - box.x1) + " / " + Math.round(box.y2 - box.y1);
        holder.dataset.crowded = String(box.left);  // names that found no free place (0: none)
        holder.appendChild(svg);
      }, function (e) { console.error(e); holder.appendChild(svg); });
    }, function () {});
  }

  function objectiveWords(r, sm) {
    if (sm.objective_completed && sm.objective_completed === r.player) return t("tv.ci_objective_done");
    return r.objective_set ? t("tv.ci_objective_recorded") : "—";
  }

  function put(node, name, value) { if (node.getAttribute(name) !== value) node.setAttribute(name, value); }
  function draw(view, client) {
    if (!root || !view || !view.state) return;
    var s = view.state, sm = view.summary || {};
    if (map && marks.length) {
      map.cities.forEach(function (c, i) {
        var p = s.owner && s.owner[c.name], fill = p ? colourOf(client, p) : "#bbb";
        // (written only where it changed: the TV repaints the cities an event changed)
        put(marks[i], "fill", fill);
        put(marks[i], "stroke", "#111");
        put(marks[i], "stroke-width", "2");
        put(marks[i], "data-holder", p || "");
        if (labels[i]) {
          var n = s.units && s.units[c.name] ? String(s.units[c.name]) : "";
          if (labels[i].textContent !== n) labels[i].textContent = n;
          put(labels[i], "fill", ink(fill));
        }
      });
    }
    // the players: territories, units, whole regions, cards and the objective, counted as the table sees them
    var pl = document.getElementById("ci-tv-players");
    if (pl && sm.players) {
      var current = view.awaiting_roll || view.current_player || (sm.turn && sm.turn.player);
      C.patch(pl, el("table", { class: "tv-table" },
        el("thead", null, el("tr", null, el("th", { text: t("scores.player") }),
          ["tv.ci_col_cities", "tv.ci_col_units", "tv.ci_col_regions", "tv.ci_col_cards"].map(function (k) {
            return el("th", { class: "num", text: t(k) }); }),
          el("th", { text: t("tv.ci_col_objective") }))),
        el("tbody", null, sm.players.map(function (r) {
          return el("tr", { "data-player": r.player, class: r.eliminated ? "ci-tv-out" : (!view.ended && current === r.player ? "tv-current" : null) },
            el("td", { class: "tv-name" }, el("span", { class: "swatch", style: "background:" + colourOf(client, r.player) }), r.player),
            el("td", { class: "num", "data-col": "territories", text: String(r.territories) }),
            el("td", { class: "num", "data-col": "units", text: String(r.units) }),
            el("td", { class: "num", "data-col": "regions", text: String((r.regions || []).length) }),
            el("td", { class: "num", "data-col": "cards", text: r.cards === undefined || r.cards === null ? "" : String(r.cards) }),
            el("td", { "data-col": "objective", text: r.eliminated ? t("tv.eliminated") : objectiveWords(r, sm) }));
        }))));
    }
    drawCombat(sm.last_combat || s.last_combat, client, s.eliminations || []);
  }

  function drawCombat(c, client, out) {
    var box = document.getElementById("ci-tv-combat");
    if (!box) return;
    if (!c) { box.hidden = true; return; }
    // the defender's last city taken: they are out, said on the TV for the room (docs/rulings.md#conquest-elimination)
    var gone = c.conquered ? (out || []).filter(function (e) { return e.player === c.defender && e.city === c.to; })[0] : null;
    var key = JSON.stringify(c) + (gone ? "|out" : "");
    if (key === lastCombatKey) return;
    lastCombatKey = key;
    box.textContent = "";
    box.appendChild(el("div", { class: "tv-panel-title" }, t("tv.ci_last_combat"),
      c.conquered ? el("span", { class: "ci-tv-taken", text: " · " + t("tv.ci_taken", { city: c.to }) }) : null));
    box.appendChild(el("div", { class: "ci-tv-who" },
      t("tv.ci_attack", { attacker: c.attacker, from: c.from, defender: c.defender, to: c.to })));
    // each side's dice with the units it lost under them; the city, when it was taken
    function side(dice, kind, lost, who) {
      return el("div", { class: "ci-tv-side-dice", "data-side": kind },
        TV.dice(dice, kind), el("span", { class: "ci-tv-lost", title: who, text: C.plural("tv.ci_lost", lost) }));
    }
    box.appendChild(el("div", { class: "ci-tv-row", id: "ci-tv-losses" },
      el("div", { class: "ci-tv-dice" },
        side(c.attacker_dice, "attack", c.attacker_losses, c.attacker),
        el("span", { class: "ci-tv-vs", text: "vs" }),
        side(c.defender_dice, "defend", c.defender_losses, c.defender))));
    if (gone) box.appendChild(el("div", { class: "ci-tv-out-note", id: "ci-tv-eliminated", role: "status",
      text: t("tv.ci_eliminated", { player: gone.player }) }));
    box.hidden = false;
  }

  TV.register("conquest-italy", {
    mount: mount,
    update: function (view, client) { draw(view, client); },
    // the ranking's words under each name: the objective's points and the others (the order of the ranking)
    note: function (view, player) {
      var rk = (view.summary || {}).ranking, r = rk && (rk.players || []).filter(function (x) { return x.player === player; })[0];
      return r ? t("tv.ci_rank_note", { objective: r.objective_points, other: r.other_points }) : "";
    }
  });
})();
