"""paohuzi verify's worker pool: forked from the warm parent when no other thread runs, else
spawned; either way the report is the one of a single process, problem for problem."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from verify_helpers import a_decision, rewrite, rows_of

from replay.replayer import verify as V

ROOT = Path(__file__).resolve().parents[3]


#: The forked pool, run in a fresh process (one thread, as the product forks only then: this
#: test process may hold threads of other tests).
FORKED = """
import json, sys
from replay.replayer import verify as V
assert V.pool_start_method() == "fork", V.pool_start_method()
for engine in ("fast", "reference"):
    rep = V.verify_store(sys.argv[1], workers=2, min_pool_hands=0, engine=engine)
    print(json.dumps([[p.to_dict() for p in rep.problems], rep.bad_hands, [r.hands for r in rep.runs]]))
"""


def _as_json(rep: V.VerifyReport) -> list:
    return json.loads(
        json.dumps(
            [[p.to_dict() for p in rep.problems], rep.bad_hands, [r.hands for r in rep.runs]]
        )
    )


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_pool_reports_what_one_process_does(
    root: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    hand = 13
    k, other = a_decision(root, hand)
    rewrite(root, "events", hand, lambda c: c["action"].__setitem__(rows_of(c, hand)[k], other))
    one = V.verify_store(root)
    assert one.bad_hands == [("main", hand)]
    if method == "fork":
        out = subprocess.run(
            [sys.executable, "-c", FORKED, str(root)],
            capture_output=True, text=True, timeout=600, check=True, cwd=ROOT,
        ).stdout.splitlines()  # fmt: skip
        pooled = [json.loads(line) for line in out]
    else:
        monkeypatch.setattr(V, "pool_start_method", lambda: "spawn")
        pooled = [
            _as_json(V.verify_store(root, workers=2, min_pool_hands=0, engine=e))
            for e in ("fast", "reference")
        ]
    assert pooled == [_as_json(one)] * 2


def test_no_fork_while_another_thread_runs() -> None:
    if threading.active_count() != 1:
        pytest.skip("this test process already runs other threads")
    assert V.pool_start_method() == "fork"
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert V.pool_start_method() == "spawn"
    finally:
        stop.set()
        t.join()
    assert V.pool_start_method() == "fork"


#: A verify whose every worker dies at its first shard (forked, so it inherits the patch).
DYING = """
import os, sys
from replay.replayer import verify as V
def die(*args):
    os._exit(9)
V.verify_shard = die
assert V.pool_start_method() == "fork", V.pool_start_method()
try:
    V.verify_store(sys.argv[1], workers=2, min_pool_hands=0, engine="reference")
except Exception as e:
    print(type(e).__name__, e)
"""


def test_a_dead_worker_is_one_message_bug(pristine: Path) -> None:
    # A killed verify worker surfaced as a raw BrokenProcessPool traceback.
    out = subprocess.run(
        [sys.executable, "-c", DYING, str(pristine)],
        capture_output=True, text=True, timeout=600, check=True, cwd=ROOT,
    ).stdout  # fmt: skip
    assert out.startswith("PaohuziError a verify worker process died"), out
