/* companion.js: the helpers every page and every game tracker shares (no build step, no CDN).
 *
 *   Companion.t(key, vars)                 translated string (the catalogue script the page loads first)
 *   Companion.plural(key, n, vars)         a counted string: "<key>.one" / "<key>.other" by the language's rule
 *   Companion.num(x, digits)               a number in the page's language ("-1,5" in Italian)
 *   Companion.api(method, path, body)      fetch JSON; throws Companion.ApiError {status, error, field, body}
 *   Companion.stream(path, handlers)       Server-Sent Events that reconnect by themselves and resume
 *                                          from the last event id; shows the "connection lost" banner;
 *                                          handlers.open() once it is open (and subscribed: read a list
 *                                          then), handlers.down() when it fails or goes silent; made
 *                                          again at once when the page is seen again (back from sleep)
 *   Companion.pageParts(path, ids)         parts of a page as the box draws it now (what a reload shows)
 *   Companion.applyPatch(doc, ops)         a stream event's patch of a view applied (a new document)
 *   new Companion.MatchClient(id, hooks)   one match: view, seq, send(type, data) with expected_seq,
 *                                          undo(); on a 409 conflict it shows a clear message and the
 *                                          fresh state (never a silent overwrite)
 *   Companion.registerGame(game, plugin)   a game's tracker: {mount(root, client), update(view, client),
 *                                          describe(event) -> string|null}
 *   Companion.describeEvent(game, event)   history in words
 *   Companion.wakeLock(on)                 keep the screen awake while a clock runs
 *   Companion.toast(text, bad)             a short message at the bottom
 *   Companion.trackerKit(getClient)        the small helpers every game tracker uses: $, base, done, send,
 *                                          post(prefix, action, data), colour, swatch, who, opt, fill, st, sm
 *   Companion.formatSeconds(s), Companion.el(tag, attrs, ...children)
 */
(function () {
  "use strict";

  // the page's words: /static/i18n/<lang>.js, loaded just before this script (base.html), kept by the browser
  var catalogue = window.CompanionCatalogue || {};

  function t(key, vars) {
    var s = Object.prototype.hasOwnProperty.call(catalogue, key) ? catalogue[key] : key;
    if (vars) {
      // numbers are written in the page's language ("−1,5" in Italian)
      s = s.replace(/\{(\w+)\}/g, function (m, k) { var x = vars[k]; return x === undefined ? m : typeof x === "number" ? num(x) : String(x); });
    }
    return s;
  }

  // Plural forms: a counted string has one key per form, "<key>.one" and "<key>.other" ({n} is the count).
  // The form comes from the language's rule: in English and Italian "one" is exactly 1 (0 and 2 are
  // "other": "0 monasteries", "0 monasteri"). companion/web/i18n.py holds the same rules for the server.
  // A negative count takes the form of its size: "−1 point", "−1 punto" (CLDR: the rule reads |n|).
  var RULES = {
    en: function (n) { return Math.abs(n) === 1 ? "one" : "other"; },
    it: function (n) { return Math.abs(n) === 1 ? "one" : "other"; }
  };
  function pageLang() {
    return (document.body && document.body.dataset.lang) || document.documentElement.lang || "en";
  }
  function pluralForm(n, lang) {
    lang = lang || pageLang();
    var rule = RULES[lang] || RULES.en;
    return rule(Number(n));
  }
  // A number in the page's language: Italian writes "1,5" and "2,00" (no grouping: "1250", not "1.250", so a
  // score reads the same in both). digits: the decimals shown (fixed); without it, up to 2 and no trailing zeros.
  // (a formatter is made once per language and decimals: making one costs far more than using it, and a
  // phone writes every number of its page again on each event)
  var numFormats = {};
  function numFormat(lang, digits) {
    var key = lang + "|" + digits;
    if (!numFormats[key]) {
      var opts = digits === undefined ? { maximumFractionDigits: 2 } : { minimumFractionDigits: digits, maximumFractionDigits: digits };
      opts.useGrouping = false;
      numFormats[key] = new Intl.NumberFormat(lang === "it" ? "it-IT" : "en-GB", opts);
    }
    return numFormats[key];
  }
  function num(x, digits, lang) {
    var n = Number(x);
    if (typeof x === "string" && x.trim() === "" || !isFinite(n)) return String(x);
    lang = lang || pageLang();
    var s;
    try { s = numFormat(lang, digits).format(n); }
    catch (e) { s = digits === undefined ? String(Math.round(n * 100) / 100) : n.toFixed(digits); if (lang === "it") s = s.replace(".", ","); }
    return s.replace(/^\u2212/, "-");
  }
  function plural(key, n, vars) {
    var v = Object.assign({}, vars || {}, { n: typeof n === "number" ? num(n) : n });
    var form = key + "." + pluralForm(n);
    return t(Object.prototype.hasOwnProperty.call(catalogue, form) ? form : key + ".other", v);
  }

  // the words of a clock pause's reason (stored as a key: power-lost, server-stopped) or the reason as typed
  function pauseReason(r) {
    if (!r) return "";
    var s = t("pause." + r);
    return s === "pause." + r ? String(r) : s;
  }

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "text") node.textContent = v;
        else if (k === "class") node.className = v;
        else if (k.slice(0, 2) === "on") on(node, k.slice(2), v);
        else if (k === "style") node.setAttribute("style", v);
        else node.setAttribute(k, v === true ? "" : v);
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) node.appendChild(typeof x === "string" ? document.createTextNode(x) : x); });
      else node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return node;
  }

  // A handler given to el() is kept on the node (node._on), behind one listener per kind: patch() below can
  // hand a node drawn again its new handlers (their closures hold what that drawing knew).
  function dispatchOn(ev) { var f = this._on && this._on[ev.type]; if (f) return f.call(this, ev); }
  function on(node, type, fn) {
    if (!node._on) node._on = {};
    node._on[type] = fn;
    node.addEventListener(type, dispatchOn);
  }
  // patch(box, children): box's children become `children` (nodes made by el(), or a node whose children
  // they are), changing only what differs: a node of the same kind in the same place keeps its place on the
  // page and takes the new one's text, attributes and el() handlers. Style, layout and paint then redo only
  // what changed (a tracker drew its whole table again on every event). A form control, or a node with a
  // listener of its own, is replaced, never patched (its state and listeners are the new node's).
  var FRESH = { INPUT: 1, SELECT: 1, TEXTAREA: 1, OPTION: 1, BUTTON: 0 };
  function samePlace(a, b) {
    if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
    if (a.nodeType !== 1) return true;
    return !FRESH[a.nodeName] && !a._own && !b._own && a.namespaceURI === b.namespaceURI;
  }
  function morph(a, b) {
    if (a.nodeType !== 1) { if (a.nodeValue !== b.nodeValue) a.nodeValue = b.nodeValue; return; }
    var i, at;
    for (i = a.attributes.length - 1; i >= 0; i--) { at = a.attributes[i]; if (!b.hasAttribute(at.name)) a.removeAttribute(at.name); }
    for (i = 0; i < b.attributes.length; i++) { at = b.attributes[i]; if (a.getAttribute(at.name) !== at.value) a.setAttribute(at.name, at.value); }
    if (a._on || b._on) {
      a._on = b._on || {};
      Object.keys(a._on).forEach(function (type) { a.addEventListener(type, dispatchOn); });
    }
    patchKids(a, b);
  }
  function patchKids(live, fresh) {
    var a = live.firstChild, b = fresh.firstChild, next;
    while (b) {
      next = b.nextSibling;
      if (!a) live.appendChild(b);
      else if (samePlace(a, b)) { morph(a, b); a = a.nextSibling; }
      else { var after = a.nextSibling; live.replaceChild(b, a); a = after; }
      b = next;
    }
    while (a) { next = a.nextSibling; live.removeChild(a); a = next; }
  }
  function patch(box, children) {
    if (!box) return box;
    var fresh = document.createElement(box.nodeName);
    [].concat(children).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      fresh.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    });
    patchKids(box, fresh);
    return box;
  }

  // -- connection state -------------------------------------------------------
  var lost = false;
  function setOnline(ok) {
    var b = document.getElementById("offline");
    var changed = lost === !!ok;
    if (!changed && b && b.hidden === !!ok) return;
    lost = !ok;
    if (changed) document.dispatchEvent(new CustomEvent("companion:online", { detail: !!ok }));
    if (b) b.hidden = ok;
    document.documentElement.classList.toggle("offline", !ok);
  }

  var toastTimer = null;
  function toast(text, bad) {
    var box = document.getElementById("toast");
    if (!box) { return; }
    box.textContent = text;
    box.className = "toast" + (bad ? " bad" : "");
    box.hidden = false;
    if (toastTimer) clearTimeout(toastTimer);
    toastTimer = setTimeout(function () { box.hidden = true; }, bad ? 6000 : 2500);
  }

  // -- API --------------------------------------------------------------------
  function ApiError(status, body) {
    this.name = "ApiError";
    this.status = status;
    this.body = body || {};
    this.error = (body && body.error) || ("HTTP " + status);
    this.field = body && body.field;
    this.message = this.error; // the field (a JSON path) is for highlighting an input, never for the text
  }
  ApiError.prototype = Object.create(Error.prototype);

  function api(method, path, body) {
    // the page's language: the server writes its error sentences in it (companion/web/i18n.py error_text)
    var opts = { method: method, credentials: "same-origin", headers: { "Accept": "application/json", "Accept-Language": pageLang() } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(path, opts).then(function (resp) {
      var was = lost;
      setOnline(true);
      if (was) reconnectNow();  // the Pi answers: a live stream that was down comes back now
      return resp.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text.slice(0, 200) }; }
        if (!resp.ok) throw new ApiError(resp.status, data);
        return data;
      });
    }, function (err) {
      setOnline(false);
      throw new ApiError(0, { error: t("conn.lost") });
    });
  }

  // Parts of a page as the box draws it now (ids -> nodes of this document, the ones the page has): what a
  // reload would show of them, without the reload (a page opened on an ended match whose end was taken back:
  // "Who are you?" and the code to sit, drawn by the server only while the match is open)
  function pageParts(path, ids) {
    var opts = { credentials: "same-origin", headers: { "Accept": "text/html", "Accept-Language": pageLang() } };
    return fetch(path, opts).then(function (resp) {
      if (!resp.ok) throw new ApiError(resp.status, { error: resp.statusText });
      return resp.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html"), out = {};
      ids.forEach(function (id) { var n = doc.getElementById(id); if (n) out[id] = document.importNode(n, true); });
      return out;
    });
  }

  // An error in a person's words: a sentence in the page's language where there is one, else the server's
  // sentence with the field named in words ("Chains · Anna: ..."), never the JSON path ($.data.chains.Anna).
  var SKIP_FIELDS = { "$": 1, data: 1, type: 1, Authorization: 1, expected_seq: 1, method: 1 };
  function fieldWords(field) {
    if (!field) return "";
    var words = [], re = /([^.\[\]$]+)|\[(\d+)\]/g, m;
    while ((m = re.exec(String(field)))) {
      if (m[2] !== undefined) { words.push("#" + (Number(m[2]) + 1)); continue; }
      var k = m[1];
      if (SKIP_FIELDS[k]) continue;
      var label = t("field." + k);
      if (label !== "field." + k) words.push(label);
      // a field's own name is English: on another language's page it is left out (the server's sentence,
      // in the page's language, says what is wrong); a key that is a name (a player's) stays
      else if (pageLang() === "en" || !/^[a-z_]+$/.test(k)) words.push(k.replace(/_/g, " "));
    }
    var out = words.join(" · ");
    return out.charAt(0).toUpperCase() + out.slice(1);
  }
  var BAD_SECRET = { "$.setup_code": "error.bad_setup_code", "$.pin": "error.bad_pin", "$.current_pin": "error.bad_current_pin" };
  function errorText(err) {
    if (!err) return "";
    if (err.status === 401 && BAD_SECRET[err.field]) return t(BAD_SECRET[err.field]);
    if (err.status === 401) return t("error.need_join");
    // a match set to "each phone plays its own seat": the organiser's choice, said in its own sentence
    if (err.status === 403 && err.body && err.body.code === "own_seat") return err.error.charAt(0).toUpperCase() + err.error.slice(1);
    if (err.status === 403) return t("error.forbidden") + ": " + err.error;
    if (err.status === 409 && err.field === "expected_seq") return t("conflict.text");
    if (err.status === 503) return t(err.body.code === "storage_full" ? "error.storage_full" :
      err.body.code === "storage_damaged" ? "error.storage_damaged" : "error.storage_failed");
    if (!(err instanceof ApiError)) return err.message || String(err);
    var where = fieldWords(err.field);
    return where ? where + ": " + err.error : err.error;
  }
  // the input an error names (an element with data-field="<the error's field>") is marked for a while
  function markField(err) {
    var f = err && err.field;
    if (!f) return null;
    var node = null;
    Array.prototype.forEach.call(document.querySelectorAll("[data-field]"), function (n) {
      if (!node && (n.getAttribute("data-field") === f || "$.data." + n.getAttribute("data-field") === f)) node = n;
    });
    if (!node) return null;
    node.classList.add("input-bad");
    node.setAttribute("aria-invalid", "true");
    setTimeout(function () { node.classList.remove("input-bad"); node.removeAttribute("aria-invalid"); }, 6000);
    return node;
  }

  // -- Server-Sent Events with reconnect and resume ------------------------------------
  // handlers: {event: fn(data, id), snapshot: fn(data, id), tick: fn(data), alert: fn(data), match: fn(data),
  // seats: fn(data), open: fn()}
  // The server sends a named `heartbeat` event when a stream was quiet for its heartbeat period (the
  // page's <body data-heartbeat> seconds, 10 by default; each heartbeat says it again as {every}). Any
  // event feeds the watchdog; three heartbeat periods of silence mean the Pi is gone: banner, new stream.
  // The banner says what is true: it shows when the stream breaks, goes silent or a request finds no Pi, and
  // it goes with the first thing the stream delivers again (a stream that delivers is the Pi answering). A
  // connection that does not open within CONNECT_MS is given up and made again (a phone back on the Wi-Fi
  // does not wait for a connection attempt begun while it was away); the wait between attempts is at most
  // RETRY_MAX_MS; and a request the Pi answers while a stream is down reconnects it at once.
  var CONNECT_MS = 5000, RETRY_MAX_MS = 5000, streams = [];
  function watchdogMs(every) {
    var s = parseFloat(every);
    if (!(s > 0)) s = parseFloat((document.body && document.body.dataset.heartbeat) || "");
    if (!(s > 0)) s = 10;
    return Math.max(300, Math.round(s * 3000));
  }
  function reconnectNow() { streams.forEach(function (s) { s.reconnectNow(); }); }
  function stream(path, handlers) {
    var lastId = null, es = null, closed = false, watchdog = null, retryTimer = null, delay = 1000;
    var silenceMs = watchdogMs();

    function kick(connecting) {
      if (watchdog) clearTimeout(watchdog);
      watchdog = setTimeout(function () { setOnline(false); down(); restart(); }, connecting ? Math.min(silenceMs, CONNECT_MS) : silenceMs);
    }
    function restart() {
      if (closed) return;
      if (es) { es.close(); es = null; }
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = setTimeout(open, delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
    function alive() { kick(false); if (lost) setOnline(true); }
    function down() { if (handlers.down) { try { handlers.down(); } catch (e) { console.error(e); } } }
    function on(kind) {
      es.addEventListener(kind, function (ev) {
        alive();
        if (ev.lastEventId) lastId = ev.lastEventId;
        var data = null;
        try { data = JSON.parse(ev.data); } catch (e) { return; }
        if (kind === "heartbeat") { if (data && data.every > 0) { silenceMs = watchdogMs(data.every); kick(false); } return; }
        if (handlers[kind]) handlers[kind](data, ev.lastEventId);
      });
    }
    function open() {
      if (closed) return;
      retryTimer = null;
      var url = path + (lastId !== null ? (path.indexOf("?") < 0 ? "?" : "&") + "last_event_id=" + encodeURIComponent(lastId) : "");
      es = new EventSource(url);
      es.onopen = function () { setOnline(true); delay = 1000; kick(false); if (handlers.open) handlers.open(); };
      es.onmessage = function () { alive(); };
      es.onerror = function () {
        setOnline(false);
        down();
        if (es && es.readyState === 2) restart(); // CLOSED: the browser gave up, we don't
        else kick(true);  // the browser tries again: that attempt too has CONNECT_MS to open
      };
      ["event", "snapshot", "tick", "alert", "match", "hello", "heartbeat", "tv-sound", "dice", "seats", "phones"].forEach(on);
      kick(true);
    }
    var handle = {
      // start again now from the event `id` (null: from a fresh snapshot): what the page holds went astray
      resume: function (id) { if (closed) return; lastId = id === null || id === undefined ? null : String(id); delay = 500;
                              if (retryTimer) clearTimeout(retryTimer); retryTimer = null; if (es) { es.close(); es = null; } open(); },
      close: function () { closed = true; if (es) es.close(); if (watchdog) clearTimeout(watchdog); if (retryTimer) clearTimeout(retryTimer);
                           streams = streams.filter(function (s) { return s !== handle; }); },
      lastId: function () { return lastId; }, watchdogMs: function () { return silenceMs; },
      // the Pi answered a request: a stream that is down (or still connecting) is made again now
      reconnectNow: function () { if (!closed && (!es || es.readyState !== 1)) { delay = 500; if (retryTimer) clearTimeout(retryTimer); retryTimer = null; if (es) { es.close(); es = null; } open(); } },
      // the page is seen again (resyncStreams): made again now from the last event it had, whatever it seems
      resync: function () { if (!closed) handle.resume(lastId); },
      // the page goes into the back/forward cache: no stream, no timer while it is there
      suspend: function () { if (closed) return; if (es) { es.close(); es = null; } if (watchdog) clearTimeout(watchdog);
                             if (retryTimer) clearTimeout(retryTimer); watchdog = retryTimer = null; }
    };
    streams.push(handle);
    open();
    window.addEventListener("online", function () { if (!es || es.readyState !== 1) { delay = 500; restart(); } });
    return handle;
  }

  // A phone back from another app or from sleep: its streams may have died without a word while it was away
  // (the radio slept, the box dropped a stream that read nothing), which the watchdog would notice only
  // after three heartbeats. Each is made again at once from the last event it had, and the box sends what it
  // missed (Last-Event-ID; a page with none gets a fresh snapshot), so the page shows the live state within a
  // second of being seen again. A page put in the back/forward cache closes its streams first (pagehide) and
  // opens them again when it is shown (pageshow); nothing listens to `unload`, which would keep a page out of
  // that cache.
  var hiddenSince = null;
  function resyncStreams() { streams.forEach(function (s) { s.resync(); }); }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { if (hiddenSince === null) hiddenSince = Date.now(); return; }
    if (hiddenSince !== null) { hiddenSince = null; resyncStreams(); }
  });
  window.addEventListener("pagehide", function (ev) { if (ev.persisted) streams.forEach(function (s) { s.suspend(); }); });
  window.addEventListener("pageshow", function (ev) { if (ev.persisted) { hiddenSince = null; resyncStreams(); } });

  // -- a view's patch (companion/base/jsondiff.py: the same rules) -----------------------------------------
  // ops: [path, value] sets, [path] removes an object's key; a path lists keys and array indices ([] is the
  // whole document; one past an array's end appends). The document given is not changed: what a patch
  // touches is copied, the rest shared. null when the patch does not fit the document.
  var own = Object.prototype.hasOwnProperty;
  function put(node, key, value) {
    if (key === "__proto__") Object.defineProperty(node, key, { value: value, writable: true, enumerable: true, configurable: true });
    else node[key] = value;
  }
  function copyOf(node) {
    if (Array.isArray(node)) return node.slice();
    if (!own.call(node, "__proto__")) return Object.assign({}, node);
    var out = {};
    Object.keys(node).forEach(function (k) { put(out, k, node[k]); });
    return out;
  }
  function applyPatch(doc, ops) {
    if (!Array.isArray(ops)) return null;
    var fresh = new Set(), root = { v: doc };
    function child(parent, key) {  // parent[key], copied once for this patch
      var c = parent[key];
      if (c === null || typeof c !== "object" || (Array.isArray(parent) ? typeof key !== "number" : !own.call(parent, key))) return null;
      if (!fresh.has(c)) { c = copyOf(c); put(parent, key, c); fresh.add(c); }
      return c;
    }
    for (var i = 0; i < ops.length; i++) {
      var op = ops[i], path = op && op[0];
      if (!Array.isArray(path)) return null;
      if (!path.length) { if (op.length < 2) return null; root.v = op[1]; continue; }
      var node = root, key = "v";
      for (var j = 0; j < path.length; j++) { node = child(node, key); if (!node) return null; key = path[j]; }
      if (Array.isArray(node)) {
        if (op.length < 2 || typeof key !== "number" || key < 0 || key > node.length || key % 1) return null;
        node[key] = op[1];
      } else if (op.length >= 2) {
        put(node, String(key), op[1]);
      } else {
        if (!own.call(node, String(key))) return null;
        delete node[String(key)];
      }
    }
    return root.v;
  }

  // -- games --------------------------------------------------------------------------
  var games = {};
  function registerGame(game, plugin) {
    // a match recorded by its final result only (view.tracking "result") has no tracker: result.js and the scores
    ["mount", "update"].forEach(function (k) {
      var fn = plugin[k];
      if (fn) plugin[k] = function (a, cl) { var v = k === "update" ? a : cl && cl.view; if (!(v && v.tracking === "result")) return fn.apply(this, arguments); };
    });
    // plugin.scores(view): the game draws the page's scores box itself for this view (the page does not)
    if (plugin.scores) { var own = plugin.scores; plugin.scores = function (v) { return !(v && v.tracking === "result") && !!own(v); }; }
    games[game] = plugin; document.dispatchEvent(new CustomEvent("companion:game", { detail: game }));
  }

  function describeEvent(game, ev) {
    var p = games[game];
    if (p && p.describe) {
      try { var s = p.describe(ev); if (s) return s; } catch (e) { /* fall through */ }
    }
    if (ev.type === "undo") return ev.undid ? t("event.undo_of", { what: describeEvent(game, ev.undid) }) : t("event.undo");
    if (ev.type === "result.entered") return t((ev.data || {}).correction ? "event.result.corrected" : "event.result.entered") + ": " + ((ev.data || {}).places || []).slice()
      .sort(function (a, b) { return a.place - b.place; }).map(function (r) { return r.place + ". " + r.player; }).join(", ");
    if (ev.hidden) return t("event.hidden", { type: ev.type });
    var name = t("event." + ev.type);
    if (name === "event." + ev.type) name = ev.type;
    var data = ev.data || {};
    if (ev.type === "clock.pause") return name + (data.reason ? " (" + pauseReason(data.reason) + ")" : "");
    var parts = Object.keys(data).filter(function (k) { return k !== "player" && k !== "rolled_by"; }).map(function (k) {
      var v = data[k], label = t("field." + k);
      return (label === "field." + k ? k : label) + ": " + (typeof v === "object" ? JSON.stringify(v) : v);
    });
    var who = typeof data.player === "string" ? data.player + " · " : "";
    return who + name + (parts.length ? " (" + parts.join(", ") + ")" : "");
  }

  // -- one match ------------------------------------------------------------------------
  function MatchClient(matchId, hooks) {
    this.id = matchId;
    this.hooks = hooks || {};
    this.view = null;
    this.seq = 0;
    this.match = null;
    this.status = null; // "open" | "ended" (the match's, from the API and the stream)
    this.busy = false;
    this.sentSeq = -1; // the view's seq when the last write was sent
    this.pending = null;
    this.query = this.hooks.query || ""; // "?as=viewer": the TV page, shown as a viewer sees it whoever opened it
  }
  MatchClient.prototype.load = function () {
    var self = this;
    // (a load is a fresh start: a reconnect, a conflict; the page is drawn again even if nothing changed)
    return api("GET", "/api/matches/" + encodeURIComponent(this.id) + this.query).then(function (m) { self.setMatch(m, true); return m; });
  };
  MatchClient.prototype.setMatch = function (m, force) {
    this.match = m;
    if (m && m.status) this.status = m.status;
    this.setView(m.view, force);
  };
  // Everything a page draws from: the view, the match as this phone holds it (its seat, the colours, the
  // power-lost flag; not the event a write answered with) and its status. The same key twice is the same
  // page: a phone's own tap arrives twice (the write's answer, then the live stream's event).
  MatchClient.prototype.drawKey = function (view) {
    var m = this.match || {}, rest = {};
    Object.keys(m).forEach(function (k) { if (k !== "view" && k !== "event") rest[k] = m[k]; });
    return JSON.stringify(view) + "\n" + JSON.stringify(rest) + "\n" + this.status;
  };
  // force: draw even what was drawn (a game's script that registered after the first view)
  MatchClient.prototype.setView = function (view, force) {
    if (!view) return;
    if (this.view && view.seq < this.seq) return; // never go back to an older view
    var key = this.drawKey(view);
    if (!force && this.view && key === this.drawn) return;  // drawn already: nothing the page reads changed
    this.drawn = key;
    this.view = view;
    this.seq = view.seq;
    if (this.hooks.view) this.hooks.view(view, this);
    var p = games[this.match ? this.match.game : ""];
    if (p && p.update) { try { p.update(view, this); } catch (e) { console.error(e); } }
  };
  MatchClient.prototype.ended = function () {
    var v = this.view || {};
    return !!(v.ended || (v.summary && v.summary.ended) || this.status === "ended");
  };
  // One write at a time. A second tap while a write is unanswered is refused ("wait": a double tap must not
  // place twice), unless the live stream has already shown a newer state since that write was sent: then the
  // tap was made on what the person saw, and it goes as soon as the first write is answered.
  MatchClient.prototype._write = function (path, body) {
    var self = this;
    if (self.busy && !(self.seq > self.sentSeq)) return Promise.reject(new ApiError(0, { error: t("common.wait") }));
    self.sentSeq = self.seq;
    function run() {
      self.busy = true;
      return api("POST", path, body).then(function (m) {
        self.busy = false;
        self.clearConflict();
        self.setMatch(m);
        if (self.hooks.written) self.hooks.written(m.event, self);
        return m;
      }, function (err) {
        self.busy = false;
        if (err.status === 409 && err.field === "expected_seq") {
          // someone else wrote first: show it, load the fresh state, do not resend
          return self.load().then(function () { self.showConflict(); throw err; }, function () { self.showConflict(); throw err; });
        }
        throw err;
      });
    }
    var p = self.busy ? self.pending.then(run, run) : run();
    self.busy = true;
    self.pending = p;
    return p;
  };
  MatchClient.prototype.send = function (type, data) {
    return this._write("/api/matches/" + encodeURIComponent(this.id) + "/events",
      { type: type, data: data || {}, expected_seq: this.seq });
  };
  MatchClient.prototype.undo = function () {
    return this._write("/api/matches/" + encodeURIComponent(this.id) + "/undo", { expected_seq: this.seq });
  };
  MatchClient.prototype.showConflict = function () {
    var box = document.getElementById("conflict");
    if (box) { box.textContent = t("conflict.text"); box.hidden = false; }
    if (this.hooks.conflict) this.hooks.conflict(this);
  };
  MatchClient.prototype.clearConflict = function () {
    var box = document.getElementById("conflict");
    if (box) box.hidden = true;
  };
  // The stream's events carry the whole view, or (once the page holds the view of the event before) `base`
  // (that event's seq) and `patch`: what changed since, as this page sees it (applyPatch). `heard` is the
  // view as the stream last gave it (never a write's answer: the stream's own views are what its patches
  // follow), kept apart from the page's copy (a page may change the view it draws from); a patch whose base
  // is not it (should never be) makes the stream start again from the last event the page had, with a fresh
  // snapshot.
  function cloneView(v) { return typeof structuredClone === "function" ? structuredClone(v) : JSON.parse(JSON.stringify(v)); }
  MatchClient.prototype.follow = function (handlers) {
    var self = this, heard = null, heardId = null, handle = null;
    handlers = handlers || {};
    handle = stream("/api/matches/" + encodeURIComponent(this.id) + "/stream" + this.query, {
      // a snapshot opens a stream (a reconnect): drawn whole, whatever the page showed meanwhile
      snapshot: function (d, id) {
        heard = d.view ? cloneView(d.view) : null; heardId = id || heardId;
        if (d.status) self.status = d.status;
        self.setView(d.view, true);
        if (handlers.snapshot) handlers.snapshot(d);
        // what the stream tells as it happens and a snapshot does not hold (js/dice-live.js: a roll that began
        // before this stream opened) is read again
        document.dispatchEvent(new CustomEvent("companion:snapshot"));
      },
      event: function (d, id) {
        if (d.patch) {
          var view = heard && heard.seq === d.base ? applyPatch(heard, d.patch) : null;
          if (!view) { heard = null; handle.resume(heardId); return; }
          heard = view;
          d.view = cloneView(view);  // (the handlers read d.view, as from an event with the whole view)
        } else if (d.view) {
          heard = cloneView(d.view);
        }
        heardId = id || heardId;
        if (d.status) self.status = d.status;
        if (d.view) self.setView(d.view);
        if (handlers.event) handlers.event(d);
      },
      tick: function (d) { if (handlers.tick) handlers.tick(d); },
      alert: function (d) { if (handlers.alert) handlers.alert(d); },
      "tv-sound": function (d) { if (handlers.tvSound) handlers.tvSound(d); },
      // the table's seats, taken or free, and this phone's own (a phone that sits or may sit: js/pages.js)
      seats: function (d) { if (handlers.seats) handlers.seats(d); },
      // who a player's phone records for, as the organiser just set it (js/pages.js)
      phones: function (d) { if (handlers.phones) handlers.phones(d); },
      // the table's smart dice (js/dice-live.js follows them)
      dice: function (d) { document.dispatchEvent(new CustomEvent("companion:dice", { detail: d })); },
      open: function () { if (handlers.open) handlers.open(); }
    });
    return handle;
  };

  // -- screen wake lock -------------------------------------------------------------
  var lock = null, wantLock = false;
  function acquire() {
    if (!wantLock || lock || !("wakeLock" in navigator) || document.visibilityState !== "visible") return;
    navigator.wakeLock.request("screen").then(function (l) {
      lock = l;
      l.addEventListener("release", function () { lock = null; });
    }, function () { lock = null; });
  }
  function wakeLock(on) {
    wantLock = !!on;
    if (wantLock) acquire();
    else if (lock) { lock.release(); lock = null; }
  }
  document.addEventListener("visibilitychange", acquire);

  function formatSeconds(s) {
    if (s === null || s === undefined || isNaN(s)) return "--:--";
    var neg = s < 0; s = Math.abs(Math.round(s));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    var mm = (h ? String(m).padStart(2, "0") : String(m)), ss = String(sec).padStart(2, "0");
    return (neg ? "-" : "") + (h ? h + ":" : "") + mm + ":" + ss;
  }

  // -- helpers the game trackers share (web/static/games/*.js) -----------------------------------------
  function trackerKit(getClient) {
    function base() { return "/api/matches/" + encodeURIComponent(getClient().id); }
    function done(p) {
      return p.then(function (m) { toast(t("match.saved")); return m; },
        function (e) { toast(errorText(e), true); markField(e); return null; });
    }
    function colour(p) { var c = getClient(); return ((c && c.match && c.match.colours) || {})[p]; }
    function swatch(p) { var c = colour(p); return c ? el("span", { class: "swatch", style: "background:" + c }) : null; }
    function opt(value, label, selected) { return el("option", { value: value, text: label, selected: selected ? "selected" : null }); }
    return {
      $: function (id) { return document.getElementById(id); },
      base: base,
      done: done,
      send: function (type, data) { return done(getClient().send(type, data)); },
      // a tracker action of companion/web/trackers.py: /api/matches/<id>/<prefix>/<action>
      post: function (prefix, action, data) {
        var c = getClient();
        return done(c._write(base() + "/" + prefix + "/" + action, { expected_seq: c.seq, data: data || {} }));
      },
      colour: colour,
      swatch: swatch,
      who: function (p) { return el("span", { class: "trk-who" }, swatch(p), p); },
      opt: opt,
      // items: [{value, label}]; keeps the chosen value when it is still offered
      fill: function (select, items, keep) {
        var cur = keep !== undefined ? keep : select.value, found = false;
        items.forEach(function (it) { if (String(it.value) === String(cur)) found = true; });
        // the same options as shown (most events change none of a list): only the choice, when it moved
        var o = select.options, same = o.length === items.length;
        for (var k = 0; same && k < items.length; k++) same = o[k].value === String(items[k].value) && o[k].textContent === String(items[k].label);
        if (same) {
          var at = 0;
          items.forEach(function (it, i) { if (found && String(it.value) === String(cur)) at = i; });
          for (k = 0; k < o.length; k++) if (o[k].defaultSelected !== (k === at)) o[k].defaultSelected = k === at;
          if (o.length && select.selectedIndex !== at) select.selectedIndex = at;
          return select.value;
        }
        select.textContent = "";
        items.forEach(function (it, i) { select.appendChild(opt(it.value, it.label, found ? String(it.value) === String(cur) : i === 0)); });
        return select.value;
      },
      st: function () { return getClient().view.state; },
      sm: function () { return getClient().view.summary || {}; }
    };
  }

  window.Companion = {
    t: t, plural: plural, pluralForm: pluralForm, num: num, pauseReason: pauseReason, el: el, api: api, ApiError: ApiError, errorText: errorText, fieldWords: fieldWords, markField: markField, stream: stream, pageParts: pageParts, applyPatch: applyPatch, toast: toast,
    setOnline: setOnline, watchdogMs: watchdogMs, isOffline: function () { return lost; }, registerGame: registerGame,
    game: function (g) { return games[g]; }, describeEvent: describeEvent, MatchClient: MatchClient,
    wakeLock: wakeLock, formatSeconds: formatSeconds, trackerKit: trackerKit, patch: patch, on: on
  };
})();
