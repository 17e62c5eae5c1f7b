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
  var NAME_SIZE = 22, MARK_R = 19;  // in the map's units (about px at 1080 lines)
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

  // -- the drawing for the room: each city near its place, moved apart where they crowd (the north), and
  //    each name beside its city where it covers no other name or city; where a name finds no such place,
  //    its city and the one it covers are pushed further apart and the names placed again ------------------
  var SPACE = 50, WARP = 0.6, VB = { x1: 0, y1: 0, x2: 878, y2: 1000 };
  function overlap(a, b) {
    var w = Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1), h = Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1);
    return w > 0 && h > 0 ? w * h : 0;
  }
  // each axis stretched where the cities crowd and shrunk where they are few (each city keeps its order
  // from west to east and from north to south: the map stays the map), half way to an even spread
  function warp(cities, key, lo, hi) {
    var vals = cities.map(function (c) { return c[key]; }), sm = 25;
    function F(v) { var t = 0; vals.forEach(function (c) { t += 1 / (1 + Math.exp(-(v - c) / sm)); }); return t / vals.length; }
    var a = Math.min.apply(null, vals), b = Math.max.apply(null, vals), fa = F(a), fb = F(b);
    return cities.map(function (c) {
      var v = c[key], lin = (v - a) / ((b - a) || 1), eq = (F(v) - fa) / ((fb - fa) || 1);
      return lo + (hi - lo) * (WARP * eq + (1 - WARP) * lin);
    });
  }
  function spread(cities, extra) {
    var xs = warp(cities, "hx", VB.x1 + 40, VB.x2 - 40), ys = warp(cities, "hy", VB.y1 + 40, VB.y2 - 40);
    cities.forEach(function (c, k) { c.wx = xs[k]; c.wy = ys[k]; c.x = c.wx; c.y = c.wy; });
    for (var it = 0; it < 300; it++) {
      for (var i = 0; i < cities.length; i++) for (var j = i + 1; j < cities.length; j++) {
        var a = cities[i], b = cities[j], dx = b.x - a.x, dy = b.y - a.y, d = Math.sqrt(dx * dx + dy * dy) || 0.01;
        var want = SPACE + (extra[i + "," + j] || 0);
        if (d >= want) continue;
        var push = (want - d) / 4;
        a.x -= dx / d * push; a.y -= dy / d * push; b.x += dx / d * push; b.y += dy / d * push;
      }
      cities.forEach(function (c) {
        c.x += (c.wx - c.x) * 0.02; c.y += (c.wy - c.y) * 0.02;
        c.x = Math.min(VB.x2 - 30, Math.max(VB.x1 + 30, c.x)); c.y = Math.min(VB.y2 - 30, Math.max(VB.y1 + 30, c.y));
      });
    }
  }
  // the names where they cover least (greedy, the crowded first; then simulated annealing with a fixed seed:
  // the same drawing on every TV; then each at its best with the others where they are). Returns the pairs
  // [name's city, covered city] left.
  function placeNames(cities) {
    var h = NAME_SIZE, gap = 4, named = cities.filter(function (c) { return c.w !== null; });
    var discs = cities.map(function (c) { return { x1: c.x - MARK_R - 2, y1: c.y - MARK_R - 2, x2: c.x + MARK_R + 2, y2: c.y + MARK_R + 2, c: c }; });
    // another city's mark with a margin: a name close to another city reads as that city's
    var near = cities.map(function (c) { var m = MARK_R + 12; return { x1: c.x - m, y1: c.y - m, x2: c.x + m, y2: c.y + m, c: c }; });
    // a name's box from its anchor point and baseline (the glyphs rise 0.93 of the size above it, fall 0.24)
    function at(x, base, anchor, w) {
      var x1 = anchor === "start" ? x : anchor === "end" ? x - w : x - w / 2;
      return { x: x, y: base, anchor: anchor, box: { x1: x1, y1: base - h * 0.93, x2: x1 + w, y2: base + h * 0.24 } };
    }
    function candidates(c) {
      var out = [];
      [gap, gap + 12].forEach(function (g) {
        var r = MARK_R, x = c.x, y = c.y, w = c.w, d = (r + g) * 0.72;
        out.push(at(x + r + g, y + h * 0.35, "start", w), at(x - r - g, y + h * 0.35, "end", w),
          at(x, y - r - g - h * 0.24, "middle", w), at(x, y + r + g + h * 0.93, "middle", w),
          at(x + d, y - d - h * 0.24, "start", w), at(x + d, y + d + h * 0.93, "start", w),
          at(x - d, y - d - h * 0.24, "end", w), at(x - d, y + d + h * 0.93, "end", w));
      });
      return out;
    }
    // what a place costs apart from the other names (computed once): covering a city, sitting nearer another
    // city than its own, leaving the drawing; and a small preference (to the right, close)
    function fixed(c, k, b) {
      var s = (k % 8) * 0.5 + (k >= 8 ? 60 : 0);
      discs.forEach(function (m) { if (m.c !== c) s += overlap(b, m) * 8; });
      near.forEach(function (m) { if (m.c !== c) s += overlap(b, m) * 2; });
      var cx = (b.x1 + b.x2) / 2, cy = (b.y1 + b.y2) / 2, own = (cx - c.x) * (cx - c.x) + (cy - c.y) * (cy - c.y);
      cities.forEach(function (o) { if (o !== c && (cx - o.x) * (cx - o.x) + (cy - o.y) * (cy - o.y) < own) s += 400; });
      return s + ((b.x2 - b.x1) * (b.y2 - b.y1) - overlap(b, VB)) * 6;
    }
    function cost(c, k, cand) {
      var s = c.fixed[k];
      c.others.forEach(function (o) { if (o.at) s += overlap(cand.box, o.at.box) * 4; });
      return s;
    }
    var crowd = named.map(function (c) {
      return { c: c, n: cities.filter(function (o) { return Math.abs(o.x - c.x) < 130 && Math.abs(o.y - c.y) < 90; }).length };
    }).sort(function (a, b) { return b.n - a.n; }).map(function (x) { return x.c; });
    named.forEach(function (c) {
      c.cands = candidates(c); c.at = null;
      c.fixed = c.cands.map(function (cand, k) { return fixed(c, k, cand.box); });
      // the names that could touch this one
      c.others = named.filter(function (o) { return o !== c && Math.abs(o.x - c.x) < c.w + o.w + 80 && Math.abs(o.y - c.y) < 120; });
    });
    function best(c) {
      var k0 = c.at ? c.k : 0, low = c.at ? cost(c, c.k, c.at) : Infinity;
      c.cands.forEach(function (cand, k) { var v = cost(c, k, cand); if (v < low - 1e-6) { low = v; k0 = k; } });
      var moved = !c.at || k0 !== c.k;
      c.k = k0; c.at = c.cands[k0];
      return moved;
    }
    crowd.forEach(best);
    var seed = 12345;
    function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
    var steps = 12000, temp = 400;
    for (var i = 0; i < steps; i++) {
      var c = named[Math.floor(rnd() * named.length)], k = Math.floor(rnd() * c.cands.length);
      if (k === c.k) continue;
      var d = cost(c, k, c.cands[k]) - cost(c, c.k, c.at), tnow = temp * (1 - i / steps) + 0.01;
      if (d < 0 || rnd() < Math.exp(-d / tnow)) { c.k = k; c.at = c.cands[k]; }
    }
    for (var pass = 0, moved = true; moved && pass < 8; pass++) {
      moved = false;
      crowd.forEach(function (c) { if (best(c)) moved = true; });
    }
    var left = [];
    named.forEach(function (c) {
      discs.forEach(function (m) { if (m.c !== c && overlap(c.at.box, m)) left.push([c, m.c]); });
      named.forEach(function (o) { if (o !== c && cities.indexOf(o) > cities.indexOf(c) && overlap(c.at.box, o.at.box)) left.push([c, o]); });
    });
    return left;
  }
  function layoutMap(cities) {
    var extra = {}, left = [];
    for (var round = 0; round < 4; round++) {
      spread(cities, extra);
      left = placeNames(cities);
      if (!left.length) break;
      left.forEach(function (pair) {
        var i = cities.indexOf(pair[0]), j = cities.indexOf(pair[1]), key = Math.min(i, j) + "," + Math.max(i, j);
        extra[key] = (extra[key] || 0) + 16;
      });
    }
    // the drawing cut to what it shows: the map as large as the screen allows
    var x1 = Infinity, y1 = Infinity, x2 = -Infinity, y2 = -Infinity;
    cities.forEach(function (c) {
      [{ x1: c.x - MARK_R, y1: c.y - MARK_R, x2: c.x + MARK_R, y2: c.y + MARK_R }].concat(c.at ? [c.at.box] : []).forEach(function (b) {
        x1 = Math.min(x1, b.x1); y1 = Math.min(y1, b.y1); x2 = Math.max(x2, b.x2); y2 = Math.max(y2, b.y2);
      });
    });
    var pad = 8;
    return { x1: x1 - pad, y1: y1 - pad, x2: x2 + pad, y2: y2 + pad, left: left.length };
  }

  // -- the legend of the map's own signs (a square: an airport; a dashed line: a sea route), in a free place of
  //    the map: no city, name or line under it, looked for from the top right (the Adriatic on the box's map);
  //    where there is none, under the map -----------------------------------------------------------------
  var NS = "http://www.w3.org/2000/svg", ROW = 34, SYM = 30, GAP = 8, EDGE = 6;
  function node(tag, attrs) { var n = document.createElementNS(NS, tag); Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); }); return n; }
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
    var w = SYM + GAP + Math.max.apply(null, texts.map(function (x) { return x.getComputedTextLength ? x.getComputedTextLength() : x.textContent.length * NAME_SIZE * 0.55; }));
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
      var holder = document.getElementById("ci-tv-map");
      holder.innerHTML = m.svg;  // our own server's SVG (names escaped by the engine)
      var svg = holder.querySelector("svg"), title = svg && svg.querySelector("title");
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
      if (found.length !== m.cities.length) return;
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
        var c = { name: name, hx: x, hy: y, x: x, y: y, mark: mk, round: round, value: value, text: title,
                  w: title ? (title.getComputedTextLength ? title.getComputedTextLength() : name.length * NAME_SIZE * 0.55) : null };
        at[x.toFixed(1) + "," + y.toFixed(1)] = c;
        cities.push(c);
        marks.push(mk); labels.push(value);
      });
      // the borders and sea routes follow their cities
      var lines = Array.prototype.map.call(svg.querySelectorAll("line"), function (ln) {
        return { ln: ln, a: at[(+ln.getAttribute("x1")).toFixed(1) + "," + (+ln.getAttribute("y1")).toFixed(1)],
                 b: at[(+ln.getAttribute("x2")).toFixed(1) + "," + (+ln.getAttribute("y2")).toFixed(1)] };
      });
      var box = layoutMap(cities);
      holder.dataset.crowded = String(box.left);  // names that found no free place (0: none)
      cities.forEach(function (c) {
        if (c.round) { c.mark.setAttribute("cx", c.x.toFixed(1)); c.mark.setAttribute("cy", c.y.toFixed(1)); c.mark.setAttribute("r", String(MARK_R)); }
        else { c.mark.setAttribute("x", (c.x - MARK_R).toFixed(1)); c.mark.setAttribute("y", (c.y - MARK_R).toFixed(1));
               c.mark.setAttribute("width", String(2 * MARK_R)); c.mark.setAttribute("height", String(2 * MARK_R)); }
        if (c.value) { c.value.setAttribute("x", c.x.toFixed(1)); c.value.setAttribute("y", (c.y + 8).toFixed(1)); }
        if (c.text && c.at) {
          c.text.setAttribute("x", c.at.x.toFixed(1)); c.text.setAttribute("y", c.at.y.toFixed(1));
          c.text.setAttribute("text-anchor", c.at.anchor);
        }
      });
      lines.forEach(function (l) {
        if (l.a) { l.ln.setAttribute("x1", l.a.x.toFixed(1)); l.ln.setAttribute("y1", l.a.y.toFixed(1)); }
        if (l.b) { l.ln.setAttribute("x2", l.b.x.toFixed(1)); l.ln.setAttribute("y2", l.b.y.toFixed(1)); }
      });
      legend(svg, cities, lines, box);
      svg.setAttribute("viewBox", [box.x1, box.y1, box.x2 - box.x1, box.y2 - box.y1].map(function (v) { return Math.round(v); }).join(" "));
      svg.style.aspectRatio = Math.round(box.x2 - box.x1) + " / " + Math.round(box.y2 - box.y1);
      draw(client.view, client);
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
