"""make bench's runner: a verdict per row, a module that runs out of time or fails still gives its rows
and a FAIL row saying so, and what it started is stopped with it."""

import time

import bench


def test_verdicts():
    assert bench.verdict({"median_ms": 5, "target_ms": 10}) == "PASS"
    assert bench.verdict({"median_ms": 11, "target_ms": 10}) == "FAIL"
    assert bench.verdict({"median_ms": 11, "target_ms": None}) == ""
    assert bench.verdict({"median_ms": None, "target_ms": 10}) == "SKIP"
    assert bench.verdict({"median_ms": 1, "target_ms": 10, "verdict": "SKIP"}) == "SKIP"
    text = bench.render([{"name": "a", "median_ms": None, "target_ms": 80, "unit": "MB", "verdict": "SKIP",
                          "note": "not measured: why"}])
    assert "| a |  |  | 80.0 MB | SKIP | not measured: why |" in text


def test_a_module_out_of_time_keeps_its_rows_and_is_stopped_with_what_it_started():
    # the budget must cover the module's start on a loaded machine (1.5 s did not, at a load of 15), then it hangs
    rows = bench.run_module("tests.bench.slow_module", budget=6)
    assert [r["name"] for r in rows] == ["measured first", "child", "tests.bench.slow_module: finished within "
                                         "its budget"]
    assert bench.verdict(rows[0]) == "PASS" and bench.verdict(rows[-1]) == "FAIL"
    child = int(rows[1]["median_ms"])

    def alive():
        try:
            with open(f"/proc/{child}/stat") as fh:
                return fh.read().split(")", 1)[1].split()[0] != "Z"  # a zombie is dead, not yet reaped
        except FileNotFoundError:
            return False

    for _ in range(500):  # the kill is delivered at once, the state shows it a moment later
        if not alive():
            break
        time.sleep(0.01)
    assert not alive()


def test_a_module_that_fails_says_why(monkeypatch):
    monkeypatch.setenv("COMPANION_TEST_BENCH", "fail")
    rows = bench.run_module("tests.bench.slow_module", budget=30)
    assert bench.verdict(rows[-1]) == "FAIL" and "the server did not start" in rows[-1]["note"]
    assert rows[0]["name"] == "measured first"
