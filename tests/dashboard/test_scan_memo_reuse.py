"""The dashboard's live store rescans every few seconds (issue 65): the scan memo
(replay.store.scan_memo) is read and parsed again only when its file changed, and a run's
conclusion is rebuilt once per memo read, while every scan still stats every listed file, so
an edit in place is seen by the next scan as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from edit_helpers import edit_in_place

from replay.store import scan_memo
from replay.store.layout import SCAN_MEMO_NAME
from replay.store.scan import scan_store


@pytest.fixture
def data(store_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(store_dir, tmp_path / "data", symlinks=True))


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"read": 0, "rebuilt": 0}
    read, info = scan_memo._read, scan_memo._info

    def counted_read(path: Path) -> object:
        calls["read"] += 1
        return read(path)

    def counted_info(*a: object) -> object:
        calls["rebuilt"] += 1
        return info(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_memo, "_read", counted_read)
    monkeypatch.setattr(scan_memo, "_info", counted_info)
    return calls


def test_an_unchanged_memo_is_not_read_again_and_a_changed_one_is(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan_store(data)  # writes the memo
    calls = _counting(monkeypatch)
    second = scan_store(data)
    assert second == first and calls["read"] == 1  # read once after it was written …
    third = scan_store(data)
    assert third == first and calls["read"] == 1  # … and not again while unchanged
    rebuilt = calls["rebuilt"]
    assert 0 < rebuilt == len(first.usable_runs)
    memo = data / SCAN_MEMO_NAME
    memo.write_bytes(memo.read_bytes())  # the same bytes, a new stamp
    assert scan_store(data) == first and calls["read"] == 2
    assert calls["rebuilt"] == 2 * rebuilt


def test_an_edit_in_place_is_seen_with_the_memo_kept(data: Path) -> None:
    before = scan_store(data)
    assert scan_store(data) == before  # the memo is now kept by this process
    run = before.usable_runs[0]
    shard = next(Path(p) for t, p in run.files if t == "events")
    edit_in_place(shard, 0x21, at=1 / 3)  # same size and inode, mtime restored: only ctime
    after = scan_store(data)
    damaged = after.run(run.name)
    assert after.signature != before.signature
    assert damaged is not None and damaged.problem is not None and shard.name in damaged.problem


def test_a_memo_made_for_another_folder_is_still_ignored(data: Path, tmp_path: Path) -> None:
    scan_store(data)
    copy = Path(shutil.copytree(data, tmp_path / "copy", symlinks=True))
    state = scan_store(copy)
    assert state.usable_runs
    assert all(p.startswith(str(copy.resolve())) for r in state.usable_runs for _, p in r.files)
