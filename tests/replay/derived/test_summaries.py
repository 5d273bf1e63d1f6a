"""``paohuzi stats --json`` from the summary tables equals ``paohuzi stats --json`` from the
hands, on runs of 3 and 4 players, Luzhou, ``--duplicate`` (its cluster-robust intervals and
paired differences) and ``--set min_huxi=10``; ``paohuzi index`` is resumable and its files
are checked like the other shard files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_helpers import assert_close, ok_output

from replay.store import summary_schema as summary
from replay.store.runs import open_store
from replay.store.scan import scan_store

RUNS: list[tuple[str, list[str]]] = [
    ("base", ["-n", "80", "--seed", "31", "--policies", "greedy,random,greedy"]),
    ("dup", ["-n", "30", "--seed", "32", "--policies", "greedy,random,random", "--duplicate"]),
    ("four", ["-n", "60", "--seed", "33", "--rules", "hunan-4p", "--policies", "random"]),
    ("luzhou", ["-n", "60", "--seed", "34", "--rules", "luzhou", "--policies", "greedy"]),
    ("min10", ["-n", "60", "--seed", "35", "--set", "min_huxi=10", "--policies", "greedy"]),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("stats-summary") / "data"
    for name, args in RUNS:
        ok_output(["simulate", "--data", str(data), "-w", "1", "-q", "--run", name,
              "--shard-hands", "48", *args])  # fmt: skip
    return data


def test_stats_json_equal(store: Path) -> None:
    raw = json.loads(ok_output(["stats", "--data", str(store), "--json"]))
    out = ok_output(["index", "--data", str(store)])
    assert "base: " in out and "shard(s) summarised" in out
    state = scan_store(store)
    assert all(summary.summarized(r) for r in state.usable_runs)
    fast = json.loads(ok_output(["stats", "--data", str(store), "--json"]))
    again = json.loads(
        ok_output(["stats", "--data", str(store), "--json"], env={"PAOHUZI_SUMMARY": "0"})
    )
    assert_close(raw, again)
    assert_close(raw, fast)
    dup = next(r for r in fast["runs"] if r["run"] == "dup")
    assert dup["cluster"] == "deal" and dup["paired"]
    assert dup["winning"]["huxi"]["mean"]["lo"] is not None


def test_index_resumes_and_is_checked(store: Path) -> None:
    ok_output(["index", "--data", str(store)])
    out = ok_output(["index", "--data", str(store), "base"])
    assert "0 shard(s) summarised" in out
    run = open_store(store).run("base")
    s = run.shards[0]
    assert summary.has_summary(s)
    path = run.path / s["files"]["summary"]["path"]
    data = path.read_bytes()
    path.write_bytes(data[:-8] + b"\0" * 8)  # same size, other bytes
    try:
        info = scan_store(store).run("base")
        # derived data: the summary is left out, the run stays usable (issue 20, item 8)
        assert info is not None and info.problem is None and info.usable
        assert info.summary_problem and "summary/part-00000" in info.summary_problem
        assert not summary.summarized(info)
    finally:
        path.write_bytes(data)
    assert scan_store(store).run("base").problem is None  # type: ignore[union-attr]


def test_index_with_workers_writes_the_same(store: Path, tmp_path: Path) -> None:
    """``index --workers 2`` (a process pool) writes the same summary files and manifest
    entries as one process, for the runs of every shape above."""
    import shutil

    one, two = tmp_path / "one", tmp_path / "two"
    for d in (one, two):
        shutil.copytree(store, d)
        for p in d.rglob("summary"):
            shutil.rmtree(p)
        for m in d.glob("runs/*/manifest.json"):
            doc = json.loads(m.read_text())
            for s in doc["shards"]:
                s["files"].pop("summary", None)
            m.write_text(json.dumps(doc))
    ok_output(["index", "--data", str(one), "-w", "1", "-q"])
    ok_output(["index", "--data", str(two), "-w", "2", "-q"])
    for name, _ in RUNS:
        a, b = open_store(one).run(name), open_store(two).run(name)
        assert [s["files"] for s in a.shards] == [s["files"] for s in b.shards]
        assert all(summary.has_summary(s) for s in a.shards)


def test_masks() -> None:
    per = summary.seat_policies(["a", "b", "b"], 3, 3)
    masks = summary.seat_masks(per, 3)
    assert summary.seat_mask(per, 3) in masks
    assert summary.seat_mask(per, 3, (0,), ("b",)) in masks
    assert summary.seat_mask(per, 3, (5,)) == 0
    assert summary.hand_mask(per) == 0b111
    assert summary.granule(100) == 1 and summary.granule(10_000_000) == 65536
