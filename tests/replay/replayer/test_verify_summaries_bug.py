"""Derived data checked against its source (issue 20, item 8): ``verify`` recomputes every
summary file from the hands it summarises and names a difference; a summary rewritten with
its manifest entry made to match passed every check and verify said "all good"."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from catalog_helpers import cli, copy_store, replace_summary, simulate, summary_of


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run ``a`` of 3 shards of 40 hands; a run ``big`` of one shard of 120 hands."""
    base = tmp_path_factory.mktemp("derived")
    simulate(base / "a", "a", 120, 4, 40)
    simulate(base / "big", "big", 120, 5, 120)
    return base / "a", base / "big"


@pytest.fixture
def data(stores: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_store(stores[0], tmp_path / "a")


def _verify(data: Path) -> tuple[int, str]:
    code, out, err = cli("verify", "--data", str(data), "-q")
    return code, out


def test_intact_summaries_verify_all_good(data: Path) -> None:
    code, out = _verify(data)
    assert code == 0 and out.endswith("all good\n"), out


def test_summary_of_other_hands_is_named_by_verify_bug(
    data: Path, stores: tuple[Path, Path]
) -> None:
    # The summary of another, bigger shard in place of shard 1's, its manifest entry made
    # to match: stats counted its 120 hands, verify said "all good".
    replace_summary(data, "a", 1, summary_of(stores[1], "big", 0))
    code, out = _verify(data)
    assert code == 1
    assert out.splitlines()[0] == (
        "run a shard 1: summary file summary/part-00001.parquet counts 120 hands, its shard"
        " holds 40 (the summary of other hands: 'paohuzi index' rebuilds it)"
    )
    assert out.splitlines()[-1].endswith(": 0 bad hand(s), 1 problem(s) of runs or files")


def test_edited_summary_value_is_named_by_verify_bug(data: Path) -> None:
    # Same hands, one sum changed: the row and column are named.
    t = summary_of(data, "a", 2)
    is_hands = pc.equal(t.column("kind"), "hands").to_pylist()
    i = is_hands.index(True)
    col = t.column("score_s").to_pylist()
    was = col[i]
    col[i] = (was or 0) + 7
    t = t.set_column(t.schema.get_field_index("score_s"), "score_s", pa.array(col, pa.int64()))
    replace_summary(data, "a", 2, t)
    code, out = _verify(data)
    assert code == 1
    assert out.splitlines()[0] == (
        "run a shard 2: summary file summary/part-00002.parquet does not match the hands it"
        f" summarises: its hands rows differ (row 0, score_s: {(was or 0) + 7} in the file,"
        f" {was} recomputed)"
    )


def test_missing_summary_file_is_named_by_verify_bug(data: Path) -> None:
    (data / "runs" / "run=a" / "summary" / "part-00000.parquet").unlink()
    code, out = _verify(data)
    assert code == 1
    assert out.splitlines()[0] == (
        "run a shard 0: summary file summary/part-00000.parquet is missing ('paohuzi index'"
        " rebuilds it)"
    )
