"""A run folder with no manifest after a writer was killed in its first write (issue 40,
item 3): ``verify`` notes it (exit 0: nothing was committed), the next ``simulate`` or
``import`` into the run clears what the killed writer left, and nothing else is ever
deleted. Also ``simulate`` into a run of imported hands, one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from paohuzi.cli.main import main
from replay import schema
from replay import store as store_api
from replay.replayer import replay_file
from replay.store.facts_schema import FACTS_TABLE
from replay.store.manifest import (
    FIRST_WRITE_FOLDERS,
    RunLock,
    clear_first_write,
    first_write,
    is_orphan,
    lock_held,
)
from replay.store.provenance_schema import PROVENANCE
from replay.store.rollup import ROLLUP_DIR
from replay.store.summary_schema import SUMMARY_TABLE
from replay.store.write.run import PAUSE_ENV

FILES = [f"{t}/part-00000.parquet" for t in ("events", "facts", "hands", "imported", "summary")]


def cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 hands of a simulated run as a JSON-lines batch."""
    d = tmp_path_factory.mktemp("orphan")
    rc, out = cli("simulate", "--data", str(d / "src"), "--run", "s", "-n", "12", "--seed", "4",
                  "-q", "-w", "1")  # fmt: skip
    assert rc == 0, out
    st = store_api.open_store(d / "src")
    lines = [
        json.dumps(json.loads(replay_file.export_hand(st, "s", i, "json")[0]), ensure_ascii=False)
        for i in range(12)
    ]
    path = d / "b.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def killed_first_import(root: Path, batch: Path, run: str) -> Path:
    """``paohuzi import --jsonl`` into the new run ``run``, killed (SIGKILL) while it waits
    between its first shard's files and the run's first manifest; the run folder."""
    path = store_api.run_dir(root, run)
    proc = subprocess.Popen(
        [sys.executable, "-m", "paohuzi.cli", "import", "--data", str(root), "--jsonl",
         str(batch), "--run", run],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, PAUSE_ENV: "0:60"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not all((path / f).exists() for f in FILES) and proc.poll() is None:
            assert time.monotonic() < deadline, "the import never reached its pause"
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1]
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    return path


def listed(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.glob("*/*"))


def test_verify_notes_an_interrupted_first_write_bug(tmp_path: Path, batch: Path) -> None:
    # A server or import killed in the first shard of a new run left run=NAME with five part
    # files and no manifest, and `verify` exited 1 ("no manifest.json"); the docs promise a
    # note and exit 0 for an import interrupted before its manifest listed its files.
    root = tmp_path / "d"
    path = killed_first_import(root, batch, "orph")
    assert not (path / store_api.MANIFEST_NAME).exists() and listed(path) == FILES
    assert is_orphan(path) and not lock_held(path)
    rc, out = cli("verify", "--data", str(root), "-q")
    assert rc == 0, out
    assert (
        "Note: run orph: no manifest.json: a first write interrupted before it listed anything"
        " (5 file(s), nothing committed; the next simulate or import into orph clears them)"
    ) in out
    rc, out = cli("verify", "orph", "--data", str(root), "-q", "--json")
    assert rc == 0 and json.loads(out)["runs"][0]["notes"], out


def test_simulate_into_an_orphan_leaves_no_stray_file_bug(tmp_path: Path, batch: Path) -> None:
    # `simulate --run NAME` into that folder rewrote hands/events/summary/facts but left the
    # import's imported/part-00000.parquet, which `verify` kept flagging.
    root = tmp_path / "d"
    path = killed_first_import(root, batch, "orph")
    rc, out = cli("simulate", "--data", str(root), "--run", "orph", "-n", "8", "-q", "-w", "1")
    assert rc == 0, out
    assert not (path / "imported").exists()
    rc, out = cli("verify", "--data", str(root), "-q")
    assert rc == 0 and "Note" not in out and out.rstrip().endswith("all good"), out
    assert not is_orphan(path)


def test_import_into_an_orphan_starts_clean(tmp_path: Path, batch: Path) -> None:
    root = tmp_path / "d"
    path = killed_first_import(root, batch, "orph")
    stale = path / "hands" / ".part-00000.parquet.tmp-999999"
    stale.write_bytes(b"a killed writer's")
    rc, out = cli("import", "--data", str(root), "--jsonl", str(batch), "--run", "orph")
    assert rc == 0, out
    assert not stale.exists()
    assert store_api.open_store(root).run("orph").n_hands == 12
    rc, out = cli("verify", "--data", str(root), "-q")
    assert rc == 0 and "Note" not in out, out


def test_a_folder_with_other_shards_is_not_an_orphan(tmp_path: Path) -> None:
    """A run whose manifest is gone (shards past the first) stays a problem for ``verify``,
    and a writer refuses to start a run there: nothing of it is deleted."""
    root = tmp_path / "d"
    rc, out = cli("simulate", "--data", str(root), "--run", "r", "-n", "30", "--shard-hands",
                  "10", "-q", "-w", "1")  # fmt: skip
    assert rc == 0, out
    path = store_api.run_dir(root, "r")
    (path / store_api.MANIFEST_NAME).unlink()
    before = listed(path)
    assert not is_orphan(path) and not first_write(path).interrupted
    rc, out = cli("verify", "--data", str(root), "-q")
    assert rc == 1 and "run r: no manifest.json" in out, out
    rc, out = cli("simulate", "--data", str(root), "--run", "r", "-n", "30", "-q", "-w", "1")
    assert rc == 1 and "has no manifest.json but holds shard files" in out, out
    assert listed(path) == before


def test_clearing_touches_only_the_store_files(tmp_path: Path) -> None:
    """Only ``F/part-00000.parquet`` and temporary files go; a file of another name stays,
    and a symlinked shard folder is never followed (the folder is refused instead)."""
    path = tmp_path / "runs" / "run=x"
    for rel in FILES:
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(b"PAR1")
    (path / "hands" / "notes.txt").write_text("mine")
    (path / "mine.parquet").write_text("not in a shard folder")
    with RunLock(path):
        assert clear_first_write(path) == 5
    assert sorted(p.name for p in path.rglob("*")) == [
        ".lock",
        "hands",
        "mine.parquet",
        "notes.txt",
    ]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "part-00000.parquet").write_bytes(b"PAR1")
    (path / "events").symlink_to(outside)
    with pytest.raises(store_api.StoreError, match="events"):
        clear_first_write(path)
    assert (outside / "part-00000.parquet").exists()


def test_a_first_write_in_progress_is_no_orphan(tmp_path: Path) -> None:
    """While a writer holds the lock, the folder is its first write, not an orphan."""
    root = tmp_path / "d"
    path = store_api.run_dir(root, "busy")
    for rel in FILES:
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_bytes(b"PAR1")
    with RunLock(path):
        assert lock_held(path) and not is_orphan(path)
        rc, out = cli("verify", "--data", str(root), "-q")
        assert rc == 0, out
        assert "Note: run busy: no manifest.json yet: its first write is in progress" in out
    assert is_orphan(path)


def test_first_write_folders_are_the_writers() -> None:
    """The folders a first shard writes, by their writers' names."""
    assert set(FIRST_WRITE_FOLDERS) == {
        *schema.TABLES,
        PROVENANCE,
        SUMMARY_TABLE,
        FACTS_TABLE,
        ROLLUP_DIR,
    }


def test_simulate_into_an_imported_run_bug(tmp_path: Path, batch: Path) -> None:
    # `simulate --run IMPORTED` said "run 'IMPORTED' was recorded with schema_version=None,
    # not 3".
    root = tmp_path / "d"
    rc, out = cli("import", "--data", str(root), "--jsonl", str(batch), "--run", "imp")
    assert rc == 0, out
    rc, out = cli("simulate", "--data", str(root), "--run", "imp", "-n", "4", "-q")
    assert rc == 2, out
    assert out.strip().splitlines()[-1] == (
        "Error: run 'imp' holds imported hands (paohuzi import), not a simulation;"
        " simulate into another run"
    )
