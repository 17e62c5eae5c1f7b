"""One kit, two engines: the browser tests' devices in Chromium (Playwright) or in WebKit (WebKitGTK's WebDriver
through Selenium, the engine of every iPhone's browser).

The interface the kit's steps use is the small part of Playwright's sync API they need, and nothing more:

- a browser's ``new_context(base_url=, locale=, viewport=)`` is a new phone, TV or organiser's device (its own
  cookies: its own seat), ``context.new_page()``, ``context.close()``;
- a page's ``goto``, ``reload``, ``url``, ``click`` / ``fill`` / ``select_option`` / ``check`` (a selector),
  ``locator(css, has_text=)`` with ``first`` / ``last`` / ``nth`` / ``locator`` / ``filter``, ``inner_text``,
  ``wait_for_timeout`` (a wall clock's wait: to show that something did not move meanwhile), ``evaluate``
  (an expression or a function of one argument, a promise awaited), ``wait_for_function``,
  ``wait_for_selector``, ``wait_for_url``, ``once("dialog", ...)`` (a ``confirm`` accepted or dismissed),
  ``request.get/post`` (with the page's cookies), ``screenshot``, ``errors`` (the page's script errors);
- :func:`expect` with the checks the kit makes (text, count, visible, hidden, value, attribute, class,
  checked, enabled), each waiting until it holds (15 s at most).

In Chromium all of it is Playwright itself. In WebKit it is :class:`WebKitBrowser`: each device one WebKitGTK
session (WebKitWebDriver and its MiniBrowser, on one Xvfb display per test process), its language given to the
engine as a person's phone gives it (``LANG`` and ``LANGUAGE``: ``navigator.language`` and ``Accept-Language``;
a locale the system lacks made for it: :func:`locale_env`); every check
and wait is one script polling in the page every 10 ms (one WebDriver command, not a command per poll); a tap is
a WebDriver click on the element (hit-tested where a finger would land), once the element is shown and enabled.

What WebKit's device cannot do as Chromium's does, said where it matters: its window is no narrower than
MiniBrowser's own minimum (447 px: a phone's 390 px is 447 there), a page's script errors are caught from the end
of its load (an error while it loads is not), and a script set to run before a page's own ones
(``add_init_script``) is not offered.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from urllib.parse import urljoin

TIMEOUT_MS = 15_000
STALE_TRIES = 5  # a tap on an element the page has just drawn anew: found again, at most this many times
ENGINES = ("chromium", "webkit")


def webkit_missing() -> str | None:
    """Why WebKit's devices cannot run here (a skip's reason naming the package), None when they can."""
    from tests.debian_packages import install_hint

    if not shutil.which("WebKitWebDriver"):
        return f"WebKitGTK's WebDriver is missing ({install_hint('WebKitWebDriver')})"
    if not shutil.which("Xvfb"):
        return f"Xvfb is missing, WebKitGTK needs a display ({install_hint('Xvfb')})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "Selenium is missing (pip install -e '.[dev]')"
    return None


def locale_env(locale: str) -> dict:
    """What WebKit's device needs in its environment to have ``locale``'s language. WebKitGTK takes it from the C
    library's locale (setlocale: ``navigator.language`` and ``Accept-Language``), not from ``LANGUAGE`` alone:
    where the locale is not generated (a Debian with only C.UTF-8) the page would be English (en-US). So a locale
    missing from the system is made once from Debian's locale data (package locales: ``localedef``, a second or
    two) in a folder of the temporary one, given as ``LOCPATH``; where even that cannot be, the test skips saying
    so. English needs nothing (the C locale's language)."""
    import tempfile

    name = locale.replace("-", "_")
    lang = name.split("_")[0].lower()
    if lang == "en":
        return {}
    try:
        have = subprocess.run(["locale", "-a"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        have = []
    if any(h.lower().replace("utf-8", "utf8") == f"{name}.utf8".lower() for h in have):
        return {}
    folder = os.path.join(tempfile.gettempdir(), f"companion-webkit-locales-{os.getuid()}")
    made = os.path.join(folder, f"{name}.UTF-8")
    if not os.path.isdir(made):
        os.makedirs(folder, exist_ok=True)
        part = f"{made}.{os.getpid()}"
        try:
            p = subprocess.run(["localedef", "-i", name, "-f", "UTF-8", part], capture_output=True, text=True,
                               timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            p = None
            err = str(e)
        if p is None or not os.path.isdir(part):
            import pytest

            pytest.skip(f"WebKitGTK takes a phone's language from the system's locales: {name}.UTF-8 is not "
                        f"generated here and localedef could not make it ({(p.stderr if p else err).strip()[-200:]}; "
                        f"Debian's locales package)")
        try:
            os.rename(part, made)
        except OSError:  # (another test process made it meanwhile)
            shutil.rmtree(part, ignore_errors=True)
    return {"LOCPATH": folder}


def expect(target, *a, **kw):
    """Playwright's ``expect`` for a Playwright locator or page; the same checks for a WebKit one."""
    if isinstance(target, (Locator, Page)):
        return _Expect(target if isinstance(target, Locator) else target.locator(":root"))
    from playwright.sync_api import expect as pw_expect

    return pw_expect(target, *a, **kw)


# -- in the page: the locator's elements, and a poll until a check holds ------------------------------------------
# A locator is a list of steps: ["css", selector] (descendants of every element so far), ["text", s] (those whose
# text contains s: case and white space aside, as Playwright's has_text), ["nth", i] (one of them; -1 the last).
_RESOLVE = r"""
const __norm = s => (s || "").replace(/\s+/g, " ").trim();
const __els = steps => {
  let els = [document];
  for (const [k, v] of steps) {
    if (k === "css") { const out = []; for (const e of els) for (const f of e.querySelectorAll(v)) if (!out.includes(f)) out.push(f); els = out; }
    else if (k === "text") els = els.filter(e => __norm(e.textContent).toLowerCase().includes(__norm(v).toLowerCase()));
    else if (k === "nth") els = v < 0 ? els.slice(els.length + v, els.length + v + 1) : els.slice(v, v + 1);
  }
  return els;
};
const __shown = e => { if (!e || !e.getBoundingClientRect) return false; const r = e.getBoundingClientRect();
  if (!(r.width > 0 && r.height > 0)) { if (getComputedStyle(e).display !== "contents") return false;
    return Array.from(e.children).some(__shown); }
  return getComputedStyle(e).visibility !== "hidden"; };
const __re = v => v && v.re !== undefined ? new RegExp(v.re, v.flags) : null;
const __match = (got, want, contains) => { const r = __re(want); if (r) return r.test(got);
  return contains ? got.includes(__norm(want)) : got === __norm(want); };
"""

# poll(steps, check, want, timeout_ms): until check(els) holds; answers [true, what] or [false, what it saw]
_POLL = _RESOLVE + r"""
const [steps, check, want, ms] = arguments, done = arguments[arguments.length - 1], t0 = Date.now();
const first = els => els[0];
const checks = {
  text: els => { const e = first(els); const got = e ? __norm(e.textContent) : null; return [e && __match(got, want, false), got]; },
  contains: els => { const e = first(els); const got = e ? __norm(e.textContent) : null; return [e && __match(got, want, true), got]; },
  count: els => [els.length === want, els.length],
  visible: els => [__shown(first(els)), els.length ? "hidden" : "no element"],
  hidden: els => [!__shown(first(els)), "shown"],
  attached: els => [els.length > 0, "no element"],
  value: els => { const e = first(els); return [e && e.value === want, e ? e.value : null]; },
  attribute: els => { const e = first(els); const got = e ? e.getAttribute(want[0]) : null;
    return [e && got !== null && __match(got, want[1], false), got]; },
  class: els => { const e = first(els); const got = e ? e.getAttribute("class") || "" : null; return [e && __match(got, want, false), got]; },
  checked: els => { const e = first(els); return [e && e.checked === true, e ? e.checked : null]; },
  enabled: els => { const e = first(els); return [e && !e.matches(":disabled"), e ? "disabled" : "no element"]; },
  disabled: els => { const e = first(els); return [e && e.matches(":disabled"), e ? "enabled" : "no element"]; },
  // a tap's target: shown, enabled, and still (where it was at the poll before, as Playwright waits for an
  // element to be stable): it answers with the element itself
  tappable: els => { const e = first(els); if (!e) return [false, "no element"];
    if (!__shown(e) || e.matches(":disabled")) { delete e.__at; return [false, "hidden or disabled"]; }
    const r = e.getBoundingClientRect(), at = [r.x, r.y, r.width, r.height].join();
    if (e.__at !== at) { e.__at = at; return [false, "moving"]; }
    delete e.__at; return [e, null]; },
};
const [name, negate] = check;
(function poll() {
  let r;
  try { r = checks[name](__els(steps)); } catch (e) { r = [false, String(e)]; }
  const ok = negate ? !r[0] : !!r[0];
  if (ok) return done([true, negate ? null : r[0]]);
  if (Date.now() - t0 > ms) return done([false, r[1]]);
  setTimeout(poll, 10);
})();
"""

# evaluate: an expression, or a function called with the argument; a promise awaited
_EVAL = r"""
const done = arguments[arguments.length - 1], arg = arguments[0];
try {
  let v = (__SRC__);
  if (typeof v === "function") v = v(arg);
  Promise.resolve(v).then(r => done([true, r === undefined ? null : r]), e => done([false, String(e && e.stack || e)]));
} catch (e) { done([false, String(e && e.stack || e)]); }
"""

# the page's script errors, caught from the end of its load
_ERRORS = r"""
if (!window.__wkErrors) {
  window.__wkErrors = [];
  window.addEventListener("error", e => window.__wkErrors.push(String(e.message || e)));
  window.addEventListener("unhandledrejection", e => window.__wkErrors.push("unhandled rejection: " + String(e.reason)));
}
return window.__wkErrors.splice(0);
"""


def _want(v):
    if isinstance(v, re.Pattern):
        return {"re": v.pattern, "flags": "i" if v.flags & re.IGNORECASE else ""}
    return v


class WebKitError(AssertionError):
    pass


class _Expect:
    def __init__(self, loc: "Locator", negate: bool = False):
        self.loc, self.negate = loc, negate

    def __getattr__(self, name):
        if name.startswith("not_to_"):
            return getattr(_Expect(self.loc, not self.negate), "to_" + name[len("not_to_"):])
        raise AttributeError(name)

    def _check(self, name, want=None, timeout=None):
        ok, saw = self.loc.page._poll(self.loc.steps, name, want, timeout, self.negate)
        if not ok:
            raise WebKitError(f"{self.loc}: {'not ' if self.negate else ''}{name} {want!r}, saw {saw!r} (WebKit)")

    def to_have_text(self, want, timeout=None):
        self._check("text", _want(want), timeout)

    def to_contain_text(self, want, timeout=None):
        self._check("contains", _want(want), timeout)

    def to_have_count(self, n, timeout=None):
        self._check("count", n, timeout)

    def to_be_visible(self, timeout=None):
        self._check("visible", None, timeout)

    def to_be_hidden(self, timeout=None):
        self._check("hidden", None, timeout)

    def to_have_value(self, v, timeout=None):
        self._check("value", v, timeout)

    def to_have_attribute(self, name, v, timeout=None):
        self._check("attribute", [name, _want(v)], timeout)

    def to_have_class(self, v, timeout=None):
        self._check("class", _want(v), timeout)

    def to_be_checked(self, timeout=None):
        self._check("checked", None, timeout)

    def to_be_enabled(self, timeout=None):
        self._check("enabled", None, timeout)

    def to_be_disabled(self, timeout=None):
        self._check("disabled", None, timeout)


class Locator:
    def __init__(self, page: "Page", steps: list):
        self.page, self.steps = page, steps

    def __repr__(self):
        return "locator(" + " ".join(f"{k}={v!r}" for k, v in self.steps) + ")"

    def locator(self, css: str, has_text: str | None = None) -> "Locator":
        return Locator(self.page, self.steps + [["css", css]] + ([["text", has_text]] if has_text else []))

    def filter(self, has_text: str) -> "Locator":
        return Locator(self.page, self.steps + [["text", has_text]])

    def nth(self, i: int) -> "Locator":
        return Locator(self.page, self.steps + [["nth", i]])

    @property
    def first(self):
        return self.nth(0)

    @property
    def last(self):
        return self.nth(-1)

    def _run(self, body: str, *args):
        """``body`` a function of the locator's elements (and ``args``), run in the page."""
        return self.page._script(_RESOLVE + f"return ({body})(__els(arguments[0]), ...arguments[1]);", self.steps,
                                 list(args))

    def _element(self):
        """The WebElement to tap: the first of the locator's, once it is shown and enabled."""
        ok, el = self.page._poll(self.steps, "tappable", None, None, False)
        if not ok:
            raise WebKitError(f"{self}: nothing to tap ({el}) (WebKit)")
        return el

    def count(self) -> int:
        return self._run("els => els.length")

    def is_visible(self) -> bool:
        return self._run("els => __shown(els[0])")

    def get_attribute(self, name: str):
        self.page._poll(self.steps, "attached", None, None, False)
        return self._run("(els, n) => els[0] ? els[0].getAttribute(n) : null", name)

    def inner_text(self) -> str:
        self.page._poll(self.steps, "attached", None, None, False)
        return self._run("els => els[0].innerText")

    def evaluate_all(self, fn: str):
        return self._run(f"els => ({fn})(els)")

    def evaluate(self, fn: str, arg=None):
        self.page._poll(self.steps, "attached", None, None, False)
        return self._run(f"(els, a) => ({fn})(els[0], a)", arg)

    def bounding_box(self):
        return self._run("els => { if (!els[0]) return null; const r = els[0].getBoundingClientRect();"
                         " return {x: r.x, y: r.y, width: r.width, height: r.height}; }")

    def scroll_into_view_if_needed(self):
        self.page._poll(self.steps, "attached", None, None, False)
        self._run("els => els[0].scrollIntoView({block: 'center'})")

    def _on_element(self, act):
        """``act(element)`` on the locator's element, found again where the page drew it anew between the
        finding and the act (a stale element), as Playwright resolves its locator at each try."""
        from selenium.common.exceptions import StaleElementReferenceException

        for _ in range(STALE_TRIES - 1):
            try:
                return act(self._element())
            except StaleElementReferenceException:
                continue
        return act(self._element())

    def click(self):
        self._on_element(self.page._tap)

    def fill(self, value: str):
        def fill(el):
            el.clear()
            if value:
                el.send_keys(value)
        self._on_element(fill)

    def press_sequentially(self, text: str):
        self._on_element(lambda el: el.send_keys(text))

    def press(self, key: str):
        from selenium.webdriver.common.keys import Keys

        key = {"Escape": Keys.ESCAPE, "Enter": Keys.ENTER, "Tab": Keys.TAB}.get(key, key)
        self._on_element(lambda el: el.send_keys(key))

    def select_option(self, value: str):
        """The option whose value (else whose label) is ``value`` chosen, as Playwright does it: set, then the
        page told (input, change)."""
        self.page._poll(self.steps, "attached", None, None, False)
        ok = self._run("""(els, v) => { const s = els[0]; const o = Array.from(s.options).find(o => o.value === v)
              || Array.from(s.options).find(o => o.label.trim() === v); if (!o) return false;
            s.value = o.value; s.dispatchEvent(new Event("input", {bubbles: true}));
            s.dispatchEvent(new Event("change", {bubbles: true})); return true; }""", value)
        if not ok:
            raise WebKitError(f"{self}: no option {value!r} (WebKit)")

    def set_checked(self, on: bool):
        def check(el):
            if bool(el.is_selected()) != bool(on):
                self.page._tap(el)
        self._on_element(check)

    def check(self):
        self.set_checked(True)

    def screenshot(self, path: str):
        self._on_element(lambda el: el.screenshot(path))


class _Response:
    def __init__(self, status, body):
        self.status, self._body = status, body

    @property
    def ok(self):
        return 200 <= self.status < 300

    def text(self):
        return self._body

    def json(self):
        return json.loads(self._body)


class _Request:
    """``page.request``: a fetch from the page (its cookies, its origin)."""

    def __init__(self, page: "Page"):
        self.page = page

    def fetch(self, url, method="GET", data=None, headers=None):
        h = {k: v for k, v in (headers or {}).items() if k.lower() != "origin"}  # (the page's own origin)
        body = None
        if data is not None:
            body = json.dumps(data)
            h.setdefault("Content-Type", "application/json")
        status, text = self.page.evaluate("""([u, m, h, b]) => fetch(u, {method: m, headers: h, body: b,
            credentials: "same-origin"}).then(async r => [r.status, await r.text()])""", [url, method, h, body])
        return _Response(status, text)

    def get(self, url, **kw):
        return self.fetch(url, "GET", **kw)

    def post(self, url, data=None, headers=None):
        return self.fetch(url, "POST", data, headers)


class _Dialog:
    def __init__(self, alert):
        self.alert = alert
        self.message = alert.text

    def accept(self):
        self.alert.accept()

    def dismiss(self):
        self.alert.dismiss()


class Page:
    """One WebKit window: a device's page."""

    def __init__(self, context: "Context", handle: str):
        self.context, self.handle = context, handle
        self._dialog = None
        self._errors: list[str] = []
        self.request = _Request(self)

    @property
    def driver(self):
        d = self.context.driver
        if self.context.current != self.handle:
            d.switch_to.window(self.handle)
            self.context.current = self.handle
        return d

    # -- the page's script errors ------------------------------------------------------------------------------
    @property
    def errors(self) -> list[str]:
        self._collect()
        return self._errors

    @errors.setter
    def errors(self, v):
        self._errors = list(v)

    def _collect(self):
        try:
            self._errors += self.driver.execute_script(_ERRORS) or []
        except Exception:  # (a page between two loads)
            pass

    def on(self, event: str, fn):
        if event != "pageerror":
            raise NotImplementedError(f"WebKit's page: no {event!r} events")
        # its errors are read from the page (errors), not told: nothing to register

    def once(self, event: str, fn):
        if event != "dialog":
            raise NotImplementedError(f"WebKit's page: no {event!r} events")
        self._dialog = fn

    # -- in the page ---------------------------------------------------------------------------------------------
    def _script(self, body: str, *args):
        return self.driver.execute_script(body, *args)

    def _poll(self, steps, name, want, timeout, negate):
        """One script that polls in the page until the check holds; again on the next page where the page
        it ran in is left meanwhile (a tap that navigates)."""
        from selenium.common.exceptions import WebDriverException

        ms = TIMEOUT_MS if timeout is None else timeout
        self.driver.set_script_timeout(ms / 1000 + 10)
        t0 = time.monotonic()
        while True:
            left = max(0, ms - (time.monotonic() - t0) * 1000)
            try:
                return self.driver.execute_async_script(_POLL, steps, [name, negate], want, left)
            except WebDriverException as e:
                if "unload" not in str(e.msg) or not left:
                    raise
                time.sleep(0.02)

    def evaluate(self, src: str, arg=None):
        ok, v = self.driver.execute_async_script(_EVAL.replace("__SRC__", src), arg)
        if not ok:
            raise WebKitError(f"evaluate: {v} (WebKit)")
        return v

    def eval_on_selector_all(self, css: str, fn: str):
        return self.locator(css).evaluate_all(fn)

    def wait_for_function(self, src: str, arg=None, polling=None, timeout=None):
        ms = TIMEOUT_MS if timeout is None else timeout
        fn = src if re.match(r"\s*(\(|function\b|[A-Za-z_$][\w$]*\s*=>)", src) else f"() => ({src})"
        return self.evaluate(f"""([a, ms]) => new Promise((resolve, reject) => {{
          const f = ({fn}), t0 = Date.now();
          (function check() {{ let r = null; try {{ r = f(a); }} catch (e) {{ r = null; }}
            if (r) return resolve(r);
            if (Date.now() - t0 > ms) return reject(new Error("not so after " + ms + " ms: " + f));
            setTimeout(check, 10); }})(); }})""", [arg, ms])

    def wait_for_timeout(self, ms):
        time.sleep(ms / 1000)

    def inner_text(self, css: str) -> str:
        return self.locator(css).inner_text()

    def wait_for_selector(self, css: str, state: str = "visible", timeout=None):
        ok, saw = self._poll([["css", css]], {"visible": "visible", "attached": "attached", "hidden": "hidden"}[state],
                             None, timeout, False)
        if not ok:
            raise WebKitError(f"{css}: not {state}, {saw} (WebKit)")

    # -- navigation ----------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.driver.current_url

    def goto(self, url: str, wait_until=None):
        self._collect()
        self.driver.get(urljoin(self.context.base_url + "/", url))
        self._collect()  # (and from here on its errors are caught)

    def reload(self):
        self._collect()
        self.driver.refresh()
        self._collect()

    def wait_for_url(self, pattern, timeout=None):
        if callable(pattern):
            test = pattern
        else:
            rx = re.compile("^" + "".join(".*" if p == "**" else "[^/]*" if p == "*" else re.escape(p)
                                          for p in re.split(r"(\*\*|\*)", pattern)) + "$")
            test = lambda u: rx.match(u)  # noqa: E731
        t0 = time.monotonic()
        while not test(self.driver.current_url):
            if time.monotonic() - t0 > (timeout or TIMEOUT_MS) / 1000:
                raise WebKitError(f"the address is {self.driver.current_url}, not {pattern!r} (WebKit)")
            time.sleep(0.02)
        self._collect()

    # -- taps ----------------------------------------------------------------------------------------------------
    def locator(self, css: str, has_text: str | None = None) -> Locator:
        return Locator(self, [["css", css]] + ([["text", has_text]] if has_text else []))

    def _tap(self, el, steps=None):
        """A WebDriver click on the element (where another element would take it, such as a toast passing over
        it, again until it would not, as Playwright does); a ``confirm`` it opens answered by the
        ``once("dialog")``."""
        from selenium.common.exceptions import ElementClickInterceptedException

        t0 = time.monotonic()
        while True:
            try:
                el.click()
                break
            except ElementClickInterceptedException:
                if time.monotonic() - t0 > TIMEOUT_MS / 1000:
                    over = self.driver.execute_script("""const e = arguments[0], r = e.getBoundingClientRect();
                        const o = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                        return [Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height), innerWidth,
                                innerHeight, o ? o.outerHTML.slice(0, 200) : null];""", el)
                    raise WebKitError(f"the tap on {el.get_attribute('outerHTML')[:120]} lands on another element: "
                                      f"{over} (WebKit)")
                # (WebDriver scrolls it in at the screen's edge, under a bar that stays there: as Playwright
                # does then, the element brought to the middle, and tapped again)
                self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
                time.sleep(0.05)
        if self._dialog is not None:
            fn, self._dialog = self._dialog, None
            from selenium.webdriver.support import expected_conditions as EC
            from selenium.webdriver.support.ui import WebDriverWait

            WebDriverWait(self.driver, TIMEOUT_MS / 1000, poll_frequency=0.02).until(EC.alert_is_present())
            fn(_Dialog(self.driver.switch_to.alert))

    def click(self, css: str):
        self.locator(css).click()

    def fill(self, css: str, value: str):
        self.locator(css).fill(value)

    def select_option(self, css: str, value: str):
        self.locator(css).select_option(value)

    def check(self, css: str):
        self.locator(css).check()

    def is_visible(self, css: str) -> bool:
        return self.locator(css).is_visible()

    # -- the screen ----------------------------------------------------------------------------------------------
    @property
    def viewport_size(self):
        w, h = self.driver.execute_script("return [innerWidth, innerHeight]")
        return {"width": w, "height": h}

    def screenshot(self, path: str, full_page: bool = False):
        if full_page:
            try:
                from selenium.webdriver.common.by import By

                self.driver.find_element(By.CSS_SELECTOR, "html").screenshot(path)
                return
            except Exception:  # (a page taller than the engine draws at once: its screen)
                pass
        self.driver.save_screenshot(path)

    def close(self):
        pass


class Context:
    """A device: one WebKitGTK session (its own cookies), its pages the session's windows."""

    def __init__(self, browser: "WebKitBrowser", driver, base_url: str, viewport: dict):
        self.browser, self.driver, self.base_url = browser, driver, (base_url or "").rstrip("/")
        self.viewport = viewport
        self.pages: list[Page] = []
        self.current = driver.current_window_handle
        self._first = True

    def set_default_timeout(self, ms):
        pass  # (every wait here gives up after TIMEOUT_MS)

    def new_page(self) -> Page:
        if self._first:
            handle = self.current
            self._first = False
        else:
            self.driver.switch_to.new_window("window")
            handle = self.current = self.driver.current_window_handle
        self.browser.size(self.driver, self.viewport)
        p = Page(self, handle)
        self.pages.append(p)
        return p

    def close(self):
        if self in self.browser.contexts:
            self.browser.contexts.remove(self)
        self.browser.give_back(self)


class WebKitBrowser:
    """WebKitGTK's devices of one test process: one Xvfb display, each device a WebKitWebDriver session, kept
    and reused (its cookies and storage cleared) when a test closes it: a session costs about a second to open."""

    def __init__(self):
        self.xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1920x1200x24"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.display = ":" + self.xvfb.stdout.readline().strip()
        self.idle: dict[str, list] = {}
        self.contexts: list[Context] = []
        self.opened = 0

    def _driver(self, locale: str):
        from selenium import webdriver

        pool = self.idle.setdefault(locale, [])
        if pool:
            return pool.pop()
        lang = locale.replace("-", "_")
        env = dict(os.environ, DISPLAY=self.display, LANGUAGE=f"{lang}:{lang.split('_')[0]}", LANG=f"{lang}.UTF-8",
                   **locale_env(locale))
        env.pop("WAYLAND_DISPLAY", None)
        service = webdriver.WebKitGTKService(executable_path=shutil.which("WebKitWebDriver"), env=env)
        d = webdriver.WebKitGTK(options=webdriver.WebKitGTKOptions(), service=service)
        d._locale = locale
        self.opened += 1
        return d

    def size(self, d, viewport: dict):
        """The window made so that the page's own area is ``viewport`` (or as near as MiniBrowser allows)."""
        want = (viewport or {"width": 1280, "height": 720})
        d.set_window_size(want["width"], want["height"] + 60)
        w, h = d.execute_script("return [innerWidth, innerHeight]")
        if h != want["height"]:
            size = d.get_window_size()
            d.set_window_size(size["width"], size["height"] + want["height"] - h)

    def new_context(self, base_url: str = "", locale: str = "en-GB", viewport: dict | None = None, **kw) -> Context:
        for k in kw:
            if k not in ("user_agent",):
                raise NotImplementedError(f"WebKit's device: no {k!r}")
        ctx = Context(self, self._driver(locale), base_url, viewport or {"width": 1280, "height": 720})
        self.contexts.append(ctx)
        return ctx

    def give_back(self, ctx: Context):
        d = ctx.driver
        try:
            for h in d.window_handles[1:]:
                d.switch_to.window(h)
                d.close()
            d.switch_to.window(d.window_handles[0])
            if d.current_url.startswith("http"):
                d.execute_script("try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}")
                d.delete_all_cookies()
            d.get("about:blank")
            self.idle.setdefault(d._locale, []).append(d)
        except Exception:
            try:
                d.quit()
            except Exception:
                pass

    def close(self):
        for ctx in list(self.contexts):
            ctx.close()
        for pool in self.idle.values():
            for d in pool:
                try:
                    d.quit()
                except Exception:
                    pass
        self.idle = {}
        self.xvfb.terminate()
        self.xvfb.wait(timeout=10)
