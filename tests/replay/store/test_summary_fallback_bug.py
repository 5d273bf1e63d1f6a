"""A missing or damaged summary costs only the summary (issue 20, item 8): readers fall back
to the run's hands, with a warning, and ``index`` rebuilds it. A deleted summary file made
its whole run disappear although its hands were intact; a summary of other hands (its
manifest entry made to match) made stats print 2,891 hands and 991 wins for a run of 2,000
hands and 100 wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_helpers import (
    cli,
    copy_store,
    figures,
    on_disk,
    replace_summary,
    simulate,
    stats,
    summary_of,
)

from replay.store import scan
from replay.store.layout import run_dir


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("fallback")
    simulate(base / "a", "a", 120, 8, 40)
    simulate(base / "a", "b", 40, 9, 40)
    simulate(base / "big", "big", 120, 10, 120)
    return base / "a", base / "big"


@pytest.fixture
def data(stores: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_store(stores[0], tmp_path / "a")


def _warning(problem: str) -> str:
    return (
        f"Warning: run a: its summary tables are not used ({problem}); its figures are read"
        " from its hands (run 'paohuzi index' to rebuild them)\n"
    )


def test_deleted_summary_file_falls_back_to_the_hands_bug(data: Path) -> None:
    want, _ = stats(data, env={"PAOHUZI_SUMMARY": "0"})
    (run_dir(data, "a") / "summary" / "part-00001.parquet").unlink()
    got, err = stats(data)
    assert [r["run"] for r in got] == ["a", "b"] and got == want
    assert figures(got[0]) == on_disk(data, "a")
    assert _warning("shard file summary/part-00001.parquet is missing") in err, err
    info = scan.scan_store(data).run("a")
    assert info is not None and info.problem is None and info.usable
    code, out, err = cli("index", "--data", str(data))
    assert code == 0 and "run a: 1 shard(s) summarised, 2 already" in out, err
    got, err = stats(data)
    assert got == want and err == ""


def test_summary_of_other_hands_is_never_counted_bug(data: Path, stores: tuple[Path, Path]) -> None:
    want, _ = stats(data, env={"PAOHUZI_SUMMARY": "0"})
    replace_summary(data, "a", 1, summary_of(stores[1], "big", 0))
    got, err = stats(data, "a")
    assert figures(got[0]) == on_disk(data, "a") == figures(want[0])
    assert got[0]["hands"] == 120  # not 120 - 40 + 120
    warning = _warning(
        "summary file summary/part-00001.parquet counts 120 hands, its shard holds 40"
    )
    assert warning in err.splitlines(keepends=True), err
    state = scan.scan_store(data)
    assert any(lvl == "warning" and "summary tables are not used" in text
               for lvl, text in state.messages())  # fmt: skip
    code, out, _ = cli("index", "--data", str(data))
    assert code == 0 and "run a: 1 shard(s) summarised, 2 already" in out
    assert stats(data, "a") == (want[:1], "")
