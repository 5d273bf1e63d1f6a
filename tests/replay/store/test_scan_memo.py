"""The scan memo (replay.store.scan_memo) and the long-lived reader's kept state
(replay.store.snapshot.LiveStore): a reader pays for what changed — an unchanged store is
only stat'ed — and is never fooled: an edit in place, a memo of another folder, a malformed
memo, a run added or removed."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from edit_helpers import edit_in_place

from paohuzi.cli.main import main
from replay.store import scan as scan_mod
from replay.store.layout import SCAN_MEMO_NAME
from replay.store.scan import scan_store
from replay.store.snapshot import LiveStore


def _simulate(data: Path, run: str, seed: int) -> None:
    r = CliRunner().invoke(main, ["simulate", "--data", str(data), "--run", run, "-n", "96",
                                  "--seed", str(seed), "-w", "1", "-q", "--shard-hands", "32"])  # fmt: skip
    assert r.exit_code == 0, r.output


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("memo") / "data"
    _simulate(d, "a", 1)
    _simulate(d, "b", 2)
    return d


@pytest.fixture
def data(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the module's store, to change."""
    return Path(shutil.copytree(pristine, tmp_path / "data", symlinks=True))


def _count_manifest_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The manifests the scans of this thread read from now on (another test's live store
    may still be rechecking its own store in a thread of this worker)."""
    reads: list[Path] = []
    real = scan_mod.read_manifest_digest
    me = threading.get_ident()

    def counting(path: Path) -> Any:
        if threading.get_ident() == me:
            reads.append(path)
        return real(path)

    monkeypatch.setattr(scan_mod, "read_manifest_digest", counting)
    return reads


def test_an_unchanged_store_is_only_stated(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = scan_store(data)
    reads = _count_manifest_reads(monkeypatch)
    again = scan_store(data)
    assert reads == []  # no manifest parsed, no file read: stamps only
    assert again == first and again.signature == first.signature
    with_manifests = scan_store(data, manifests=True)
    assert len(reads) == 2 and with_manifests.run("a").manifest is not None  # type: ignore[union-attr]
    reads.clear()
    reused = scan_store(data, manifests=True, reuse=with_manifests)
    assert reads == [] and reused.run("a").manifest is with_manifests.run("a").manifest  # type: ignore[union-attr]


def test_an_edit_in_place_is_seen(data: Path) -> None:
    before = scan_store(data)
    shard = data / "runs" / "run=a" / "events" / "part-00001.parquet"
    edit_in_place(shard, 0x21, at=1 / 3)  # same size and inode, mtime restored: only ctime
    after = scan_store(data)
    assert after.signature != before.signature
    a = after.run("a")
    assert a is not None and a.problem is not None and "part-00001" in a.problem
    assert after.run("b") == before.run("b")


def test_a_memo_of_another_folder_is_ignored(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan_store(data)
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)  # .scan.json copied in
    reads = _count_manifest_reads(monkeypatch)
    state = scan_store(copy)
    assert len(reads) == 2 and [r.name for r in state.usable_runs] == ["a", "b"]
    assert all(r.files[0][1].startswith(str(copy.resolve())) for r in state.usable_runs)


@pytest.mark.parametrize(
    "memo",
    ["not json", "[]", '{"format": "paohuzi-scan-memo"}', "fifo", "entries"],
)
def test_a_malformed_memo_is_no_memo(
    data: Path, memo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    want = scan_store(data)
    path = data / SCAN_MEMO_NAME
    if memo == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif memo == "entries":  # right header, entries of every wrong shape
        doc = json.loads(path.read_text())
        runs = list(doc["runs"])
        doc["runs"][runs[0]] = {"manifest": [1, 2, 3], "stamps": 5, "info": []}
        doc["runs"][runs[1]]["info"] = {"name": "b", "hands": "many"}
        path.write_text(json.dumps(doc))
    else:
        path.write_text(memo)
    got = scan_store(data)
    assert [(r.name, r.problem, r.hands) for r in got.runs] == [
        (r.name, r.problem, r.hands) for r in want.runs
    ]


def test_a_read_only_store_is_not_written(data: Path) -> None:
    (data / SCAN_MEMO_NAME).unlink()
    (data / ".checksums.json").unlink()
    os.chmod(data, 0o555)
    try:
        state = scan_store(data)
        assert [r.name for r in state.usable_runs] == ["a", "b"]
        assert not (data / SCAN_MEMO_NAME).exists()
    finally:
        os.chmod(data, 0o755)


def test_live_store_keeps_one_state_and_sees_every_change(data: Path) -> None:
    live = LiveStore(data, refresh=0.2)
    try:
        first = live.state()
        assert live.state() is first and live.rescans == 1
        _simulate(data, "c", 3)  # a run added: seen at once
        added = live.state()
        assert [r.name for r in added.runs] == [
            "a",
            "b",
            "c",
        ] and added.signature != first.signature
        assert all(r.manifest is not None for r in added.usable_runs)  # kept for run_in
        assert added.run("a").manifest is first.run("a").manifest  # type: ignore[union-attr]
        shutil.rmtree(data / "runs" / "run=c")  # removed: seen at once
        assert [r.name for r in live.state().runs] == ["a", "b"]
        kept = live.state()
        edit_in_place(data / "runs" / "run=b" / "hands" / "part-00000.parquet", 0x44)
        deadline = time.monotonic() + 30
        while live.state() is kept:  # the background recheck finds the edit in place
            assert time.monotonic() < deadline, "the edit in place was never seen"
            time.sleep(0.05)
        b = live.state().run("b")
        assert b is not None and b.problem is not None
    finally:
        live.close()


def test_the_forked_stamp_check_is_the_serial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long list's second half stat'ed by a child process digests to the same bytes as one
    process's; an edit in place and a missing file are seen either way, and a child that
    fails is not trusted."""
    from replay.store import scan_memo

    files = []
    for i in range(60):
        p = tmp_path / f"f{i:02d}"
        p.write_bytes(b"x" * i)
        files.append(str(p))
    files.insert(45, str(tmp_path / "missing"))
    monkeypatch.setenv(scan_memo.FORK_ENV, "0")
    serial = scan_memo.current_digest(files)
    monkeypatch.delenv(scan_memo.FORK_ENV)
    monkeypatch.setattr(scan_memo, "FORK_FROM", 8)
    monkeypatch.setattr(scan_memo, "_cores", lambda: 2)
    monkeypatch.setattr(scan_memo.threading, "active_count", lambda: 1)
    forks = []
    real = scan_memo._forked_stamps
    monkeypatch.setattr(scan_memo, "_forked_stamps", lambda ps: forks.append(len(ps)) or real(ps))
    assert scan_memo.current_digest(files) == serial
    assert forks == [31]  # the second half went to a child
    edit_in_place(Path(files[50]), 0xFF)  # in the child's half
    edited = scan_memo.current_digest(files)
    assert edited != serial
    # A child that gives nothing (here: cannot stat, dies at once) is not trusted.
    monkeypatch.setattr(scan_memo, "_forked_stamps", lambda ps: lambda: None)
    assert scan_memo.current_digest(files) == edited
