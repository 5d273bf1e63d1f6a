# ruff: noqa: F811  (the fixtures imported from test_verify are the test arguments)
"""paohuzi verify's worker pool: forked from the warm parent when no other thread runs, else
spawned; either way the report is the one of a single process, problem for problem."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_verify import a_decision, pristine, rewrite, root, rows_of  # noqa: F401

from replay.replayer import verify as V


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_pool_reports_what_one_process_does(
    root: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    hand = 13
    k, other = a_decision(root, hand)
    rewrite(root, "events", hand, lambda c: c["action"].__setitem__(rows_of(c, hand)[k], other))
    one = V.verify_store(root)
    monkeypatch.setattr(V, "pool_start_method", lambda: method)
    for engine in ("fast", "reference"):
        pooled = V.verify_store(root, workers=2, min_pool_hands=0, engine=engine)
        assert pooled.problems == one.problems
        assert pooled.bad_hands == one.bad_hands == [("main", hand)]
        assert [r.hands for r in pooled.runs] == [r.hands for r in one.runs]


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
