"""Integrity on every read path (issue 10): a shard swapped, edited in place, truncated or
named outside its run folder is caught by the cheap checks of ``replay.store.scan`` before
any number is computed from it; its run is left out (or refused by name) and every other run
stays usable; the catalog is relative to the store, so a copy works without the original."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from engine.errors import CorruptLog
from paohuzi.cli.main import main
from replay.replayer.hand import load_hand
from replay.store import scan
from replay.store.catalog import refresh_catalog
from replay.store.layout import CATALOG_NAME, SCAN_MEMO_NAME, run_dir
from replay.store.runs import open_store


def simulate(data: Path, run: str, seed: int, hands: int = 120) -> None:
    r = CliRunner().invoke(
        main,
        ["simulate", "--data", str(data), "--run", run, "--hands", str(hands), "--seed",
         str(seed), "--shard-hands", "40", "-w", "1", "-q"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("store")
    simulate(data, "r", 9)
    simulate(data, "other", 10)
    return data


@pytest.fixture()
def data(pristine: Path, tmp_path: Path) -> Path:
    out = tmp_path / "data"
    shutil.copytree(pristine, out)
    return out


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def stats_json(data: Path, *runs: str) -> dict:
    code, out, err = cli("stats", "--data", str(data), "--json", *runs)
    assert code == 0, err
    return json.loads(out)


def shard(data: Path, run: str, table: str, index: int) -> Path:
    return run_dir(data, run) / table / f"part-{index:05d}.parquet"


def test_pristine_store_passes(data: Path) -> None:
    state = scan.scan_store(data)
    assert [(r.name, r.problem) for r in state.runs] == [("other", None), ("r", None)]
    assert {r["run"] for r in stats_json(data)["runs"]} == {"r", "other"}


def test_swapped_shard_is_refused_not_counted_twice(data: Path) -> None:
    before = stats_json(data, "other")
    for table in ("hands", "events"):
        shutil.copy(shard(data, "r", table, 2), shard(data, "r", table, 1))
    code, _, err = cli("stats", "--data", str(data), "r")
    assert code == 2 and err.count("\n") == 1
    assert "run r is damaged" in err and "part-00001.parquet" in err
    # Without names the damaged run is left out, said so on stderr, the others stay right.
    code, out, err = cli("stats", "--data", str(data), "--json")
    assert code == 0 and "Warning: run r is damaged and left out" in err
    assert [r["run"] for r in json.loads(out)["runs"]] == ["other"]
    assert json.loads(out)["runs"][0] == before["runs"][0]


def test_same_size_edit_is_caught_by_its_checksum(data: Path) -> None:
    p = shard(data, "r", "hands", 0)
    raw = bytearray(p.read_bytes())
    raw[len(raw) // 3] ^= 0xFF  # same size, same footer
    p.write_bytes(bytes(raw))
    (info,) = [r for r in scan.scan_store(data).runs if r.name == "r"]
    assert info.problem is not None and "SHA-256" in info.problem
    assert "hands/part-00000.parquet" in info.problem
    code, _, err = cli("stats", "--data", str(data), "r")
    assert code == 2 and "SHA-256" in err
    with pytest.raises(CorruptLog, match="SHA-256"):
        load_hand(data, "r", 3)
    code, _, err = cli("replay", "--data", str(data), "r", "3")
    assert code == 2 and "SHA-256" in err and err.count("\n") == 1
    # Hands of the run's other shards stay readable one by one.
    assert load_hand(data, "r", 50).hand_id == 50


def test_truncated_shard_leaves_other_runs_working(data: Path) -> None:
    p = shard(data, "r", "events", 1)
    p.write_bytes(p.read_bytes()[:100])
    assert stats_json(data, "other")["runs"][0]["run"] == "other"
    con = open_store(data).connect()
    assert con.execute("SELECT DISTINCT run FROM hands").fetchall() == [("other",)]
    assert con.execute("SELECT run FROM damaged_runs").fetchall() == [("r",)]


def test_manifest_path_outside_the_run_folder_is_never_opened(data: Path) -> None:
    mpath = run_dir(data, "r") / "manifest.json"
    m = json.loads(mpath.read_text())
    m["shards"][0]["files"]["hands"]["path"] = "../../../../../../../../etc/passwd"
    mpath.write_text(json.dumps(m))
    (info,) = [r for r in scan.scan_store(data).runs if r.name == "r"]
    assert info.problem is not None and "outside the run folder" in info.problem
    for args in (("stats", "r"), ("replay", "r", "0"), ("export", "r", "0")):
        code, _, err = cli(args[0], "--data", str(data), *args[1:])
        assert code == 2 and "outside the run folder" in err, (args, err)
    code, out, _ = cli("verify", "--data", str(data), "r")
    assert code != 0 and "outside the run folder" in out
    with pytest.raises(CorruptLog, match="outside"):
        scan.resolve_shard_path(run_dir(data, "r"), "../run=other/hands/part-00000.parquet")


def test_copied_store_works_without_the_original(data: Path, tmp_path: Path) -> None:
    refresh_catalog(data)
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    shutil.rmtree(data)
    con = open_store(copy).connect()
    assert con.execute("SELECT count(*) FROM hands").fetchone() == (240,)
    # The catalog file itself: relative paths, found through file_search_path.
    raw = duckdb.connect(str(copy / CATALOG_NAME), read_only=True)
    raw.execute("SET file_search_path = ?", [str(copy)])
    assert raw.execute("SELECT count(DISTINCT run) FROM hands").fetchone() == (2,)


def test_deleted_run_disappears_from_the_catalog(data: Path) -> None:
    refresh_catalog(data)
    shutil.rmtree(run_dir(data, "r"))
    con = open_store(data).connect()
    assert con.execute("SELECT DISTINCT run FROM hands").fetchall() == [("other",)]
    assert stats_json(data)["runs"][0]["run"] == "other"


def test_second_read_hashes_nothing(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = scan.file_sha256

    def counting(path: Path) -> str:
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(scan, "file_sha256", counting)
    (data / scan.CHECKSUM_CACHE_NAME).unlink(missing_ok=True)
    (data / SCAN_MEMO_NAME).unlink(missing_ok=True)
    scan.scan_store(data)
    listed = [f for run in ("r", "other") for sh in open_store(data).run(run).shards
              for f in sh["files"].values()]  # fmt: skip
    listed += [open_store(data).run(run).manifest["rollup"] for run in ("r", "other")]
    assert len(calls) == len(listed) >= 12  # 2 runs × 3 shards × (hands, events[, summary])
    calls.clear()
    scan.scan_store(data)
    assert calls == []
    # A file touched since is hashed again, and only it.
    p = shard(data, "r", "hands", 0)
    p.write_bytes(p.read_bytes())
    scan.scan_store(data)
    assert calls == [str(p.resolve())]


def test_second_read_opens_no_footer(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The footer's row count and hand-id range are cached with the checksum: a rescan of
    an unchanged store only stats the files; a changed file is read again, and its damage
    is still caught."""
    calls: list[str] = []
    real = pq.read_metadata

    def counting(path: Path, *a: object, **k: object) -> object:
        calls.append(str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(pq, "read_metadata", counting)  # scan imports it where it reads
    (data / scan.CHECKSUM_CACHE_NAME).unlink(missing_ok=True)
    first = scan.scan_store(data)
    assert len(calls) >= 12
    calls.clear()
    again = scan.scan_store(data)
    assert calls == [] and again.runs == first.runs
    p = shard(data, "r", "hands", 0)
    body = p.read_bytes()
    try:
        p.write_bytes(body[:100] + b"\0" * (len(body) - 100))  # same size, a broken file
        info = scan.scan_store(data).run("r")
        assert calls == [str(p.resolve())]
        assert info is not None and info.problem and "hands/part-00000" in info.problem
        assert scan.scan_store(data).run("other").problem is None  # type: ignore[union-attr]
    finally:
        p.write_bytes(body)
    assert scan.scan_store(data).run("r").problem is None  # type: ignore[union-attr]


def test_connections_draw_no_progress_bar(data: Path) -> None:
    """DuckDB draws a progress bar on stdout for queries over 2 s by default, which would
    break ``paohuzi stats --json`` on a big store: every catalog connection turns it off."""
    from replay.store.catalog import connect, open_catalog

    refresh_catalog(data)
    state = scan.scan_store(data)
    (data / CATALOG_NAME).unlink()
    for con in (connect(data), open_catalog(state)):
        try:
            assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (
                False,
            )
        finally:
            con.close()
    refresh_catalog(data)
    con = connect(data)  # the file catalog, opened read-only
    try:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (False,)
    finally:
        con.close()


def test_shard_files_and_relation_read_only_those_shards(data: Path) -> None:
    """A query about a few hands names only the shards holding them
    (``StoreState.shard_files``), and the relation over those files has the same rows as the
    catalog's view for those hands."""
    from replay.store.catalog import relation_sql

    state = scan.scan_store(data)
    info = state.run("r")
    assert info is not None and info.ranges == ((0, 39), (40, 79), (80, 119))
    hands = state.files("hands", ("r",))
    assert state.shard_files("hands", "r", 0, 0) == hands[:1]
    assert state.shard_files("hands", "r", 39, 40) == hands[:2]
    assert state.shard_files("events", "r", 100, 10**6) == state.files("events", ("r",))[2:]
    assert state.shard_files("hands", "r", 500, 600) == []
    assert state.shard_files("hands", "nope", 0, 10) == []
    con = open_store(data).connect()
    try:
        q = "SELECT run, hand_id, score FROM {} WHERE run = 'r' AND hand_id BETWEEN 35 AND 45"
        want = con.execute(q.format("hands") + " ORDER BY hand_id").fetchall()
        rel = relation_sql("hands", state.shard_files("hands", "r", 35, 45))
        assert con.execute(q.format(rel) + " ORDER BY hand_id").fetchall() == want
        assert len(want) == 11
        empty = relation_sql("events", [])
        assert con.execute(f"SELECT count(*), count(run) FROM {empty}").fetchone() == (0, 0)
    finally:
        con.close()


def test_dashboard_catalog_reuses_the_store_catalog(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard's connection starts from a copy of ``paohuzi.duckdb`` when it was built
    on exactly the checked files (no summary file read again), else builds its own; both
    answer alike, and only the listed files can be read."""
    from replay.store import catalog

    refresh_catalog(data)
    state = scan.scan_store(data)
    built: list[int] = []
    real = catalog.build_catalog
    monkeypatch.setattr(catalog, "build_catalog", lambda *a, **k: (built.append(1), real(*a, **k)))
    q = (
        "SELECT (SELECT sum(n) FROM summary_hands), (SELECT count(*) FROM hands),"
        " (SELECT count(*) FROM seats), (SELECT count(*) FROM summary), (SELECT count(*) FROM events)"
    )
    reused = catalog.open_catalog(state)
    assert built == []
    (data / CATALOG_NAME).write_bytes(b"not a database")
    fresh = catalog.open_catalog(state)
    assert built == [1]
    try:
        assert reused.execute(q).fetchone() == fresh.execute(q).fetchone()
        assert reused.execute(q).fetchone()[0] == 240  # type: ignore[index]
        with pytest.raises(duckdb.Error):
            reused.execute("SELECT * FROM read_parquet('/etc/passwd')").fetchall()
    finally:
        reused.close()
        fresh.close()
        refresh_catalog(data)


def test_the_catalog_built_again_on_one_connection(data: Path) -> None:
    """build_catalog on a connection that holds one already, of either kind (views, or the
    materialised summary tables): the second replaces the first and answers alike."""
    import duckdb

    from replay.store import catalog

    state = scan.scan_store(data)
    q = "SELECT (SELECT sum(n) FROM summary_hands), (SELECT count(*) FROM hands)"
    con = duckdb.connect()
    try:
        got = []
        for materialize in (False, True, True, False):
            catalog.build_catalog(con, state, materialize=materialize)
            kind = con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'summary_hands'"
            ).fetchone()
            assert kind == (1 if materialize else 0,)
            got.append(con.execute(q).fetchone())
        assert got == [(240, 240)] * 4
    finally:
        con.close()
