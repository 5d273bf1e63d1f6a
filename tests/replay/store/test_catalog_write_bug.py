"""Catalog write failures are one line (issue 20, item 5): ``index`` on a read-only store or
with something other than a regular file as ``paohuzi.duckdb`` is refused before it writes
anything, a full disk while the catalog is written is one ``Error:`` line (exit 2) for
``index`` and one ``Warning:`` line for ``import`` and ``simulate``, whose data is written;
the next command rebuilds the catalog."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from catalog_helpers import cli, copy_store, figures, on_disk, read_only, simulate, stats

from replay.store import catalog
from replay.store.layout import CATALOG_NAME, run_dir

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "honghu-zimo.phz"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("write") / "data"
    simulate(data, "a", 80, 3, 40)
    return data


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    return copy_store(pristine, tmp_path / "data")


def _catalog(data: Path) -> Path:
    return data.resolve() / CATALOG_NAME


def _no_temp_left(data: Path) -> bool:
    return not [p for p in os.listdir(data) if p.startswith(f".{CATALOG_NAME}.tmp")]


def test_index_on_a_read_only_store_is_one_error_bug(data: Path) -> None:
    # As root, whom mode bits do not stop, index wrote the summaries of a store marked
    # read-only; as anyone else it ended in an IOException traceback.
    summary = run_dir(data, "a") / "summary" / "part-00001.parquet"
    summary.unlink()  # index would make it again
    mode = read_only(data)
    try:
        code, out, err = cli("index", "--data", str(data))
    finally:
        os.chmod(data, mode)
    assert code == 2 and out == ""
    assert err == (
        f"Error: nothing indexed: the store {data.resolve()} is read-only: its catalog"
        f" {_catalog(data)} cannot be written\n"
    )
    assert not summary.exists()


@pytest.mark.parametrize("kind", ["directory", "FIFO"])
def test_index_with_a_special_file_as_catalog_is_refused_at_once_bug(data: Path, kind: str) -> None:
    path = _catalog(data)
    path.unlink()
    path.mkdir() if kind == "directory" else os.mkfifo(path)
    code, out, err = cli("index", "--data", str(data))
    assert code == 2 and out == ""
    assert err == (
        f"Error: nothing indexed: the catalog {path} is a {kind}, not a regular file: remove"
        " it, and it is rebuilt\n"
    )
    shutil.rmtree(path) if kind == "directory" else path.unlink()
    code, out, err = cli("index", "--data", str(data))  # the next one does the job
    assert code == 0 and err == "" and path.is_file()


def _disk_full_in(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """The catalog's write fails as a full disk makes it fail: DuckDB's IOException (or its
    FatalException) while writing, or ENOSPC from the file system at the rename."""
    real = catalog.build_catalog

    def failing(con: Any, *a: Any, **k: Any) -> None:
        real(con, *a, **k)
        if how == "io":
            raise duckdb.IOException('IO Error: Could not write file "x": No space left on device')
        if how == "fatal":
            raise duckdb.FatalException(
                "FATAL Error: Failed: database has been invalidated because of a previous"
                ' fatal error: Could not write file "x": No space left on device'
            )

    def replace(src: Any, dst: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(catalog, "build_catalog", failing)
    if how == "rename":
        monkeypatch.setattr(catalog.os, "replace", replace)


@pytest.mark.parametrize("how", ["io", "fatal", "rename"])
def test_index_disk_full_while_writing_the_catalog_bug(
    data: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # FatalException / IOException tracebacks.
    before = _catalog(data).read_bytes()
    with monkeypatch.context() as m:
        _disk_full_in(m, how)
        code, out, err = cli("index", "--data", str(data))
    assert code == 2
    assert err == (
        f"Error: the catalog was not rebuilt: disk full while writing {_catalog(data)} (the"
        " summaries are written; run 'paohuzi index' again)\n"
    )
    assert _catalog(data).read_bytes() == before and _no_temp_left(data)
    code, out, err = cli("index", "--data", str(data))
    assert code == 0 and err == ""


def test_import_disk_full_after_the_commit_is_a_warning_bug(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A FatalException traceback after the hand was committed: now the hand is imported
    # (exit 0, its line), the catalog's failure one Warning line, and the next reader
    # rebuilds the catalog.
    with monkeypatch.context() as m:
        _disk_full_in(m, "io")
        code, out, err = cli("import", str(EXAMPLE), "--data", str(data), "--run", "imp")
    assert code == 0, err
    assert out == f"imported {EXAMPLE} as run imp hand 0\n"
    assert err == (
        "Warning: the hands are imported, but the catalog was not refreshed (disk full while"
        f" writing {_catalog(data)}); readers rebuild it when they can\n"
    )
    got, err = stats(data, "imp")
    assert figures(got[0]) == on_disk(data, "imp") == (1, 1)
    assert err == (
        f"Note: the catalog {_catalog(data)} was built from other files (run imp changed);"
        " rebuilt\n"
    )
    assert stats(data)[1] == ""


def test_simulate_disk_full_while_writing_the_catalog_is_a_warning_bug(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as m:
        _disk_full_in(m, "io")
        code, out, err = cli("simulate", "--data", str(data), "--run", "b", "-n", "8",
                             "-w", "1", "-q")  # fmt: skip
    assert code == 0
    assert err == (
        f"Warning: run b is recorded, but the catalog {data / CATALOG_NAME} was not refreshed"
        f" (StoreError: disk full while writing {_catalog(data)}); readers build it in"
        " memory until it can be written\n"
    )
    got, err = stats(data, "b")
    assert figures(got[0]) == on_disk(data, "b") and got[0]["hands"] == 8
    assert "rebuilt" in err and stats(data)[1] == ""
