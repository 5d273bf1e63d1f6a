"""The one writer of a run: :class:`RunWriter`, through which every producer of hands —
``simulate`` (inline, a process pool, Ray tasks), ``import`` (the command line and
``POST /runs/{run}/hands``) and ``play`` — creates a run, commits its shards and ends it.

>>> import tempfile
>>> from engine.rules import find_rules
>>> from replay.store.write.create import imported_manifest
>>> root = tempfile.mkdtemp()
>>> with RunWriter(root, "r", imports=True) as w:
...     w.manifest is None
...     w.create(imported_manifest("r", find_rules("hunan"), ["doctest"]))
...     w.next_shard()
True
(0, 0)
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Self

from engine.errors import PaohuziError
from replay.store.files import cleanup_temp
from replay.store.layout import (
    MANIFEST_NAME,
    StoreError,
    check_run_name,
    ensure_writable,
    run_dir,
)
from replay.store.manifest import (
    ImportLock,
    ManifestWriter,
    RunLock,
    clear_first_write,
    now,
    read_manifest,
    write_manifest,
    writer_info,
)
from replay.store.write.listing import list_shard, set_progress
from replay.store.write.shard import ShardTables, write_shard

__all__ = ["PAUSE_ENV", "PAUSE_ENV_OLD", "RunWriter", "catalog_refresh"]

#: A test hook (``INDEX:SECONDS``): sleep that long after writing shard INDEX's files in
#: this process and before the manifest lists it, so that a test can kill the writer there.
PAUSE_ENV = "PAOHUZI_TEST_IMPORT_PAUSE"
#: The hook's former name, still read (after :data:`PAUSE_ENV`).
PAUSE_ENV_OLD = "PAOHUZI_TEST_INGEST_PAUSE"


def _pause(index: int) -> None:
    spec = os.environ.get(PAUSE_ENV) or os.environ.get(PAUSE_ENV_OLD, "")
    at, _, seconds = spec.partition(":")
    if at.strip().isdigit() and int(at) == index:
        time.sleep(min(float(seconds or 0), 600.0))


def catalog_refresh(root: Path) -> Exception | None:
    """Refresh ``DATA/paohuzi.duckdb`` after a write: None, or what stopped it (a commit
    stands whatever becomes of the catalog; readers build it in memory meanwhile)."""
    from replay.store.catalog import refresh_catalog

    try:
        refresh_catalog(Path(root))
    except Exception as e:
        return e
    return None


class RunWriter:
    """Run ``name`` of the store at ``root``, open for writing (a context manager).

    Entering takes the run's lock (:class:`~replay.store.manifest.RunLock`), and first the
    store's import lock for an import (``imports``: :class:`~replay.store.manifest.ImportLock`,
    both within ``lock_wait`` seconds, else :class:`~replay.store.manifest.RunBusy`), and
    reads the run's manifest (:attr:`manifest`; None for a new run). Then:

    * :meth:`create` adopts a new run's manifest (:mod:`~replay.store.write.create`),
      clearing what an import killed before its first manifest left in the folder;
      :meth:`resume` notes another invocation of an existing run;
    * :meth:`start` (a run written in many shards: ``simulate``) marks it ``running`` and
      writes the manifest; its commits are then written at a paced rate
      (:class:`~replay.store.manifest.ManifestWriter`) and :meth:`finish` marks it
      ``complete``; leaving on an exception marks it ``interrupted`` (Ctrl-C) or ``failed``.
      Without :meth:`start` (an import: one shard, the run always ``complete``) each
      commit writes the manifest at once;
    * :meth:`commit` lists one shard: :class:`~replay.store.write.shard.ShardTables`, whose
      files it writes first (:func:`~replay.store.write.shard.write_shard`), or the entry a
      worker's ``write_shard`` returned. Every write of the manifest brings the run's rollup
      up to date (:func:`~replay.store.manifest.write_manifest`).

    Leaving releases the locks, then refreshes the catalog when the manifest was written
    (``refresh``): :attr:`catalog_error` is what stopped the refresh, or None.
    """

    def __init__(
        self,
        root: str | Path,
        name: str,
        *,
        imports: bool = False,
        lock_wait: float = 0.0,
        refresh: bool = True,
    ) -> None:
        self.root = ensure_writable(Path(root))
        self.name = check_run_name(name)
        self.path = run_dir(self.root, self.name)
        self.imports, self.lock_wait, self.refresh = imports, lock_wait, refresh
        self.manifest: dict[str, Any] | None = None
        self.catalog_error: Exception | None = None
        self._locks = contextlib.ExitStack()
        self._indices: set[int] | None = None
        self._pace: ManifestWriter | None = None
        self._todo = self._cleaned = self._wrote = self._finished = False

    # -- opening ------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        try:
            deadline = time.monotonic() + self.lock_wait
            if self.imports:  # the store's import lock, then the run's: one order, no deadlock
                self._locks.enter_context(ImportLock(self.root, wait=self.lock_wait))
            wait = max(0.0, deadline - time.monotonic()) if self.imports else self.lock_wait
            self._locks.enter_context(RunLock(self.path, wait=wait))
            if (self.path / MANIFEST_NAME).exists():
                self.manifest = read_manifest(self.path)
        except BaseException:
            self._locks.close()
            raise
        return self

    def create(self, doc: dict[str, Any]) -> None:
        """Adopt ``doc`` as the manifest of this new run (written by the first
        :meth:`start` or :meth:`commit`), after deleting what an import killed before its
        first manifest left (:func:`~replay.store.manifest.clear_first_write`)."""
        if self.manifest is not None:
            raise StoreError(f"run {self.name!r} exists already")
        clear_first_write(self.path)
        self.manifest = doc

    def resume(self, command: list[str]) -> None:
        """Note another invocation (``command``) of the existing run in its ``resumed``."""
        self._doc().setdefault("resumed", []).append({"at": now(), "command": command})

    def _doc(self) -> dict[str, Any]:
        if self.manifest is None:
            raise StoreError(f"run {self.name!r} has no manifest yet (create it first)")
        return self.manifest

    @property
    def indices(self) -> set[int]:
        """The indices of the shards the manifest lists."""
        if self._indices is None:
            self._indices = {s["index"] for s in self._doc()["shards"]}
        return self._indices

    def next_shard(self) -> tuple[int, int]:
        """The index of a shard after every listed one, and the id of its first hand."""
        shards = self._doc()["shards"]
        index = max(self.indices, default=-1) + 1
        return index, sum(s["hands"] for s in shards)

    # -- writing ------------------------------------------------------------------------------

    def _clean(self) -> None:
        """Delete the temporary files a killed writer left (once, before the first write)."""
        if not self._cleaned:
            cleanup_temp(self.path)
            self._cleaned = True

    def _write(self) -> None:
        write_manifest(self.path, self._doc())
        self._wrote = True

    def start(self, complete: bool = False) -> None:
        """Start writing a run of many shards: status ``running`` (``complete``: nothing is
        left to play), this process as its ``writer``, its progress summed, written."""
        m = self._doc()
        self._clean()
        m["status"] = "complete" if complete else "running"
        m["writer"] = writer_info()
        set_progress(m)
        self._write()
        self._pace = ManifestWriter(self.path, m)
        self._todo = not complete

    def commit(self, shard: ShardTables | dict[str, Any]) -> bool:
        """List one finished shard in the manifest: ``shard``'s files written first
        (:class:`~replay.store.write.shard.ShardTables`), or the manifest entry a worker's
        :func:`~replay.store.write.shard.write_shard` returned. An index already listed is
        not listed again (a retried task reports a shard twice, with the same bytes):
        False. The manifest is written at once, or at the paced rate after :meth:`start`."""
        m = self._doc()
        if isinstance(shard, ShardTables):
            if shard.index in self.indices:
                raise StoreError(f"run {self.name!r} lists shard {shard.index} already")
            self._clean()
            entry = write_shard(self.path, shard)
            _pause(shard.index)
        else:
            entry = shard
        if entry["index"] in self.indices:
            return False
        self.indices.add(entry["index"])
        list_shard(m, entry)
        if self._pace is not None:
            self._pace.due()
        else:
            self._write()
        return True

    def finish(self) -> None:
        """The run started by :meth:`start` written to the end: what killed (and retried)
        workers left deleted, status ``complete``, its progress summed, written."""
        if self._pace is None or self._finished:
            return
        if self._todo:
            cleanup_temp(self.path)
        m = self._doc()
        m["status"] = "complete"
        m.pop("error", None)
        self._end()

    def _end(self) -> None:
        """The last write of a started run (its progress summed), whatever stops it."""
        self._finished = True
        m = self._doc()
        set_progress(m)
        with contextlib.suppress(OSError, PaohuziError):
            self._write()

    # -- closing ------------------------------------------------------------------------------

    def __exit__(self, exc_type: type[BaseException] | None, exc: Any, tb: Any) -> None:
        try:
            if exc_type is not None and self._pace is not None and not self._finished:
                m = self._doc()
                if issubclass(exc_type, KeyboardInterrupt):
                    m["status"] = "interrupted"
                else:
                    m["status"] = "failed"
                    m["error"] = str(exc)
                self._end()
        finally:
            self._locks.close()
        if self._wrote and self.refresh:
            self.catalog_error = catalog_refresh(self.root)
