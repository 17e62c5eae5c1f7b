/* The Web of Power board drawn on its photo (a board transcribed on the box, /boards), shared by the match
 * page's tracker (games/web-of-power.js: a tap on a free site places a monastery) and the TV
 * (games/web-of-power.display.js). `board` is GET /api/matches/<id>/wop/board: the photo, each site's x, y
 * on it (coords), the roads and the sea routes; the holders come from the match state (state.sites) and
 * the chains from GET /api/matches/<id>/wop/chains. Loaded before the game's scripts on both pages
 * (companion/web/pages.py, games/<game>.shared.js). */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";

  function svgEl(tag, attrs) {
    var n = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    return n;
  }
  // a board can be drawn on its photo: it has one, and every site is placed on it
  function onPhoto(board) { return !!(board && board.photo && board.coords); }
  // one hundredth of the photo's long side: line widths and site sizes follow it
  function unit(board) { return Math.max(board.photo.width, board.photo.height) / 100; }

  // the photo, the roads and sea routes, an empty layer for the chains (id layerId, under the sites), and one
  // circle per site (data-site); returns the chain layer
  function draw(svg, board, layerId) {
    var w = board.photo.width, h = board.photo.height, u = unit(board), xy = board.coords;
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.textContent = "";
    svg.appendChild(svgEl("image", { href: board.photo.url, x: 0, y: 0, width: w, height: h }));
    [[board.roads, "wop-photo-road", 0.7], [board.sea_routes, "wop-photo-sea", 0.5]].forEach(function (set) {
      (set[0] || []).forEach(function (r) {
        if (!xy[r[0]] || !xy[r[1]]) return;
        svg.appendChild(svgEl("line", { x1: xy[r[0]][0], y1: xy[r[0]][1], x2: xy[r[1]][0], y2: xy[r[1]][1], class: set[1], "stroke-width": set[2] * u }));
      });
    });
    var layer = svg.appendChild(svgEl("g", { id: layerId }));
    Object.keys(xy).forEach(function (id) {
      var c = svgEl("circle", { cx: xy[id][0], cy: xy[id][1], r: 1.7 * u, "stroke-width": 0.3 * u, class: "wop-photo-site free", "data-site": id });
      c.appendChild(svgEl("title", {})).textContent = id;
      svg.appendChild(c);
    });
    return layer;
  }
  // each site's circle filled with its holder's colour (sites: the state's site -> player), free ones pale
  // (an attribute is written only where it changes: the page redraws only the sites taken or freed)
  function put(node, name, value) {
    if (value === null) { if (node.hasAttribute(name)) node.removeAttribute(name); }
    else if (node.getAttribute(name) !== value) node.setAttribute(name, value);
  }
  function paint(svg, sites, colour) {
    svg.querySelectorAll("circle[data-site]").forEach(function (mark) {
      var holder = sites[mark.getAttribute("data-site")];
      put(mark, "class", "wop-photo-site" + (holder ? "" : " free"));
      put(mark, "fill", holder ? colour(holder) || "#222" : null);
      put(mark, "data-holder", holder || null);
    });
  }
  // each player's chains (player -> [[site, ...], ...]) as polylines in their colour, in the chain layer
  function drawChains(layer, board, chains, colour) {
    var u = unit(board);
    layer.querySelectorAll(".wop-chain-live").forEach(function (n) { n.remove(); });
    Object.keys(chains || {}).forEach(function (p) {
      (chains[p] || []).forEach(function (chain) {
        var pts = chain.map(function (id) { return board.coords[id]; }).filter(Boolean);
        layer.insertBefore(svgEl("polyline", { points: pts.map(function (q) { return q.join(","); }).join(" "), class: "wop-chain-live",
          stroke: colour(p) || "#222", "stroke-width": 1.6 * u, "data-player": p, "data-chain": chain.join(",") }), layer.firstChild);
      });
    });
  }
  // the chains fetched again once per new event (client.seq), drawn when they come if still the latest;
  // returns the function to call on each view
  function follower(base, getBoard, getLayer, colour) {
    var at = -1;
    return function (client) {
      var board = getBoard();
      if (!onPhoto(board) || !board.roads_known || client.seq === at) return;
      var seq = at = client.seq;
      window.Companion.api("GET", base() + "/wop/chains").then(function (r) {
        var layer = getLayer();
        if (seq === at && layer) drawChains(layer, board, r.chains, colour);
      }, function () { at = -1; });
    };
  }

  // the site a tap on the photo means: the nearest one within `px` screen pixels of the finger (a dot is a
  // few pixels wide on a phone; a finger is not), or null. The whole photo takes taps, not only the dots.
  function siteAt(svg, board, ev, px) {
    if (!onPhoto(board) || !svg.getScreenCTM) return null;
    var m = svg.getScreenCTM();
    if (!m) return null;
    var pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    var p = pt.matrixTransform(m.inverse());
    var reach = px / (m.a || 1), best = null, bestD = Infinity;  // screen pixels in the photo's units
    Object.keys(board.coords).forEach(function (id) {
      var d = Math.hypot(board.coords[id][0] - p.x, board.coords[id][1] - p.y);
      if (d < bestD) { bestD = d; best = id; }
    });
    return best !== null && bestD <= Math.max(reach, 1.7 * unit(board)) ? best : null;
  }

  window.WopBoard = { el: svgEl, onPhoto: onPhoto, unit: unit, draw: draw, paint: paint, drawChains: drawChains,
                      follower: follower, siteAt: siteAt };
})();
