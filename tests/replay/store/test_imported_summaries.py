"""A run of imported hands has the summaries and facts of a simulated run: each import
writes them with its shard, the summaries' rotations being the run's policy classes (the
distinct assignments of policies to seats of its hands, ``params.seat_policies``, at most
four); every figure of ``paohuzi stats --json`` and ``stats --events`` from them equals the
same figure from the hands; the numpy builder equals its SQL reference on such shards;
past four classes the run's later shards get no summary and its figures come from its
hands; ``paohuzi index`` fills a run imported before summaries were written with each import."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from catalog_helpers import assert_close, ok_output

from replay import store
from replay.analysis.event_stats import summarize_events
from replay.analysis.figures.selection import Selection, plan
from replay.derived.summaries import summary_bytes, summary_table
from replay.derived.summarize import summarize_shard
from replay.derived.summarize_sql import summarize_shard_sql
from replay.record.importing import import_hands
from replay.replayer import importing, replay_file
from replay.store import summary_schema as summary
from replay.store.runs import open_store
from replay.store.scan import scan_store

DUP = ["greedy", "random", "heuristic"]


def _files(data: Path, run: str, n: int, strip: bool = False) -> list[replay_file.ReplayFile]:
    out = []
    for i in range(n):
        doc = json.loads(replay_file.export_hand(data, run, i, "json")[0])
        if strip:  # a real hand: no policy names (its seats are "import")
            doc.pop("policies", None)
        out.append(replay_file.read_replay(json.dumps(doc), f"{run}-{i}.json"))
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("imported-summaries") / "data"
    sim = ["simulate", "--data", str(d), "-q", "-w", "1"]
    ok_output([*sim, "--run", "dup", "-n", "16", "--seed", "61", "-p", ",".join(DUP),
               "--duplicate"])  # fmt: skip
    ok_output([*sim, "--run", "plain", "-n", "30", "--seed", "62", "-p", "random"])
    ok_output([*sim, "--run", "four", "-n", "30", "--seed", "63", "--rules", "hunan-4p",
               "-p", "greedy,random,random,heuristic"])  # fmt: skip
    plain, dup = _files(d, "plain", 30), _files(d, "dup", 48)
    # imp: 1 class, then the duplicate run's 3 rotations in two imports: 4 classes
    for batch in (plain, dup[:20], dup[20:]):
        assert import_hands(d, importing.ImportBatch(batch), "imp").accepted == len(batch)
    # imp4: 4 players, half of them real hands (no policy names): 2 classes
    four = _files(d, "four", 30)
    real = _files(d, "four", 30, strip=True)
    import_hands(d, importing.ImportBatch(four[:15]), "imp4")
    import_hands(d, importing.ImportBatch(real[15:]), "imp4")
    # over: a fifth class in its third import
    for batch in (plain[:10], dup[:12], _files(d, "plain", 15, strip=True)[10:]):
        import_hands(d, importing.ImportBatch(batch), "over", allow_duplicate=True)
    return d


def test_each_import_writes_its_summary_and_facts(data: Path) -> None:
    run = open_store(data).run("imp")
    assert len(run.shards) == 3
    assert all(summary.has_summary(s) and "facts" in s["files"] for s in run.shards)
    rot = [DUP[-r:] + DUP[:-r] for r in range(3)]  # rotation r: seat s plays DUP[(s-r)%3]
    assert run.manifest["params"]["seat_policies"] == [["random"] * 3, *rot]
    assert "seat_policies_overflow" not in run.manifest["params"]
    out = ok_output(["verify", "--data", str(data)])
    assert "all good" in out


@pytest.mark.parametrize("name", ["imp", "imp4"])
def test_figures_from_summaries_equal_the_hands(data: Path, name: str) -> None:
    state = scan_store(data)
    assert plan(state, Selection(runs=(name,))) is not None
    args = ["stats", "--data", str(data), "--json", name]
    fast = json.loads(ok_output(args))
    raw = json.loads(ok_output(args, env={"PAOHUZI_SUMMARY": "0"}))
    assert_close(fast, raw, name)
    ev = ["stats", "--events", "--data", str(data), "--json", name]
    fast_ev = json.loads(ok_output(ev))
    raw_ev = json.loads(ok_output(ev, env={"PAOHUZI_SUMMARY": "0"}))
    assert [r["source"] for r in fast_ev["runs"]] == ["summaries"]
    for doc in (fast_ev, raw_ev):
        for r in doc["runs"]:
            r.pop("source")
    assert_close(fast_ev, raw_ev, name)
    (r,) = fast["runs"]
    assert r["hands"] == open_store(data).run(name).n_hands


def _selections(name: str) -> list[tuple[tuple[int, ...], tuple[str, ...]]]:
    if name == "imp4":
        return [((), ("import",)), ((1, 3), ("random", "import")), ((2,), ())]
    return [((), ("greedy",)), ((0,), ("random",)), ((1, 2), ("heuristic", "greedy"))]


@pytest.mark.parametrize("name", ["imp", "imp4"])
def test_selected_event_figures_equal_the_events(data: Path, name: str) -> None:
    state = scan_store(data)
    con = open_store(data).connect(state)
    try:
        for seats, policies in _selections(name):
            fast = summarize_events(con, name, seats, policies, state)
            raw = summarize_events(con, name, seats, policies)
            assert (fast.source, raw.source) == ("summaries", "events")
            a, b = fast.to_dict(), raw.to_dict()
            a.pop("source"), b.pop("source")
            assert a["hands"] > 0
            assert_close(a, b, f"{name} seats={seats} policies={policies}")
    finally:
        con.close()


@pytest.mark.parametrize("name", ["imp", "imp4"])
def test_numpy_summary_equals_sql_on_imported_shards(data: Path, name: str) -> None:
    run = open_store(data).run(name)
    shape = {"rules": run.manifest["rules"], "params": run.manifest["params"]}
    for s in run.shards:
        hands = pq.read_table(run.path / s["files"]["hands"]["path"])
        ref, got = summarize_shard_sql(hands, shape), summarize_shard(hands, shape)
        assert list(got) == list(ref)
        for kind in ref:
            assert got[kind].equals(ref[kind]), kind
        assert summary_bytes(summary_table(ref)) == summary_bytes(summary_table(got))


def test_a_fifth_class_ends_the_summaries(data: Path) -> None:
    run = open_store(data).run("over")
    params = run.manifest["params"]
    assert params["seat_policies_overflow"] is True and len(params["seat_policies"]) == 4
    assert [summary.has_summary(s) for s in run.shards] == [True, True, False]
    assert all("facts" in s["files"] for s in run.shards)
    assert plan(scan_store(data), Selection(runs=("over",))) is None
    args = ["stats", "--data", str(data), "--json", "over"]
    assert_close(
        json.loads(ok_output(args)), json.loads(ok_output(args, env={"PAOHUZI_SUMMARY": "0"}))
    )
    out = ok_output(["index", "--data", str(data), "over"])
    assert "run over: imported hands of more than 4 seat-policy assignments, no summary" in out
    assert "run over: facts of 0 shard(s) derived, 3 already" in out


def _strip(path: Path) -> dict[str, Any]:
    """Make the run at ``path`` look imported before an import wrote summaries and facts too."""
    m = store.read_manifest(path)
    for s in m["shards"]:
        for t in ("summary", "facts"):
            entry = s["files"].pop(t)
            (path / entry["path"]).unlink()
    m["params"]["seat_policies"] = []
    store.write_manifest(path, m)
    return m


def test_index_fills_an_older_imported_run(data: Path, tmp_path: Path) -> None:
    d = tmp_path / "data"
    (d / "runs").mkdir(parents=True)
    src = store.run_dir(data, "imp")
    shutil.copytree(src, d / "runs" / src.name)
    before = store.read_manifest(src)
    _strip(store.run_dir(d, "imp"))
    assert plan(scan_store(d), Selection(runs=("imp",))) is None
    out = ok_output(["index", "--data", str(d)])
    assert "run imp: 3 shard(s) summarised, 0 already" in out
    assert "run imp: facts of 3 shard(s) derived, 0 already" in out
    after = store.read_manifest(store.run_dir(d, "imp"))
    assert after["params"]["seat_policies"] == before["params"]["seat_policies"]
    for a, b in zip(after["shards"], before["shards"], strict=True):
        for t in ("summary", "facts"):
            assert a["files"][t]["sha256"] == b["files"][t]["sha256"], t
    assert plan(scan_store(d), Selection(runs=("imp",))) is not None
    assert "all good" in ok_output(["verify", "--data", str(d)])
