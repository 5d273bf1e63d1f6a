"""The store: atomic files, manifest, lock, catalog views, readers, and the log's codes."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import click
import duckdb
import pytest
from click.testing import CliRunner

from engine.actions import ActionKind
from engine.errors import CorruptLog
from engine.hu import Source
from engine.mingtang import REGISTRY
from engine.rules import find_rules
from engine.state import OutcomeKind
from replay import schema, store
from replay.record import runner
from replay.record.spec import RunSpec
from replay.store.runs import open_store


def small_run(root: Path, name: str | None = None, deals: int = 40) -> store.Run:
    spec = RunSpec(
        rules=find_rules("hunan"),
        policies=("random",) * 3,
        seed=3,
        deals=deals,
        shard_hands=16,
    )
    res = runner.simulate(spec, root, name)
    return open_store(root).run(res.name)


# ------------------------------------------------------------------ files


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    store.atomic_write(p, b"one")
    store.atomic_write(p, b"two")
    assert p.read_bytes() == b"two"
    assert [x.name for x in tmp_path.iterdir()] == ["f.bin"]


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "f.bin"
    store.atomic_write(p, b"old")
    with pytest.raises(TypeError):
        store.atomic_write(p, "not bytes")  # type: ignore[arg-type]
    assert p.read_bytes() == b"old"
    assert [x.name for x in tmp_path.iterdir()] == ["f.bin"]


def test_cleanup_temp_only_removes_temporaries(tmp_path: Path) -> None:
    (tmp_path / "hands").mkdir()
    keep = tmp_path / "hands" / "part-00000.parquet"
    keep.write_bytes(b"x")
    (tmp_path / "hands" / ".part-00001.parquet.tmp-123").write_bytes(b"half")
    (tmp_path / ".manifest.json.tmp-9").write_bytes(b"{")
    assert store.cleanup_temp(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["hands", "part-00000.parquet"]


def test_manifest_round_trip_and_corruption(tmp_path: Path) -> None:
    doc = {"format": store.MANIFEST_FORMAT, "schema_version": 1, "run": "r"}
    doc |= {"status": "complete", "rules": {}, "shards": [], "identity": {"imported": True}}
    store.write_manifest(tmp_path, doc)
    assert store.read_manifest(tmp_path) == doc
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(CorruptLog, match="unreadable manifest"):
        store.read_manifest(tmp_path)
    store.write_manifest(tmp_path, {"format": store.MANIFEST_FORMAT, "schema_version": 99})
    with pytest.raises(CorruptLog, match="newer than this reader"):
        store.read_manifest(tmp_path)
    with pytest.raises(CorruptLog, match="no manifest"):
        store.read_manifest(tmp_path / "nowhere")


def test_run_lock_is_exclusive(tmp_path: Path) -> None:
    with (
        store.RunLock(tmp_path),
        pytest.raises(store.StoreError, match="being written by another process"),
    ):
        store.RunLock(tmp_path).__enter__()
    with store.RunLock(tmp_path):  # released on exit
        pass


def test_ensure_writable(tmp_path: Path) -> None:
    assert store.ensure_writable(tmp_path / "new") == (tmp_path / "new").resolve()
    assert (tmp_path / "new" / "runs").is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(store.StoreError, match="cannot write to data directory"):
        store.ensure_writable(tmp_path / "file" / "sub")


def test_run_names_are_checked() -> None:
    assert store.check_run_name("hunan-s1_n10.v2") == "hunan-s1_n10.v2"
    for bad in ("", "a/b", "../x", "-x", "a b", "x" * 121):
        with pytest.raises(store.StoreError, match="bad run name"):
            store.check_run_name(bad)


def test_data_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    @click.command()
    @store.data_option
    def cmd(data: Path) -> None:
        click.echo(str(data))

    monkeypatch.delenv(store.DATA_ENV, raising=False)
    assert CliRunner().invoke(cmd, []).output.strip() == "data"
    assert CliRunner().invoke(cmd, ["--data", str(tmp_path)]).output.strip() == str(tmp_path)
    monkeypatch.setenv(store.DATA_ENV, str(tmp_path / "env"))
    assert CliRunner().invoke(cmd, []).output.strip() == str(tmp_path / "env")


# ------------------------------------------------------------------ runs and catalog


def test_manifest_lists_finished_shards_with_checksums(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    m = run.manifest
    assert m["status"] == "complete" and m["schema_version"] == schema.SCHEMA_VERSION
    assert m["rules_fingerprint"] == find_rules("hunan").fingerprint()
    assert m["rules"] == find_rules("hunan").to_dict()
    assert m["codes"]["outcome"]["HUANGZHUANG"] == 1
    assert [c["name"] for c in m["tables"]["events"]] == [f.name for f in schema.EVENTS_SCHEMA]
    assert [s["index"] for s in run.shards] == list(range(m["params"]["n_shards"]))
    for s in run.shards:
        for table, f in s["files"].items():
            data = (run.path / f["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == f["sha256"] and len(data) == f["bytes"]
            assert run.read_shard(s, table).num_rows == f["rows"]
    assert m["progress"]["hands"] == run.n_hands == 40


def test_row_count_mismatch_is_corrupt(tmp_path: Path) -> None:
    run = small_run(tmp_path)
    run.manifest["shards"][0]["files"]["hands"]["rows"] += 1
    with pytest.raises(CorruptLog, match="manifest says"):
        run.read_table("hands")


def test_empty_store_has_typed_views(tmp_path: Path) -> None:
    store.ensure_writable(tmp_path)
    store.refresh_catalog(tmp_path)
    con = open_store(tmp_path).connect()
    cols = [r[0] for r in con.execute("DESCRIBE hands").fetchall()]
    assert cols == [f.name for f in schema.HANDS_SCHEMA] + ["run"]
    cols = [r[0] for r in con.execute("DESCRIBE events").fetchall()]
    assert cols == [f.name for f in schema.EVENTS_SCHEMA] + ["run"]
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_catalog_views_over_every_run(tmp_path: Path) -> None:
    small_run(tmp_path, "2024")  # a numeric name stays a string
    small_run(tmp_path, "b", deals=24)
    con = open_store(tmp_path).connect()
    rows = con.execute("SELECT run, count(*) FROM hands GROUP BY run ORDER BY run").fetchall()
    assert rows == [("2024", 40), ("b", 24)]
    runs = con.execute(
        "SELECT run, status, hands, hands_target, players, rules_preset FROM runs ORDER BY run"
    ).fetchall()
    assert runs == [("2024", "complete", 40, 40, 3, "hunan"), ("b", "complete", 24, 24, 3, "hunan")]
    n = con.execute("SELECT count(*) FROM events JOIN hands USING (run, hand_id)").fetchone()
    assert n == con.execute("SELECT sum(n_events) FROM hands").fetchone()
    assert con.execute("SELECT name FROM outcome_codes WHERE code = 1").fetchone() == (
        "HUANGZHUANG",
    )


def test_catalog_is_opened_read_only(tmp_path: Path) -> None:
    small_run(tmp_path)
    con = open_store(tmp_path).connect()
    assert con.execute("SELECT value FROM catalog_meta WHERE key = 'root'").fetchone() == (
        str(tmp_path.resolve()),
    )
    with pytest.raises(duckdb.Error):
        con.execute("CREATE TABLE t (x INTEGER)")
    # A writer can still refresh while a reader holds the catalog open.
    store.refresh_catalog(tmp_path)
    assert open_store(tmp_path).connect().execute("SELECT count(*) FROM hands").fetchone() == (40,)


def test_moved_or_stale_catalog_falls_back(tmp_path: Path) -> None:
    small_run(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "moved")
    shutil.rmtree(tmp_path / "a")
    con = open_store(tmp_path / "moved").connect()
    assert con.execute("SELECT count(*) FROM hands").fetchone() == (40,)
    # A catalog built before any run existed still shows runs written since.
    store.ensure_writable(tmp_path / "c")
    store.refresh_catalog(tmp_path / "c")
    shutil.copytree(tmp_path / "moved" / "runs", tmp_path / "c" / "runs", dirs_exist_ok=True)
    con = open_store(tmp_path / "c").connect()
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] > 0


def test_store_api(tmp_path: Path) -> None:
    run = small_run(tmp_path, "x")
    s = open_store(tmp_path)
    assert s.run_names() == ["x"] and [r.name for r in s.runs()] == ["x"]
    with pytest.raises(store.StoreError, match="no run 'y'"):
        s.run("y")
    hands = list(run.iter_hands())
    assert [h.hand_id for h in hands] == list(range(40))
    one = run.read_hand(17)
    assert one.hand == hands[17].hand and one.events == hands[17].events
    assert len(one.deck) == 80 and sorted(one.deck) == sorted(list(range(20)) * 4)


# ------------------------------------------------------------------ codes


def test_codes_are_stable() -> None:
    # Written to logs: these numbers never change (STYLE §13).
    assert {k.name: int(k) for k in OutcomeKind} == {
        "HU": 0,
        "HUANGZHUANG": 1,
        "TIANHU_AUTO": 2,
        "TIANHU": 3,
    }
    assert {s.name: int(s) for s in Source} == {
        "OWN_DRAW": 0,
        "OTHER_DRAW": 1,
        "LIANG_DEALER": 2,
        "LIANG_OTHER": 3,
        "DISCARD": 4,
    }
    assert [k.name for k in sorted(ActionKind)] == [
        "PASS",
        "HU",
        "PENG",
        "DISCARD",
        "TI",
        "WEI",
        "PAO",
        "CHI",
    ]


def test_every_mingtang_has_a_bit() -> None:
    assert set(schema.MINGTANG_BITS) == set(REGISTRY)
    bits = list(schema.MINGTANG_BITS.values())
    assert len(set(bits)) == len(bits) and max(bits) < 16
    assert schema.mingtang_mask("luzhou", ["红胡", "地胡"]) == (1 << 10) | (1 << 13)
    assert schema.mingtang_mask("hunan", ["红胡", "地胡"]) == (1 << 0) | (1 << 8)


def test_options_mask() -> None:
    k = {a: 1 << a for a in ActionKind}
    assert schema.options_mask([0, 1]) == k[ActionKind.PASS] | k[ActionKind.HU]
    assert schema.options_mask([12, 15, 29]) == k[ActionKind.DISCARD]
    assert schema.options_mask([75]) == k[ActionKind.PAO]
    assert schema.options_mask([0, 2]) == k[ActionKind.PASS] | k[ActionKind.PENG]
    assert schema.options_mask([0, 101, 144]) == k[ActionKind.PASS] | k[ActionKind.CHI]
    assert schema.options_mask([2]) == k[ActionKind.PENG]


def test_catalog_reads_only_listed_shards_bug(tmp_path: Path) -> None:
    # The views globbed every Parquet file: an unlisted (unfinished) shard was read, and a run
    # with an unreadable manifest broke every query of the store.
    run = small_run(tmp_path, "a")
    small_run(tmp_path, "b", deals=24)
    extra = run.path / "hands" / "part-09999.parquet"
    shutil.copy(run.shard_path(run.shards[0], "hands"), extra)
    (tmp_path / "runs" / "run=b" / "manifest.json").write_text("{not json")
    con = open_store(tmp_path).connect()
    assert con.execute("SELECT run, count(*) FROM hands GROUP BY run").fetchall() == [("a", 40)]
    assert con.execute("SELECT run FROM runs").fetchall() == [("a",)]
    # The catalog file is stale once a shard is listed or dropped, and is rebuilt in memory.
    store.refresh_catalog(tmp_path)
    assert open_store(tmp_path).connect().execute("SELECT count(*) FROM hands").fetchone() == (40,)


def test_manifest_writer_paces_rewrites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every change of a small manifest is written at once; a big one is rewritten every
    1/64 of its shards (linear total work), and flush() writes what is pending."""
    from replay.store import manifest as M

    writes: list[int] = []
    monkeypatch.setattr(M, "write_manifest", lambda p, m: writes.append(len(m["shards"])))
    doc: dict = {"shards": []}
    w = M.ManifestWriter(tmp_path, doc)
    for i in range(64):
        doc["shards"].append({"index": i})
        assert w.due()
    assert len(writes) == 64
    writes.clear()
    doc["shards"] += [{"index": i} for i in range(64, 640)]  # 640 listed: every 10th change
    assert [w.due() for _ in range(25)].count(True) == 2 and len(writes) == 2
    w.flush()
    assert len(writes) == 3
    w.flush()  # nothing pending
    assert len(writes) == 3
