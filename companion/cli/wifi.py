"""``companion wifi``: the box's own Wi-Fi (a WPA2 access point through NetworkManager; docs/offline.md).

``wifi hotspot on|off|status`` on the box's database (the SSID and the generated password are kept in its
settings: ``--data-dir`` or ``$COMPANION_DATA``); ``wifi codes`` prints the two QR codes a table scans, in
order: the Wi-Fi's, then the link by the box's address.
"""

from __future__ import annotations

import sys

from companion.cli import data_dir_arg, emit, open_existing_store, open_store


def register(sub):
    p = sub.add_parser("wifi", help="the box's own Wi-Fi for a table with no network (hotspot on|off|status)",
                       description="The box's own Wi-Fi: a WPA2 access point made with NetworkManager "
                                   "(Raspberry Pi OS Bookworm and later), its fixed address 10.42.0.1, DHCP "
                                   "and DNS for the phones. Off by default. Needs the box's database (its "
                                   "settings keep the SSID and the generated password) and the right to "
                                   "use NetworkManager (root, or the service user after systemd/install.sh).")
    wsub = p.add_subparsers(dest="wifi_command", metavar="ACTION", required=True)
    h = wsub.add_parser("hotspot", help="turn the box's Wi-Fi on or off, or say which network the box is on",
                        description="on: the box becomes a WPA2 access point (its SSID and password are "
                                    "generated once and kept); off: the access point stops and the box goes "
                                    "back to the venue's Wi-Fi when it was on one; status: which network the "
                                    "box is on and how many phones are connected to its own. JSON out. "
                                    "Without NetworkManager or a Wi-Fi device it says so and changes nothing.")
    h.add_argument("action", choices=["on", "off", "status"], help="on, off or status")
    h.add_argument("--ssid", default=None, help="with on: the network's name (1 to 32 bytes; kept for next time)")
    h.add_argument("--password", default=None,
                   help="with on: its WPA2 password (8 to 63 printable ASCII characters; kept for next time)")
    data_dir_arg(h)
    h.set_defaults(func=run_hotspot)
    c = wsub.add_parser("codes", help="print the two QR codes of a table: the Wi-Fi's, then the link",
                        description="Prints, in this order, the Wi-Fi QR code of the box's own network (when "
                                    "its hotspot is on) and the QR code of the link by the box's address. "
                                    "--url gives the link; while the hotspot is on, the link is the box's "
                                    "fixed address http://10.42.0.1 with --url's port (or --port).")
    c.add_argument("--url", default=None, help="the link of the second code (an http:// address)")
    c.add_argument("--port", type=int, default=8080, help="the server's port for the default link (default 8080)")
    data_dir_arg(c)
    c.set_defaults(func=run_codes)


def _hotspot(store):
    from companion.services.hotspot import Hotspot, StoreSettings

    return Hotspot(StoreSettings(store))


def run_hotspot(args):
    from companion.base.errors import InputError

    if args.action != "on" and (args.ssid is not None or args.password is not None):
        raise InputError("only with on", "--ssid" if args.ssid is not None else "--password")
    opener = open_store if args.action == "on" else open_existing_store
    with opener(args) as store:
        h = _hotspot(store)
        if args.action == "on":
            try:
                h.configure(args.ssid, args.password)
            except InputError as e:
                raise e.again(field="--" + e.field) from None
            out = h.on()
            out["password"] = h.config()["password"]
        elif args.action == "off":
            out = h.off()
        else:
            out = h.status()
    out.pop("reason_template", None)
    out.pop("reason_params", None)
    emit(out)
    return 0


def run_codes(args):
    from companion.cli.serve import print_qr
    from companion.base.errors import InputError
    from companion.services.hotspot import ADDRESS

    if not 1 <= args.port <= 65535:
        raise InputError("must be between 1 and 65535", "--port")
    if args.url is not None and not args.url.startswith(("http://", "https://")):
        raise InputError("must be an http:// address", "--url")
    with open_store(args) as store:
        h = _hotspot(store)
        on = h.is_on()
        cfg = h.config() if on else None
        wifi_text = h.qr_text() if on else None
    out = sys.stdout
    url = args.url
    if on:  # phones on the box's own Wi-Fi know the box by its fixed address alone
        from urllib.parse import urlsplit

        port = (urlsplit(url).port if url else None) or args.port
        url = f"http://{ADDRESS}:{port}/"
    if on:
        out.write(f"1. Join the box's Wi-Fi: {cfg['ssid']} (password {cfg['password']})\n")
        print_qr(wifi_text, out)
    if url:
        out.write(f"{'2. ' if on else ''}Then open {url}\n")
        print_qr(url, out)
    elif not on:
        raise InputError("the box's Wi-Fi is off: give the link with --url", "--url")
    return 0
