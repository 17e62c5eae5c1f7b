/* The organiser's dice page (docs/dice.md): the dice the box hears, and each table's set: three dice for the
 * attacker, three for the defender, by name or colour, the match the set serves, "roll a die to pick it"
 * and the "roll each die once" check. It polls GET /api/dice while open (the radio has no stream). */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  if (document.body.dataset.page !== "dice") return;
  var state = { radio: null, heard: [], sets: [], cursor: 0 }, matches = [], editing = {}, picking = null, checks = {};
  var $ = function (id) { return document.getElementById(id); };

  function dieName(id) {
    var d = state.heard.filter(function (x) { return x.die === id; })[0];
    return d ? d.name : id;
  }
  function setOf(id) {
    return state.sets.filter(function (s) { return s.dice.some(function (d) { return d.die === id; }); })[0];
  }
  function showError(e) { var b = $("dice-error"); b.textContent = e ? C.errorText(e) : ""; b.hidden = !e; }

  function drawHeard() {
    var body = document.querySelector("#dice-heard tbody");
    body.textContent = "";
    state.heard.forEach(function (d) {
      var s = setOf(d.die);
      body.appendChild(el("tr", { "data-die": d.die, class: d.in_range ? "" : "muted" },
        el("td", {}, el("strong", { text: d.name }), " ", el("span", { class: "small muted", text: (d.kind === "godice" ? "GoDice" : "Pixels") + (d.six_sided ? "" : " · " + d.die_type) })),
        el("td", { text: d.in_range ? t("dice.state_" + d.state) : t("dice.out_of_range") }),
        el("td", { class: "num", text: d.face ? String(d.face) : "" }),
        el("td", { class: "num", text: d.battery === null || d.battery === undefined ? "" : d.battery + "%" }),
        el("td", { text: s ? s.name : "" })));
    });
    $("dice-none").hidden = state.heard.length > 0;
    var r = state.radio, box = $("dice-radio");
    box.hidden = !r || r.available;
    if (r && !r.available) box.textContent = t("dice.radio_off", { reason: r.reason });
  }

  function draft(s) {
    if (!editing[s.id]) editing[s.id] = { name: s.name, match_id: s.match_id || "", slots: slotsOf(s) };
    return editing[s.id];
  }
  function slotsOf(s) {
    var out = { attack: [null, null, null], defend: [null, null, null] };
    ["attack", "defend"].forEach(function (side) {
      s.dice.filter(function (d) { return d.side === side; }).forEach(function (d, i) { out[side][i] = { die: d.die, label: d.label }; });
    });
    return out;
  }

  function drawSets() {
    var list = $("dice-set-list");
    list.textContent = "";
    state.sets.forEach(function (s) { list.appendChild(setCard(s)); });
  }

  function setCard(s) {
    var d = draft(s), chk = checks[s.id];
    var name = el("input", { class: "dice-set-name", maxlength: "40", value: d.name, "aria-label": t("dice.set_name"),
                             oninput: function (ev) { d.name = ev.target.value; } });
    var match = el("select", { class: "dice-set-match", onchange: function (ev) { d.match_id = ev.target.value; } },
      el("option", { value: "", text: t("dice.no_match") }));
    matches.forEach(function (m) {
      var o = el("option", { value: m.id, text: (m.label || t("game." + m.game)) + " · " + m.players.join(", ") });
      if (m.id === d.match_id) o.selected = true;
      match.appendChild(o);
    });
    var sides = el("div", { class: "dice-sides" });
    ["attack", "defend"].forEach(function (side) {
      var col = el("div", { class: "dice-side", "data-side": side }, el("h3", { text: t("dice.side_" + side) }));
      d.slots[side].forEach(function (slot, i) {
        var pick = el("select", { "data-slot": side + i, "aria-label": t("dice.side_" + side) + " " + (i + 1),
                                  onchange: function (ev) { d.slots[side][i] = ev.target.value ? { die: ev.target.value, label: dieName(ev.target.value) } : null; drawSets(); } },
          el("option", { value: "", text: "—" }));
        state.heard.filter(function (h) { return h.six_sided; }).forEach(function (h) {
          var o = el("option", { value: h.die, text: h.name });
          if (slot && slot.die === h.die) o.selected = true;
          pick.appendChild(o);
        });
        if (slot && !state.heard.some(function (h) { return h.die === slot.die; })) pick.appendChild(el("option", { value: slot.die, text: slot.label, selected: true }));
        var label = el("input", { class: "dice-label", maxlength: "24", value: slot ? slot.label : "", placeholder: t("dice.label"),
                                  "aria-label": t("dice.label"), disabled: slot ? null : "disabled",
                                  oninput: function (ev) { if (d.slots[side][i]) d.slots[side][i].label = ev.target.value; } });
        var waiting = picking && picking.set === s.id && picking.side === side && picking.i === i;
        var roll = el("button", { type: "button", class: "btn btn-small" + (waiting ? " btn-primary" : ""), "data-roll-pick": side + i,
                                  onclick: function () { startPick(s.id, side, i); } }, waiting ? t("dice.roll_now") : "⚄");
        var checked = chk && slot ? chk.dice.filter(function (x) { return x.die === slot.die; })[0] : null;
        col.appendChild(el("div", { class: "trk-row dice-slot" }, pick, roll, label,
          checked ? el("span", { class: "dice-check", "data-check": side + i, text: checked.rolled ? "✓ " + checked.rolled : "…" }) : null));
      });
      sides.appendChild(col);
    });
    var save = el("button", { type: "button", class: "btn btn-primary", "data-save": s.id, onclick: function () { saveSet(s.id); } }, t("dice.save"));
    var check = el("button", { type: "button", class: "btn", "data-check-set": s.id, onclick: function () { startCheck(s.id); } }, t("dice.check"));
    var del = el("button", { type: "button", class: "btn btn-danger btn-small", onclick: function () {
      if (!window.confirm(t("dice.delete_confirm", { name: s.name }))) return;
      C.api("DELETE", "/api/dice/sets/" + encodeURIComponent(s.id)).then(function () { delete editing[s.id]; load(); }, showError);
    } }, t("dice.delete"));
    var status = chk ? el("p", { class: "small", "data-check-status": s.id, text: chk.done ? t("dice.check_done") : t("dice.check_running") }) : null;
    return el("div", { class: "card dice-set", "data-set": s.id },
      el("div", { class: "trk-row" }, el("label", { class: "field" }, t("dice.set_name"), " ", name),
                                      el("label", { class: "field" }, t("dice.serves"), " ", match)),
      sides, el("div", { class: "row-actions" }, save, check, del), status);
  }

  function payload(s) {
    var d = draft(s), dice = [];
    ["attack", "defend"].forEach(function (side) {
      d.slots[side].forEach(function (slot) { if (slot) dice.push({ die: slot.die, side: side, label: slot.label || dieName(slot.die) }); });
    });
    return { name: d.name, match_id: d.match_id || null, dice: dice };
  }
  function saveSet(id) {
    var s = state.sets.filter(function (x) { return x.id === id; })[0];
    C.api("PUT", "/api/dice/sets/" + encodeURIComponent(id), payload(s)).then(function () {
      delete editing[id]; showError(null); C.toast(t("common.saved")); load();
    }, showError);
  }
  function startCheck(id) {
    C.api("POST", "/api/dice/sets/" + encodeURIComponent(id) + "/check").then(function (v) { checks[id] = v; drawSets(); }, showError);
  }
  function startPick(set, side, i) {
    picking = { set: set, side: side, i: i, after: state.cursor };
    drawSets();
  }

  function poll() {
    var pending = [C.api("GET", "/api/dice")];
    return pending[0].then(function (d) {
      state = d;
      drawHeard();
      var jobs = Object.keys(checks).map(function (id) {
        return C.api("GET", "/api/dice/sets/" + encodeURIComponent(id) + "/check").then(function (v) { checks[id] = v; if (!v.checking) delete checks[id]; },
          function () { delete checks[id]; });
      });
      if (picking) jobs.push(C.api("GET", "/api/dice/rolled?after=" + picking.after).then(function (r) {
        var free = r.dice.filter(function (id) { var s = setOf(id); return !s || s.id === picking.set; });
        if (free.length && picking) {
          var s = state.sets.filter(function (x) { return x.id === picking.set; })[0];
          if (s) draft(s).slots[picking.side][picking.i] = { die: free[0], label: dieName(free[0]) };
          picking = null;
        }
      }));
      return Promise.all(jobs).then(function () { if (!document.querySelector(".dice-set input:focus, .dice-set select:focus")) drawSets(); });
    }, showError);
  }
  function load() {
    return C.api("GET", "/api/matches?status=open").then(function (d) { matches = d.matches || []; }, function () { matches = []; }).then(poll);
  }
  $("dice-new").addEventListener("click", function () {
    var n = state.sets.length + 1;
    C.api("POST", "/api/dice/sets", { name: t("dice.default_name", { n: n }), dice: [] }).then(load, showError);
  });
  load();
  setInterval(function () { if (document.visibilityState === "visible") poll(); }, 1000);
})();
