"""The kit of the evening tests (tests/evening/): a tournament evening played as people play it, through
the organiser's pages and the seated phones, against the real server, in headless Chromium.

One server per module (:class:`EveningServer`: ``companion serve`` with its test hooks, a seeded random
source and a clock the test moves forward, so a 2-minute round is over without waiting), one Chromium
per test process; the organiser's phone, every player's phone and the TVs are contexts of it.

:class:`Evening` is the organiser with the players' phones:

- ``ev.add_roster(names)`` on the roster page, ``ev.new_tournament(...)`` on the tournaments page (players
  picked from the roster by type-ahead), ``ev.seat(n)``, ``ev.cards(n)`` (the printed table cards: each
  table's match and the address of its QR code), ``ev.start(n)``, ``ev.sit(table)`` (each player's phone
  scans its table's card and answers "Who are you?"), ``ev.tv(table)`` (a TV page beside the table);
- ``ev.standings()`` the standings as the tournament page shows them, ``check_standings`` against the
  places the phones showed.

A :class:`Table` is one table of a round: its players, its match, each player's phone (``table[name]``)
and ``table.act(name, selector)`` (a tap on that phone, waiting until the write is answered).

The text a person reads is checked in words (the pages' catalogues ``EN``/``IT``); numbers come from the
engines (``companion/games/``) or from the rules stated in docs/, never from the page itself.

Where an evening meets a known fault that another change fixes, the assertion is written and switched
by a flag of :data:`KNOWN` (``KNOWN["name"] = True`` once fixed): each names what it checks.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.engines import expect

from tests.web.serverproc import REPO, Server

EN = json.loads((REPO / "web/static/i18n/en.json").read_text(encoding="utf-8"))
IT = json.loads((REPO / "web/static/i18n/it.json").read_text(encoding="utf-8"))
CATALOGUES = {"en-GB": EN, "it-IT": IT}

PIN = "482193"
PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}
SEED = 20261212

# Faults of the evening that other changes fix: the assertion is in the evening, on once the fix lands.
KNOWN = {
    # the TV's end screen (the ranking and the winner) appears live, on the event that ends the match
    "tv_end_live": {"conquest-italy": True, "richelieu": True, "web-of-power": True, "rome-is-burning": True},
}


def text(cat: dict, key: str, **values) -> str:
    """A catalogue sentence with its values, as the pages' ``Companion.t`` puts them."""
    s = cat[key]
    for k, v in values.items():
        s = s.replace("{" + k + "}", str(v))
    return s


class EveningServer(Server):
    """The real server with the test hooks of ``companion serve``: ``COMPANION_TEST_SEED`` (the Pi's deals,
    dice and seating are the same on every run) and ``COMPANION_TEST_CLOCK_FILE`` (:meth:`advance` moves the
    server's clock forward)."""

    def __init__(self, tmp: Path, seed: int = SEED):
        from tests.dicekit import MockDice

        self.skew_file = tmp / "clock-skew"
        self.skew_file.write_text("0", encoding="ascii")
        self.skew = 0.0
        # the box's dice radio replays what the evening's MockDice write (docs/dice.md): no table has dice
        # until the organiser binds a set to it
        dice_file = tmp / "dice.jsonl"
        super().__init__(tmp / "data", {"COMPANION_TEST_SEED": str(seed),
                                        "COMPANION_TEST_CLOCK_FILE": str(self.skew_file),
                                        "COMPANION_CHECKPOINT_SECONDS": "1",
                                        "COMPANION_DICE_MOCK": str(dice_file)}, args=["--dice", "mock"])
        self.dice = MockDice(dice_file)

    def advance(self, seconds: float) -> None:
        """The server's clock jumps ``seconds`` forward (its clock runner notices within a second)."""
        self.skew += seconds
        self.skew_file.write_text(repr(self.skew), encoding="ascii")


def _watch(page):
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    return page


def seq(page) -> int:
    return page.evaluate("window.companionMatch ? window.companionMatch.seq : -1")


# Until the page's match shows event ``n`` and its own write is answered: checked in the page every 10 ms (a
# timer, not every frame: a frame on each of a table's pages costs the machine more than the check), in the
# one call that also answers (the seq shown, or the view with ``view``), failing after the pages' timeout.
# With ``sels``: the texts a person reads there once it does (textContent, its white space collapsed).
_SYNC = """([n, view, ms, sels]) => new Promise((resolve, reject) => {
  const t0 = Date.now();
  (function check() {
    const c = window.companionMatch;
    if (c && c.view && c.seq >= n && !c.busy) {
      if (sels) return resolve([c.seq, sels.map(s => {
        const v = s.startsWith("value:"), e = document.querySelector(v ? s.slice(6) : s);
        return !e ? null : v ? e.value : e.textContent.replace(/\\s+/g, " ").trim();
      })]);
      return resolve(view ? c.view : c.seq);
    }
    if (Date.now() - t0 > ms) return reject(new Error("the page shows event " + (c ? c.seq : "none") + ", not " + n + ", after " + ms + " ms"));
    setTimeout(check, 10);
  })();
})"""
TIMEOUT_MS = 15_000


# Until ``fn(arg)`` (a page function) answers something true, checked every 10 ms: its answer, in one call.
_UNTIL = """([arg, ms]) => new Promise((resolve, reject) => {
  const f = (FN), t0 = Date.now();
  (function check() {
    let r = null;
    try { r = f(arg); } catch (e) { r = null; }
    if (r) return resolve(r);
    if (Date.now() - t0 > ms) return reject(new Error("not so after " + ms + " ms: " + f));
    setTimeout(check, 10);
  })();
})"""
_SEATED = """s => { const m = window.companionMatch.match, mine = document.getElementById("my-seat");
  return m && m.seat === s && !mine.hidden && mine.textContent; }"""


def until(page, fn: str, arg=None):
    """What the page function ``fn(arg)`` answers once it answers something true (within the timeout)."""
    return page.evaluate(_UNTIL.replace("(FN)", "(" + fn + ")"), [arg, TIMEOUT_MS])


def wait_seq(page, n: int) -> int:
    """Until the page shows event ``n`` and its own write is answered (one write at a time): the seq shown."""
    return page.evaluate(_SYNC, [n, False, TIMEOUT_MS, None])


def shown_at(page, n: int, *selectors: str) -> tuple[int, list[str | None]]:
    """:func:`texts_at` with the seq the page shows (a tap that follows writes the event after it)."""
    seq_, texts = page.evaluate(_SYNC, [n, False, TIMEOUT_MS, list(selectors)])
    return seq_, texts


def texts_at(page, n: int, *selectors: str) -> list[str | None]:
    """Once the page shows event ``n`` (and its own write is answered): the text of each selector as the
    person reads it then (None: not on the page; ``"value:<selector>"``: the value of a field or a list).
    What the page draws from that event is drawn by then: one call, where a wait and an ``expect`` per line
    were two or more."""
    return page.evaluate(_SYNC, [n, False, TIMEOUT_MS, list(selectors)])[1]


def view_at(page, n: int) -> dict:
    """The match as ``page`` holds it once it shows event ``n`` (one call: the wait and the read)."""
    return page.evaluate(_SYNC, [n, True, TIMEOUT_MS, None])


def act(page, selector: str, confirm: bool | None = None, n: int | None = None) -> int:
    """A tap that writes one event: wait until it is stored and shown on that phone; the seq it shows.
    ``confirm``: the tap asks first (a browser dialog) and the person says yes (True) or no (False: nothing
    is written). ``n``: the seq the page shows now, when the caller knows it (one call less)."""
    n = seq(page) if n is None else n
    if confirm is not None:
        page.once("dialog", lambda d: d.accept() if confirm else d.dismiss())
    page.click(selector)
    if confirm is False:
        return n
    return wait_seq(page, n + 1)


class Table:
    """One table of a round: ``number`` (1, 2, ...), ``players`` in seat order, ``match_id``, ``url``
    (its card's QR code), the players' phones (``table[name]``) once seated."""

    def __init__(self, ev: "Evening", round_: int, number: int, players: list[str], match_id: str | None = None,
                 url: str | None = None):
        self.ev, self.round, self.number, self.players = ev, round_, number, list(players)
        self.match_id, self.url = match_id, url
        self.seq = 0  # the table's last event as a tap of the evening saw it
        self.tv = None
        self.tv_cat = EN

    def __getitem__(self, name: str):
        return self.ev.phones[name]

    def __repr__(self):
        return f"Table(round {self.round}, table {self.number}: {', '.join(self.players)})"

    @property
    def label(self) -> str:
        """The match's label as the box made it, in the organiser's language ("Round 1 · Table 2")."""
        return text(self.ev.cat, "tday.match_label", round=self.round, table=self.number)

    def act(self, name: str, selector: str, confirm: bool | None = None, n: int | None = None) -> int:
        """A tap on ``name``'s phone that writes an event; returns once it is stored and that phone shows it
        (the table's other phones are checked where a person would look at them: :meth:`sync`,
        :meth:`wait_all`, :meth:`view`)."""
        n = act(self[name], selector, confirm, n)
        self.seq = max(self.seq, n)
        return n

    def act_view(self, name: str, selector: str, n: int | None = None) -> dict:
        """:meth:`act`, answered with the match as that phone then holds it (in the same call as the wait)."""
        page = self[name]
        n = seq(page) if n is None else n
        page.click(selector)
        v = view_at(page, n + 1)
        self.seq = max(self.seq, v["seq"])
        return v

    def sync(self, name: str) -> int:
        """Until ``name``'s phone shows the table's last event (before a tap on it)."""
        return wait_seq(self[name], self.seq)

    def pages(self):
        return [self[p] for p in self.players] + ([self.tv] if self.tv is not None else [])

    def wait_all(self, n: int | None = None) -> int:
        """Every phone of the table (and its TV) shows event ``n`` (default: the table's last)."""
        n = self.seq if n is None else n
        for p in self.players:
            wait_seq(self[p], n)
        if self.tv is not None:
            self.tv.wait_for_function("n => window.companionMatch && window.companionMatch.seq >= n", arg=n, polling=10)
        self.seq = max(self.seq, n)
        return n

    def view(self, name: str | None = None) -> dict:
        """The match as a seated phone's page holds it (the first phone's unless ``name``), once it shows
        the table's last event."""
        v = view_at(self[name or self.players[0]], self.seq)
        self.seq = max(self.seq, v["seq"])
        return v


class Evening:
    """An organiser with a phone (390x844) and the players' phones, on one server and one browser."""

    def __init__(self, browser, server, locale: str = "en-GB", artifacts: Path | None = None):
        self.browser, self.server, self.locale = browser, server, locale
        self.cat = CATALOGUES[locale]
        self.artifacts = artifacts
        self.contexts = []
        self.phones: dict = {}
        self.tid: str | None = None
        self.rounds: dict[int, list[Table]] = {}
        self.laps: list[tuple[str, float]] = []
        self._t0 = time.monotonic()
        self.org = self._organiser()
        self.lap("organiser signed in")

    def lap(self, what: str) -> None:
        """Mark the end of a step: ``pytest -s`` prints how long each took (where an evening's time goes)."""
        now = time.monotonic()
        self.laps.append((what, now - self._t0))
        self._t0 = now
        print(f"  {self.laps[-1][1]:6.2f} s  {what}")

    # -- devices ------------------------------------------------------------------------------------------
    def context(self, viewport=PHONE, locale: str | None = None, **kw):
        ctx = self.browser.new_context(base_url=self.server.url, locale=locale or self.locale, viewport=viewport, **kw)
        ctx.set_default_timeout(15_000)
        self.contexts.append(ctx)
        return ctx

    def _organiser(self):
        org = _watch(self.context().new_page())
        org.goto("/login")
        if org.locator("#setup-form").is_visible():  # the box's first sign-in: the PIN chosen with the setup code
            org.fill("#setup-code", self.server.setup_code)
            org.fill("#new-pin", PIN)
            org.click("#setup-form button[type=submit]")
        else:
            org.fill("#pin", PIN)
            org.click("#login-form button[type=submit]")
        org.wait_for_url(lambda url: "/login" not in url)
        return org

    def phone(self, name: str, locale: str | None = None):
        """The player's own phone (made on first use, kept for the evening)."""
        if name not in self.phones:
            self.phones[name] = _watch(self.context(locale=locale).new_page())
        return self.phones[name]

    def close(self):
        for ctx in self.contexts:
            ctx.close()
        self.contexts = []

    def shot(self, page, name: str, **kw):
        if self.artifacts is not None:
            page.screenshot(path=str(self.artifacts / f"evening-{name}.png"), **kw)

    def errors(self) -> list[str]:
        """Script errors on any page of the evening."""
        pages = [self.org, *self.phones.values()] + [t.tv for r in self.rounds.values() for t in r if t.tv]
        return [e for p in pages for e in p.errors]

    # -- the roster and the tournament ------------------------------------------------------------------------
    def add_roster(self, names: list[str]) -> None:
        """The club's players put on the roster from the roster page, one after the other: the list stays
        on screen and shows each new name."""
        org = self.org
        org.goto("/players")
        for name in names:
            org.fill("#add-name", name)
            org.click("#add-player-btn")
            expect(org.locator("#roster li", has_text=name)).to_have_count(1)
            expect(org.locator("#add-name")).to_have_value("")

    def new_tournament(self, name: str, game: str, players: list[str], table_size: int = 3, rounds: int = 2,
                       clock_minutes: int | None = None) -> str:
        """A tournament made on the tournaments page, its players picked from the roster by type-ahead
        (three letters and a tap each). Returns its id; the page is the tournament's."""
        org = self.org
        org.goto("/tournaments")
        org.fill("#tday-new [name=name]", name)
        org.select_option("#tday-new [name=game]", game)
        org.fill("#tday-new [name=table_size]", str(table_size))
        org.fill("#tday-new [name=rounds]", str(rounds))
        if clock_minutes is not None:
            org.fill("#tday-new [name=clock_minutes]", str(clock_minutes))
        box = org.locator("#tday-new-player")
        for i, p in enumerate(players):
            box.press_sequentially(p[:3].lower())
            org.locator("#tday-new-suggest button.suggest", has_text=p).first.click()
            expect(org.locator("#tday-new-players li.on-roster")).to_have_count(i + 1)
        org.click("#tday-new button[type=submit]")
        org.wait_for_url("**/tournaments/*")
        self.tid = org.url.rstrip("/").split("/")[-1]
        expect(org.locator("#tday-players li.on-roster")).to_have_count(len(players))
        return self.tid

    def goto_tournament(self):
        if not self.org.url.endswith(f"/tournaments/{self.tid}"):
            self.org.goto(f"/tournaments/{self.tid}")
        expect(self.org.locator("#tday-standings tbody tr").first).to_be_visible()

    def withdraw(self, name: str) -> None:
        """A drop-out between rounds: "Withdraws" beside their name (it asks first)."""
        org = self.org
        self.goto_tournament()
        org.once("dialog", lambda d: d.accept())
        org.locator(f"#tday-players li[data-player='{name}'] .tday-withdraw").click()
        expect(org.locator(".toast").last).to_have_text(text(self.cat, "tday.withdrew", player=name))
        expect(org.locator(f"#tday-players li.tday-withdrawn[data-player='{name}']")).to_have_count(1)

    def register_late(self, name: str) -> None:
        """A late arrival: their name typed in the tournament page's box (seated from the next round)."""
        org = self.org
        self.goto_tournament()
        expect(org.locator("#tday-add-hint")).to_have_text(self.cat["tday.add_hint_late"])
        org.fill("#tday-add [name=player]", name)
        org.click("#tday-add button[type=submit]")
        expect(org.locator(f"#tday-players li[data-player='{name}']")).to_have_count(1)

    def seat(self, n: int) -> list[Table]:
        """"Seat round n": the tables as the page shows them."""
        org = self.org
        self.goto_tournament()
        org.click("#tday-seat")
        rows = org.locator(f".tday-round[data-round='{n}'] .tday-table")
        expect(rows.first).to_be_visible()
        tables = []
        for k in range(rows.count()):
            names = rows.nth(k).locator("li[data-player]").evaluate_all("lis => lis.map(li => li.dataset.player)")
            tables.append(Table(self, n, k + 1, names))
        self.rounds[n] = tables
        return tables

    def sitting_out(self, n: int) -> list[str]:
        """Who sits round ``n`` out, as the tournament page says (nobody: [])."""
        box = self.org.locator(f".tday-round[data-round='{n}'] .tday-sitting-out")
        return box.get_attribute("data-sitting-out").split("|") if box.count() else []

    def start(self, n: int, confirm: bool = True) -> list[Table]:
        """"Start round n" (it asks first): each table gets its match."""
        org = self.org
        self.goto_tournament()
        org.once("dialog", lambda d: d.accept())
        org.click(f"[data-start='{n}']")
        expect(org.locator(".toast").last).to_contain_text(text(self.cat, "tday.started", n=n))
        links = org.locator(f".tday-round[data-round='{n}'] .tday-table a[href$='/display']")
        expect(links).to_have_count(len(self.rounds[n]))
        for t, href in zip(self.rounds[n], links.evaluate_all("as => as.map(a => a.getAttribute('href'))")):
            t.match_id = href.split("/")[2]
        return self.rounds[n]

    def cards(self, n: int) -> list[Table]:
        """The round's table cards, printed from the tournament page: each card names its table, its
        players, and carries the QR code and address a phone scans."""
        org = self.org
        self.goto_tournament()
        org.click(f".tday-round[data-round='{n}'] a[data-cards='{n}']")
        cards = org.locator("#cards .table-card-print")
        expect(cards).to_have_count(len(self.rounds[n]))
        for t in self.rounds[n]:
            card = org.locator(f"#cards .table-card-print[data-match='{t.match_id}']")
            expect(card.locator(".tc-label")).to_have_text(t.label)
            expect(card.locator(".tc-qr svg")).to_be_visible()
            for p in t.players:
                expect(card).to_contain_text(p)
            t.url = card.locator(".tc-url code").inner_text().strip()
        if n == 1:  # (a later round's cards look the same)
            self.shot(org, f"cards-round-{n}", full_page=True)
        return self.rounds[n]

    def sit(self, table: Table) -> None:
        """Each player's phone scans the table's card and answers "Who are you?" with their name."""
        for p in table.players:  # the phones scan at the same time: their pages load side by side
            self.phone(p).goto(table.url, wait_until="commit")
        for p in table.players:
            page = self.phone(p)
            # (the match's page, its tracker mounted: one wait; the address is the match's)
            page.wait_for_selector(f"body[data-match='{table.match_id}'] #game-tracker[data-mounted]", state="attached")
            assert urlsplit(page.url).path == f"/m/{table.match_id}", page.url
            page.click(f"#who-card .who-btn[data-player='{p}']")
            # the phone is that seat's, and says so
            assert until(page, _SEATED, p) == text(self.cat, "seat.you_are", player=p)

    def tv(self, table: Table, locale: str | None = None):
        """A TV (1920x1080) beside the table: its display page (the reveal's steps short)."""
        if table.tv is None:
            table.tv = _watch(self.context(viewport=TV, locale=locale).new_page())
            table.tv_cat = CATALOGUES[locale or self.locale]
        table.tv.goto(f"/m/{table.match_id}/display?reveal=20")
        table.tv.wait_for_function("() => window.companionMatch && window.companionMatch.view")
        return table.tv

    # -- a club night without a tournament: matches made on the new-match page, the tables page ----------------
    def new_match(self, game: str, label: str, players: list[str], clock: bool | None = None) -> Table:
        """A match made on the new-match page (its players typed as on the roster, seat order as given)."""
        org = self.org
        org.goto("/new")
        org.select_option("#game", game)
        org.fill("#label", label)
        rows = org.locator("#players li .player-name")
        for i, p in enumerate(players):
            if i >= rows.count():
                org.click("#add-player")
            rows.nth(i).fill(p)
            rows.nth(i).press("Escape")
        if clock is not None:
            org.locator("#opt-clock").set_checked(clock)
        org.click("#create")
        try:
            org.wait_for_url("**/m/*")
        except Exception as e:  # (what the page said: its error box, the button)
            said = org.evaluate("""() => { const b = document.getElementById("form-error");
                return [b && !b.hidden ? b.textContent : null, document.getElementById("create").disabled]; }""")
            raise AssertionError(f"the new match was not made: the page says {said[0]!r}, "
                                 f"its button {'waits for the box' if said[1] else 'was not taken'}") from e
        mid = org.url.rstrip("/").split("/")[-1]
        expect(org.locator("#match-label")).to_have_text(label)
        table = Table(self, 0, len(self.rounds.get(0, [])) + 1, players, mid)
        self.rounds.setdefault(0, []).append(table)
        return table

    def room_cards(self) -> list[Table]:
        """The tables page's "Print every table's card": each open table's card and its QR code's address."""
        org = self.org
        org.goto("/tournament")
        org.click("#print-cards")
        for t in self.rounds.get(0, []):
            card = org.locator(f"#cards .table-card-print[data-match='{t.match_id}']")
            expect(card.locator(".tc-qr svg")).to_be_visible()
            t.url = card.locator(".tc-url code").inner_text().strip()
        return self.rounds.get(0, [])

    # -- standings ------------------------------------------------------------------------------------------
    def standings(self) -> list[dict]:
        """The standings as the tournament page shows them (it follows the tables live)."""
        self.goto_tournament()
        rows = self.org.eval_on_selector_all("#tday-standings tbody tr", """trs => trs.map(tr => {
            const td = Array.from(tr.children).map(c => c.textContent.trim());
            return {rank: td[0], player: tr.dataset.player, name: td[1], points: td[2], game_points: td[3], h2h: td[4],
                    played: td[5], wins: td[6]};
        })""")
        return rows


# -- the club's points (docs/tournament.md, "Standings"): what a place at a table of n is worth -------------
POINTS = {3: [1, 0, -1], 4: [2, 1, -1, -2], 5: [2, 1, 0, -1, -2], 6: [3, 2, 1, -1, -2, -3]}


def place_points(places: list[dict]) -> dict[str, float]:
    """``[{player, place, objective?, eliminated?}]`` of one table -> each player's club points: a shared
    place shares the mean of the places it covers; +1 for the objective, -0.5 for being eliminated."""
    n = len(places)
    table = POINTS[n]
    out = {}
    for r in places:
        shared = [q for q in places if q["place"] == r["place"]]
        covered = table[r["place"] - 1:r["place"] - 1 + len(shared)]
        out[r["player"]] = sum(covered) / len(covered) + (1 if r.get("objective") else 0) - (
            0.5 if r.get("eliminated") else 0)
    return out


def number(s: str) -> float:
    """A number as a page writes it ("1", "-0.5", "−1", "1,5")."""
    return float(s.replace("−", "-").replace(",", ".").replace("+", ""))


def check_standings(ev: Evening, tables_places: list[list[dict]]) -> list[dict]:
    """The tournament page's standings against the places every table ended with: each player's points
    summed over the rounds, the number of matches, the wins, and the order (points first)."""
    expected: dict[str, float] = {}
    played: dict[str, int] = {}
    wins: dict[str, int] = {}
    for places in tables_places:
        for p, v in place_points(places).items():
            expected[p] = expected.get(p, 0) + v
            played[p] = played.get(p, 0) + 1
        for r in places:
            wins[r["player"]] = wins.get(r["player"], 0) + (1 if r["place"] == 1 else 0)
    rows = ev.standings()
    shown = {r["player"]: r for r in rows}
    for p in shown:  # a player who sat every round out so far (a late arrival): no points, no match
        expected.setdefault(p, 0)
        played.setdefault(p, 0)
        wins.setdefault(p, 0)
    assert set(shown) == set(expected), (shown, expected)
    for p, v in expected.items():
        assert abs(number(shown[p]["points"]) - v) < 0.0051, (p, shown[p], v)  # (a third is shown as 0.33)
        assert int(shown[p]["played"]) == played[p], (p, shown[p])
        assert int(shown[p]["wins"]) == wins[p], (p, shown[p])
    pts = [number(r["points"]) for r in rows]
    assert pts == sorted(pts, reverse=True), rows
    return rows


def places_shown(page, selector: str) -> list[dict]:
    """``[{player, place}]`` of a ranking table on a page: rows with ``data-player`` and a ``.trk-place``."""
    return page.eval_on_selector_all(selector, """trs => trs.map(tr => ({player: tr.dataset.player,
        place: parseInt(tr.querySelector('.trk-place').textContent, 10)}))""")


def wait_text(locator, expected: str):
    expect(locator).to_have_text(re.compile(re.escape(expected)))


def tv_end(ev: Evening, table: Table, game: str, places: list[dict]) -> None:
    """The table's TV at the end of its match: the ranking revealed, the winner's name large. Live, on the
    event that ends the match (``KNOWN["tv_end_live"]``; until then, once the TV is reloaded)."""
    tv = table.tv
    if not KNOWN["tv_end_live"][game]:
        tv.reload()
    ranking = tv.locator("#tv-ranking")
    expect(ranking).to_be_visible()
    winners = [r["player"] for r in places if r["place"] == 1]
    expect(tv.locator(".tv-winner-name")).to_have_text(" · ".join(winners))
    for r in places:
        expect(ranking).to_contain_text(r["player"])
    # an ended table: no code to sit at it, the clock (if any) no longer red; the end screen fits the TV
    expect(ranking).to_have_attribute("data-revealed", "1")
    expect(tv.locator("#table-qr")).to_be_hidden()
    expect(tv.locator("body")).not_to_have_class(re.compile(r"\btv-alert\b"))
    tv_fits(table, "end")


def tv_fits(table: Table, what: str) -> None:
    """The table's TV (if one is open) shows everything within its screen: nothing cut, nothing over the
    codes to scan, no text too small to read across the room (tests/browser/tvfit.py)."""
    if table.tv is not None:
        from tests.browser.tvfit import assert_fits

        assert_fits(table.tv, f"table {table.number}: {what}")


def tv_turn(table: Table, player: str) -> None:
    """The table's TV (if one is open) says whose turn it is, in its own language."""
    if table.tv is not None:
        expect(table.tv.locator("#clock-turn")).to_have_text(text(table.tv_cat, "clock.turn", player=player))
