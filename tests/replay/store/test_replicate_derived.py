"""The benchmarks' big runs (bench.dashboard.replicate_parallel) copy a source shard's summary
and facts with each whole copy instead of deriving them again (bench.dashboard.derived_copy):
the copies are exactly what ``paohuzi index`` would write — ``paohuzi verify`` recomputes
every derived file of the big run and finds no difference — and a cut shard is left to
``index``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from catalog_helpers import ok_output

from bench.dashboard import derived_copy, replicate_parallel
from replay.derived.summaries import shard_summary
from replay.store import open_store
from replay.store import summary_schema as S
from replay.store.facts_schema import has_facts

SOURCE = 1024  # conv bins of 8 hands; the big run's are of 32


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replicate") / "data"
    ok_output(["simulate", "--data", str(root), "--run", "src", "-q", "-w", "1", "-n",
               str(SOURCE), "--shard-hands", "256", "--seed", "7", "-p",
               "greedy,random,heuristic"])  # fmt: skip
    replicate_parallel(root, "src", root, "big", 3 * SOURCE + 300, workers=1)
    return root


def test_whole_copies_carry_their_derived_files_and_cut_ones_do_not(big: Path) -> None:
    run = open_store(big).run("big")
    whole = [s for s in run.shards if s["hands"] == 256]
    assert len(whole) == 13 and len(run.shards) == 14
    assert all(S.has_summary(s) and has_facts(s) for s in whole)
    cut = run.shards[-1]
    assert cut["hands"] == 300 - 256 and not S.has_summary(cut) and not has_facts(cut)


def test_a_copied_summary_is_the_one_computed_from_the_copied_shard(big: Path) -> None:
    run = open_store(big).run("big")
    manifest = json.loads((run.path / "manifest.json").read_text())
    manifest["params"]["hands_total"] = run.n_hands
    for shard in (run.shards[4], run.shards[11]):  # copies 1 and 2
        want = shard_summary(run.read_shard(shard, "hands"), run.read_shard(shard, "events"),
                             manifest)  # fmt: skip
        got = pq.read_table(run.shard_path(shard, S.SUMMARY_TABLE))
        assert got.equals(want)


def test_the_copies_checksums_are_vouched_for_as_a_reader_would_find_them(big: Path) -> None:
    """The builder remembers each copied shard file's SHA-256, rows and hand ids in the
    store's checksum cache (the first reader of a 10⁸-hand store need not read 17 GB back):
    exactly what reading the file gives."""
    from replay.store.scan import ChecksumCache, file_sha256, read_footer

    run = open_store(big).run("big")
    entries = ChecksumCache(big).entries
    for shard in run.shards:
        for table in ("hands", "events"):
            path = run.shard_path(shard, table)
            e = entries[str(path.relative_to(big.resolve()))]
            st = path.stat()
            assert e[:4] == [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
            rows, ids = read_footer(path, True)
            assert e[4:] == [file_sha256(path), rows, *ids]


def test_index_then_verify_finds_every_derived_file_right(big: Path) -> None:
    out = ok_output(["index", "--data", str(big), "big"])
    assert "1 shard(s) summarised" in out
    out = ok_output(["verify", "--data", str(big), "big"])
    assert "big" in out


def test_a_copy_that_would_not_be_exact_is_refused() -> None:
    import pyarrow as pa

    summary = S.conform(
        "conv",
        pa.table({"granule": pa.array([8], pa.uint32()), "bin": pa.array([3], pa.uint32()),
                  "rotation": pa.array([0], pa.uint8()), "seat": pa.array([0], pa.uint8()),
                  "policy": ["a"], "n": [8], "won": [2]}),
    )  # fmt: skip
    facts = pa.table({"hand_id": pa.array([24], pa.uint32())})
    assert derived_copy(summary, facts, 12, 8, 32) is None  # offset not a multiple of 8
    assert derived_copy(summary, facts, 16, 8, 4) is None  # new bins finer than the source's
    got = derived_copy(summary, facts, 16, 8, 32)
    assert got is not None
    conv, shifted = got
    assert conv.column("bin").to_pylist() == [(3 * 8 + 16) // 32]
    assert conv.column("granule").to_pylist() == [32]
    assert shifted.column("hand_id").to_pylist() == [40]
