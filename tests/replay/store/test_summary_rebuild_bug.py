"""``paohuzi index`` rebuilds a summary file that is missing or damaged (issue 20, item 8):
it said "1 already" and left a deleted summary file deleted, and a summary of other hands
in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_helpers import cli, copy_store, replace_summary, simulate, summary_of

from replay.store.layout import run_dir


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("rebuild")
    simulate(base / "a", "a", 80, 6, 40)
    simulate(base / "big", "big", 80, 7, 80)
    return base / "a", base / "big"


@pytest.fixture
def data(stores: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_store(stores[0], tmp_path / "a")


def _entry(data: Path, index: int) -> dict:
    m = json.loads((run_dir(data, "a") / "manifest.json").read_text())
    return next(s["files"]["summary"] for s in m["shards"] if s["index"] == index)


def _index(data: Path) -> str:
    code, out, err = cli("index", "--data", str(data))
    assert code == 0 and err == "", err
    return out.split(" (")[0]


def test_index_rebuilds_a_deleted_summary_file_bug(data: Path) -> None:
    path = run_dir(data, "a") / "summary" / "part-00001.parquet"
    body, entry = path.read_bytes(), _entry(data, 1)
    path.unlink()
    assert _index(data) == "run a: 1 shard(s) summarised, 1 already"
    assert path.read_bytes() == body  # the same bytes: a summary is a function of its hands
    assert _entry(data, 1) == entry
    assert _index(data) == "run a: 0 shard(s) summarised, 2 already"
    code, out, _ = cli("verify", "--data", str(data), "-q")
    assert code == 0 and out.endswith("all good\n")


def test_index_rebuilds_a_summary_of_other_hands_bug(data: Path, stores: tuple[Path, Path]) -> None:
    good = summary_of(data, "a", 0)
    replace_summary(data, "a", 0, summary_of(stores[1], "big", 0))
    assert _index(data) == "run a: 1 shard(s) summarised, 1 already"
    assert summary_of(data, "a", 0).equals(good)
    code, out, _ = cli("verify", "--data", str(data), "-q")
    assert code == 0 and out.endswith("all good\n")
