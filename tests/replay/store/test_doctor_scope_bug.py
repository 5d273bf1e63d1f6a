"""``paohuzi doctor --fix`` stays inside what is the store's (issue 40): it walked every folder
under ``--data`` and removed anything named like ``.X.tmp-N`` or ``.write-test-N`` whose
process was gone (a home folder's files too), a complete run in a folder of a refused name
without asking, and it never listed the run folder a killed first write left without a
manifest. A property test draws trees of every name the store's writers use, with live and
dead pids: a folder that is not a store loses nothing; a store loses only what its own
writers left, only where they write it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from leftover_helpers import dead_pid, small_store

from paohuzi.cli.main import main
from replay.schema import TABLES
from replay.store.facts_schema import FACTS_TABLE
from replay.store.layout import CATALOG_NAME, CHECKSUM_CACHE_NAME, IMPORT_LOCK_NAME, SHARD_FOLDERS
from replay.store.leftovers import find_leftovers
from replay.store.manifest import RunLock, is_orphan
from replay.store.provenance_schema import PROVENANCE
from replay.store.reviews import REVIEWS
from replay.store.rollup import ROLLUP_DIR
from replay.store.summary_schema import SUMMARY_TABLE

DEAD = dead_pid()
LIVE = os.getpid()


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (not following symlinks): a file's bytes, None otherwise."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(root))
            out[rel] = p.read_bytes() if p.is_file() and not p.is_symlink() else None
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return small_store(tmp_path_factory.mktemp("scope") / "store", "r")


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(pristine, d, symlinks=True)
    return d.resolve()


def test_the_shard_folders_are_the_writers_bug() -> None:
    # doctor looks for shard files' temporary files only in the folders the writers use
    assert set(SHARD_FOLDERS) == {
        *TABLES,
        SUMMARY_TABLE,
        FACTS_TABLE,
        PROVENANCE,
        REVIEWS,
        ROLLUP_DIR,
    }


def test_doctor_fix_outside_a_store_removes_nothing_bug(tmp_path: Path) -> None:
    # the reproduction: a home folder lost all three
    h = tmp_path / "h"
    (h / "project" / "src").mkdir(parents=True)
    (h / "Documents").mkdir()
    (h / "project" / "src" / ".main.py.tmp-999999").write_text("code")
    (h / "Documents" / ".thesis.docx.tmp-4000000").write_text("thesis")
    (h / ".cache.tmp-999990").mkdir()
    (h / f".write-test-{DEAD}").write_text("x")
    before = tree(h)
    res = cli("doctor", "--data", str(h), "--fix")
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f"Error: '{h}' is not a paohuzi store (no {CATALOG_NAME}, no runs folder of run=NAME"
        " folders): nothing in it is looked at or removed\n"
    )
    assert tree(h) == before


def test_doctor_fix_keeps_what_the_writers_never_make_bug(store: Path) -> None:
    # inside a store: a user's notes with a temp-like name, files in a run folder no writer
    # makes there, and a complete run in a folder of a refused name (150 hands)
    (store / "notes").mkdir()
    (store / "notes" / ".todo.txt.tmp-999999").write_text("todo")
    (store / "runs" / "run=r" / f".notes.tmp-{DEAD}").write_text("mine")
    (store / "runs" / "run=r" / "hands" / f".x.tmp-{DEAD}").write_text("mine")
    shutil.copytree(store / "runs" / "run=r", store / "runs" / "run=my run")
    before = tree(store)
    listing = cli("doctor", "--data", str(store))
    assert listing.exit_code == 1
    assert listing.stdout.splitlines() == [
        "run folder of a refused name: runs/run=my run (a name rm refuses: letters, digits,"
        " '.', '_', '-', at most 120; rename it to keep it)"
    ]
    res = cli("doctor", "--data", str(store), "--fix")
    assert (res.exit_code, res.stdout) == (1, ""), res.output
    assert tree(store) == before


def test_doctor_yes_that_names_nothing_is_one_error_bug(store: Path) -> None:
    shutil.copytree(store / "runs" / "run=r", store / "runs" / "run=my run")
    before = tree(store)
    res = cli("doctor", "--data", str(store), "--fix", "--yes", "run=my rn")
    assert res.exit_code == 2
    assert res.stderr == (
        "Error: --yes 'run=my rn' names no left-over that needs it; nothing removed\n"
    )
    res = cli("doctor", "--data", str(store), "--yes", "run=my run")
    assert res.stderr == "Error: --yes names left-overs to remove: give it with --fix\n"
    assert tree(store) == before


def _uncommitted(store: Path, name: str, pid: int) -> Path:
    """What a first import killed before its manifest leaves: the first shard's files, a
    lock naming its process, a temporary file, no manifest (run r's first shard copied)."""
    run = store / "runs" / f"run={name}"
    src = store / "runs" / "run=r"
    for folder in ("hands", "events", "summary", "facts"):
        (run / folder).mkdir(parents=True)
        shutil.copyfile(src / folder / "part-00000.parquet", run / folder / "part-00000.parquet")
    (run / ".lock").write_text(str(pid))
    (run / "hands" / f".part-00001.parquet.tmp-{pid}").write_bytes(b"half")
    return run


def test_doctor_lists_and_removes_an_uncommitted_run_folder_bug(store: Path) -> None:
    # a SIGKILL during the first shard of a new run: "doctor" said "no left-overs"
    run = _uncommitted(store, "cc", DEAD)
    assert is_orphan(run)  # what verify notes and the next writer clears
    res = cli("doctor", "--data", str(store))
    assert (res.exit_code, res.stdout) == (
        1,
        "uncommitted run folder: runs/run=cc (no manifest: a first write that never committed)\n",
    ), res.output
    res = cli("doctor", "--data", str(store), "--fix")
    assert (res.exit_code, res.stdout) == (0, "removed runs/run=cc (uncommitted run folder)\n")
    assert not run.exists() and sorted(os.listdir(store / "runs")) == ["run=r"]


def test_an_uncommitted_run_folder_of_a_live_writer_is_kept_bug(store: Path) -> None:
    # the lock held is the authority, not the pid it records (a server outlives its imports)
    run = _uncommitted(store, "cc", LIVE)
    with RunLock(run):
        found = find_leftovers(store)
        assert (found.leftovers, [lo.rel for lo in found.in_use]) == ([], ["runs/run=cc"])
        res = cli("doctor", "--data", str(store), "--fix")
        assert res.exit_code == 0 and run.is_dir()
        assert "kept, in use: uncommitted run folder: runs/run=cc (" in res.stderr
    (lo,) = find_leftovers(store).leftovers  # the same pid, the lock released: a left-over
    assert lo.rel == "runs/run=cc" and not lo.needs_yes


@pytest.mark.parametrize("extra", ["thesis.docx", "hands/part-00001.parquet", ".lock/notes"])
def test_an_uncommitted_run_folder_of_more_goes_only_when_named_bug(
    store: Path, extra: str
) -> None:
    # a person's file, or the shards of a run whose manifest is gone: named before they go
    run = _uncommitted(store, "cc", DEAD)
    if extra.startswith(".lock/"):  # a folder in the lock's place, with a file in it
        (run / ".lock").unlink()
        (run / ".lock").mkdir()
    (run / extra).write_text("precious")
    lo = next(lo for lo in find_leftovers(store).leftovers if lo.kind == "uncommitted run folder")
    # (a writer would clear the first write and keep the rest; doctor removes the folder)
    assert lo.needs_yes and is_orphan(run) == (not extra.startswith("hands/"))
    gone = "a run whose manifest is gone" if extra.startswith("hands/") else "which no writer makes"
    assert gone in lo.line()
    res = cli("doctor", "--data", str(store), "--fix")
    assert res.exit_code == 1 and (run / extra).read_text() == "precious"
    res = cli("doctor", "--data", str(store), "--fix", "--yes", "cc")
    assert (res.exit_code, res.stdout) == (0, "removed runs/run=cc (uncommitted run folder)\n")


def test_a_store_import_lock_that_is_no_file_is_listed_bug(store: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.write_text("precious\n")
    (store / IMPORT_LOCK_NAME).symlink_to(precious)
    (lo,) = find_leftovers(store).leftovers
    assert lo.line() == "lock file that is not a regular file: .ingest.lock (a symbolic link)"
    res = cli("doctor", "--data", str(store), "--fix")
    assert res.exit_code == 0 and precious.read_text() == "precious\n"
    assert not os.path.lexists(store / IMPORT_LOCK_NAME)


# ---------------------------------------------------------------------------------------------
# The property: random trees of every name the writers use, with live and dead pids
# ---------------------------------------------------------------------------------------------

PID = st.sampled_from([DEAD, LIVE])
TEMP_NAMES = st.one_of(
    st.builds(lambda p: f".{CATALOG_NAME}.tmp-{p}", PID),
    st.builds(lambda p: f".{CATALOG_NAME}.tmp-{p}.wal", PID),
    st.builds(lambda p: f".{CHECKSUM_CACHE_NAME}.tmp-{p}", PID),
    st.builds(lambda p: f".write-test-{p}", PID),
    st.builds(lambda p, t: f".write-test-{p}-{t}", PID, st.integers(1, 10**6)),
    st.builds(lambda p: f".manifest.json.tmp-{p}", PID),
    st.builds(lambda i, p: f".part-{i:05d}.parquet.tmp-{p}", st.integers(0, 3), PID),
    st.builds(lambda p: f".notes.txt.tmp-{p}", PID),
    st.builds(lambda p: f".removing-x-{p}", PID),
)
OTHER_NAMES = st.sampled_from(
    ["runs", "run=a", "run=my run", "hands", "summary", "notes", ".lock", "manifest.json",
     "part-00000.parquet", "x.txt", CATALOG_NAME],
)  # fmt: skip
NAME = st.one_of(TEMP_NAMES, OTHER_NAMES)

RUN = st.sampled_from(["run=base", "run=a", "run=my run", "notes"])
FOLDER = st.sampled_from([*SHARD_FOLDERS, "notes"])
#: where the names go: anywhere, or at each level of a store's layout
PREFIX = st.one_of(
    st.just([]),
    st.just(["runs"]),
    st.builds(lambda r: ["runs", r], RUN),
    st.builds(lambda r: ["runs", r, "manifest.json"], RUN),  # a committed run
    st.builds(lambda r, f: ["runs", r, f], RUN, FOLDER),
)
# a tree: a list of (path of names, is a folder)
PATHS = st.lists(
    st.tuples(
        st.builds(lambda a, b: a + b, PREFIX, st.lists(NAME, min_size=1, max_size=2)),
        st.booleans(),
    ),
    max_size=14,
)


def build(root: Path, paths: list[tuple[list[str], bool]]) -> None:
    for names, folder in paths:
        if "manifest.json" in names:
            names, folder = names[: names.index("manifest.json") + 1], False
        p = root
        for i, n in enumerate(names):
            p = p / n
            last = i == len(names) - 1
            if os.path.lexists(p):
                if not p.is_dir() or p.is_symlink():
                    break
                continue
            if last and not folder:
                p.write_bytes(b"data")
            else:
                p.mkdir()


def removable(rel: str, root: Path) -> bool:
    """The oracle, written from the issue's words, not from the code: what a writer of the
    store leaves, where it leaves it, of a process that is gone (or anything inside such a
    folder, or inside an interrupted removal or an uncommitted run folder)."""
    import re

    parts = rel.split("/")
    top = parts[0]
    if re.fullmatch(
        rf"\.{re.escape(CATALOG_NAME)}\.tmp-{DEAD}(\.wal)?|\.{re.escape(CHECKSUM_CACHE_NAME)}"
        rf"\.tmp-{DEAD}|\.write-test-{DEAD}(-\d+)?",
        top,
    ):
        return True
    if top != "runs" or len(parts) < 2:
        return False
    entry = parts[1]
    if entry == f".removing-x-{DEAD}":
        return True
    if not re.fullmatch(r"run=[A-Za-z0-9][A-Za-z0-9._-]*", entry):
        return False
    run = root / "runs" / entry
    if not os.path.lexists(run / "manifest.json"):
        return True  # uncommitted, with a dead or no lock pid: allowed only if doctor decided
    if len(parts) == 3:
        return parts[2] == f".manifest.json.tmp-{DEAD}"
    if len(parts) == 4:
        return (
            parts[2] in SHARD_FOLDERS
            and re.fullmatch(rf"\.part-\d{{5}}\.parquet\.tmp-{DEAD}", parts[3]) is not None
        )
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATHS)
def test_a_folder_that_is_not_a_store_loses_nothing_bug(
    paths: list[tuple[list[str], bool]],
) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "h"
        root.mkdir()
        build(root, [(n, f) for n, f in paths if n[0] not in ("runs", CATALOG_NAME)])
        before = tree(root)
        res = cli("doctor", "--data", str(root), "--fix")
        assert res.exit_code == 2 and "is not a paohuzi store" in res.stderr
        assert tree(root) == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PATHS)
def test_a_store_loses_only_what_its_writers_left_bug(paths: list[tuple[list[str], bool]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "store"
        (root / "runs" / "run=base" / "hands").mkdir(parents=True)
        (root / "runs" / "run=base" / "manifest.json").write_text("{}")
        build(root, paths)
        before = tree(root)
        res = cli("doctor", "--data", str(root), "--fix")
        assert res.exit_code in (0, 1, 2), res.output
        after = tree(root)
        gone = set(before) - set(after)
        wrongly = sorted(
            rel for rel in gone if not any(removable(a, root) for a in _ancestors(rel))
        )
        assert wrongly == [], res.output
        # and every dead writer's file where the writers put it is gone (nothing missed)
        for rel in before:
            if rel in after and removable(rel, root) and not _in_kept_folder(rel, root):
                raise AssertionError(f"{rel} was left: {res.output}")
        # nothing rewritten (but the catalog, which doctor rebuilds when a run folder went)
        assert all(v == before[k] for k, v in after.items() if k in before and k != CATALOG_NAME)


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _in_kept_folder(rel: str, root: Path) -> bool:
    """Whether ``rel`` lies in a run folder doctor keeps whole: one with no manifest that
    holds files no writer makes (named only with --yes), one whose lock names a live
    process, or a folder (not a file) with a temporary file's name."""
    parts = rel.split("/")
    if parts[0] == "runs" and len(parts) >= 2 and parts[1].startswith("run="):
        run = root / "runs" / parts[1]
        if not os.path.lexists(run / "manifest.json"):
            return True
    p = root / rel
    return p.is_dir() and not p.is_symlink() and not rel.startswith("runs/.removing")
