"""One schema-checked reader of the manifest, and no special file or link followed (issue 20,
items 3 and 4): a damaged manifest — truncated, not UTF-8, of wrong JSON types, nested
100,000 deep, a symlink to ``/dev/zero``, a FIFO, over the size bound — and a run folder that
is a symlink out of the store leave exactly that run out, named with a one-line reason, in
every command; every other run keeps its figures and its hands."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from catalog_helpers import cli, simulate

from replay.store.layout import run_dir
from replay.store.scan import scan_store

GOOD, BAD = "good", "other"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("store")
    simulate(data, GOOD, 40, 3, 20)
    simulate(data, BAD, 40, 4, 20)
    return data


@pytest.fixture()
def data(pristine: Path, tmp_path: Path) -> Path:
    out = tmp_path / "data"
    shutil.copytree(pristine, out, symlinks=True)
    return out


def good_stats(data: Path) -> dict[str, Any]:
    code, out, err = cli("stats", "--data", str(data), "--json", GOOD)
    assert code == 0, err
    return json.loads(out)


def manifest_path(data: Path, run: str = BAD) -> Path:
    return run_dir(data, run) / "manifest.json"


def edit(data: Path, change: Callable[[dict[str, Any]], None]) -> None:
    path = manifest_path(data)
    m = json.loads(path.read_text())
    change(m)
    path.write_text(json.dumps(m))


def assert_left_out(data: Path, *needles: str, listed: str = "unreadable") -> None:
    """Every command: the damaged run named in one line, never a traceback; the good run's
    figures and hands as before."""
    expected = good_stats_pristine[0]
    code, out, err = cli("stats", "--data", str(data), "--json")
    assert code == 0, err
    assert [r["run"] for r in json.loads(out)["runs"]] == [GOOD]
    warning = [line for line in err.splitlines() if line.startswith("Warning: run other")]
    assert len(warning) == 1, err
    for n in needles:
        assert n in warning[0], warning[0]
    assert good_stats(data) == expected
    # asked for by name: one Error line, exit 2
    for cmd in (["stats", BAD], ["hands", BAD], ["replay", BAD, "0"], ["export", BAD, "0"]):
        code, out, err = cli(cmd[0], "--data", str(data), *cmd[1:])
        assert code == 2, (cmd, out, err)
        assert "Traceback" not in out + err
        assert len(err.strip().splitlines()) == 1 and err.startswith("Error: "), (cmd, err)
        assert all(n in err for n in needles[1:]), (cmd, err)
    # verify reports what it found (exit 1), the run named with the same reason
    code, out, err = cli("verify", "--data", str(data), BAD)
    assert code == 1 and "Traceback" not in out + err, (out, err)
    assert any(line.startswith("run other") and needles[-1] in line for line in out.splitlines())
    # the good run, every command
    for args in (
        ["runs", "--json"],
        ["hands", GOOD],
        ["replay", GOOD, "1", "--step", "2"],
        ["export", GOOD, "1"],
        ["verify", GOOD],
    ):
        code, out, err = cli(args[0], "--data", str(data), *args[1:])
        assert code == 0, (args, out, err)
        assert "Traceback" not in out + err
    code, out, _ = cli("runs", "--data", str(data), "--json")
    rows = {r["run"]: r for r in json.loads(out)}
    assert rows[BAD]["status"] == listed and rows[GOOD]["hands"] == 40


good_stats_pristine: list[dict[str, Any]] = []


@pytest.fixture(autouse=True)
def _expected(pristine: Path) -> None:
    if not good_stats_pristine:
        good_stats_pristine.append(good_stats(pristine))


@pytest.mark.parametrize(
    ("damage", "needle"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[:200]), "not JSON"),
        (lambda p: p.write_bytes(b""), "not JSON"),
        (lambda p: p.write_bytes(b"\xff\xfe" + p.read_bytes()), "not JSON"),
        (lambda p: p.write_bytes(b"[" * 100_000 + b"]" * 100_000), "recursion limit"),
    ],
    ids=["truncated", "empty", "not-utf8", "nested-100000"],
)
def test_unreadable_manifest_leaves_only_its_run_out_bug(
    data: Path, damage: Callable[[Path], None], needle: str
) -> None:
    damage(manifest_path(data))
    assert_left_out(data, "run other", needle)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda m: m.__setitem__("params", None), "manifest field params: expected an object"),
        (lambda m: m.__setitem__("params", []), "manifest field params: expected an object"),
        (
            lambda m: m["shards"][0].__setitem__("files", "x"),
            "manifest field shards[0].files: expected an object, got 'x'",
        ),
        (lambda m: m.__setitem__("progress", "x"), "manifest field progress: expected an object"),
        (lambda m: m["params"].__setitem__("seed", 1e40), "params.seed: expected an integer"),
        (
            lambda m: m["params"].__setitem__("policies", ["random"]),
            "params.policies: 1 seat(s) for a 3-player table",
        ),
        (
            lambda m: m["params"].__setitem__("duplicate", "false"),
            "params.duplicate: expected true or false, got 'false'",
        ),
        (
            lambda m: m["shards"][1].__setitem__("hands", -5),
            "manifest field shards[1].hands: expected an integer ≥ 0, got -5",
        ),
        (
            lambda m: m["shards"][1].__setitem__("hands", 1e30),
            "manifest field shards[1].hands: expected an integer, got 1e+30",
        ),
        (
            lambda m: m["shards"][0]["files"]["hands"].__setitem__("bytes", "20699"),
            "shards[0].files.hands.bytes: expected an integer, got '20699'",
        ),
        (lambda m: m["rules"].__setitem__("players", "3"), "manifest field rules: rule players"),
        (lambda m: m.__setitem__("status", 7), "manifest field status: expected"),
        (lambda m: m.__setitem__("shards", {}), "manifest field shards: expected a list"),
    ],
    ids=[
        "params-null",
        "params-list",
        "files-string",
        "progress-string",
        "seed-1e40",
        "policies-short",
        "duplicate-string",
        "hands-negative",
        "hands-float",
        "bytes-string",
        "players-string",
        "status-int",
        "shards-object",
    ],
)
def test_manifest_of_wrong_types_names_the_field_bug(
    data: Path, change: Callable[[dict[str, Any]], None], needle: str
) -> None:
    edit(data, change)
    assert_left_out(data, needle)


def test_manifest_symlink_to_dev_zero_is_refused_not_read_bug(data: Path) -> None:
    path = manifest_path(data)
    path.unlink()
    path.symlink_to("/dev/zero")
    assert_left_out(data, "is a symbolic link, not a regular file")


def test_manifest_fifo_never_hangs_bug(data: Path) -> None:
    path = manifest_path(data)
    path.unlink()
    os.mkfifo(path)
    outcome: list[BaseException | None] = []

    def check() -> None:
        try:
            assert_left_out(data, "is a FIFO, not a regular file")
            outcome.append(None)
        except BaseException as e:  # reported below, in the test's thread
            outcome.append(e)

    t = threading.Thread(target=check, daemon=True)
    t.start()
    t.join(180)
    assert outcome, "a command hung on the FIFO"
    if outcome[0] is not None:
        raise outcome[0]


def test_manifest_over_the_bound_is_refused_and_the_bound_can_be_raised_bug(
    data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = manifest_path(data).stat().st_size
    monkeypatch.setenv("PAOHUZI_MAX_MANIFEST_BYTES", str(size - 1))
    problem = scan_store(data).run(BAD).problem or ""
    assert f"is larger than {size - 1:,} bytes (raise it with $PAOHUZI_MAX_MANIFEST_BYTES)" in (
        problem
    )
    code, _, err = cli("stats", "--data", str(data), BAD)
    assert code == 2 and "raise it with $PAOHUZI_MAX_MANIFEST_BYTES" in err
    monkeypatch.setenv("PAOHUZI_MAX_MANIFEST_BYTES", str(1 << 30))
    assert all(r.problem is None for r in scan_store(data).runs)


def test_run_folder_symlinked_out_of_the_store_is_refused_by_name_bug(
    data: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(run_dir(data, BAD), outside)
    run_dir(data, BAD).symlink_to(outside, target_is_directory=True)
    assert_left_out(data, "is a symbolic link", "a run must be a folder inside the store")


def test_lock_file_fifo_never_hangs_bug(data: Path) -> None:
    lock = run_dir(data, BAD) / ".lock"
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(scan_store(data)), daemon=True)
    t.start()
    t.join(120)
    assert box, "scanning the store hung on a FIFO lock file"
    assert all(r.problem is None for r in box[0].runs)
    code, _, err = cli("simulate", "--data", str(data), "--run", BAD, "--hands", "40",
                       "--seed", "4", "--shard-hands", "20", "-w", "1", "-q")  # fmt: skip
    assert code == 1 and err.startswith("Error: ") and "is a FIFO, not a lock file" in err, err


def test_shard_file_replaced_by_a_fifo_is_refused_bug(data: Path) -> None:
    path = run_dir(data, BAD) / "hands" / "part-00000.parquet"
    path.unlink()
    os.mkfifo(path)
    edit(data, lambda m: m["shards"][0]["files"]["hands"].__setitem__("bytes", 0))
    assert_left_out(data, "part-00000.parquet is a FIFO, not a regular file", listed="complete")
