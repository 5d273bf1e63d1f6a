"""Where things are in a store: the data directory, run folders, shard file names, the
shared ``--data`` option and the store's errors (no pyarrow, no duckdb: commands import this
to parse their options cheaply)."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from engine.errors import PaohuziError

DATA_ENV = "PAOHUZI_DATA"
DEFAULT_DATA = "data"
CATALOG_NAME = "paohuzi.duckdb"
MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "paohuzi-run"
RUN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}\Z")  # \Z: no "name\n"
#: The store's import lock (:class:`~replay.store.manifest.ImportLock`), in its root: the
#: store's own file, kept (as a run's ``.lock`` is), never a left-over. Its name on disk is
#: the one it had when importing was called ingest, kept for compatibility (a store written
#: before and a process still running an older version lock the same file).
IMPORT_LOCK_NAME = ".ingest.lock"
#: The checksum cache (:class:`~replay.store.scan.ChecksumCache`), in the store's root.
CHECKSUM_CACHE_NAME = ".checksums.json"
#: The scan memo (:mod:`replay.store.scan_memo`), in the store's root.
SCAN_MEMO_NAME = ".scan.json"
#: What commands answered for one generation of the store (replay.store.answer_memo).
ANSWERS_DIR_NAME = ".answers"
#: The folders of a run folder that hold its shard files and the files derived from them,
#: each file named ``part-NNNNN.parquet``: the tables (:data:`replay.schema.TABLES`),
#: the summaries, the facts, the imported hands' provenance, the decision reviews and the
#: run's rollup (held
#: equal to their writers' names by tests/replay/store/test_leftovers.py).
SHARD_FOLDERS = ("hands", "events", "summary", "facts", "imported", "reviews", "rollup")


class StoreError(PaohuziError):
    """A store that cannot be used as asked: unwritable, locked, disk full, mismatched run."""


class RunMismatch(StoreError):
    """An existing run folder recorded with other arguments than the ones given."""


def default_data_dir() -> Path:
    """``$PAOHUZI_DATA`` if set, else ``./data``."""
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def data_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--data DIR`` option every command shares; passes ``data`` (a :class:`Path`)."""

    def to_path(_ctx: Any, _param: Any, value: str | None) -> Path:
        if value is None:
            return default_data_dir()
        if not value.strip():
            raise click.BadParameter("empty directory name (leave --data out for the default)")
        return Path(value)

    return click.option(
        "--data",
        "data",
        type=click.Path(file_okay=False),
        default=None,
        metavar="DIR",
        help=f"The store (default: ${DATA_ENV} or ./{DEFAULT_DATA}).",
        callback=to_path,
    )(f)


def ensure_writable(root: Path) -> Path:
    """Create ``root`` (and ``root/runs``) if needed and check it is writable; the absolute
    path. Raises :class:`StoreError` with a one-line reason."""
    try:
        (root / "runs").mkdir(parents=True, exist_ok=True)
        # one probe per thread: the service checks from several threads of one process
        probe = root / f".write-test-{os.getpid()}-{threading.get_ident()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise StoreError(f"cannot write to data directory '{root}': {e.strerror or e}") from None
    return root.resolve()


def run_dir(root: Path, name: str) -> Path:
    return Path(root) / "runs" / f"run={name}"


def check_run_name(name: str) -> str:
    if not RUN_NAME_RE.match(name):
        raise StoreError(
            f"bad run name {name!r}: use letters, digits, '.', '_' and '-' (at most 120)"
        )
    return name


def shard_file(table: str, index: int) -> str:
    """The path of a shard file relative to its run folder."""
    return f"{table}/part-{index:05d}.parquet"
