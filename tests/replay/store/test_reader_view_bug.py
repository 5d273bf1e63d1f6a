"""Every reader keeps its view while runs are written (issue 59, item 1): a rollup file a
published manifest lists stays readable for the readers that may still hold that manifest
(docs/LOG_FORMAT.md §14, "kept for a grace period"), so a reader of a run, or of any other
run, never fails because a writer moved on meanwhile."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from replay import store as store_api
from replay.analysis.stats import run_stats
from replay.record.importing import import_hands
from replay.replayer import importing, replay_file
from replay.store.manifest import read_manifest
from replay.store.rollup import ROLLUP_DIR, ROLLUP_KEY, prune

#: Hands per import.
BATCH = 20


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """6 × BATCH hands of a simulated run, each one JSON replay file on one line."""
    from click.testing import CliRunner

    from paohuzi.cli.main import main

    src = tmp_path_factory.mktemp("view") / "src"
    args = ["simulate", "--data", str(src), "--run", "s", "-n", str(6 * BATCH), "-q"]
    res = CliRunner().invoke(main, [*args, "--seed", "5", "-w", "1"])
    assert res.exit_code == 0, res.output
    st = store_api.open_store(src)
    return [
        json.dumps(json.loads(replay_file.export_hand(st, "s", i, "json")[0]), ensure_ascii=False)
        for i in range(6 * BATCH)
    ]


def _import(root: Path, lines: list[str], k: int, run: str) -> None:
    part = lines[k * BATCH : (k + 1) * BATCH]
    items = importing.parse_jsonl("\n".join(part).encode(), "batch", 1000, 1 << 20, "")
    assert import_hands(root, importing.ImportBatch(items), run).accepted == BATCH


def _rollups(root: Path, run: str) -> list[str]:
    return sorted(os.listdir(store_api.run_dir(root, run) / ROLLUP_DIR))


def test_a_reader_two_commits_behind_keeps_its_view_bug(tmp_path: Path, lines: list[str]) -> None:
    # Before: the file the previous manifest listed was kept until the next write, so a
    # reader still holding the manifest of two commits ago failed with "IO Error: No files
    # found that match the pattern .../rollup/part-00001.parquet" -- for the run being
    # written, and for every other run, whose figures come from one catalog over the store.
    root = tmp_path / "d"
    _import(root, lines, 0, "busy")
    _import(root, lines, 5, "quiet")
    st = store_api.open_store(root)
    state = st.scan()  # the reader's view: busy's rollup of 1 shard
    for k in (1, 2, 3):  # three commits into busy meanwhile, each with a new rollup
        _import(root, lines, k, "busy")
    assert read_manifest(store_api.run_dir(root, "busy"))[ROLLUP_KEY]["shards"] == 4
    (quiet,) = run_stats(st, ["quiet"], state=state)
    assert quiet.hands == BATCH
    (busy,) = run_stats(st, ["busy"], state=state)
    assert busy.hands == BATCH  # the view it read, whole
    assert [r.hands for r in run_stats(st, state=state)] == [BATCH, BATCH]
    (now,) = run_stats(st, ["busy"])
    assert now.hands == 4 * BATCH


def test_superseded_rollups_go_after_the_grace_period(
    tmp_path: Path, lines: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept, not hoarded: a write removes the rollups superseded longer ago than the grace
    period (``PAOHUZI_ROLLUP_GRACE`` seconds), and only those."""
    root = tmp_path / "d"
    for k in range(3):
        _import(root, lines, k, "r")
    assert _rollups(root, "r") == [f"part-0000{k}.parquet" for k in (1, 2, 3)]
    run = store_api.run_dir(root, "r")
    old = time.time() - 3600
    os.utime(run / ROLLUP_DIR / "part-00001.parquet", (old, old))
    os.utime(run / ROLLUP_DIR / "part-00002.parquet", (old + 60, old + 60))
    m = read_manifest(run)
    prune(run, m)  # part-00002 replaced part-00001 an hour ago; part-00003 replaced it now
    assert _rollups(root, "r") == ["part-00002.parquet", "part-00003.parquet"]
    monkeypatch.setenv("PAOHUZI_ROLLUP_GRACE", "0")
    prune(run, m)
    assert _rollups(root, "r") == ["part-00003.parquet"]  # the listed one stays, always
