/* Conquest of Italy on the TV (/m/<id>/display, through CompanionTV.register): the map with every territory
 * filled with its holder's colour and its unit count, redrawn on every view; the players (territories,
 * units); the last combat (who attacked whom, the dice as dice faces, the losses). The final roll and the
 * ranking are the TV's own (js/display.js). */
(function () {
  "use strict";
  var C = window.Companion, TV = window.CompanionTV, t = C.t, el = C.el;
  if (!TV) return;
  var FALLBACK = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
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

  function mount(box, client) {
    root = box;
    root.appendChild(el("div", { class: "ci-tv" },
      el("div", { class: "ci-tv-map", id: "ci-tv-map" }),
      el("div", { class: "ci-tv-side" },
        el("div", { class: "tv-box", id: "ci-tv-players" }),
        el("div", { class: "tv-box ci-tv-combat", id: "ci-tv-combat", hidden: true }))));
    C.api("GET", "/api/matches/" + encodeURIComponent(client.id) + "/conquest/map").then(function (m) {
      map = m;
      var holder = document.getElementById("ci-tv-map");
      holder.innerHTML = m.svg;  // our own server's SVG (names escaped by the engine)
      var svg = holder.querySelector("svg");
      // the engine's legend (region colours) is on the right: the TV colours by holder, so it is cut off
      svg.setAttribute("viewBox", "0 0 878 1000");
      Array.prototype.forEach.call(svg.querySelectorAll("text[x], rect[x]"), function (n) {
        if (parseFloat(n.getAttribute("x")) >= 878) n.remove();  // the legend (drawn in English) goes too
      });
      svg.removeAttribute("width"); svg.removeAttribute("height");
      svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
      var found = svg.querySelectorAll("circle.city, rect.airport");
      marks = []; labels = [];
      if (found.length !== m.cities.length) return;
      Array.prototype.forEach.call(found, function (mk, i) {
        var name = m.cities[i].name, value = mk.nextElementSibling, title = value && value.nextElementSibling;
        mk.setAttribute("data-city", name);
        if (mk.tagName.toLowerCase() === "circle") mk.setAttribute("r", "17");
        else { var x = +mk.getAttribute("x") + 10, y = +mk.getAttribute("y") + 10;
               mk.setAttribute("x", String(x - 17)); mk.setAttribute("y", String(y - 17));
               mk.setAttribute("width", "34"); mk.setAttribute("height", "34"); }
        if (value) {
          value.setAttribute("class", "ci-tv-units"); value.setAttribute("data-city", name);
          value.setAttribute("y", String(+value.getAttribute("y") + 3));
        }
        if (title) { title.setAttribute("class", "ci-tv-name"); title.setAttribute("x", String(+title.getAttribute("x") + 8)); }
        marks.push(mk); labels.push(value);
      });
      draw(client.view, client);
    }, function () {});
  }

  function draw(view, client) {
    if (!root || !view || !view.state) return;
    var s = view.state, sm = view.summary || {};
    if (map && marks.length) {
      map.cities.forEach(function (c, i) {
        var p = s.owner && s.owner[c.name], fill = p ? colourOf(client, p) : "#bbb";
        marks[i].setAttribute("fill", fill);
        marks[i].setAttribute("stroke", "#111");
        marks[i].setAttribute("stroke-width", "2");
        marks[i].setAttribute("data-holder", p || "");
        if (labels[i]) {
          labels[i].textContent = s.units && s.units[c.name] ? String(s.units[c.name]) : "";
          labels[i].setAttribute("fill", ink(fill));
        }
      });
    }
    // the players: territories and units (fixed-width numbers)
    var pl = document.getElementById("ci-tv-players");
    if (pl && sm.players) {
      pl.textContent = "";
      pl.appendChild(el("table", { class: "tv-table" },
        el("thead", null, el("tr", null, el("th", { text: t("scores.player") }),
          el("th", { class: "num", text: t("ci.col_territories") }), el("th", { class: "num", text: t("ci.col_units") }))),
        el("tbody", null, sm.players.map(function (r) {
          return el("tr", { "data-player": r.player, class: r.eliminated ? "ci-tv-out" : (view.current_player === r.player ? "ci-tv-current" : null) },
            el("td", null, el("span", { class: "swatch", style: "background:" + colourOf(client, r.player) }), r.player),
            el("td", { class: "num", text: String(r.territories) }), el("td", { class: "num", text: String(r.units) }));
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
    box.appendChild(el("div", { class: "tv-panel-title", text: t("tv.ci_last_combat") }));
    box.appendChild(el("div", { class: "ci-tv-who" },
      t("tv.ci_attack", { attacker: c.attacker, from: c.from, defender: c.defender, to: c.to })));
    box.appendChild(el("div", { class: "ci-tv-dice" },
      el("div", { class: "ci-tv-side-dice" }, el("span", { class: "small", text: c.attacker }), TV.dice(c.attacker_dice, "attack")),
      el("span", { class: "ci-tv-vs", text: "vs" }),
      el("div", { class: "ci-tv-side-dice" }, el("span", { class: "small", text: c.defender }), TV.dice(c.defender_dice, "defend"))));
    box.appendChild(el("div", { class: "ci-tv-losses", id: "ci-tv-losses" },
      C.plural("tv.ci_losses", c.attacker_losses, { player: c.attacker }) + " · " +
      C.plural("tv.ci_losses", c.defender_losses, { player: c.defender }) +
      (c.conquered ? " · " + t("tv.ci_conquered", { player: c.attacker, city: c.to }) : "")));
    if (gone) box.appendChild(el("div", { class: "ci-tv-out-note", id: "ci-tv-eliminated", role: "status",
      text: t("tv.ci_eliminated", { player: gone.player }) }));
    box.hidden = false;
  }

  TV.register("conquest-italy", {
    mount: mount,
    update: function (view, client) { draw(view, client); }
  });
})();
