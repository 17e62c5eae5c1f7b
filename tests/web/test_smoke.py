def test_create_append_undo(fake_game, player, api):
    r = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"], "label": "T1"})
    assert r.status_code == 201, r.json
    mid = r.json["id"]
    r = player.post(f"/api/matches/{mid}/events", {"type": "point", "data": {"player": "Anna", "n": 3},
                                                   "expected_seq": 0})
    assert r.status_code == 201, r.json
    assert r.json["seq"] == 1
    assert r.json["view"]["state"]["points"]["Anna"] == 3
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": 1})
    assert r.status_code == 201, r.json
    assert r.json["view"]["state"]["points"]["Anna"] == 0
    r = api.get(f"/api/matches/{mid}")
    assert r.status_code == 200 and r.json["seq"] == 2
