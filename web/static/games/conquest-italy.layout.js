/* Conquest of Italy on the TV: where each city and its name go on the map (games/conquest-italy.display.js draws
 * them). Pure: the cities' places on the engine's drawing and their names' widths in, each city's place, its
 * name's place and the drawing's bounds out, the same on every TV (a fixed seed). Run in a Worker, so that the
 * TV's page answers, its clock ticks and its first paint is not held while it runs (~70 ms of this machine's
 * CPU; the box's own screen is a Pi's, about ten times slower); loaded as a plain script where a Worker cannot
 * run, the page then runs it itself (window.CompanionMapLayout). */
(function (scope) {
  "use strict";
  var NAME_SIZE = 22, MARK_R = 19;  // in the map's units (about px at 1080 lines)
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


  // the cities ([{hx, hy, w}]: their place on the engine's drawing, their name's width or null) to
  // {places: [[x, y, name's x, name's y, its anchor, its box's x1, y1, x2, y2] or [x, y]], box: {x1, y1, x2, y2, left}}
  function layout(input) {
    var cities = input.map(function (c) { return { hx: c.hx, hy: c.hy, x: c.hx, y: c.hy, w: c.w }; });
    var box = layoutMap(cities);
    return { box: box, places: cities.map(function (c) {
      var b = c.at && c.at.box;
      return c.at ? [c.x, c.y, c.at.x, c.at.y, c.at.anchor, b.x1, b.y1, b.x2, b.y2] : [c.x, c.y]; }) };
  }
  scope.CompanionMapLayout = layout;
  if (typeof WorkerGlobalScope !== "undefined" && scope instanceof WorkerGlobalScope) {
    scope.onmessage = function (e) { scope.postMessage({ id: e.data.id, result: layout(e.data.cities) }); };
  }
})(self);
