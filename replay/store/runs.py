"""Reading a store: :class:`Store`, its :class:`Run` folders and their recorded hands."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import CorruptLog, did_you_mean
from engine.rules import RuleSet
from replay import schema
from replay.store.layout import CATALOG_NAME, MANIFEST_NAME, StoreError, default_data_dir, run_dir
from replay.store.manifest import read_manifest, read_manifest_digest
from replay.store.scan import (
    ChecksumCache,
    StoreState,
    Uncached,
    check_shard,
    check_shards,
    resolve_shard_path,
    run_folder_problem,
    scan_store,
)

if TYPE_CHECKING:
    import pyarrow as pa


class StateSource(Protocol):
    """What keeps a store's checked state for a long-lived reader
    (:class:`~replay.store.snapshot.LiveStore`)."""

    def state(self) -> StoreState: ...


@dataclass(frozen=True)
class HandRecord:
    """One recorded hand: its ``hands`` row and its ``events`` columns (lists, seq order)."""

    run: str
    hand: dict[str, Any]
    events: dict[str, list[Any]]

    @property
    def hand_id(self) -> int:
        return int(self.hand["hand_id"])

    @property
    def deck(self) -> tuple[int, ...]:
        return tuple(self.hand["deck"])

    @property
    def dealer(self) -> int:
        return int(self.hand["dealer"])

    @property
    def history(self) -> list[tuple[int, int]]:
        """``[(seat, action), …]``, the form ``State.rebuild`` takes."""
        return list(zip(self.events["seat"], self.events["action"]))

    def rebuild(self, rules: RuleSet, checked: bool = True) -> Any:
        """The final ``engine.state.State`` of the hand, rebuilt from the log alone."""
        from engine.state import State

        return State.rebuild(rules, self.deck, self.dealer, self.history, checked=checked)


class _ManifestFacts:
    """What a run's manifest says of it (``self.manifest``): its rules and status."""

    manifest: dict[str, Any]

    @property
    def rules(self) -> RuleSet:
        return RuleSet.from_dict(self.manifest["rules"])

    @property
    def status(self) -> str:
        return str(self.manifest.get("status"))


@dataclass(frozen=True)
class RunHead(_ManifestFacts):
    """A checked run as a figure reads it: its manifest without the shard list (``manifest``)
    and its hands; what :class:`Run` gives of it, without the rows."""

    name: str
    path: Path
    manifest: dict[str, Any] = field(repr=False)
    n_hands: int = 0


#: Shards a :class:`Run` checks from their bytes before it loads the checksum cache.
FEW_SHARDS = 4


@dataclass
class Run(_ManifestFacts):
    """A run folder and its manifest. Every read checks the shard it reads against the
    manifest first (:func:`~replay.store.scan.check_shard`: size, rows, hand ids, SHA-256,
    cached), so a damaged shard is a :class:`CorruptLog` naming it, never wrong rows."""

    name: str
    path: Path
    manifest: dict[str, Any] = field(repr=False)
    _checked: set[int] = field(default_factory=set, repr=False)
    _cache: ChecksumCache | None = field(default=None, repr=False)

    @property
    def shards(self) -> list[dict[str, Any]]:
        """Finished shards, in hand order."""
        return sorted(self.manifest.get("shards", []), key=lambda s: s["index"])

    @property
    def n_hands(self) -> int:
        return sum(s["hands"] for s in self.shards)

    def shard_path(self, shard: dict[str, Any], table: str) -> Path:
        """A shard file, inside the run folder (:class:`CorruptLog` otherwise)."""
        return resolve_shard_path(self.path, shard["files"][table]["path"])

    def _checksums(self) -> ChecksumCache:
        if self._cache is None:
            self._cache = ChecksumCache(self.path.parent.parent)
        return self._cache

    def check_shard(self, shard: dict[str, Any]) -> None:
        """Raise :class:`CorruptLog` naming the file if ``shard`` fails the integrity checks
        (once per shard and Run object). The first :data:`FEW_SHARDS` are checked from
        their bytes, the next through the store's checksum cache: reading one hand checks
        a megabyte or so, where loading the cache of a 10⁸-hand store reads 23 MB."""
        index = int(shard["index"])
        if index in self._checked:
            return
        if self._cache is None and len(self._checked) < FEW_SHARDS:
            check_shard(self.path, shard, Uncached())
        else:
            cache = self._checksums()
            try:
                check_shard(self.path, shard, cache)
            finally:
                cache.save()
        self._checked.add(index)

    def problem(self) -> str | None:
        """Why the run cannot be trusted (the first damaged shard), or None."""
        cache = self._checksums()
        _, problem = check_shards(self.path, self.shards, cache)
        cache.save()
        if problem is None:
            self._checked.update(int(s["index"]) for s in self.shards)
        return problem

    def read_shard(self, shard: dict[str, Any], table: str) -> pa.Table:
        self.check_shard(shard)
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.shard_path(shard, table)
        try:
            t = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise CorruptLog(f"run {self.name}: cannot read shard {path}: {e}") from None
        if t.num_rows != shard["files"][table]["rows"]:
            raise CorruptLog(
                f"run {self.name}: {path} has {t.num_rows} rows, manifest says"
                f" {shard['files'][table]['rows']}"
            )
        return t

    def read_table(self, table: str) -> pa.Table:
        """A whole table of the run (small runs and tests; use DuckDB for big ones)."""
        import pyarrow as pa

        parts = [self.read_shard(s, table) for s in self.shards]
        if not parts:
            return schema.SCHEMAS[table].empty_table()
        return pa.concat_tables(parts)

    def _shard_of(self, hand_id: int) -> dict[str, Any]:
        for s in self.shards:
            if s["first_hand"] <= hand_id < s["first_hand"] + s["hands"]:
                return s
        raise KeyError(f"run {self.name} has no hand {hand_id}")

    def read_hand(self, hand_id: int) -> HandRecord:
        """One hand by id (raises ``KeyError`` if the run does not hold it)."""
        import pyarrow.parquet as pq

        shard = self._shard_of(hand_id)
        self.check_shard(shard)
        flt = [("hand_id", "=", hand_id)]
        h = pq.read_table(self.shard_path(shard, "hands"), filters=flt).to_pylist()
        ev = pq.read_table(self.shard_path(shard, "events"), filters=flt)
        if len(h) != 1 or ev.num_rows != h[0]["n_events"]:
            raise CorruptLog(f"run {self.name}: hand {hand_id} is not recorded consistently")
        return HandRecord(self.name, h[0], ev.to_pydict())

    def iter_hands(self) -> Iterator[HandRecord]:
        """Every hand in order, reading one shard at a time."""
        for shard in self.shards:
            hands = self.read_shard(shard, "hands").to_pylist()
            events = self.read_shard(shard, "events").to_pydict()
            i = 0
            for h in hands:
                n = h["n_events"]
                ev = {k: v[i : i + n] for k, v in events.items()}
                if n and (ev["hand_id"][0] != h["hand_id"] or ev["hand_id"][-1] != h["hand_id"]):
                    raise CorruptLog(f"run {self.name}: events of hand {h['hand_id']} misplaced")
                i += n
                yield HandRecord(self.name, h, ev)

    def content_digest(self) -> str:
        """SHA-256 over the content of both tables (independent of shard files' bytes)."""
        import pyarrow as pa

        hasher = hashlib.sha256()
        for table in schema.TABLES:
            t = self.read_table(table).combine_chunks()
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, t.schema.remove_metadata()) as w:
                w.write_table(t.replace_schema_metadata(None))
            hasher.update(table.encode())
            hasher.update(sink.getvalue().to_pybytes())
        return hasher.hexdigest()


class Store:
    """A data directory: its runs and its catalog."""

    def __init__(self, root: Path, live: StateSource | None = None) -> None:
        self.root = Path(root).resolve()
        #: a long-lived reader's kept state (:class:`~replay.store.snapshot.LiveStore`):
        #: :meth:`scan` answers from it
        self.live = live

    def __repr__(self) -> str:
        return f"open_store({str(self.root)!r})"

    @property
    def catalog_path(self) -> Path:
        return self.root / CATALOG_NAME

    def run_names(self) -> list[str]:
        """Every run folder with a manifest, in name order (a folder :meth:`run` refuses, a
        symlink or an odd name, included: it is listed, and refused by name)."""
        runs = self.root / "runs"
        if not runs.is_dir():
            return []
        return sorted(
            p.name.removeprefix("run=")
            for p in runs.iterdir()
            if p.name.startswith("run=") and os.path.lexists(p / MANIFEST_NAME)
        )

    def runs(self) -> list[Run]:
        return [self.run(n) for n in self.run_names()]

    def run(self, name: str) -> Run:
        """The run ``name``, its manifest read and checked; :class:`StoreError` if there is
        none, its folder is a symlink or its name one the tool refuses, :class:`CorruptLog`
        if its manifest is damaged."""
        path = run_dir(self.root, name)
        problem = run_folder_problem(path)
        if problem is not None:
            raise StoreError(f"run {name}: {problem}")
        if not os.path.lexists(path / MANIFEST_NAME):
            names = self.run_names()
            known = ", ".join(names) or "none"
            raise StoreError(
                f"no run {name!r} in {self.root} (runs: {known}){did_you_mean(name, names)}"
            )
        return Run(name, path, read_manifest(path))

    def scan(self, manifests: bool = True) -> StoreState:
        """Every run with its integrity checked (:func:`~replay.store.scan.scan_store`),
        each keeping the manifest it was checked by (``manifests``) for :meth:`run_in`.
        A store opened with a :class:`~replay.store.snapshot.LiveStore` answers with its
        kept state (revalidated; without manifests: :meth:`run_in` reads one and binds it
        by its SHA-256)."""
        if self.live is not None:
            return self.live.state()
        return scan_store(self.root, manifests)

    def run_head(self, state: StoreState, name: str) -> Run | RunHead:
        """What a figure of run ``name`` reads of it, as the scan ``state`` found it: its
        manifest without the shard list (:attr:`~replay.store.scan.RunInfo.head`, no manifest
        parsed), or :meth:`run_in` when the scan kept none."""
        info = state.run(name)
        if info is not None and info.problem is None and info.head is not None:
            return RunHead(name, run_dir(self.root, name), info.head, info.hands)
        return self.run_in(state, name)

    def run_in(self, state: StoreState, name: str) -> Run:
        """The run ``name`` as the scan ``state`` read it: one view, the manifest the scan
        checked the run by and the files that manifest lists, whatever a writer commits
        since (a manifest read now may list shards the scan did not check, and the
        catalog opened on ``state`` does not read). The scan must have found the run, with
        no ``problem``: :class:`StoreError` otherwise. A state scanned without manifests
        gives the manifest on disk only while it is still the one the scan read (its
        SHA-256), else :class:`StoreError` (the run changed: scan again)."""
        info = state.run(name)
        if info is None:
            raise StoreError(f"run {name}: not in the scan of the store {self.root}")
        if info.problem is not None:
            raise StoreError(f"run {name}: {info.problem}")
        path = run_dir(self.root, name)
        manifest = info.manifest
        if manifest is None:
            manifest, digest = read_manifest_digest(path)
            if digest != info.manifest_sha256:
                raise StoreError(
                    f"run {name} changed while it was read (a writer committed); ask again"
                )
        return Run(name, path, manifest)

    def connect(self, state: StoreState | None = None) -> Any:
        """A read-only DuckDB connection with the catalog (:mod:`replay.store.catalog`):
        views ``hands``, ``events``, ``seats`` over the runs that pass the integrity checks,
        tables ``runs`` and ``damaged_runs``. Opens ``paohuzi.duckdb`` when it is current,
        else builds the same views in memory."""
        from replay.store import catalog

        return catalog.connect(self.root, state)


def open_store(path: str | Path | None = None) -> Store:
    """The store at ``path`` (default ``$PAOHUZI_DATA`` or ``./data``), for reading."""
    return Store(Path(path) if path is not None else default_data_dir())
