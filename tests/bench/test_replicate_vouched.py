"""bench.dashboard's replication vouches in the store's checksum cache for every file it writes
(issue 65): the hands and events, and a whole copy's summary and facts (their SHA-256, rows,
hand ids, the hands a summary counts) and for the run's rollup it sums, so the first reader
of a big store reads none of them back, and what it vouched is what a reader's check finds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from catalog_helpers import ok_output

from bench.dashboard import replicate_parallel
from replay.store import scan as scan_mod
from replay.store import summary_schema
from replay.store.scan import ChecksumCache, Uncached, scan_store


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vouched") / "data"
    ok_output(["simulate", "--data", str(root), "--run", "src", "-q", "-w", "1", "-n", "512",
               "--shard-hands", "128", "--seed", "9", "-p", "greedy,random,greedy"])  # fmt: skip
    (root / ".scan.json").unlink(missing_ok=True)
    replicate_parallel(root, "src", root, "big", 4 * 512, workers=1)
    (root / ".scan.json").unlink(missing_ok=True)  # the first reader checks every file
    return root


def test_the_first_reader_reads_back_none_of_the_big_runs_files(
    big: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []

    def reading(real: Any) -> Any:
        def f(path: Any, *a: Any) -> Any:
            read.append(str(path))
            return real(path, *a)

        return f

    monkeypatch.setattr(scan_mod, "file_sha256", reading(scan_mod.file_sha256))
    monkeypatch.setattr(scan_mod, "read_footer", reading(scan_mod.read_footer))
    monkeypatch.setattr(summary_schema, "summary_hands", reading(summary_schema.summary_hands))
    state = scan_store(big)
    run = state.run("big")
    assert run is not None and run.usable and run.summary_problem is None
    assert run.facts_problem is None and run.rollup_problem is None
    kinds = {t for t, _ in run.files}
    assert {"hands", "events", "summary", "facts", "rollup"} <= kinds
    assert not [p for p in read if "/run=big/" in p], read


def test_what_it_vouched_is_what_a_check_finds(big: Path) -> None:
    cache = ChecksumCache(big)
    plain = Uncached()
    run = scan_store(big).run("big")
    assert run is not None
    checked = 0
    for table, path in run.files:
        st = os.lstat(path)
        assert cache.sha256(path, st) == plain.sha256(path, st), path
        hand_ids = table in ("hands", "events", "facts")
        assert cache.footer(path, st, hand_ids) == plain.footer(path, st, hand_ids), path
        if table in ("summary", "rollup"):
            assert cache.summary_hands(path, st) == plain.summary_hands(path, st), path
        checked += 1
    assert checked == 4 * 4 * 4 + 1  # 16 shards, four files each; the rollup


def test_with_the_cut_shard_derived_index_has_nothing_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench.dashboard's build derives the cut last shard too (derive_cut): the rollup then
    covers every shard, ``paohuzi index`` makes nothing and sums no summary again, and
    ``paohuzi verify`` finds every derived file right."""
    from replay.store import open_store
    from replay.store import rollup as R

    root = tmp_path / "data"
    ok_output(["simulate", "--data", str(root), "--run", "src", "-q", "-w", "1", "-n", "512",
               "--shard-hands", "128", "--seed", "9", "-p", "greedy,random,greedy"])  # fmt: skip
    replicate_parallel(root, "src", root, "big", 4 * 512 + 50, workers=1, derive_cut=True)
    run = open_store(root).run("big")
    assert run.shards[-1]["hands"] == 50 and len(R.covered(run.manifest)) == len(run.shards)
    assert run.manifest[R.ROLLUP_KEY]["shards"] == len(run.shards)
    summed: list[object] = []
    real = R.summed

    def counting(*a: Any, **k: Any) -> Any:
        summed.append(a)
        return real(*a, **k)

    monkeypatch.setattr(R, "summed", counting)
    out = ok_output(["index", "--data", str(root), "big"])
    assert "0 shard(s) summarised, 17 already" in out, out
    assert summed == []  # the rollup it vouched for is not made again to compare
    out = ok_output(["verify", "--data", str(root), "big"])
    assert "big" in out
