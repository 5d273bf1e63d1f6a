"""A page on a store whose ``paohuzi.duckdb`` was built from other files (issue 20, item 2):
the page says so in one message and reads the store's files; it never answers from that
catalog."""

from __future__ import annotations

import shutil
from pathlib import Path

from dash_helpers import copy_store, run_page, simulate


def test_page_names_a_catalog_of_other_files_bug(
    store_dir: Path, tmp_path: Path, use_store
) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "other"
    simulate(other, "base", ["-n", "30", "--seed", "99", "--policies", "random"])
    data = copy_store(store_dir, tmp_path / "data", ["base"])
    shutil.copy(other / "paohuzi.duckdb", data / "paohuzi.duckdb")  # another store's catalog
    use_store(data)
    at = run_page("overview")
    notes = [i.value for i in at.info if "paohuzi.duckdb" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    assert "was built from other files" in notes[0] and "read the store's files" in notes[0]
    assert not at.exception
    text = " ".join(str(m.value) for m in at.markdown) + " ".join(
        str(getattr(e, "value", "")) for e in at.main
    )
    assert "240" in text  # the fixture's base run has 240 hands, the copied catalog's 30
