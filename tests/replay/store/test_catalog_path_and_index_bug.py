"""Two store-wide refusals of one odd part (issue 40): a store whose path holds a comma never
got its catalog (DuckDB splits ``file_search_path`` on commas: every read said "could not be
rebuilt … read in memory" and ``index`` exited 2 forever), and one damaged run (a manifest's
``params: null``, a symlinked run folder) stopped ``paohuzi index`` for the whole store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from catalog_helpers import cli, copy_store, simulate, stats

from replay.store.layout import CATALOG_NAME, run_dir
from replay.store.summary_schema import SUMMARY_TABLE


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("comma") / "data"
    simulate(data, "a", 40, 3, 20)
    simulate(data, "b", 40, 4, 20)
    return data


def test_a_store_path_with_a_comma_gets_its_catalog_bug(pristine: Path, tmp_path: Path) -> None:
    data = copy_store(pristine, tmp_path / "com,ma")
    (data / CATALOG_NAME).unlink()
    want, _ = stats(pristine)
    got, err = stats(data)
    assert err == "" and got == want  # no "could not be rebuilt …; read in memory"
    code, _, err = cli("index", "--data", str(data), "-q")
    assert (code, err) == (0, "")
    con = duckdb.connect(str(data / CATALOG_NAME), read_only=True)
    meta = dict(con.execute("SELECT key, value FROM catalog_meta").fetchall())
    assert (meta["paths"], meta["root"]) == ("absolute", str(data.resolve()))
    con.close()
    again, err = stats(data)
    assert err == "" and again == want  # the catalog file is used as it is


def test_a_comma_store_moved_rebuilds_its_catalog_bug(pristine: Path, tmp_path: Path) -> None:
    # absolute paths bind the catalog to its folder: a moved copy is rebuilt, never misread
    first = copy_store(pristine, tmp_path / "x,1")
    (first / CATALOG_NAME).unlink()
    stats(first)
    moved = tmp_path / "y,2"
    shutil.move(first, moved)
    want, _ = stats(pristine)
    got, err = stats(moved)
    assert got == want
    assert (
        err
        == f"Note: the catalog {moved.resolve() / CATALOG_NAME} was built for another folder; rebuilt\n"
    )
    plain = tmp_path / "plain"
    shutil.move(moved, plain)  # and a relative catalog is what a comma-free path gets back
    got, err = stats(plain)
    assert got == want and "was built for another folder; rebuilt" in err


def _index(data: Path) -> tuple[int, str, str]:
    return cli("index", "--data", str(data))


def test_one_damaged_run_does_not_stop_index_bug(pristine: Path, tmp_path: Path) -> None:
    data = copy_store(pristine, tmp_path / "data")
    (data / CATALOG_NAME).unlink()
    # a healthy run's summary to rebuild, and a damaged run beside it
    a = run_dir(data, "a")
    m = json.loads((a / "manifest.json").read_text())
    for shard in m["shards"]:
        shutil.move(a / shard["files"][SUMMARY_TABLE]["path"], tmp_path / f"s{shard['index']}")
        del shard["files"][SUMMARY_TABLE]
    (a / "manifest.json").write_text(json.dumps(m))
    b = run_dir(data, "b")
    doc = json.loads((b / "manifest.json").read_text())
    doc["params"] = None
    (b / "manifest.json").write_text(json.dumps(doc))
    code, out, err = _index(data)
    assert code == 0, err
    n = len(m["shards"])
    assert f"run a: {n} shard(s) summarised, 0 already" in out
    (warning,) = [line for line in err.splitlines() if line.startswith("Warning:")]
    assert warning.startswith("Warning: run b left out (a damaged run: run b: ")
    assert (data / CATALOG_NAME).is_file()
    assert all((a / SUMMARY_TABLE / f"part-{i:05d}.parquet").is_file() for i in range(n))
    # named on the command line, the damaged run is an error (the others still indexed)
    code, out, err = cli("index", "a", "b", "--data", str(data))
    assert (
        code == 2 and err.splitlines()[-1] == "Error: 1 run(s) not indexed (see the warnings above)"
    )


def test_a_symlinked_run_folder_does_not_stop_index_bug(pristine: Path, tmp_path: Path) -> None:
    data = copy_store(pristine, tmp_path / "data")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run_dir(data, "b"), elsewhere)
    run_dir(data, "b").symlink_to(elsewhere, target_is_directory=True)
    code, out, err = _index(data)
    assert code == 0, err
    assert "run a: 0 shard(s) summarised, 3 already" in out  # 40 hands in sessions
    assert err.startswith("Warning: run b left out (a damaged run: ")
