"""What ``paohuzi doctor`` finds and removes (replay.store.leftovers) and ``rm`` finishing an
interrupted removal (replay.store.manage.remove_run): the left-overs of a SIGKILL are made
by hand with the pid of a process that has ended; live ones carry this process's pid."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from leftover_helpers import dead_pid, small_store

from replay.store import manage
from replay.store.layout import StoreError
from replay.store.leftovers import find_leftovers, remove_leftover
from replay.store.manifest import RunLock
from replay.store.runs import open_store


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("leftovers") / "store", "r", "s")


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(pristine, d, symlinks=True)
    return d.resolve()


def listed(root: Path) -> list[tuple[str, str]]:
    return [(lo.kind, lo.rel) for lo in find_leftovers(root).leftovers]


def fix_all(root: Path) -> None:
    for lo in find_leftovers(root).leftovers:
        remove_leftover(lo)


def interrupted(root: Path, run: str, pid: int) -> Path:
    """What ``rm`` leaves when killed after renaming the run: part of its files deleted."""
    gone = root / "runs" / f".removing-{run}-{pid}"
    os.rename(root / "runs" / f"run={run}", gone)
    (gone / "manifest.json").unlink()
    return gone


def test_finished_runs_keep_their_locks_bug(root: Path) -> None:
    # a run's .lock of an ended writer is part of the run, never listed nor removed
    locks = sorted((root / "runs").glob("run=*/.lock"))
    assert [p.parent.name for p in locks] == ["run=r", "run=s"]
    pid = dead_pid()
    for p in locks:
        p.write_text(str(pid))  # as a writer killed or ended leaves it
    found = find_leftovers(root)
    assert (found.leftovers, found.in_use, found.notes) == ([], [], [])


def test_interrupted_removal_is_listed_and_finished_bug(root: Path, tmp_path: Path) -> None:
    # a SIGKILL during rm left runs/.removing-r-PID for good: no command removed it
    pid = dead_pid()
    gone = interrupted(root, "r", pid)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (gone / "hands" / "link").symlink_to(outside)  # a symlink inside is removed, not followed
    found = find_leftovers(root)
    assert [lo.line() for lo in found.leftovers] == [
        f"interrupted removal: runs/.removing-r-{pid} (of run r; process {pid} is gone)"
    ]
    fix_all(root)
    assert not gone.exists() and outside.read_text() == "keep\n"
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=s"]


def test_a_live_removal_is_kept_bug(root: Path) -> None:
    # an rm that is still running (its pid alive) is not a left-over
    gone = interrupted(root, "r", os.getpid())
    found = find_leftovers(root)
    assert found.leftovers == []
    assert [lo.line(alive=True) for lo in found.in_use] == [
        f"interrupted removal: runs/.removing-r-{os.getpid()} (of run r; process"
        f" {os.getpid()} is running)"
    ]
    with pytest.raises(StoreError, match=f"is in use \\(process {os.getpid()} is running\\)"):
        remove_leftover(found.in_use[0])
    assert gone.is_dir()


def test_orphan_temp_files_are_listed_and_removed_bug(root: Path) -> None:
    # a SIGKILL during a catalog rebuild or an atomic write left .NAME.tmp-PID for good
    pid, me = dead_pid(), os.getpid()
    made = [
        root / f".paohuzi.duckdb.tmp-{pid}",
        root / f".paohuzi.duckdb.tmp-{pid}.wal",
        root / f"..checksums.json.tmp-{pid}",  # the atomic write of .checksums.json
        root / f".write-test-{pid}",
        root / f".write-test-{pid}-140245",  # of one thread
        root / "runs" / "run=r" / "hands" / f".part-00002.parquet.tmp-{pid}",
        root / "runs" / "run=s" / f".manifest.json.tmp-{pid}",
    ]
    for p in made:
        p.write_bytes(b"half")
    spill = root / f".paohuzi.duckdb.tmp-{pid}.tmp"  # DuckDB's spill folder of the rebuild
    spill.mkdir()
    (spill / "duckdb_temp_storage-0.tmp").write_bytes(b"x")
    live = root / "runs" / "run=r" / "events" / f".part-00003.parquet.tmp-{me}"
    live.write_bytes(b"being written")
    assert listed(root) == [
        ("temporary file", f"..checksums.json.tmp-{pid}"),
        ("temporary file", f".paohuzi.duckdb.tmp-{pid}"),
        ("temporary file", f".paohuzi.duckdb.tmp-{pid}.tmp"),
        ("temporary file", f".paohuzi.duckdb.tmp-{pid}.wal"),
        ("temporary file", f".write-test-{pid}"),
        ("temporary file", f".write-test-{pid}-140245"),
        ("temporary file", f"runs/run=r/hands/.part-00002.parquet.tmp-{pid}"),
        ("temporary file", f"runs/run=s/.manifest.json.tmp-{pid}"),
    ]
    assert find_leftovers(root).leftovers[1].line() == (
        f"temporary file: .paohuzi.duckdb.tmp-{pid} (of the catalog's rebuild;"
        f" process {pid} is gone)"
    )
    assert [lo.rel for lo in find_leftovers(root).in_use] == [
        f"runs/run=r/events/.part-00003.parquet.tmp-{me}"
    ]
    fix_all(root)
    assert [p for p in [*made, spill] if os.path.lexists(p)] == []
    assert live.read_bytes() == b"being written"
    assert [r.name for r in open_store(root).runs()] == ["r", "s"]


def test_a_held_run_lock_keeps_its_temp_files_bug(root: Path) -> None:
    # a writer whose pid looks gone here (another host) but holds the run's lock keeps them
    pid = dead_pid()
    tmp = root / "runs" / "run=r" / "hands" / f".part-00002.parquet.tmp-{pid}"
    tmp.write_bytes(b"half")
    (lo,) = find_leftovers(root).leftovers
    with RunLock(root / "runs" / "run=r"), pytest.raises(StoreError) as e:
        remove_leftover(lo)
    assert str(e.value) == f"{lo.rel} is in use (a writer holds .lock)"
    assert tmp.exists()
    remove_leftover(lo)
    assert not tmp.exists()


@pytest.mark.parametrize("name", ["..", "my run", "x" * 240, "a\nb", "-dash", "ünï"])
def test_run_folders_of_refused_names_are_listed_and_removed_bug(root: Path, name: str) -> None:
    # rm refused these names, so no command could remove such a folder; it may be a copy
    # of a complete run made by hand, so it goes only when named
    odd = root / "runs" / f"run={name}"
    shutil.copytree(root / "runs" / "run=s", odd)
    found = find_leftovers(root).leftovers
    assert [(lo.kind, lo.path, lo.needs_yes) for lo in found] == [
        ("run folder of a refused name", odd, True)
    ]
    assert "\n" not in found[0].line()
    with pytest.raises(StoreError, match="is kept: it may hold data; name it to remove it"):
        remove_leftover(found[0])
    assert (odd / "manifest.json").is_file()
    assert found[0].named_by(f"run={name}") and found[0].named_by(name)
    remove_leftover(found[0], confirmed=True)
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=r", "run=s"]


def test_symlinked_run_folder_removes_the_link_only_bug(root: Path, tmp_path: Path) -> None:
    # a run folder that is a symlink: the link goes, what it points to stays whole
    target = tmp_path / "elsewhere"
    shutil.copytree(root / "runs" / "run=s", target)
    link = root / "runs" / "run=t"
    link.symlink_to(target, target_is_directory=True)
    (lo,) = find_leftovers(root).leftovers
    assert (
        lo.line()
        == f"symlinked run folder: runs/run=t (a link to {target}; --fix removes the link only)"
    )
    remove_leftover(lo)
    assert not os.path.lexists(link)
    assert (target / "manifest.json").is_file() and (target / ".lock").is_file()


def test_the_walk_does_not_follow_symlinks_bug(root: Path, tmp_path: Path) -> None:
    # a symlinked folder inside the store is not walked: nothing outside it is listed or removed
    pid = dead_pid()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / f".x.tmp-{pid}").write_bytes(b"not ours")
    (root / "runs" / "run=r" / "extra").symlink_to(outside, target_is_directory=True)
    # a writer's temporary name that is a link: the link goes, never its target
    (root / "runs" / "run=r" / f".manifest.json.tmp-{pid}").symlink_to(outside / f".x.tmp-{pid}")
    assert listed(root) == [("temporary file", f"runs/run=r/.manifest.json.tmp-{pid}")]
    fix_all(root)
    assert (outside / f".x.tmp-{pid}").read_bytes() == b"not ours"
    assert (root / "runs" / "run=r" / "extra").is_symlink()


def test_entries_that_are_not_run_folders_bug(root: Path, tmp_path: Path) -> None:
    # a file or FIFO named run=… and a .lock that is a symlink are listed and removed
    (root / "runs" / "run=file").write_text("x")
    os.mkfifo(root / "runs" / "run=fifo")
    precious = tmp_path / "precious"
    precious.write_text("precious\n")
    lock = root / "runs" / "run=r" / ".lock"
    lock.unlink()
    lock.symlink_to(precious)
    found = find_leftovers(root).leftovers
    assert [(lo.line(), lo.needs_yes) for lo in found] == [
        ("not a run folder: runs/run=fifo (a FIFO)", False),
        ("not a run folder: runs/run=file (a regular file)", True),  # a person's file?
        ("lock file that is not a regular file: runs/run=r/.lock (a symbolic link)", False),
    ]
    for lo in found:
        remove_leftover(lo, confirmed=lo.needs_yes)
    assert precious.read_text() == "precious\n" and not os.path.lexists(lock)
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=r", "run=s"]


def test_a_missing_store_is_one_error_bug(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as e:
        find_leftovers(tmp_path / "nope")
    assert str(e.value) == f"no data directory '{tmp_path / 'nope'}'"


# ---------------------------------------------------------------------------------------------
# remove_run finishes an interrupted removal
# ---------------------------------------------------------------------------------------------


def test_remove_run_finishes_an_interrupted_removal_bug(root: Path) -> None:
    # rm of a run whose earlier rm was killed said "no run" and left the folder for good
    gone = interrupted(root, "r", dead_pid())
    plan = manage.plan_removal(root, "r")
    assert (plan.exists, plan.interrupted) == (False, (gone,))
    manage.remove_run(root, "r")
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=s"]
    assert [r.name for r in open_store(root).runs()] == ["s"]


def test_remove_run_finishes_and_removes_bug(root: Path) -> None:
    # the run made again after a killed rm: both go
    pid = dead_pid()
    shutil.copytree(root / "runs" / "run=r", root / "runs" / f".removing-r-{pid}")
    manage.remove_run(root, "r")
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=s"]


def test_remove_run_keeps_a_live_removal_bug(root: Path) -> None:
    gone = interrupted(root, "r", os.getpid())
    with pytest.raises(StoreError) as e:
        manage.remove_run(root, "r")
    assert str(e.value) == (
        f"run r is being removed by process {os.getpid()} (runs/.removing-r-{os.getpid()})"
    )
    assert gone.is_dir()


def test_remove_run_refuses_a_symlinked_lock_bug(root: Path, tmp_path: Path) -> None:
    # taking the lock followed the symlink and truncated its target, outside the store
    precious = tmp_path / "precious"
    precious.write_text("precious\n")
    lock = root / "runs" / "run=r" / ".lock"
    lock.unlink()
    lock.symlink_to(precious)
    with pytest.raises(StoreError) as e:
        manage.remove_run(root, "r")
    assert str(e.value) == (
        "run r: its .lock is a symbolic link, not a regular file (paohuzi doctor --fix removes it)"
    )
    assert precious.read_text() == "precious\n" and (root / "runs" / "run=r").is_dir()


def test_remove_run_of_a_symlink_removes_the_link_bug(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    shutil.copytree(root / "runs" / "run=s", target)
    (root / "runs" / "run=t").symlink_to(target, target_is_directory=True)
    manage.remove_run(root, "t")
    assert not os.path.lexists(root / "runs" / "run=t")
    assert sorted(p.name for p in target.iterdir()) == sorted(
        p.name for p in (root / "runs" / "run=s").iterdir()
    )


def test_a_symlinked_runs_folder_is_not_walked_bug(root: Path, tmp_path: Path) -> None:
    # runs/ itself a link out of the store: said so, nothing behind it listed or removed
    pid = dead_pid()
    elsewhere = tmp_path / "elsewhere"
    shutil.move(root / "runs", elsewhere)
    (root / "runs").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / f".x.tmp-{pid}").write_bytes(b"not walked")
    found = find_leftovers(root)
    assert (found.leftovers, found.in_use) == ([], [])
    assert found.notes == ["runs is a symlink: not followed, its run folders not checked"]
    assert (elsewhere / f".x.tmp-{pid}").exists()
