/* Every player's play log (docs/playlog.md): when the match ends, a card "Save to my play log" under the
 * scores with the BG Stats links of the finished match (GET /api/matches/<id>/playlog): the app's own
 * address, the web address, and the page with what is sent and a QR code for another phone. */
(function () {
  "use strict";
  var C = window.Companion, t = C.t, el = C.el;
  var card = null, loadedFor = null;

  function build(client, out) {
    var base = "/m/" + encodeURIComponent(client.id) + "/playlog";
    card = el("section", { class: "card playlog-card", id: "playlog-card" },
      el("h2", { text: t("playlog.save") }),
      el("p", { class: "muted small", text: t("playlog.explain") }),
      el("p", { class: "row-actions" },
        el("a", { class: "btn btn-primary btn-big", id: "playlog-app", href: out.app_url }, t("playlog.open_app")),
        el("a", { class: "btn", id: "playlog-more", href: base }, t("playlog.what"))));
    var scores = document.getElementById("scores");
    var anchor = scores ? scores.closest("section") : null;
    if (anchor && anchor.parentNode) anchor.parentNode.insertBefore(card, anchor.nextSibling);
    else document.querySelector("main").appendChild(card);
  }

  function show(view, client) {
    if (!view) return;
    if (!view.ended) { if (card) card.hidden = true; return; }
    if (card && loadedFor === view.seq) { card.hidden = false; return; }
    loadedFor = view.seq;
    C.api("GET", "/api/matches/" + encodeURIComponent(client.id) + "/playlog").then(function (out) {
      if (card) card.remove();
      build(client, out);
    }, function () { /* a ranking not complete yet: no card */ });
  }

  function hook() {
    var client = window.companionMatch;
    if (!client || document.body.dataset.page !== "match") return;
    var before = client.hooks.view;
    client.hooks.view = function (view, cl) { if (before) before(view, cl); show(view, cl); };
    if (client.view) show(client.view, client);
  }
  hook();
})();
