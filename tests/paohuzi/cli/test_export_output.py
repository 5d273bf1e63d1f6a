"""``paohuzi export -o``: a new or regular file is written atomically, a device or FIFO as a
stream (never replaced by a regular file: run as root, ``-o /dev/null --force`` used to
rename a temporary file over the device node), a folder, socket or dangling symlink refused,
``-`` is standard output (replay.store.output)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from leftover_helpers import small_store

from paohuzi.cli.main import main
from replay.store.output import OutputError, plan_output

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("export") / "store", "r")


@pytest.fixture(scope="module")
def hand_text(store: Path) -> str:
    res = cli("export", "r", "2", "--data", str(store))
    assert res.exit_code == 0 and res.stdout.startswith("# 跑胡子 replay file"), res.output
    return str(res.stdout)


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def export(store: Path, out: str | Path, *more: str) -> Any:
    return cli("export", "r", "2", "--data", str(store), "-o", str(out), *more)


def one_error(res: Any) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    return lines[0]


def device(path: str) -> tuple[bool, int]:
    st = os.stat(path)
    return stat.S_ISCHR(st.st_mode), st.st_rdev


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_export_to_dev_null_keeps_the_device_bug(store: Path, force: list[str]) -> None:
    # as root, the temporary file was renamed over /dev/null: a regular file for every program
    before = device("/dev/null")
    assert before[0]
    res = export(store, "/dev/null", *force)
    assert res.exit_code == 0, res.output
    assert res.stderr == "wrote run r hand 2 to /dev/null\n"
    assert device("/dev/null") == before
    assert not [p for p in os.listdir("/dev") if ".tmp-" in p]


def test_export_to_dev_full_is_one_error_bug(store: Path) -> None:
    # /dev/full was replaced by a regular file too; now the write fails as a full disk does
    before = device("/dev/full")
    assert one_error(export(store, "/dev/full", "--force")) == (
        "Error: cannot write /dev/full: No space left on device"
    )
    assert device("/dev/full") == before


def test_export_to_a_fifo_streams_bug(store: Path, tmp_path: Path, hand_text: str) -> None:
    # a FIFO is written to, not replaced: its reader gets the hand
    fifo = tmp_path / "hand.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    res = export(store, fifo)
    reader.join(timeout=120)  # the write is done: the reader has its EOF
    assert res.exit_code == 0, res.output
    assert got == [hand_text.encode("utf-8")]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_export_to_a_folder_is_refused_bug(store: Path, tmp_path: Path) -> None:
    assert one_error(export(store, tmp_path, "--force")) == (
        f"Error: cannot write {tmp_path}: it is a folder (give a file name, or - for stdout)"
    )
    assert one_error(export(store, f"{tmp_path}/new/")) == (
        f"Error: cannot write {tmp_path}/new/: no such folder"
    )
    assert one_error(export(store, tmp_path / "no" / "h.phz")) == (
        f"Error: cannot write {tmp_path / 'no' / 'h.phz'}: no folder {tmp_path / 'no'}"
    )
    assert sorted(os.listdir(tmp_path)) == []


def test_export_to_a_socket_is_refused_bug(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        assert one_error(export(store, path, "--force")) == (
            f"Error: cannot write {path}: it is a socket (give a file name, or - for stdout)"
        )
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_export_through_a_symlink_writes_its_target_bug(
    store: Path, tmp_path: Path, hand_text: str
) -> None:
    # the symlink stays a symlink: its target gets the hand (only with --force)
    target = tmp_path / "target.phz"
    target.write_text("precious\n")
    link = tmp_path / "link.phz"
    link.symlink_to(target)
    assert one_error(export(store, link)) == f"Error: {link} exists; give --force to overwrite it"
    assert target.read_text() == "precious\n"
    res = export(store, link, "--force")
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == hand_text
    assert sorted(os.listdir(tmp_path)) == ["link.phz", "target.phz"]


def test_export_through_a_symlink_to_a_device_bug(store: Path, tmp_path: Path) -> None:
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    before = device("/dev/null")
    res = export(store, link)
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and device("/dev/null") == before


def test_export_to_a_dangling_symlink_is_refused_bug(store: Path, tmp_path: Path) -> None:
    # writing would create a file wherever the link points: refused, the link untouched
    link = tmp_path / "dangling.phz"
    link.symlink_to(tmp_path / "missing" / "x")
    assert one_error(export(store, link, "--force")) == (
        f"Error: cannot write {link}: it is a symlink to {tmp_path / 'missing' / 'x'},"
        " which does not exist"
    )
    assert link.is_symlink() and not (tmp_path / "missing").exists()


def test_export_dash_is_standard_output_bug(
    store: Path, tmp_path: Path, hand_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # -o - wrote a file named "-"
    monkeypatch.chdir(tmp_path)
    res = export(store, "-")
    assert (res.exit_code, res.stdout, res.stderr) == (0, hand_text, "")
    assert os.listdir(tmp_path) == []


def test_export_to_a_new_and_an_existing_file(store: Path, tmp_path: Path, hand_text: str) -> None:
    out = tmp_path / "h.json"
    assert export(store, out).exit_code == 0
    assert out.read_text(encoding="utf-8").startswith('{\n "format": "paohuzi-replay"')
    out = tmp_path / "h.phz"
    out.write_text("old\n")
    assert export(store, out, "--force").exit_code == 0
    assert out.read_text(encoding="utf-8") == hand_text
    assert sorted(os.listdir(tmp_path)) == ["h.json", "h.phz"]


def test_export_to_a_full_stdout_is_one_error_bug(store: Path) -> None:
    # > /dev/full ended with an OSError traceback from click.echo
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "wb") as full:
        res = subprocess.run(
            [sys.executable, "-m", "paohuzi.cli", "export", "r", "2", "--data", str(store)],
            stdout=full, stderr=subprocess.PIPE, env=env, cwd=ROOT, check=False,
        )  # fmt: skip
    assert res.returncode == 2
    assert (
        res.stderr.decode() == "Error: cannot write to standard output: No space left on device\n"
    )


def test_plan_output_refuses_before_the_store_is_read_bug(tmp_path: Path) -> None:
    # the checks run first: a bad -o costs no read of the store
    with pytest.raises(OutputError) as e:
        plan_output("")
    assert str(e.value) == "empty output file name (give - for standard output)"
    assert plan_output(str(tmp_path / "new.phz")).how == "file"
    res = cli("export", "r", "2", "--data", str(tmp_path / "no-store"), "-o", str(tmp_path))
    assert one_error(res).startswith(f"Error: cannot write {tmp_path}: it is a folder")
