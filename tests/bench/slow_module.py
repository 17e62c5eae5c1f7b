"""A bench module for tests/bench/test_bench.py: one row, then it hangs (with a child process of its
own), or fails, as COMPANION_TEST_BENCH says."""

import os
import subprocess
import sys
import time


def report():
    yield {"name": "measured first", "median_ms": 5.0, "best_ms": 4.0, "target_ms": 10.0, "note": ""}
    if os.environ.get("COMPANION_TEST_BENCH") == "fail":
        raise RuntimeError("the server did not start")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print(f'{{"name": "child", "median_ms": {child.pid}, "verdict": "SKIP"}}', flush=True)
    time.sleep(60)
