"""``companion serve``: the phone web app on the LAN (uvicorn, pure Python: live streams on its event loop,
the Flask app in a pool of threads; ``companion/web/server.py``)."""

from __future__ import annotations

import os
import sys

from companion.cli import data_dir_arg

WILDCARDS = ("0.0.0.0", "", "::")
TEMPLATES_AFTER_S = 3.0  # the templates compiled this long after the Flask app is built (``make_app``)


def register(sub):
    p = sub.add_parser(
        "serve", help="the phone web app (prints the LAN URL and a QR code of the join link)",
        description="Serve the phone web app. Prints the address on the LAN, the join link for players and its "
                    "QR code, and (at first run) the setup code for choosing the organiser PIN. "
                    "Stop with Ctrl-C. Under systemd (INVOCATION_ID or NOTIFY_SOCKET set) the join link "
                    "and its QR code stay out of the journal: organisers show them at /join.")
    p.add_argument("--host", default="0.0.0.0",
                   help="address or name to listen on (default 0.0.0.0: every interface); a name is also "
                        "accepted in the Host header")
    p.add_argument("--port", type=int, default=8080, help="TCP port (default 8080; 0 picks a free one)")
    data_dir_arg(p)
    p.add_argument("--gpio", choices=["auto", "mock", "off"], default="auto",
                   help="buttons and LEDs: auto (real pins when present, else simulated), mock, off (default auto)")
    p.add_argument("--dice", choices=["auto", "mock", "off"], default=os.environ.get("COMPANION_DICE", "off"),
                   help="smart dice over Bluetooth LE (the optional extra companion[dice]; docs/dice.md): auto "
                        "listens where bleak and a radio are, mock replays $COMPANION_DICE_MOCK, off (the default, "
                        "or $COMPANION_DICE)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another host name phones may use to reach the Pi (repeatable); localhost, the "
                        "Pi's addresses and host names are always allowed")
    p.add_argument("--threads", type=int, default=16,
                   help="worker threads for ordinary requests (default 16); live pages hold no thread")
    p.add_argument("--max-streams-per-address", type=int, default=200, metavar="N",
                   help="open live pages one address may hold (default 200; beyond: 429; the box's own "
                        "screen has no cap)")
    p.add_argument("--max-connections-per-address", type=int, default=None, metavar="N",
                   help="connections one address may hold (default 250, at most an eighth of "
                        "--max-connections; beyond: refused, but for an organiser)")
    p.add_argument("--max-connections", type=int, default=4000, metavar="N",
                   help="connections the server holds in all (default 4000, and at most the open-files "
                        "limit less 100); a new one to a full box sheds one without credentials")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="a connection that has not sent a whole request head this long after it opened "
                        "(or after its last response) is closed (default 10)")
    p.add_argument("--no-qr", action="store_true", help="don't draw the QR code in the terminal")
    p.add_argument("--precompile", action="store_true",
                   help="compile every page's template into the data folder's cache (cache/templates) and exit, "
                        "serving nothing: the next start then compiles none (systemd/install.sh runs it after "
                        "every install or upgrade)")
    p.set_defaults(func=run)


# what ``quick`` reads (``companion.cli.QUICK``): option -> (its name in the arguments, how its value is read)
_CHOICES = ("auto", "mock", "off")
_OPTIONS = {"--host": ("host", str), "--port": ("port", int), "--data-dir": ("data_dir", str),
            "--gpio": ("gpio", _CHOICES), "--dice": ("dice", _CHOICES), "--allow-host": ("allow_host", list),
            "--threads": ("threads", int), "--max-streams-per-address": ("max_streams_per_address", int),
            "--max-connections-per-address": ("max_connections_per_address", int),
            "--max-connections": ("max_connections", int), "--header-timeout": ("header_timeout", float)}


def quick(words: list[str]) -> dict | None:
    """The options above as the parser reads them, without one (``companion.cli.QUICK``: the unit's
    ``--host 0.0.0.0 --port 8080 --gpio auto`` start builds no parser), in their plainest form only: each
    option spelt whole with its value as the next word (no ``--port=8080``, no abbreviation, no value
    beginning with ``-``), numbers in plain digits; anything else (``--help`` too) is None: the parser's."""
    values = {"host": "0.0.0.0", "port": 8080, "data_dir": None, "gpio": "auto",
              "dice": os.environ.get("COMPANION_DICE", "off"), "allow_host": [], "threads": 16,
              "max_streams_per_address": 200, "max_connections_per_address": None, "max_connections": 4000,
              "header_timeout": 10.0, "no_qr": False, "precompile": False}
    n = 0
    while n < len(words):
        word = words[n]
        if word == "--no-qr":
            values["no_qr"] = True
            n += 1
            continue
        option = _OPTIONS.get(word)
        if option is None or n + 1 == len(words) or words[n + 1].startswith("-"):
            return None
        dest, kind = option
        value = words[n + 1]
        if kind is int or kind is float:
            whole, dot, part = value.partition(".") if kind is float else (value, "", "")
            if not (whole.isascii() and whole.isdigit() and (not dot or (part.isascii() and part.isdigit()))):
                return None
            value = kind(value)
        elif kind is list:
            value = [*values[dest], value]
        elif kind is not str and value not in kind:
            return None
        values[dest] = value
        n += 2
    return values


def print_qr(text: str, out) -> None:
    import qrcode

    qr = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_L)
    qr.add_data(text)
    qr.make(fit=True)
    qr.print_ascii(out=out, invert=True)


def under_systemd(env=None) -> bool:
    """Whether systemd runs this process as a service (it sets INVOCATION_ID; NOTIFY_SOCKET for
    Type=notify): the output goes to the journal, not to a terminal."""
    import os

    env = os.environ if env is None else env
    return bool(env.get("INVOCATION_ID") or env.get("NOTIFY_SOCKET"))


def activated_sockets(env=None) -> list:
    """Listening sockets systemd handed over (socket activation: ``LISTEN_FDS`` from fd 3, for this very
    process by ``LISTEN_PID``): port 80 of ``companion-landing.socket``, where the phones on the box's own
    Wi-Fi send their connectivity checks (docs/offline.md). Empty elsewhere."""
    import os
    import socket

    env = os.environ if env is None else env
    try:
        if int(env.get("LISTEN_PID", "0")) != os.getpid():
            return []
        n = int(env.get("LISTEN_FDS", "0"))
    except ValueError:
        return []
    out = []
    for fd in range(3, 3 + max(0, min(n, 16))):
        try:
            s = socket.socket(fileno=fd)
        except OSError:
            continue
        if s.type == socket.SOCK_STREAM:
            out.append(s)
        else:
            s.detach()
    for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):  # not passed on to child processes
        if env is os.environ:
            os.environ.pop(name, None)
    return out


def limit_malloc_arenas(n: int = 2) -> bool:
    """Cap glibc's malloc arenas (like ``MALLOC_ARENA_MAX=n``) before the worker threads start.

    glibc gives busy threads their own arenas (up to 8 per core); with many worker threads every
    arena keeps the freed memory of its own requests, so the server's RSS crept up through an evening
    although the live heap stayed flat (docs/benchmarks-notes.md). A Pi Zero's 4 cores would allow
    32 arenas. Returns whether the cap was set (not on other C libraries, nor when the environment
    sets ``MALLOC_ARENA_MAX`` itself, as the systemd unit does: then ctypes is not even imported)."""
    import os
    import sys

    if not sys.platform.startswith("linux") or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_ARENA_MAX = -8
    return mallopt(M_ARENA_MAX, n) == 1


def test_hooks(env=None) -> dict:
    """What the tests of the real server inject through its environment (never set on a box):

    - ``COMPANION_TEST_SEED``: a whole number seeding the server's random source (the Pi's deals and dice,
      the seating of a tournament round, the final rolls), so a test knows the outcome it plays from;
    - ``COMPANION_TEST_CLOCK_FILE``: a file holding a number of seconds added to the server's clock
      (re-read at each reading, never going back): a test moves the clock forward and a 2-minute round is
      over without anyone waiting for it.

    Returns ``{"RNG": ..., "CLOCK": ...}`` for ``Runtime.open`` (empty when neither is set); a bad value is an
    InputError."""
    import os
    import random

    from companion.base.errors import InputError

    env = os.environ if env is None else env
    config: dict = {}
    seed = env.get("COMPANION_TEST_SEED")
    if seed:
        try:
            config["RNG"] = random.Random(int(seed))
        except ValueError:
            raise InputError("must be a whole number", "COMPANION_TEST_SEED") from None
    path = env.get("COMPANION_TEST_CLOCK_FILE")
    if path:
        from companion.base.timeutil import MonotonicWallClock, SkewedMonotonic

        config["CLOCK"] = MonotonicWallClock(monotonic=SkewedMonotonic(path))
    return config


def run(args):
    import gc

    from companion.base.errors import InputError

    if not 0 <= args.port <= 65535:
        raise InputError("must be between 0 and 65535", "--port")
    if not 4 <= args.threads <= 200:
        raise InputError("must be between 4 and 200", "--threads")
    for name in ("max_streams_per_address", "max_connections_per_address", "max_connections"):
        if getattr(args, name) is not None and not 1 <= getattr(args, name) <= 100000:
            raise InputError("must be between 1 and 100000", "--" + name.replace("_", "-"))
    if not 0.1 <= args.header_timeout <= 3600:
        raise InputError("must be between 0.1 and 3600 seconds", "--header-timeout")

    limit_malloc_arenas()  # before any thread starts
    # No cyclic garbage collection while the start-up imports and builds (a twentieth of the start's
    # work: the collector went again and again over the objects of the modules being imported); on again
    # once the server is about to serve (in _serve), or when the start fails.
    gc.disable()
    try:
        return _serve(args)
    finally:
        gc.enable()


def attach_panel(runtime, out) -> None:
    """Attach the box's GPIO panel (``--gpio``) and say in one line how it is (``GPIO: mode (why)``). A
    failure is logged: the box serves on without its buttons."""
    try:
        panel = runtime.attach_panel()
        if panel is None:
            return
        status = panel.status()
        why = " (mock pins)" if status.get("mock") else (f" ({status['reason']})" if status.get("mode") == "off"
                                                         and status.get("reason") else "")
        out.write(f"GPIO: {status.get('mode')}{why}\n")
        out.flush()
    except Exception:
        import logging

        logging.getLogger("companion").exception("could not attach the GPIO panel")


def _serve(args):
    import gc
    import logging
    import os
    import signal

    from companion.base.errors import InputError

    from companion import systemd_notify as sd
    from companion.runtime import Runtime
    from companion.web import netinfo, server as http
    from companion.web.asgi import Limits
    from companion.web.context import current_join, open_context
    from companion.web.limits import MAX_BODY

    files = http.raise_open_files_limit()  # every connection is a file: a room of phones needs more than 1,024
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    allowed = list(args.allow_host)
    if args.host not in WILDCARDS:
        allowed.append(args.host)
    config = {"ALLOWED_HOSTS": allowed}
    hooks = test_hooks()
    if hooks:
        logging.getLogger("companion").warning("test hooks on: %s", ", ".join(sorted(hooks)))
    if os.environ.get("COMPANION_SSE_HEARTBEAT"):  # seconds between SSE heartbeats (tests set it)
        config["SSE_HEARTBEAT"] = float(os.environ["COMPANION_SSE_HEARTBEAT"])
    runtime = Runtime.open(data_dir=args.data_dir, gpio=args.gpio, dice=args.dice, clock=hooks.get("CLOCK"),
                           rng=hooks.get("RNG"), panel_later=True)
    try:
        context = open_context(config, runtime)
    except BaseException:
        runtime.stop()
        raise

    # the templates' compiled code, kept between starts in the data folder (companion/web/app.py)
    config["TEMPLATE_CACHE"] = os.path.join(os.path.dirname(os.path.abspath(runtime.store.path)), "cache", "templates")
    if getattr(args, "precompile", False):  # (at install time: a first start right after compiles nothing)
        try:
            from companion.web.app import compile_templates, create_app

            n = compile_templates(create_app(config, context=context))
            sys.stdout.write(f"{n} templates compiled into {config['TEMPLATE_CACHE']}\n")
            return 0
        finally:
            runtime.stop()

    def make_app():  # the Flask app: built by the front at its first need, once the box listens
        import threading

        from companion.web.app import compile_templates, create_app

        app = create_app(config, context=context)
        # then the GPIO panel (gpiozero's import and the pins: about a second of a Pi's start) in a thread of
        # its own, while the app answers: every request, /healthz too, waits for the app, not for the pins
        panel = threading.Thread(target=attach_panel, args=(runtime, sys.stdout), name="companion-gpio",
                                 daemon=True)
        panel.start()
        # then every template, in the background a few seconds later (not against the first pages' answers;
        # a page asked for sooner compiles or reads back its own): no page waits for its own later
        timer = threading.Timer(TEMPLATES_AFTER_S, compile_templates, args=(app,))
        timer.name, timer.daemon = "companion-templates", True
        timer.start()
        return app

    max_connections = args.max_connections
    if files is not None and files[0] > 0:  # (RLIM_INFINITY reads as -1)
        max_connections = max(1, min(max_connections, files[0] - 100))
    per_address = args.max_connections_per_address
    if per_address is None:  # a share well below the whole: a few addresses never fill the box
        per_address = max(1, min(Limits.connections_per_address, max_connections // 8))
    limits = Limits(streams_per_address=args.max_streams_per_address,
                    connections_per_address=per_address, max_connections=max_connections,
                    header_timeout=args.header_timeout, max_body=MAX_BODY)
    try:
        sock = http.bind(args.host if args.host != "" else "0.0.0.0", args.port)
    except OSError as exc:
        runtime.stop()
        raise InputError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", "--port") from None
    landing = activated_sockets()
    server, front = http.build(None, limits, threads=args.threads, context=context, make_app=make_app)
    front.freeze_when_built = True  # (the Flask app's objects, as the start's below: see gc.freeze())
    port = sock.getsockname()[1]
    ip = (netinfo.primary_ip() or "127.0.0.1") if args.host in WILDCARDS else args.host
    host_part = f"[{ip}]" if ":" in ip else ip
    base = f"http://{host_part}:{port}"
    runtime.public_url = base
    from companion.services.hotspot import hotspot_base, is_on

    wifi_on = is_on(runtime.hotspot)
    if wifi_on:  # the box's own Wi-Fi: phones there reach it by its fixed address
        base = hotspot_base(base)
        wifi = runtime.hotspot.config()
        wifi_text = runtime.hotspot.qr_text()
    join = current_join(context, base)

    service = under_systemd()
    out = sys.stdout
    out.write(f"companion serving {runtime.store.path}\n")
    out.write(f"Open on the LAN: {base}/\n")
    if service:  # the journal keeps every line: no join token in it (organisers show the code at /join)
        if wifi_on:
            out.write(f"The box's own Wi-Fi is on: {wifi['ssid']} (its code and password at {base}/join)\n")
        out.write(f"Join link for players: the QR code at {base}/join (organiser, or the Pi's own screen)\n")
    else:
        if wifi_on:  # two codes, in order: the Wi-Fi's first, then the link by the box's address
            out.write(f"1. Join the box's Wi-Fi: {wifi['ssid']} (password {wifi['password']})\n")
            if not args.no_qr:
                print_qr(wifi_text, out)
        out.write(f"{'2. ' if wifi_on else ''}Join link for players (valid until {join['expires_at']}): "
                  f"{join['url']}\n")
        if not args.no_qr:
            print_qr(join["url"], out)
    for extra in landing:
        out.write(f"Also listening on port {extra.getsockname()[1]} (systemd: companion-landing.socket)\n")
    if not runtime.access.pin_is_set():
        out.write(f"First run: choose the organiser PIN at {base}/login with the setup code "
                  f"{runtime.setup_code}\n")
    if args.dice != "off":
        st = runtime.dice.radio.status()
        out.write(f"Smart dice: {st['mode']}" + (f" ({st['reason']})" if st["mode"] in ("off", "waiting") else "") + "\n")
    out.write("systemctl stops the server.\n" if service else "Ctrl-C stops the server.\n")
    out.flush()
    runtime.start()
    # under systemd (Type=notify, WatchdogSec=): ready now that the port listens, then the watchdog pinged
    # while GET /healthz answers (a wedged server is restarted); outside systemd both are no-ops
    sd.notify_ready(f"serving on {base}")
    watchdog = sd.start_watchdog(health=lambda: sd.http_ok(*_own_address(args.host, port)))

    def stop(signum, frame):
        raise KeyboardInterrupt

    # uvicorn handles SIGINT/SIGTERM while it serves (a graceful stop: every stream ends, then the
    # connections close) and raises the signal again afterwards: this handler turns that into the end.
    signal.signal(signal.SIGTERM, stop)
    # serving: garbage is collected as usual, but for the start's own objects (the modules, the store, the
    # runtime: ~45,000 of them, alive as long as the server), frozen first: the first collection after the
    # start went over them all, 10 ms of this machine's CPU before the server listened (about 0.15 s on a
    # Pi), for a few hundred objects of garbage the start left (kept now)
    gc.freeze()
    gc.enable()
    try:
        http.run(server, front, sockets=[sock, *landing])
    except KeyboardInterrupt:
        pass
    finally:
        sd.notify_stopping()
        if watchdog is not None:
            watchdog.stop()
        context.hub.close_all()
        sock.close()
        for extra in landing:
            extra.close()
        runtime.stop(clean=True)
    return 0


def _own_address(host: str, port: int) -> tuple[str, int]:
    """Where this server answers itself: its address, or 127.0.0.1 when it listens on every interface."""
    return ("127.0.0.1" if host in WILDCARDS else host), port
