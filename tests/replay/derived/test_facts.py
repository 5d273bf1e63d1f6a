"""The facts table (docs/LOG_FORMAT.md §12): the compiled derivation equals a full Python
replay of every hand, row for row, over 3-player, --duplicate, 4-player, Luzhou and
min_huxi=10 runs of both engines; simulate writes the file and lists it; index fills an old
run's and resumes; a damaged file is a warning, not a lost run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from engine.rules import RuleSet
from paohuzi.cli.main import main
from replay.analysis.figures.results import Rate
from replay.derived.facts import derive_facts
from replay.replayer.facts_reference import reference_facts
from replay.store.facts_schema import FACTS_SCHEMA, FACTS_TABLE, GROUP_COLUMNS
from replay.store.runs import open_store
from replay.store.scan import scan_store

RUNS = [
    ("base", ["-n", "160", "--seed", "21", "--policies", "greedy", "--shard-hands", "80"]),
    ("dup", ["-n", "40", "--seed", "22", "--policies", "greedy,random,heuristic", "--duplicate"]),
    ("four", ["-n", "80", "--seed", "23", "--rules", "hunan-4p", "--policies", "greedy"]),
    ("lz", ["-n", "120", "--seed", "24", "--rules", "luzhou", "--policies", "greedy"]),
    ("min10", ["-n", "80", "--seed", "25", "--policies", "greedy", "--set", "min_huxi=10"]),
    (
        "ref",
        ["-n", "60", "--seed", "26", "--policies", "random,greedy,random", "--engine", "reference"],
    ),
]


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("facts")
    for name, args in RUNS:
        code, out = _cli("simulate", "--data", str(d), "-w", "1", "-q", "--run", name, *args)
        assert code == 0, out
    return d


def _shards(data: Path, name: str) -> list[tuple[dict, Path]]:
    path = data / "runs" / f"run={name}"
    m = json.loads((path / "manifest.json").read_text())
    return [(s, path) for s in m["shards"]], m


@pytest.mark.parametrize("name", [n for n, _ in RUNS])
def test_derivation_equals_a_full_python_replay_row_for_row(data: Path, name: str) -> None:
    shards, m = _shards(data, name)
    rules = RuleSet.from_dict(m["rules"])
    for s, path in shards:
        hands = pq.read_table(path / s["files"]["hands"]["path"])
        events = pq.read_table(path / s["files"]["events"]["path"])
        ref = reference_facts(hands, events, rules)
        got = derive_facts(hands, events, rules)
        assert got.schema == FACTS_SCHEMA
        assert got.to_pylist() == ref.to_pylist()
        # and the file simulate wrote holds the same rows
        assert pq.read_table(path / s["files"][FACTS_TABLE]["path"]).to_pylist() == ref.to_pylist()


def test_a_3ti_5kan_tianhu_has_its_reading(tmp_path: Path) -> None:
    """The 3提/5坎 天胡 (no compiled reading: evaluated in Python) equals the full replay
    too; seed 133 deals one in its first 300 hands."""
    import pyarrow.compute as pc

    from engine.state import OutcomeKind

    code, out = _cli("simulate", "--data", str(tmp_path), "-w", "1", "-q", "--run", "auto",
                     "-n", "300", "--seed", "133", "--policies", "greedy")  # fmt: skip
    assert code == 0, out
    (s, path), m = _shards(tmp_path, "auto")[0][0], _shards(tmp_path, "auto")[1]
    hands = pq.read_table(path / s["files"]["hands"]["path"])
    events = pq.read_table(path / s["files"]["events"]["path"])
    auto = pc.equal(hands.column("outcome"), int(OutcomeKind.TIANHU_AUTO))
    ids = hands.filter(auto).column("hand_id")
    assert len(ids) >= 1
    hands = hands.filter(pc.is_in(hands.column("hand_id"), ids))
    events = events.filter(pc.is_in(events.column("hand_id"), ids))
    rules = RuleSet.from_dict(m["rules"])
    got = derive_facts(hands, events, rules).to_pylist()
    assert got == reference_facts(hands, events, rules).to_pylist()
    assert {r["option"] for r in got} == {"A"}
    written = pq.read_table(path / s["files"][FACTS_TABLE]["path"])  # counted in play
    assert written.filter(pc.is_in(written.column("hand_id"), ids)).to_pylist() == got


def test_facts_are_consistent_with_the_hands(data: Path) -> None:
    con = open_store(data).connect()
    bad = con.execute(
        "SELECT count(*) FROM hands h JOIN facts f USING (run, hand_id) WHERE"
        " (h.winner IS NULL) <> (f.option IS NULL)"
        f" OR (h.winner IS NOT NULL AND h.huxi <> {' + '.join(GROUP_COLUMNS[1::2])})"
        " OR (f.popao AND f.option <> 'F')"
    ).fetchone()
    assert bad == (0,)
    n = con.execute("SELECT count(*), count(DISTINCT run) FROM facts").fetchone()
    assert n == (sum(1 for _ in con.execute("SELECT 1 FROM hands").fetchall()), len(RUNS))
    # every kind of fact occurs somewhere in these runs (the test can fail)
    got = con.execute(
        "SELECT sum(popao::INT), sum(conflicts), sum(bipai_0 + bipai_1 + bipai_2),"
        " sum(renpeng_0 + renpeng_1 + renpeng_2), sum(g_kan_n), sum(g_jiang_n) FROM facts"
    ).fetchone()
    assert all(v > 0 for v in got), got


def test_verify_recomputes_the_facts(data: Path, tmp_path: Path) -> None:
    """A facts file rewritten with one value changed, its manifest entry made to match,
    passes every file check; ``verify`` derives the facts again and names the hand."""
    import hashlib
    import shutil

    import pyarrow as pa

    from replay.derived.facts_files import facts_bytes

    d = tmp_path / "store"
    (d / "runs").mkdir(parents=True)
    shutil.copytree(data / "runs" / "run=lz", d / "runs" / "run=lz")
    code, out = _cli("verify", "--data", str(d), "-q")
    assert code == 0, out
    mpath = d / "runs" / "run=lz" / "manifest.json"
    m = json.loads(mpath.read_text())
    entry = m["shards"][0]["files"][FACTS_TABLE]
    t = pq.read_table(d / "runs" / "run=lz" / entry["path"])
    conflicts = t.column("conflicts").to_pylist()
    conflicts[5] += 1
    t = t.set_column(t.schema.get_field_index("conflicts"), "conflicts",
                     pa.array(conflicts, pa.uint8()))  # fmt: skip
    raw = facts_bytes(t)
    (d / "runs" / "run=lz" / entry["path"]).write_bytes(raw)
    entry.update(bytes=len(raw), sha256=hashlib.sha256(raw).hexdigest())
    m["progress"]["bytes"] = sum(f["bytes"] for s in m["shards"] for f in s["files"].values())
    mpath.write_text(json.dumps(m))
    code, out = _cli("verify", "--data", str(d), "-q")
    hand = t.column("hand_id")[5].as_py()
    assert code == 1
    assert (
        f"run lz shard 0: facts file {entry['path']} does not match the hands it describes:"
        f" hand {hand}, conflicts: {conflicts[5]} in the file, {conflicts[5] - 1} recomputed"
    ) in out, out


def test_an_old_run_opens_and_index_fills_its_facts(data: Path, tmp_path: Path) -> None:
    import shutil

    d = tmp_path / "store"
    (d / "runs").mkdir(parents=True)
    shutil.copytree(data / "runs" / "run=base", d / "runs" / "run=base")
    mpath = d / "runs" / "run=base" / "manifest.json"
    m = json.loads(mpath.read_text())
    kept = m["shards"][1]["files"][FACTS_TABLE]
    for s in m["shards"]:  # as recorded before facts existed
        del s["files"][FACTS_TABLE]
    (d / "runs" / "run=base" / "facts" / "part-00000.parquet").unlink()
    mpath.write_text(json.dumps(m))
    info = scan_store(d).run("base")
    assert info is not None and info.usable and not info.has_facts and info.facts_problem is None
    con = open_store(d).connect()
    assert con.execute("SELECT count(*) FROM facts").fetchone() == (0,)
    code, out = _cli("index", "--data", str(d))
    assert code == 0 and "run base: facts of 2 shard(s) derived, 0 already" in out, out
    m2 = json.loads(mpath.read_text())
    assert m2["shards"][1]["files"][FACTS_TABLE] == kept  # the same bytes again
    code, out = _cli("index", "--data", str(d))
    assert "run base: facts of 0 shard(s) derived, 2 already" in out, out
    assert scan_store(d).run("base").has_facts  # type: ignore[union-attr]


def test_a_damaged_facts_file_is_a_warning_and_index_rebuilds_it(
    data: Path, tmp_path: Path
) -> None:
    import shutil

    d = tmp_path / "store"
    (d / "runs").mkdir(parents=True)
    shutil.copytree(data / "runs" / "run=lz", d / "runs" / "run=lz")
    f = d / "runs" / "run=lz" / "facts" / "part-00000.parquet"
    f.write_bytes(f.read_bytes()[:-10])
    state = scan_store(d)
    info = state.run("lz")
    assert info is not None and info.usable and not info.has_facts
    assert "facts file facts/part-00000.parquet" in str(info.facts_problem)
    assert any("its facts are not used" in t for _, t in state.messages())
    code, out = _cli("index", "--data", str(d))
    assert code == 0 and "facts of 1 shard(s) derived" in out, out
    assert scan_store(d).run("lz").has_facts  # type: ignore[union-attr]
    con = open_store(d).connect()
    assert con.execute("SELECT count(*) FROM facts").fetchone() == (120,)


@pytest.mark.parametrize("name", ["dup", "four", "base"])
def test_event_stats_facts_equal_a_plain_count_over_the_facts(data: Path, name: str) -> None:
    from replay.analysis.event_stats import event_stats

    shards, m = _shards(data, name)
    n_seats = int(m["rules"]["players"])
    dup = bool(m["params"]["duplicate"])
    per: dict[str, dict[str, set | int]] = {}
    for s, path in shards:
        hands = pq.read_table(path / s["files"]["hands"]["path"]).to_pylist()
        facts = pq.read_table(path / s["files"][FACTS_TABLE]["path"]).to_pylist()
        for h, f in zip(hands, facts, strict=True):
            assert h["hand_id"] == f["hand_id"]
            c = h["deal_id"] if dup else h["hand_id"]
            for seat in range(n_seats):
                if n_seats == 4 and seat == (h["dealer"] + 2) % 4:
                    continue  # the 坐醒 sitter
                x = per.setdefault(
                    h[f"policy_{seat}"],
                    {"seat_hands": 0, "d": set(), "wins": 0, "d_wins": set(), "popao": 0,
                     "bipai": 0, "bipai_hands": 0, "hands": set(), "conflicts": {}},
                )  # fmt: skip
                x["seat_hands"] += 1
                x["d"].add(c)
                if h["winner"] == seat:
                    x["wins"] += 1
                    x["d_wins"].add(c)
                    x["popao"] += int(bool(f["popao"]))
                x["bipai"] += f[f"bipai_{seat}"]
                x["bipai_hands"] += int(f[f"bipai_{seat}"] > 0)
                x["hands"].add((h["hand_id"], c))
                x["conflicts"][h["hand_id"]] = f["conflicts"]
    (st,) = event_stats(open_store(data), [name])
    assert st.facts is not None and [r.policy for r in st.facts] == sorted(per)
    for r in st.facts:
        x = per[r.policy]
        conf = x["conflicts"]
        assert (r.popao_per_win.k, r.popao_per_win.n) == (x["popao"], x["wins"])
        assert (r.popao_per_hand.k, r.popao_per_hand.n) == (x["popao"], x["seat_hands"])
        assert (r.bipai, r.bipai_per_seat_hand.k) == (x["bipai"], x["bipai_hands"])
        assert r.bipai_per_seat_hand.n == x["seat_hands"]
        assert r.conflicts == sum(conf.values())
        assert (r.conflict_per_hand.k, r.conflict_per_hand.n) == (
            sum(1 for v in conf.values() if v > 0),
            len(x["hands"]),
        )
        # the interval is on the clusters (deals in --duplicate runs)
        d = len(x["d_wins"])
        assert r.popao_per_win == Rate.of(x["popao"], x["wins"], d)
        assert r.conflict_per_hand == Rate.of(
            sum(1 for v in conf.values() if v > 0), len(x["hands"]), len({c for _, c in x["hands"]})
        )


def test_an_interrupted_index_resumes_where_it_stopped(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from replay.derived import facts_files
    from replay.derived.indexer import index_derived

    run = tmp_path / "store" / "runs" / "run=base"
    shutil.copytree(data / "runs" / "run=base", run)
    m = json.loads((run / "manifest.json").read_text())
    for s in m["shards"]:
        del s["files"][FACTS_TABLE]
    (run / "manifest.json").write_text(json.dumps(m))
    shutil.rmtree(run / "facts")
    real = facts_files.write_facts
    calls: list[int] = []

    def dies_on_the_second(*args: object, **kw: object) -> dict:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(facts_files, "write_facts", dies_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        index_derived(run)
    listed = json.loads((run / "manifest.json").read_text())["shards"]
    assert [FACTS_TABLE in s["files"] for s in listed] == [True, False]  # the first is kept
    monkeypatch.setattr(facts_files, "write_facts", real)
    assert index_derived(run) == {"summary": (0, 2), "facts": (1, 1)}
    assert scan_store(tmp_path / "store").run("base").has_facts  # type: ignore[union-attr]


def test_index_makes_both_derived_files_reading_each_shard_once(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run recorded before summaries and facts: one ``index`` pass makes both, reading each
    shard's two tables once, with the bytes ``simulate`` wrote; ``--workers 2`` too."""
    import shutil

    from replay.derived.indexer import index_derived
    from replay.store.runs import Run

    for workers in (1, 2):
        run = tmp_path / f"w{workers}" / "runs" / "run=base"
        shutil.copytree(data / "runs" / "run=base", run)
        m = json.loads((run / "manifest.json").read_text())
        kept = [dict(s["files"]) for s in m["shards"]]
        for s in m["shards"]:
            del s["files"][FACTS_TABLE], s["files"]["summary"]
        (run / "manifest.json").write_text(json.dumps(m))
        shutil.rmtree(run / "facts")
        shutil.rmtree(run / "summary")
        reads: list[str] = []
        real = Run.read_shard

        def counted(
            self: Run, shard: dict, table: str, reads: list[str] = reads, real: Any = real
        ) -> object:
            reads.append(table)
            return real(self, shard, table)

        monkeypatch.setattr(Run, "read_shard", counted)
        assert index_derived(run, workers=workers) == {"summary": (2, 0), "facts": (2, 0)}
        monkeypatch.setattr(Run, "read_shard", real)
        if workers == 1:  # (a pool's workers count in their own processes)
            assert sorted(reads) == ["events", "events", "hands", "hands"]
        got = json.loads((run / "manifest.json").read_text())["shards"]
        assert [dict(s["files"]) for s in got] == kept
        assert index_derived(run, workers=workers) == {"summary": (0, 2), "facts": (0, 2)}
