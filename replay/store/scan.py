"""What the store holds: its runs, read from their manifests, and whether each can be trusted.

Every reader (``paohuzi stats``, ``replay``, ``export``, the catalog, the dashboard) reads only
the shard files a manifest lists (docs/LOG_FORMAT.md §1), and only after :func:`check_shard`
found each present inside its run folder with the listed size, row count, SHA-256 (cached by
size and mtime, :class:`ChecksumCache`) and hand-id range (from the Parquet footer): the one
check of a listed file, :mod:`replay.store.check`, which ``paohuzi verify`` runs too. A run
with a missing, truncated, edited or swapped shard is left out with a one-line reason naming
the shard; every other run stays usable. ``paohuzi verify`` remains the deep check.

>>> import tempfile
>>> s = scan_store(tempfile.mkdtemp())
>>> s.exists, s.runs, s.usable_runs
(True, (), ())
>>> scan_store("/nonexistent/paohuzi").exists
False
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic_core

from engine.errors import CorruptLog, PaohuziError
from engine.rules import PRESETS, RuleSet
from replay.store import summary_schema
from replay.store.check import _resolve, check_listed, read_errors
from replay.store.check import resolve_shard_path as resolve_shard_path  # its home before
from replay.store.files import read_regular
from replay.store.fsinfo import file_kind, link_target, pid_alive
from replay.store.fsinfo import writable_mode as writable_mode  # its home before
from replay.store.layout import CHECKSUM_CACHE_NAME, MANIFEST_NAME, RUN_NAME_RE
from replay.store.manifest import Manifest, read_manifest_digest

TABLES = ("hands", "events")


@dataclass(frozen=True)
class RunInfo:
    """One run as :func:`scan_store` found it: what its manifest says and whether its listed
    files passed the checks. What every reader is told about a run: :class:`StoreState`
    (which holds them), the catalog's ``runs`` table, ``paohuzi runs`` and ``stats``, the
    service and the dashboard; built here only (:func:`_run_info`, :func:`_broken`)."""

    name: str
    status: str
    writing: bool  # status "running" and its writer is alive
    hands: int  # hands in the listed shards
    hands_target: int
    events: int
    rules: str  # the preset name, or the base preset with its changed switches
    rules_preset: str | None
    players: int
    ruleset: str
    huayang: str
    level: str  # 名堂 level: the 花样 (basic / half / full), or "luzhou-a" / "luzhou-b"
    huangzhuang_rotate: int  # the n-th consecutive 荒庄 passes the deal on
    min_huxi: int
    policies: tuple[str, ...]  # per seat, rotation 0
    duplicate: bool
    rotations: int
    seed: int | None
    created: str
    updated: str = ""
    schema_version: int | None = None
    code_version: str | None = None
    rules_fingerprint: str | None = None
    session_length: int | None = None
    bytes: int = 0  # of the listed shard files
    rules_items: tuple[tuple[str, Any], ...] = field(default=(), repr=False)  # the rule set
    files: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # (table, path)
    problem: str | None = None  # why the run cannot be read
    #: (first, last) hand id of each listed shard, in shard order (as ``files`` lists them)
    ranges: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    #: SHA-256 of the manifest's bytes: what a catalog built on this run is bound to (it
    #: lists every shard file's SHA-256, so the run's content)
    manifest_sha256: str = field(default="", repr=False)
    #: why the run's summary files cannot be used (one missing, damaged or counting other
    #: hands than its shard): its figures then come from its hands, and ``paohuzi index``
    #: rebuilds them; None when they can be (or the run has none)
    summary_problem: str | None = None
    #: why the run's facts files (docs/LOG_FORMAT.md §12) cannot be used (one damaged), or
    #: None; a run without them (not indexed) has no ``facts`` files and no problem
    facts_problem: str | None = None
    #: who plays each seat in each rotation of its summaries (a run of imported hands: in
    #: each policy class); empty when its shards cannot have summaries
    per_rotation: tuple[tuple[str, ...], ...] = field(default=(), repr=False)
    #: the hands per bin of its summaries' ``conv`` rows
    granule: int = 1
    #: its summaries' rotations are policy classes (a run of imported hands)
    policy_classes: bool = False
    #: the manifest this scan read and checked the run by (``scan_store(manifests=True)``),
    #: else None: a reader builds the run from it (:meth:`replay.store.runs.Store.run_in`),
    #: never from a manifest read later, which may list shards this scan did not check
    manifest: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: the shards its rollup covers (its first ones), 0 when it has none used
    #: (:mod:`replay.store.rollup`); the rollup is ``files``' ("rollup", path) entry
    rollup_shards: int = 0
    #: why the run's rollup cannot be used (stale, damaged), or None: its figures then come
    #: from its shards' summaries
    rollup_problem: str | None = None
    #: the manifest without its shard list (rules, params, progress, status, reviews …):
    #: what a figure of the run reads of it (:meth:`replay.store.runs.Store.run_head`),
    #: kept by the scan memo so that no manifest is parsed for it
    head: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    #: a digest of ``files`` relative to the run folder (what a catalog built on the run
    #: lists of it: :func:`replay.store.catalog.listing_digest`)
    files_digest: str = field(default="", repr=False)

    @property
    def usable(self) -> bool:
        return self.problem is None and self.hands > 0

    @property
    def has_facts(self) -> bool:
        """Whether every shard lists a good facts file (the run is indexed for facts)."""
        return any(t == "facts" for t, _ in self.files)

    def ruleset_obj(self) -> RuleSet:
        """The run's :class:`~engine.rules.RuleSet` (from its manifest)."""
        return RuleSet.from_dict(dict(self.rules_items))

    @property
    def policy_names(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.policies)))

    @property
    def state(self) -> str:
        """complete / being written / stopped (running, writer gone) / interrupted / failed."""
        return run_state(self.status, self.writing)


@dataclass(frozen=True)
class StoreState:
    """The data directory at one moment; ``signature`` changes whenever a manifest does."""

    root: str
    exists: bool
    runs: tuple[RunInfo, ...]
    signature: str

    @property
    def usable_runs(self) -> tuple[RunInfo, ...]:
        return tuple(r for r in self.runs if r.usable)

    def run(self, name: str) -> RunInfo | None:
        return self._by_name.get(name)

    @functools.cached_property
    def _by_name(self) -> dict[str, RunInfo]:
        return {r.name: r for r in reversed(self.runs)}  # the first of a name, as before

    def shard_files(self, table: str, run: str, lo: int, hi: int) -> list[str]:
        """The ``hands`` or ``events`` files of run ``run``'s shards that hold any hand id in
        ``lo … hi`` (what a query about those hands needs to read; the others are skipped
        without opening them)."""
        info = self.run(run)
        if info is None or not info.usable:
            return []
        files = [p for t, p in info.files if t == table]
        return [p for p, (a, b) in zip(files, info.ranges, strict=True) if b >= lo and a <= hi]

    def summary_sources(self) -> list[str]:
        """The files the catalog's ``summary`` relation reads, over the usable runs: each
        run's rollup and the summary files of the shards after it, or all its summary files
        when it has no rollup used (the sums are the same)."""
        out: list[str] = []
        for r in self.usable_runs:
            summaries = [p for t, p in r.files if t == "summary"]
            rollup = [p for t, p in r.files if t == "rollup"]
            if rollup and summaries:
                out += rollup + summaries[r.rollup_shards :]
            else:
                out += summaries
        return out

    def files(self, table: str, runs: tuple[str, ...] | None = None) -> list[str]:
        """The listed shard files of ``table`` over the usable runs (or the named ones)."""
        return [
            p
            for r in self.usable_runs
            if runs is None or r.name in runs
            for t, p in r.files
            if t == table
        ]

    def messages(self) -> list[tuple[str, str]]:
        """``(level, text)`` notes for the page: info / warning / error."""
        out: list[tuple[str, str]] = []
        if not self.exists:
            out.append(
                (
                    "error",
                    f"No store at {self.root}. Create one with `paohuzi simulate --data"
                    f" {self.root}` or `make demo`.",
                )
            )
            return out
        if not self.runs:
            out.append(
                (
                    "error",
                    f"The store {self.root} has no runs yet. Record some with `paohuzi"
                    " simulate` (or `make demo`).",
                )
            )
            return out
        for r in self.runs:
            if r.problem is not None:
                out.append(("error", f"Run {r.name} is left out: {r.problem}"))
                continue
            if r.summary_problem is not None:
                out.append(("warning", summary_warning(r.name, r.summary_problem)))
            elif r.rollup_problem is not None:
                out.append(("info", rollup_note(r.name, r.rollup_problem)))
            if r.facts_problem is not None:
                out.append(
                    (
                        "warning",
                        f"run {r.name}: its facts are not used ({r.facts_problem});"
                        " run 'paohuzi index' to rebuild them",
                    )
                )
            if r.status == "running" and r.writing:
                out.append(
                    (
                        "warning",
                        f"Run {r.name} is still being written ({r.hands:,} of"
                        f" {r.hands_target:,} hands so far); its numbers will change.",
                    )
                )
            elif r.hands == 0:
                out.append(("info", f"Run {r.name} has no finished shard yet."))
            elif r.hands < r.hands_target:
                out.append(
                    (
                        "info",
                        f"Run {r.name} is {r.state} at {r.hands:,} of {r.hands_target:,}"
                        " hands; the same `paohuzi simulate` command resumes it.",
                    )
                )
        if self.runs and not self.usable_runs:
            out.append(("error", "No run can be shown yet."))
        return out


def _runs_digest(root: str | Path, add: Callable[[Any, str, Path], None]) -> str:
    """A short SHA-1 of ``root`` and what ``add(hash, run folder name, path)`` feeds it for
    every run folder, in name order."""
    h = hashlib.sha1(str(root).encode())
    try:
        entries = sorted(os.scandir(Path(root) / "runs"), key=lambda e: e.name)
    except OSError:
        return h.hexdigest()[:16]
    for e in entries:
        if e.name.startswith("run="):
            add(h, e.name, Path(e.path))
    return h.hexdigest()[:16]


def signature(root: str | Path) -> str:
    """A short digest of every manifest's and shard file's (name, mtime, size): it changes
    when a run does, including a shard file replaced or edited in place."""

    def add(h: Any, name: str, path: Path) -> None:
        try:
            st = os.stat(path / MANIFEST_NAME)
        except OSError:
            return
        h.update(f"{name}:{st.st_mtime_ns}:{st.st_size};".encode())
        for table in TABLES:
            with contextlib.suppress(OSError):
                for f in sorted(os.scandir(path / table), key=lambda f: f.name):
                    with contextlib.suppress(OSError):
                        fst = f.stat()
                        h.update(f"{f.name}:{fst.st_mtime_ns}:{fst.st_size};".encode())

    return _runs_digest(root, add)


def quick_signature(root: str | Path) -> str:
    """A short digest of every manifest's and every run's table folders' (name, mtime,
    size): it changes when a file is added, removed or replaced (a rename changes its
    folder's mtime), as every writer of the store does, but not when a file is edited in
    place, which only :func:`signature` sees. A few stats per run, where :func:`signature`
    takes one per shard file (0.4 s at 10⁸ hands)."""

    def add(h: Any, name: str, path: Path) -> None:
        for part in (MANIFEST_NAME, *TABLES):
            with contextlib.suppress(OSError):
                st = os.stat(path / part)
                h.update(f"{name}/{part}:{st.st_mtime_ns}:{st.st_size};".encode())

    return _runs_digest(root, add)


def rules_label(rules: dict[str, Any], preset: str | None) -> str:
    """The preset name, or the closest preset and the switches that differ.

    >>> rules_label(RuleSet(min_huxi=10).to_dict(), None)
    'hunan min_huxi=10'
    >>> rules_label(RuleSet().to_dict(), "hunan")
    'hunan'
    """
    if preset:
        return preset
    best, diff = "custom", None
    for name, p in PRESETS.items():
        d = {k: v for k, v in p.to_dict().items() if rules.get(k) != v}
        if diff is None or len(d) < len(diff):
            best, diff = name, d
    changed = " ".join(f"{k}={rules.get(k)}" for k in sorted(diff or {}))
    return f"{best} {changed}".strip()


def run_state(status: str, writing: bool) -> str:
    """What ``runs``, ``stats`` and the service call a run of manifest status ``status``: a
    run still ``running`` is ``being written`` while its writer is alive (``writing``:
    :func:`writer_alive`), else ``stopped`` (killed); any other status as it is.

    >>> run_state("running", False), run_state("running", True), run_state("complete", False)
    ('stopped', 'being written', 'complete')
    """
    if status == "running":
        return "being written" if writing else "stopped"
    return status


def writer_alive(run_path: Path) -> bool:
    """Whether the pid in ``.lock`` is alive (we never take the lock: a writer starting at
    that moment would think the run busy)."""
    try:
        pid = int(read_regular(run_path / ".lock", 64).decode().strip() or "0")
    except (OSError, ValueError):
        return False
    return pid_alive(pid)


def file_sha256(path: Path | str) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ChecksumCache:
    """What reading a shard file's bytes and footer tells, remembered in
    ``DATA/.checksums.json``: its SHA-256, its footer row count and its hand-id range. A
    second scan of an unchanged store then reads no file, only stats them (a
    100,000,000-hand store has some 70,000 files).

    The cache is a hint, never the authority. An entry vouches only for the very file it was
    made from: it is keyed, as git's index is, by what an edit cannot keep — size,
    ``mtime_ns``, ``ctime_ns`` (which no ``touch -r`` restores) and inode — and an entry that
    is not exactly ``[size, mtime_ns, ctime_ns, inode, sha256 | null, rows | null, first_id
    | null, last_id | null]`` (an older cache's shape, a wrong type) is ignored and the file
    read again. The cache file itself is read only when it is a regular file (never through a
    symlink), of at most :data:`CHECKSUM_CACHE_MAX_BYTES`; anything else is an empty cache.
    A store that cannot be written (a read-only copy) is read every time."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.path = self.root / CHECKSUM_CACHE_NAME
        self.entries: dict[str, list[Any]] = {}
        self.dirty = False
        self.dirs: dict[str, str] = {}  # resolved run folders (resolve_shard_path)
        data = _read_cache_file(self.path)
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            # every entry checked once, here; the ones this cache makes have the shape
            self.entries = {k: v for k, v in data["files"].items() if _valid_entry(v)}

    def _entry(self, path: Path | str, st: os.stat_result) -> list[Any]:
        """The file's entry, a fresh one when it is unknown, changed or malformed."""
        text, prefix = str(path), f"{self.root}{os.sep}"
        key = text[len(prefix) :] if text.startswith(prefix) else text
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        hit = self.entries.get(key)
        if hit is not None and hit[:4] == stamp:
            return hit
        entry = [*stamp, None, None, None, None]
        self.entries[key] = entry
        return entry

    def sha256(self, path: Path | str, st: os.stat_result) -> str:
        entry = self._entry(path, st)
        if entry[4] is None:
            entry[4] = file_sha256(path)
            self.dirty = True
        return str(entry[4])

    def footer(
        self, path: Path | str, st: os.stat_result, hand_ids: bool
    ) -> tuple[int, tuple[int, int] | None]:
        """(rows, (first, last) hand id or None) from the file's footer; the id range only
        when ``hand_ids``. Raises as :func:`pyarrow.parquet.read_metadata` does."""
        entry = self._entry(path, st)
        if entry[5] is not None and (not hand_ids or entry[5] == 0 or entry[6] is not None):
            ids = (entry[6], entry[7]) if entry[6] is not None and entry[7] is not None else None
            return entry[5], ids if hand_ids else None
        n_rows, ids = read_footer(path, hand_ids)
        entry[5] = n_rows
        if ids is not None:
            entry[6], entry[7] = ids
        self.dirty = True
        return n_rows, ids

    def summary_hands(self, path: Path | str, st: os.stat_result) -> int:
        """The hands a summary file counts (:func:`~replay.store.summary_schema.summary_hands`),
        remembered in the entry's first id slot (a summary file has no hand ids). Raises as
        :func:`pyarrow.parquet.read_table` does."""
        from replay.store.summary_schema import summary_hands

        entry = self._entry(path, st)
        if entry[6] is None:
            entry[6] = summary_hands(path)
            self.dirty = True
        return int(entry[6])

    def rollup_recomputed(self, path: Path | str, st: os.stat_result, binding: str) -> bool:
        """Whether this very rollup file (its stat) was found equal to the rollup made again
        from the summaries of ``binding`` (:meth:`vouch_rollup`), remembered in the entry's
        last slot (a rollup has no hand ids) as the binding's first 60 bits."""
        return self._entry(path, st)[7] == int(binding[:15], 16)

    def vouch_rollup(self, path: Path | str, st: os.stat_result, binding: str) -> None:
        """Remember that the rollup file ``path`` (as of ``st``) equals the one made again
        from the summaries of ``binding`` (``paohuzi index``'s check)."""
        self._entry(path, st)[7] = int(binding[:15], 16)
        self.dirty = True

    def vouch(self, path: Path | str, sha256: str, rows: int, ids: tuple[int, int] | None) -> None:
        """Remember what the writer of ``path`` knows of the bytes it just wrote (their
        SHA-256, footer rows and hand-id range), under the file's stat now: as a reader's
        check would remember it, without reading the file back. For a writer only, right
        after its atomic write (``bench.dashboard`` vouches for the copies it writes)."""
        entry = self._entry(path, os.lstat(path))
        entry[4:8] = [sha256, rows, *(ids if ids is not None else (None, None))]
        self.dirty = True

    def save(self) -> None:
        if not self.dirty or not writable_mode(self.root):
            return
        from replay.store.files import write_json

        with contextlib.suppress(OSError, PaohuziError):
            write_json(
                self.path, {"format": "paohuzi-checksums", "files": self.entries}, compact=True
            )
        self.dirty = False


class Uncached:
    """The facts :class:`ChecksumCache` remembers, read from the file every time: what
    ``paohuzi verify``, the deep check, trusts (and a check of a shard or two, cheaper than
    loading a big store's cache)."""

    def __init__(self) -> None:
        self.dirs: dict[str, str] = {}  # resolved run folders, as ChecksumCache.dirs

    def sha256(self, path: Path | str, st: os.stat_result) -> str:
        return file_sha256(path)

    def footer(
        self, path: Path | str, st: os.stat_result, hand_ids: bool
    ) -> tuple[int, tuple[int, int] | None]:
        return read_footer(path, hand_ids)

    def summary_hands(self, path: Path | str, st: os.stat_result) -> int:
        from replay.store.summary_schema import summary_hands

        return summary_hands(path)


def read_footer(path: Path | str, hand_ids: bool) -> tuple[int, tuple[int, int] | None]:
    """(rows, (first, last) hand id or None) from the file's footer; the id range only when
    ``hand_ids``. Raises as :func:`pyarrow.parquet.read_metadata` does."""
    import pyarrow.parquet as pq  # only a file not met before is opened

    md = pq.read_metadata(path)
    problem = columns_problem(md, os.path.basename(os.path.dirname(path)))
    if problem is not None:
        raise ValueError(problem)
    return md.num_rows, _hand_id_range(md, path) if hand_ids else None


def columns_problem(md: Any, folder: str) -> str | None:
    """How the columns of a file's footer ``md`` differ from those of the table its shard
    folder ``folder`` holds (``hands``, ``events``, ``summary``, ``rollup``, ``facts``,
    ``imported``), or None: a file of other columns, whatever its manifest entry says,
    would make a relation over every run's files fail, or read other values."""
    from replay import schema
    from replay.store.facts_schema import FACTS_TABLE
    from replay.store.provenance_schema import PROVENANCE
    from replay.store.rollup import ROLLUP_DIR
    from replay.store.summary_schema import SUMMARY_TABLE

    if folder in TABLES:
        want = schema.SCHEMAS[folder]
    elif folder in (SUMMARY_TABLE, ROLLUP_DIR):
        from replay.store.summary_schema import SUMMARY_SCHEMA as want
    elif folder == FACTS_TABLE:
        from replay.store.facts_schema import FACTS_SCHEMA as want
    elif folder == PROVENANCE:
        from replay.store.provenance_schema import PROVENANCE_SCHEMA as want
    else:
        return None
    got = md.schema.to_arrow_schema()
    if got.names != want.names:
        extra = [n for n in got.names if n not in want.names]
        lost = [n for n in want.names if n not in got.names]
        said = ", ".join(
            [f"no column {n!r}" for n in lost[:2]] + [f"a column {n!r}" for n in extra[:2]]
        )
        return f"its columns are not those of a {folder} file ({said or 'another order'})"
    for f, g in zip(want, got, strict=True):
        if f.type != g.type:
            return f"its column {f.name!r} is {g.type}, not {f.type} as in a {folder} file"
    return None


#: The largest checksum cache read (a 10⁸-hand store's is about 12 MB); a larger file is an
#: empty cache, rebuilt as files are read.
CHECKSUM_CACHE_MAX_BYTES = 256 << 20


def _read_cache_file(path: Path) -> Any:
    """The cache file's JSON, or None: not there, not a regular file (a FIFO, a device, a
    symlink, a directory), larger than the bound, not UTF-8 JSON, or nested too deep."""
    try:
        return pydantic_core.from_json(read_regular(path, CHECKSUM_CACHE_MAX_BYTES))
    except (OSError, ValueError):
        return None


def _valid_entry(e: Any) -> bool:
    """An entry of exactly the cache's shape (``bool`` is no int here)."""
    return (
        type(e) is list
        and len(e) == 8
        and all(type(x) is int and x >= 0 for x in e[:4])
        and (e[4] is None or (type(e[4]) is str and len(e[4]) == 64))
        and all(x is None or (type(x) is int and x >= 0) for x in e[5:])
    )


def _hand_id_range(md: Any, path: Path | str) -> tuple[int, int] | None:
    """(min, max) of ``hand_id`` from the row-group statistics (the footer), reading the
    column only when a writer left no statistics; None for an empty file."""
    if md.num_rows == 0:
        return None
    col = md.schema.to_arrow_schema().get_field_index("hand_id")
    if col < 0:
        raise ValueError("no hand_id column")
    lo: int | None = None
    hi: int | None = None
    for g in range(md.num_row_groups):
        stats = md.row_group(g).column(col).statistics
        if stats is None or not stats.has_min_max:
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            ids = pq.read_table(path, columns=["hand_id"]).column(0)
            return int(pc.min(ids).as_py()), int(pc.max(ids).as_py())
        lo = int(stats.min) if lo is None else min(lo, int(stats.min))
        hi = int(stats.max) if hi is None else max(hi, int(stats.max))
    assert lo is not None and hi is not None
    return lo, hi


def check_shard(
    run_path: Path, shard: dict[str, Any], cache: ChecksumCache | Uncached
) -> list[tuple[str, str]]:
    """Check one finished shard against its manifest entry, cheaply (footer and file only):
    both files inside the run folder and present, with the listed size, row count and
    SHA-256, and the shard's hand ids in place (``first_hand`` … ``first_hand + hands − 1``).
    Returns ``[(table, path), …]``; raises :class:`CorruptLog` naming the shard file. Its
    summary file is not the shard's data: :func:`check_summaries`."""
    name = Path(run_path).name.removeprefix("run=")
    try:
        first, n = int(shard["first_hand"]), int(shard["hands"])
        n_events = int(shard["events"])
        entries = {t: shard["files"][t] for t in TABLES}
    except (KeyError, TypeError, ValueError) as e:
        raise CorruptLog(f"run {name}: bad shard entry {shard.get('index')!r}: {e}") from None
    out: list[tuple[str, str]] = []
    for table in TABLES:
        hands = (first, n, table == "hands")
        rows = n if table == "hands" else n_events
        out.append((table, check_file(run_path, entries[table], cache, rows, hands)[0]))
    return out


def check_summaries(
    run_path: Path, shards: list[dict[str, Any]], cache: ChecksumCache
) -> tuple[list[tuple[str, str]], str | None]:
    """The summary files (docs/LOG_FORMAT.md §10) of a run's checked shards, each checked as
    a shard file is (inside the run folder, a regular file of the listed size, rows and
    SHA-256) and counting exactly its shard's hands: ``([("summary", path), …], None)``
    when every shard has a good one; ``([], None)`` when some shard has none (not indexed
    yet, or indexed by an older version, whose rows lack kinds the readers ask for);
    ``([], problem)`` at the first damaged one. A summary is derived data: its damage never
    costs the run, whose figures then come from its hands."""
    import pyarrow as pa

    from replay.store.summary_schema import has_summary

    out: list[tuple[str, str]] = []
    for s in sorted(shards, key=lambda s: int(s["index"])):
        entry = s["files"].get("summary")
        if entry is None or not has_summary(s):
            return [], None
        try:
            path, st = check_file(run_path, entry, cache)
            n = cache.summary_hands(path, st)
        except CorruptLog as e:
            return [], str(e)
        except (OSError, ValueError, KeyError, pa.ArrowException) as e:
            return [], f"summary file {entry.get('path')} is corrupt: {str(e).splitlines()[0]}"
        if n != int(s["hands"]):
            name = Path(run_path).name.removeprefix("run=")
            return [], (
                f"run {name}: summary file {entry.get('path')} counts {n:,} hands, its shard"
                f" holds {int(s['hands']):,}"
            )
        out.append(("summary", path))
    return out, None


def check_facts(
    run_path: Path, shards: list[dict[str, Any]], cache: ChecksumCache
) -> tuple[list[tuple[str, str]], str | None]:
    """The facts files of a run's checked shards, each checked as a shard file is (inside the
    run folder, a regular file of the listed size, rows and SHA-256, one row per hand of its
    shard, hand ids in place): ``([("facts", path), …], None)`` when every shard has one of
    this version; ``([], None)`` when some shard has none (not indexed yet); ``([], problem)``
    at the first damaged one. Facts are derived data: their damage never costs the run
    (docs/LOG_FORMAT.md §12)."""
    from replay.store.facts_schema import FACTS_TABLE, has_facts

    out: list[tuple[str, str]] = []
    for s in sorted(shards, key=lambda s: int(s["index"])):
        if not has_facts(s):
            return [], None
        try:
            first, n = int(s["first_hand"]), int(s["hands"])
            path, _ = check_file(
                run_path, s["files"][FACTS_TABLE], cache, n, (first, n, True), "facts file"
            )
        except CorruptLog as e:
            return [], str(e)
        except (KeyError, TypeError, ValueError) as e:
            return [], f"bad facts entry: {e}"
        out.append((FACTS_TABLE, str(path)))
    return out, None


def rollup_note(name: str, problem: str) -> str:
    """The one line a reader notes when run ``name``'s rollup cannot be used."""
    return (
        f"run {name}: its rollup is not used ({problem.removeprefix(f'run {name}: ')}); its"
        " figures are read from its shards' summaries (run 'paohuzi index' to rebuild it)"
    )


def check_rollup(
    run_path: Path, manifest: dict[str, Any], cache: ChecksumCache
) -> tuple[list[tuple[str, str]], int, str | None]:
    """The run's rollup (:mod:`replay.store.rollup`), checked as a listed file is, bound
    to the summaries it was made from, and counting exactly the hands of the shards it
    covers (as a summary file counts its shard's): ``([("rollup", path)], shards covered, None)``;
    ``([], 0, None)`` when the manifest lists none; ``([], 0, problem)`` when it is stale
    or damaged. Derived data: its problem never costs the run."""
    from replay.store.rollup import ROLLUP_KEY, covered, entry_problem

    why = entry_problem(manifest)
    if why == "none":
        return [], 0, None
    entry = manifest.get(ROLLUP_KEY)
    rel = entry.get("path") if isinstance(entry, dict) else None
    if why is not None or not isinstance(entry, dict):
        return [], 0, f"the rollup {rel!r}: {why}"
    try:
        path, st = check_file(run_path, entry, cache, what="rollup file")
        n = cache.summary_hands(path, st)
    except CorruptLog as e:
        return [], 0, str(e)
    except read_errors(OSError, ValueError, KeyError) as e:
        return [], 0, f"rollup file {rel} is corrupt: {str(e).splitlines()[0]}"
    k = int(entry["shards"])
    held = sum(int(s["hands"]) for s in covered(manifest)[:k])
    if n != held:  # as a summary file is held to its shard's hands (check_summaries)
        name = Path(run_path).name.removeprefix("run=")
        why = f"run {name}: rollup file {rel} counts {n:,} hands, the {k:,} shards it covers"
        return [], 0, f"{why} hold {held:,}"
    return [("rollup", path)], k, None


def summary_warning(name: str, problem: str) -> str:
    """The one line a reader warns with when run ``name``'s summaries cannot be used."""
    return (
        f"run {name}: its summary tables are not used ({problem.removeprefix(f'run {name}: ')});"
        " its figures are read from"
        " its hands (run 'paohuzi index' to rebuild them)"
    )


def check_file(
    run_path: Path,
    entry: Any,
    cache: ChecksumCache | Uncached,
    rows: int | None = None,
    hands: tuple[int, int, bool] | None = None,
    what: str = "shard file",
) -> tuple[str, os.stat_result]:
    """One listed file against its manifest entry (:func:`replay.store.check.check_listed`):
    inside the run folder, present, with the listed size, footer row count (and ``rows``,
    what the shard entry implies), hand ids in ``hands`` = (first, count, must start at
    first), and SHA-256; its path and the stat the checks were made on. Raises
    :class:`CorruptLog` naming the file (``what``: how) at its first problem."""
    name = os.path.basename(str(run_path)).removeprefix("run=")
    rel = entry.get("path") if isinstance(entry, dict) else None
    path = _resolve(run_path, rel, cache.dirs)
    where = f"run {name}: {what} {rel}"
    return path, check_listed(path, entry, cache, where, rows, hands)


def check_shards(
    run_path: Path, shards: list[dict[str, Any]], cache: ChecksumCache
) -> tuple[list[tuple[str, str]], str | None]:
    """Every shard of a run by :func:`check_shard`, and no two shards claiming one hand:
    ``([(table, path), …], None)``, or ``([], problem)`` at the first damaged shard."""
    files: list[tuple[str, str]] = []
    end = -1
    try:
        for s in sorted(shards, key=lambda s: int(s["index"])):
            if int(s["first_hand"]) <= end:
                raise CorruptLog(
                    f"run {Path(run_path).name.removeprefix('run=')}: shards"
                    f" overlap at hand {s['first_hand']}"
                )
            end = int(s["first_hand"]) + int(s["hands"]) - 1
            files.extend((t, str(p)) for t, p in check_shard(run_path, s, cache))
    except CorruptLog as e:
        return [], str(e)
    except (KeyError, TypeError, ValueError) as e:
        return [], f"bad shard entry in the manifest: {e}"
    return files, None


def run_folder_problem(run_path: Path) -> str | None:
    """Why every command refuses the run folder ``run_path`` (``runs/run=NAME``), or None:
    a symbolic link (a store's files are its own: a link out of it is never followed), a
    file or a name the tool would not give a run (``paohuzi doctor`` lists them)."""
    try:
        st = os.lstat(run_path)
    except OSError:
        return None  # no such run: the caller says so
    if not RUN_NAME_RE.match(run_path.name.removeprefix("run=")):
        return (
            f"the run folder runs/{run_path.name[:60]!r} has a name the tool refuses"
            " (letters, digits, '.', '_' and '-', at most 120); rename or remove it"
        )
    if stat.S_ISLNK(st.st_mode):
        target = link_target(run_path)
        return (
            f"the run folder runs/{run_path.name} is a symbolic link (to {target[:80]!r});"
            " a run must be a folder inside the store"
        )
    if not stat.S_ISDIR(st.st_mode):
        return f"runs/{run_path.name} is {file_kind(st.st_mode)}, not a run folder"
    return None


def _run_info(run_path: Path, cache: ChecksumCache, keep: bool = False) -> RunInfo:
    name = run_path.name.removeprefix("run=")
    try:
        m, digest = read_manifest_digest(run_path)
    except PaohuziError as e:
        return _broken(name, str(e))
    try:
        params = Manifest(m).params
        rules = m.get("rules", {})  # a rule set: read_manifest_digest checked it
        shards = m.get("shards", [])
        files, problem = check_shards(run_path, shards, cache)
        summary, summary_problem = (
            check_summaries(run_path, shards, cache) if problem is None else ([], None)
        )
        facts, facts_problem = (
            check_facts(run_path, shards, cache) if problem is None else ([], None)
        )
        rollup, rollup_shards, rollup_problem = (
            check_rollup(run_path, m, cache)
            if problem is None and summary and summary_problem is None
            else ([], 0, None)
        )
        status = str(m.get("status"))
        shape = summary_schema.run_shape(m)
        return RunInfo(
            manifest=m if keep else None,
            manifest_sha256=digest,
            name=name,
            status=status,
            writing=status == "running" and writer_alive(run_path),
            hands=sum(int(s["hands"]) for s in shards),
            hands_target=params.hands_total,
            events=sum(int(s["events"]) for s in shards),
            rules=rules_label(rules, m.get("rules_preset")),
            rules_preset=m.get("rules_preset"),
            players=int(rules.get("players", 3)),
            ruleset=str(rules.get("ruleset", "hunan")),
            huayang=str(rules.get("huayang", "half")),
            level=(
                f"luzhou-{rules.get('luzhou_di_mode', 'b')}"
                if rules.get("ruleset") == "luzhou"
                else str(rules.get("huayang", "half"))
            ),
            huangzhuang_rotate=int(rules.get("huangzhuang_rotate", 3)),
            min_huxi=int(rules.get("min_huxi", 15)),
            policies=params.policies,
            duplicate=params.duplicate,
            rotations=params.rotations,
            seed=params.seed,
            created=str(m.get("created", "")),
            updated=str(m.get("updated", "")),
            schema_version=m.get("schema_version"),
            code_version=(m.get("code") or {}).get("version"),
            rules_fingerprint=m.get("rules_fingerprint"),
            session_length=params.session_length,
            bytes=sum(int(f.get("bytes") or 0) for sh in shards for f in sh["files"].values()),
            rules_items=tuple(sorted(rules.items())),
            files=tuple(files + summary + facts + rollup),
            files_digest=files_digest(run_path, files + summary + facts + rollup),
            head={k: v for k, v in m.items() if k != "shards"},
            rollup_shards=rollup_shards,
            rollup_problem=rollup_problem,
            problem=problem,
            summary_problem=summary_problem,
            facts_problem=facts_problem,
            per_rotation=tuple(shape.per) if summary_schema.summarizable(m.get("params")) else (),
            granule=shape.granule,
            policy_classes=shape.classes,
            ranges=()
            if problem
            else tuple(
                (int(sh["first_hand"]), int(sh["first_hand"]) + int(sh["hands"]) - 1)
                for sh in sorted(shards, key=lambda sh: int(sh["index"]))
            ),
        )
    except (PaohuziError, KeyError, TypeError, ValueError) as e:
        return _broken(name, f"bad manifest: {e}")


def files_digest(run_path: Path, files: list[tuple[str, str]]) -> str:
    """A digest of a run's checked files, each as (table, path relative to the run folder)."""
    prefix = f"{os.path.realpath(run_path)}{os.sep}"
    h = hashlib.sha256()
    for t, p in files:
        h.update(f"{t}\t{p.removeprefix(prefix)}\n".encode())
    return h.hexdigest()


def _broken(name: str, problem: str) -> RunInfo:
    return RunInfo(
        name=name,
        status="unreadable",
        writing=False,
        hands=0,
        hands_target=0,
        events=0,
        rules="?",
        rules_preset=None,
        players=3,
        ruleset="hunan",
        huayang="half",
        level="half",
        huangzhuang_rotate=3,
        min_huxi=15,
        policies=(),
        duplicate=False,
        rotations=1,
        seed=None,
        created="",
        problem=problem,
    )


def scan_store(
    root: str | Path, manifests: bool = False, reuse: StoreState | None = None
) -> StoreState:
    """Read every run's manifest under ``root`` and check every listed shard
    (:func:`check_shards`); a damaged run carries its ``problem`` and no files.
    ``manifests``: each run keeps the manifest it was read from (:attr:`RunInfo.manifest`;
    what a reader of the run's rows needs, a long-lived holder of the state does not).

    A sound run whose manifest and checked files are unchanged since the last scan (their
    stamps in the scan memo, :mod:`replay.store.scan_memo`) is not read again: its files are
    only stat'ed. The state's ``signature`` (its generation) is made of those stamps.
    ``reuse``: an earlier state of the store with manifests, whose manifest of a run is
    taken again (not read) when the run's manifest has the same SHA-256 and stamp."""
    from replay.store.scan_memo import ScanMemo

    root_path = Path(root).resolve()
    h = hashlib.sha1(str(root_path).encode())
    if not root_path.is_dir():
        return StoreState(str(root_path), False, (), h.hexdigest()[:16])
    h.update(b"\0store")
    runs_dir = root_path / "runs"
    runs: list[RunInfo] = []
    memo = ScanMemo(root_path, RunInfo)
    cache: ChecksumCache | None = None
    seen: set[str] = set()
    if runs_dir.is_dir():
        for p in sorted(runs_dir.iterdir()):
            if not p.name.startswith("run="):
                continue
            problem = run_folder_problem(p)
            if problem is not None:
                runs.append(_broken(p.name.removeprefix("run="), problem))
                h.update(f"{p.name}!{problem};".encode())
                continue
            stamp = _manifest_stamp(p)
            if stamp is None and not os.path.lexists(p / MANIFEST_NAME):
                continue
            seen.add(p.name)
            info = _recalled(memo, p, stamp, manifests, reuse)
            if info is None:
                cache = cache if cache is not None else ChecksumCache(root_path)
                info = _run_info(p, cache, manifests)
                memo.remember(p.name, stamp, info, cache)
            digest = memo.digest(p.name) or repr(
                (stamp, info.manifest_sha256, info.problem, info.summary_problem,
                 info.facts_problem)
            )  # fmt: skip
            h.update(f"{p.name}:{digest}:{info.writing};".encode())
            runs.append(info)
    memo.keep_only(seen)
    if cache is not None:
        cache.save()
    memo.save()
    return StoreState(str(root_path), True, tuple(runs), h.hexdigest()[:16])


def _manifest_stamp(run_path: Path) -> list[int] | None:
    """The manifest's stamp (:func:`replay.store.scan_memo.stamp`), taken before it is read,
    or None when it cannot be stat'ed."""
    from replay.store.scan_memo import stamp

    try:
        return stamp(os.lstat(run_path / MANIFEST_NAME))
    except OSError:
        return None


def _recalled(
    memo: Any, run_path: Path, stamp: list[int] | None, keep: bool, reuse: StoreState | None
) -> RunInfo | None:
    """The memo's conclusion on the run at ``run_path`` (its writer looked at again), with
    its manifest when ``keep`` (``reuse``'s when it has the same SHA-256, else read and
    bound by its SHA-256 to the conclusion), or None."""
    info = memo.recall(run_path.name, stamp)
    if info is None:
        return None
    before = reuse.run(info.name) if reuse is not None else None
    if (
        keep
        and before is not None
        and before.manifest is not None
        and (before.manifest_sha256 == info.manifest_sha256)
    ):
        info = dataclasses.replace(info, manifest=before.manifest)
    elif keep:
        try:
            m, digest = read_manifest_digest(run_path)
        except PaohuziError:
            return None
        if digest != info.manifest_sha256:
            return None
        info = dataclasses.replace(info, manifest=m)
    writing = info.status == "running" and writer_alive(run_path)
    return dataclasses.replace(info, writing=writing) if writing != info.writing else info
