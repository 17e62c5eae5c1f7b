"""The page the kiosk opens on the box's own screen (systemd/companion-kiosk.service, and the address
install.sh writes into /etc/default/companion) is one the box serves, from the box itself."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def kiosk_paths() -> list[str]:
    unit = (REPO / "systemd" / "companion-kiosk.service").read_text()
    install = (REPO / "systemd" / "install.sh").read_text()
    found = re.findall(r"^Environment=COMPANION_KIOSK_URL=http://localhost:\d+(/\S*)$", unit, re.M)
    found += re.findall(r"^COMPANION_KIOSK_URL=http://localhost:\$\{port\}(/\S*)$", install, re.M)
    return found


def test_the_kiosk_opens_a_page_the_box_serves(client):
    paths = kiosk_paths()
    assert len(paths) == 2 and len(set(paths)) == 1, paths  # the unit's default and install.sh's: the same
    r = client.get(paths[0], environ_base={"REMOTE_ADDR": "127.0.0.1"}, headers={"Accept-Language": "it"})
    assert r.status_code == 200 and r.mimetype == "text/html", (paths[0], r.status_code)
    html = r.get_data(as_text=True)
    assert 'data-page="tournament"' in html and 'id="tables"' in html  # the room screen: every open table
