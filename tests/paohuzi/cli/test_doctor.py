"""``paohuzi doctor`` (lists left-overs, exit 1; ``--fix`` removes them, one line each) and
``paohuzi rm`` finishing an interrupted removal: the left-overs of a SIGKILL are made by hand
with the pid of a process that has ended; live ones carry this process's pid."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from leftover_helpers import dead_pid, small_store

from paohuzi.cli.main import main
from replay.store.manifest import RunLock


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("doctor") / "store", "r", "s")


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(pristine, d, symlinks=True)
    return d.resolve()


def cli(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=input)


def one_error(res: Any) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def runs_of(root: Path) -> list[str]:
    import json

    res = cli("runs", "--data", str(root), "--json")
    assert res.exit_code == 0, res.output
    return [r["run"] for r in json.loads(res.stdout)]


def killed_leftovers(root: Path, pid: int, tmp_path: Path) -> None:
    """What SIGKILLs and hand copies leave: one of each kind."""
    os.rename(root / "runs" / "run=r", root / "runs" / f".removing-r-{pid}")
    (root / f".paohuzi.duckdb.tmp-{pid}").write_bytes(b"half")
    (root / "runs" / "run=s" / "hands" / f".part-00001.parquet.tmp-{pid}").write_bytes(b"half")
    shutil.copytree(root / "runs" / "run=s", root / "runs" / "run=my run")
    (tmp_path / "elsewhere").mkdir()
    (root / "runs" / "run=t").symlink_to(tmp_path / "elsewhere", target_is_directory=True)


def test_doctor_lists_leftovers_bug(root: Path, tmp_path: Path) -> None:
    # a killed rm or catalog rebuild left files no command could list or remove
    pid = dead_pid()
    killed_leftovers(root, pid, tmp_path)
    res = cli("doctor", "--data", str(root))
    assert res.exit_code == 1, res.output
    assert res.stdout.splitlines() == [
        f"temporary file: .paohuzi.duckdb.tmp-{pid} (of the catalog's rebuild; process {pid} is gone)",
        f"interrupted removal: runs/.removing-r-{pid} (of run r; process {pid} is gone)",
        "run folder of a refused name: runs/run=my run (a name rm refuses: letters, digits, '.',"
        " '_', '-', at most 120; rename it to keep it)",
        f"temporary file: runs/run=s/hands/.part-00001.parquet.tmp-{pid} (process {pid} is gone)",
        f"symlinked run folder: runs/run=t (a link to {tmp_path / 'elsewhere'}; --fix removes"
        " the link only)",
    ]  # fmt: skip
    assert res.stderr == (
        f"5 left-overs in {root}; --fix removes them\n"
        "what may hold data goes only when named: --fix --yes NAME (as listed)\n"
    )
    assert (root / "runs" / f".removing-r-{pid}").is_dir()  # listing removes nothing


def test_doctor_fix_removes_each_and_says_so_bug(root: Path, tmp_path: Path) -> None:
    pid, me = dead_pid(), os.getpid()
    killed_leftovers(root, pid, tmp_path)
    live = root / f".write-test-{me}-1"  # a write probe of a live process
    live.write_bytes(b"being written")
    res = cli("doctor", "--fix", "--data", str(root))
    assert res.exit_code == 1, res.output  # the refused name is kept: it may hold a run
    assert res.stdout.splitlines() == [
        f"removed .paohuzi.duckdb.tmp-{pid} (temporary file)",
        f"removed runs/.removing-r-{pid} (interrupted removal)",
        f"removed runs/run=s/hands/.part-00001.parquet.tmp-{pid} (temporary file)",
        "removed runs/run=t (symlinked run folder)",
    ]
    assert res.stderr.splitlines() == [
        f"kept, in use: temporary file: .write-test-{me}-1 (process {me} is running)",
        "kept: run folder of a refused name: runs/run=my run (a name rm refuses: letters,"
        " digits, '.', '_', '-', at most 120; rename it to keep it); --yes 'runs/run=my run'"
        " removes it",
    ]
    assert (root / "runs" / "run=my run" / "manifest.json").is_file()
    named = cli("doctor", "--fix", "--yes", "run=my run", "--data", str(root))
    assert (named.exit_code, named.stdout) == (
        0,
        "removed runs/run=my run (run folder of a refused name)\n",
    ), named.output
    assert live.read_bytes() == b"being written" and (tmp_path / "elsewhere").is_dir()
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=s"]
    assert runs_of(root) == ["s"]
    again = cli("doctor", "--data", str(root))
    assert (again.exit_code, again.stdout) == (0, "")
    assert again.stderr.splitlines()[-1] == f"no left-overs in {root}"


def test_doctor_of_a_clean_store_bug(root: Path) -> None:
    res = cli("doctor", "--data", str(root))
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", f"no left-overs in {root}\n")


def test_doctor_fix_that_cannot_remove_is_one_error_bug(root: Path) -> None:
    # a temporary file of a writer that holds its run's lock is kept: one Error line, exit 2
    pid = dead_pid()
    tmp = root / "runs" / "run=s" / "hands" / f".part-00001.parquet.tmp-{pid}"
    tmp.write_bytes(b"half")
    (root / f".paohuzi.duckdb.tmp-{pid}").write_bytes(b"half")
    with RunLock(root / "runs" / "run=s"):
        res = cli("doctor", "--fix", "--data", str(root))
    assert res.stdout == f"removed .paohuzi.duckdb.tmp-{pid} (temporary file)\n"
    assert one_error(res) == (
        f"Error: 1 left-over not removed: runs/run=s/hands/.part-00001.parquet.tmp-{pid}"
        " is in use (a writer holds .lock)"
    )
    assert tmp.exists()


def test_doctor_without_a_store_bug(tmp_path: Path) -> None:
    assert one_error(cli("doctor", "--data", str(tmp_path / "nope"))) == (
        f"Error: no data directory '{tmp_path / 'nope'}'"
    )


# ---------------------------------------------------------------------------------------------
# paohuzi rm
# ---------------------------------------------------------------------------------------------


def test_rm_finishes_an_interrupted_removal_bug(root: Path) -> None:
    # after a killed rm, rm said "no run 'r'" and runs/.removing-r-PID stayed for good
    pid = dead_pid()
    gone = root / "runs" / f".removing-r-{pid}"
    os.rename(root / "runs" / "run=r", gone)
    (gone / "manifest.json").unlink()
    res = cli("rm", "r", "--data", str(root), input="y\n")
    assert res.exit_code == 0, res.output
    assert res.stdout == (
        "finish the interrupted removal of run r? [y/N]: y\n"
        f"finished the interrupted removal of run r ({gone})\n"
    )
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=s"]
    assert runs_of(root) == ["s"]


def test_rm_keeps_a_live_removal_bug(root: Path) -> None:
    gone = root / "runs" / f".removing-r-{os.getpid()}"
    os.rename(root / "runs" / "run=r", gone)
    assert one_error(cli("rm", "r", "--data", str(root), "--yes")) == (
        f"Error: run r is being removed by process {os.getpid()} (runs/.removing-r-{os.getpid()})"
    )
    assert gone.is_dir()


def test_rm_of_a_refused_name_points_to_doctor_bug(root: Path) -> None:
    # a folder rm cannot name: the error says which command removes it
    shutil.copytree(root / "runs" / "run=s", root / "runs" / "run=my run")
    assert one_error(cli("rm", "my run", "--data", str(root), "--yes")) == (
        "Error: bad run name 'my run': use letters, digits, '.', '_' and '-' (at most 120);"
        " paohuzi doctor --fix removes the folder run=my run"
    )
    assert (root / "runs" / "run=my run").is_dir()


def test_rm_of_a_symlinked_run_removes_the_link_bug(root: Path, tmp_path: Path) -> None:
    # rm followed the link for the lock, then failed on the link and left it renamed
    target = tmp_path / "elsewhere"
    shutil.copytree(root / "runs" / "run=s", target)
    (root / "runs" / "run=t").symlink_to(target, target_is_directory=True)
    res = cli("rm", "t", "--data", str(root), "--yes")
    assert res.exit_code == 0, res.output
    assert res.stdout == f"removed run t (the link {root / 'runs' / 'run=t'}; its target is kept)\n"
    assert sorted(p.name for p in (root / "runs").iterdir()) == ["run=r", "run=s"]
    assert (target / "manifest.json").is_file()
