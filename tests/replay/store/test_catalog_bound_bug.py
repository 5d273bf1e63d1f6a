"""The catalog bound to its store (issue 20, item 2): a reader that finds ``paohuzi.duckdb``
built from other files, or not written by paohuzi, or not a regular file, never answers
from it: it rebuilds it (a writable store) or reads in memory, and says so in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest
from catalog_helpers import cli, copy_store, figures, on_disk, read_only, simulate, stats

from replay.store import catalog, scan
from replay.store.layout import CATALOG_NAME, run_dir


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two stores with a run ``a`` each, of the same size, other hands (other seeds)."""
    base = tmp_path_factory.mktemp("bound")
    simulate(base / "mine", "a", 120, 1, 40)
    simulate(base / "theirs", "a", 120, 2, 40)
    return base / "mine", base / "theirs"


@pytest.fixture
def mine(stores: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_store(stores[0], tmp_path / "mine")


def _note(data: Path, what: str) -> str:
    return f"Note: the catalog {data.resolve() / CATALOG_NAME} {what}\n"


def test_catalog_of_another_store_is_rebuilt_with_a_note_bug(
    mine: Path, stores: tuple[Path, Path]
) -> None:
    # paohuzi.duckdb of another store copied in was answered from (or, since item 2's first
    # part, silently passed over): now it is rebuilt, and stderr says so once.
    want = on_disk(mine, "a")
    shutil.copy(stores[1] / CATALOG_NAME, mine / CATALOG_NAME)
    got, err = stats(mine)
    assert figures(got[0]) == want
    assert err == _note(mine, "was built from other files (run a changed); rebuilt")
    again, err = stats(mine)  # rebuilt: current now, no note
    assert again == got and err == ""


def test_replaced_run_folder_is_noted_bug(mine: Path, stores: tuple[Path, Path]) -> None:
    # A run folder replaced by another of the same name and size: the figures on disk, and
    # the note, not the old catalog's figures.
    old, _ = stats(mine)
    shutil.rmtree(run_dir(mine, "a"))
    shutil.copytree(run_dir(stores[1], "a"), run_dir(mine, "a"))
    got, err = stats(mine)
    assert figures(got[0]) == on_disk(stores[1], "a") != figures(old[0])
    assert err == _note(mine, "was built from other files (run a changed); rebuilt")
    code, out, err = cli("hands", "--data", str(mine), "a", "--limit", "1")
    assert code == 0 and "Note:" not in err, err  # the catalog is current again


def test_stale_catalog_of_a_read_only_store_is_read_in_memory_bug(
    mine: Path, stores: tuple[Path, Path]
) -> None:
    shutil.copy(stores[1] / CATALOG_NAME, mine / CATALOG_NAME)
    before = (mine / CATALOG_NAME).read_bytes()
    mode = read_only(mine)
    try:
        got, err = stats(mine)
    finally:
        os.chmod(mine, mode)
    assert figures(got[0]) == on_disk(mine, "a")
    assert err == _note(
        mine, "was built from other files (run a changed); read in memory (the store is read-only)"
    )
    assert (mine / CATALOG_NAME).read_bytes() == before  # a read-only store is never written


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: p.write_bytes(b"not a database" * 100), "is not a DuckDB database"),
        (
            lambda p: duckdb.connect(str(p)).execute("CREATE TABLE runs (run VARCHAR)").close(),
            "was not written by paohuzi (it has no catalog_meta)",
        ),
    ],
    ids=["garbage", "foreign"],
)
def test_catalog_not_written_by_paohuzi_is_rebuilt_bug(mine: Path, make: object, what: str) -> None:
    (mine / CATALOG_NAME).unlink()
    make(mine / CATALOG_NAME)  # type: ignore[operator]
    got, err = stats(mine)
    assert figures(got[0]) == on_disk(mine, "a")
    assert err == _note(mine, f"{what}; rebuilt")
    assert stats(mine)[1] == ""


@pytest.mark.parametrize("kind", ["directory", "FIFO", "symbolic link"])
def test_special_file_as_catalog_is_never_opened_bug(mine: Path, kind: str) -> None:
    # A FIFO in place of paohuzi.duckdb hung every command; a directory or a link to
    # /dev/zero is no catalog either: readers read in memory and say so.
    path = mine / CATALOG_NAME
    path.unlink()
    if kind == "directory":
        path.mkdir()
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    got, err = stats(mine)
    assert figures(got[0]) == on_disk(mine, "a")
    assert err == _note(mine, f"is a {kind}, not a regular file; read in memory")
    code, out, err = cli("hands", "--data", str(mine), "a", "--limit", "2")
    assert code == 0 and out.count("\n") >= 2  # read from the shard files, not the catalog
    assert "catalog" not in err
    assert os.path.lexists(path) and not path.is_file()  # left as it was


def test_dashboard_gets_the_note_as_a_page_message_bug(
    mine: Path, stores: tuple[Path, Path], tmp_path: Path
) -> None:
    state = scan.scan_store(mine)
    assert catalog.prepare_catalog(state, tmp_path / "ok.duckdb") is None  # current: no note
    shutil.copy(stores[1] / CATALOG_NAME, mine / CATALOG_NAME)
    note = catalog.prepare_catalog(state, tmp_path / "stale.duckdb")
    assert note == (
        f"The catalog {mine.resolve() / CATALOG_NAME} was built from other files (run a"
        " changed); the pages read the store's files instead (any `paohuzi stats` or"
        " `paohuzi index` rebuilds it)."
    )
    con = catalog.open_catalog(state, prepared=tmp_path / "stale.duckdb")
    try:
        (n,) = con.execute("SELECT count(*) FROM hands WHERE outcome <> 1").fetchone()  # type: ignore[misc]
    finally:
        con.close()
    assert (120, n) == on_disk(mine, "a")
