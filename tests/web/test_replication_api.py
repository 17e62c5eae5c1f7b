"""/api/replication (organisers only; the kind of target, never a secret) and the home page's line."""

import time

from companion.services import replication


def test_organisers_read_the_replication_state_and_nobody_else(app, store, api, player, organiser):
    assert api.get("/api/replication").status_code == 401
    assert player.get("/api/replication").status_code == 403
    assert organiser.get("/api/replication").json == replication.public_status(None, None) | {}
    store.set_setting(replication.SETTING, {"target": "s3://club/box1?endpoint=http://minio:9000"})
    now = time.time()
    replication.write_status(store.path.parent, {"checked_at": now, "replicated_txid": 41, "local_txid": 42,
                                                 "pending_since": now - 45, "replicated_at": now - 50,
                                                 "error": None})
    body = organiser.get("/api/replication").json
    assert body["enabled"] and body["running"] and body["target"] == {"kind": "s3", "name": "s3://club/box1 at minio:9000"}
    assert body["replicated_txid"] == 41 and body["local_txid"] == 42 and 44 <= body["lag_seconds"] < 60
    page = organiser.get("/", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert 'id="replica-notice"' in page and "s behind" in page
    assert "replica-notice" not in player.get("/").get_data(as_text=True)


def test_the_home_page_says_when_the_replica_is_unreachable_or_replication_stopped(store, organiser):
    store.set_setting(replication.SETTING, {"target": "/media/usb/companion"})
    page = organiser.get("/?lang=it").get_data(as_text=True)
    assert "non è ancora partita" in page  # set, never run
    replication.write_status(store.path.parent, {"checked_at": time.time(), "replicated_txid": 3, "local_txid": 5,
                                                 "pending_since": time.time() - 2,
                                                 "error": "the replica folder /media/usb/companion is not there"})
    page = organiser.get("/?lang=en").get_data(as_text=True)
    assert "unreachable" in page and "is not there" in page and "works as usual" in page
    replication.write_status(store.path.parent, {"checked_at": time.time() - 3600, "pending_since": None})
    assert "is not running" in organiser.get("/?lang=en").get_data(as_text=True)
    replication.write_status(store.path.parent, {"checked_at": time.time(), "replicated_txid": 5, "local_txid": 5,
                                                 "pending_since": None, "error": None})
    assert "up to date (lag 0 s)" in organiser.get("/?lang=en").get_data(as_text=True)


def test_the_endpoint_is_in_the_openapi_document(organiser):
    doc = organiser.get("/api/openapi.json").json
    assert "/api/replication" in doc["paths"] and "Replication" in doc["components"]["schemas"]
