"""The checksum cache is a hint (issue 20, item 1): it vouches only for the very file it was
made from (size, mtime_ns, ctime_ns and inode, as git's index), an entry of any other shape
is ignored, and the cache file is read only when it is a small regular file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay.store import scan
from replay.store.layout import SCAN_MEMO_NAME, run_dir


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("cache")
    for run, seed in (("r", 9), ("other", 10)):
        code, _, err = _cli("simulate", "--data", str(data), "--run", run, "--hands", "80",
                            "--seed", str(seed), "--shard-hands", "40", "-w", "1", "-q")  # fmt: skip
        assert code == 0, err
    return data


@pytest.fixture()
def data(pristine: Path, tmp_path: Path) -> Path:
    import shutil

    d = tmp_path / "data"
    shutil.copytree(pristine, d)
    scan.scan_store(d)  # the cache now vouches for every listed file
    return d


def _problems(data: Path) -> dict[str, str | None]:
    return {r.name: r.problem for r in scan.scan_store(data).runs}


def test_edit_with_mtime_restored_is_caught_bug(data: Path) -> None:
    # A same-size edit whose mtime was put back (touch -r) kept its cache entry: the SHA-256
    # was never recomputed and the edited shard was counted.
    p = run_dir(data, "r") / "hands" / "part-00000.parquet"
    before = os.stat(p)
    raw = bytearray(p.read_bytes())
    raw[len(raw) // 3] ^= 0xFF
    p.write_bytes(bytes(raw))
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(p)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    problems = _problems(data)
    assert problems["other"] is None
    assert problems["r"] is not None and "SHA-256" in problems["r"]
    code, out, err = _cli("stats", "--data", str(data), "--json")
    assert code == 0 and "run r is damaged and left out" in err
    assert [r["run"] for r in json.loads(out)["runs"]] == ["other"]


@pytest.mark.parametrize(
    "entry",
    [
        "abc",
        [1, 2, 3],
        [None] * 8,
        [True, 0, 0, 0, None, None, None, None],
        ["1", 2, 3, 4, "0" * 64, 1, 0, 1],
        [1, 2, 3, 4, 12345, 1, 0, 1],
    ],
    ids=["string", "old-shape", "nulls", "bool", "string-size", "int-sha"],
)
def test_malformed_entry_is_ignored_bug(data: Path, entry: object) -> None:
    # A cache entry of the wrong type marked every healthy run damaged, for good.
    (data / SCAN_MEMO_NAME).unlink()  # the runs are checked again, through the cache
    path = data / scan.CHECKSUM_CACHE_NAME
    doc = json.loads(path.read_text())
    doc["files"] = {k: entry for k in doc["files"]}
    path.write_text(json.dumps(doc))
    assert _problems(data) == {"other": None, "r": None}
    # and the cache is whole again
    doc = json.loads(path.read_text())
    assert all(scan._valid_entry(e) for e in doc["files"].values())


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-dev-zero", "directory", "not-json", "deep"])
def test_cache_file_that_is_no_cache_is_ignored_bug(data: Path, kind: str) -> None:
    # A FIFO in the cache's place hung every command; a link to /dev/zero was read until the
    # memory ran out; deep nesting was a RecursionError.
    path = data / scan.CHECKSUM_CACHE_NAME
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "not-json":
        path.write_bytes(b"\xff\xfe not json")
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)
    assert _problems(data) == {"other": None, "r": None}
    code, _, err = _cli("stats", "--data", str(data), "--json")
    assert code == 0, err


def test_oversized_cache_file_is_not_read(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "CHECKSUM_CACHE_MAX_BYTES", 16)
    assert scan.ChecksumCache(data).entries == {}


def _simulate(data: Path, run: str, seed: int) -> None:
    code, _, err = _cli("simulate", "--data", str(data), "--run", run, "--hands", "80",
                        "--seed", str(seed), "--shard-hands", "40", "-w", "1", "-q")  # fmt: skip
    assert code == 0, err


def _stats(data: Path, env: dict[str, str] | None = None) -> list[dict]:
    r = CliRunner().invoke(main, ["stats", "--data", str(data), "--json"], env=env)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["runs"]


def test_replaced_run_folder_is_not_answered_from_the_catalog_bug(tmp_path: Path) -> None:
    # A run folder replaced by another of the same name and hand count (a restore, an rsync)
    # left the catalog "current": stats printed the old run's figures from its summaries.
    import shutil

    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    _simulate(mine, "a", 1)
    _simulate(theirs, "a", 2)
    old = _stats(mine)
    shutil.rmtree(run_dir(mine, "a"))
    shutil.copytree(run_dir(theirs, "a"), run_dir(mine, "a"))
    assert (mine / "paohuzi.duckdb").exists()  # the old catalog is still there
    got = _stats(mine)
    assert got == _stats(theirs) and got != old
    assert got == _stats(mine, {"PAOHUZI_SUMMARY": "0"})


def test_catalog_of_another_store_is_not_used_bug(tmp_path: Path) -> None:
    import shutil

    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    _simulate(mine, "a", 1)
    _simulate(theirs, "a", 2)
    want = _stats(mine)
    shutil.copy(theirs / "paohuzi.duckdb", mine / "paohuzi.duckdb")
    assert _stats(mine) == want
