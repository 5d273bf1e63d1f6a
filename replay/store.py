"""The store: run folders of Parquet shards with a manifest, and a DuckDB catalog over them.

Layout under the data directory (``--data DIR``, default ``$PAOHUZI_DATA`` or ``./data``)::

    data/
      paohuzi.duckdb                      catalog: views runs, hands, events (+ code tables)
      runs/
        run=NAME/
          manifest.json                   what the run is and which shards are finished
          hands/part-00000.parquet        one row per hand
          events/part-00000.parquet       one row per action

Safety rules (DESIGN "Shards are atomic"):

* every file is written under a temporary name (``.NAME.tmp-PID``), flushed, fsynced and
  renamed, so a reader never sees half a file;
* the manifest (itself written that way) lists only finished shards, with row counts, sizes
  and SHA-256 checksums; a writer holds ``run=NAME/.lock`` (``flock``, released by the kernel
  even on SIGKILL), and on resume deletes leftover temporary files;
* the catalog is rebuilt in a temporary file and renamed over the old one, so readers holding
  it open (read-only) never block a writer. Its views glob the shard files, so a run appears
  as soon as its first shard is written.

Readers use :func:`open_store`:

>>> import tempfile
>>> store = open_store(tempfile.mkdtemp())
>>> store.runs()
[]
>>> con = store.connect()
>>> con.execute("SELECT count(*) FROM hands").fetchone()
(0,)
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptLog, PaohuziError
from engine.rules import RuleSet
from replay import schema

DATA_ENV = "PAOHUZI_DATA"
DEFAULT_DATA = "data"
CATALOG_NAME = "paohuzi.duckdb"
MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "paohuzi-run"
RUN_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")


class StoreError(PaohuziError):
    """A store that cannot be used as asked: unwritable, locked, disk full, mismatched run."""


class RunMismatch(StoreError):
    """An existing run folder recorded with other arguments than the ones given."""


# ---------------------------------------------------------------------------------------------
# The data directory and the shared --data option
# ---------------------------------------------------------------------------------------------


def default_data_dir() -> Path:
    """``$PAOHUZI_DATA`` if set, else ``./data``."""
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def data_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--data DIR`` option every command shares; passes ``data`` (a :class:`Path`)."""
    return click.option(
        "--data",
        "data",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        metavar="DIR",
        help=f"The store (default: ${DATA_ENV} or ./{DEFAULT_DATA}).",
        callback=lambda _ctx, _p, v: v if v is not None else default_data_dir(),
    )(f)


def ensure_writable(root: Path) -> Path:
    """Create ``root`` (and ``root/runs``) if needed and check it is writable; the absolute
    path. Raises :class:`StoreError` with a one-line reason."""
    try:
        (root / "runs").mkdir(parents=True, exist_ok=True)
        probe = root / f".write-test-{os.getpid()}"
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


# ---------------------------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (fsynced)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreError(f"disk full while writing {path}") from None
        raise
    _fsync_dir(path.parent)


def write_json(path: Path, obj: Any) -> None:
    atomic_write(path, (json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode())


#: Parquet writer settings per table (zstd, dictionary where values repeat, delta for ids).
PARQUET_OPTIONS: dict[str, dict[str, Any]] = {
    "hands": {
        "use_dictionary": [
            "session_hand",
            "rotation",
            "dealer",
            "huang_streak",
            "outcome",
            "winner",
            "source",
            "hu_card",
            "from_seat",
            "huxi",
            "deng",
            "fan",
            "score",
            "mingtang",
            "zimo",
            "delta_0",
            "delta_1",
            "delta_2",
            "delta_3",
            "policy_0",
            "policy_1",
            "policy_2",
            "policy_3",
            "stock_left",
            "n_events",
        ],
        "column_encoding": {
            "hand_id": "DELTA_BINARY_PACKED",
            "session": "DELTA_BINARY_PACKED",
            "deal_id": "DELTA_BINARY_PACKED",
        },
    },
    "events": {
        "use_dictionary": ["seat", "action", "kind", "card", "from_seat", "n_legal", "options"],
        "column_encoding": {"hand_id": "DELTA_BINARY_PACKED", "seq": "DELTA_BINARY_PACKED"},
    },
}
COMPRESSION_LEVEL = 9


def parquet_bytes(table: pa.Table, name: str) -> bytes:
    """A table as Parquet file bytes, with the settings of :data:`PARQUET_OPTIONS`."""
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        compression="zstd",
        compression_level=COMPRESSION_LEVEL,
        row_group_size=max(1, table.num_rows),
        sorting_columns=[
            pq.SortingColumn(table.schema.get_field_index(c)) for c in schema.SORT_KEYS[name]
        ],
        **PARQUET_OPTIONS[name],
    )
    return sink.getvalue()


def write_shard_file(run_path: Path, table: pa.Table, name: str, index: int) -> dict[str, Any]:
    """Write one shard file atomically; its manifest entry (path, rows, bytes, sha256)."""
    data = parquet_bytes(table, name)
    rel = shard_file(name, index)
    path = run_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    return {
        "path": rel,
        "rows": table.num_rows,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def cleanup_temp(run_path: Path) -> int:
    """Delete temporary files an interrupted writer left behind (call with the lock held)."""
    n = 0
    for p in run_path.rglob(".*.tmp-*"):
        with contextlib.suppress(OSError):
            p.unlink()
            n += 1
    return n


# ---------------------------------------------------------------------------------------------
# Manifest and lock
# ---------------------------------------------------------------------------------------------


def read_manifest(run_path: Path) -> dict[str, Any]:
    path = Path(run_path) / MANIFEST_NAME
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptLog(f"no manifest in {run_path}") from None
    except (OSError, ValueError) as e:
        raise CorruptLog(f"unreadable manifest {path}: {e}") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise CorruptLog(f"{path} is not a paohuzi run manifest")
    version = m.get("schema_version")
    if isinstance(version, int) and version > schema.SCHEMA_VERSION:
        raise CorruptLog(
            f"{path}: schema version {version} is newer than this reader"
            f" ({schema.SCHEMA_VERSION}); upgrade paohuzi"
        )
    if version != schema.SCHEMA_VERSION:
        raise CorruptLog(f"{path}: unknown schema version {version!r}")
    return m


def write_manifest(run_path: Path, manifest: dict[str, Any]) -> None:
    write_json(Path(run_path) / MANIFEST_NAME, manifest)


class RunLock:
    """An exclusive ``flock`` on ``run=NAME/.lock`` for the writer of a run."""

    def __init__(self, run_path: Path) -> None:
        self.path = Path(run_path) / ".lock"
        self.fd: int | None = None

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise StoreError(
                f"run folder {self.path.parent} is being written by another process (pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# ---------------------------------------------------------------------------------------------
# The DuckDB catalog
# ---------------------------------------------------------------------------------------------

# The runs view: a few fields of every manifest (the full JSON is in column ``manifest``).
_RUN_FIELDS: list[tuple[str, str, str]] = [
    ("run", "VARCHAR", "$.run"),
    ("status", "VARCHAR", "$.status"),
    ("schema_version", "INTEGER", "$.schema_version"),
    ("created", "VARCHAR", "$.created"),
    ("updated", "VARCHAR", "$.updated"),
    ("code_version", "VARCHAR", "$.code.version"),
    ("seed", "UBIGINT", "$.params.seed"),
    ("hands_target", "BIGINT", "$.params.hands_total"),
    ("hands", "BIGINT", "$.progress.hands"),
    ("events", "BIGINT", "$.progress.events"),
    ("bytes", "BIGINT", "$.progress.bytes"),
    ("players", "INTEGER", "$.rules.players"),
    ("rules_preset", "VARCHAR", "$.rules_preset"),
    ("rules_fingerprint", "VARCHAR", "$.rules_fingerprint"),
    ("policies", "VARCHAR", "$.params.policies_text"),
    ("session_length", "INTEGER", "$.params.session_length"),
    ("duplicate", "BOOLEAN", "$.params.duplicate"),
    ("rotations", "INTEGER", "$.params.rotations"),
]


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _arrow_to_duckdb(t: pa.DataType) -> str:
    mapping = {
        pa.uint8(): "UTINYINT",
        pa.uint16(): "USMALLINT",
        pa.uint32(): "UINTEGER",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.bool_(): "BOOLEAN",
        pa.string(): "VARCHAR",
    }
    return mapping.get(t, "BLOB")


def listed_files(root: Path) -> dict[str, list[str]]:
    """Per table, the shard files the runs' manifests list and that exist, in run and shard
    order. A shard written but not yet listed, and a run whose manifest cannot be read, are
    left out: readers only ever see finished shards."""
    out: dict[str, list[str]] = {t: [] for t in schema.TABLES}
    runs = root / "runs"
    if not runs.is_dir():
        return out
    for path in sorted(runs.glob(f"run=*/{MANIFEST_NAME}")):
        try:
            m = read_manifest(path.parent)
        except CorruptLog:
            continue
        for shard in sorted(m.get("shards", []), key=lambda sh: sh["index"]):
            files = [path.parent / shard["files"][t]["path"] for t in schema.TABLES]
            if all(f.is_file() for f in files):
                for t, f in zip(schema.TABLES, files, strict=True):
                    out[t].append(str(f))
    return out


def _listing_digest(listed: dict[str, list[str]]) -> str:
    return hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()


def _build_views(con: Any, root: Path) -> dict[str, bool]:
    """Create the views on ``con`` for the store at ``root`` over the listed shards; which
    tables have files."""
    runs = root / "runs"
    globbed: dict[str, bool] = {}
    listed = listed_files(root)
    for name, sch in schema.SCHEMAS.items():
        if listed[name]:
            files = ", ".join(_q(f) for f in listed[name])
            con.execute(
                f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet([{files}],"
                " hive_partitioning = true, union_by_name = true,"
                " hive_types = {'run': VARCHAR})"
            )
            globbed[name] = True
        else:
            cols = ", ".join(f"NULL::{_arrow_to_duckdb(f.type)} AS {f.name}" for f in sch)
            con.execute(
                f"CREATE OR REPLACE VIEW {name} AS SELECT {cols}, NULL::VARCHAR AS run WHERE false"
            )
            globbed[name] = False
    fields = ", ".join(f"CAST(j ->> {_q(p)} AS {t}) AS {n}" for n, t, p in _RUN_FIELDS)
    if any(runs.glob(f"run=*/{MANIFEST_NAME}")):
        pattern = str(runs / "run=*" / MANIFEST_NAME)
        con.execute(
            f"CREATE OR REPLACE VIEW runs AS SELECT {fields}, j AS manifest, "
            f"parse_dirpath(filename) AS path FROM "
            f"(SELECT content::JSON AS j, filename FROM read_text({_q(pattern)})"
            " WHERE json_valid(content))"
        )
        globbed["runs"] = True
    else:
        con.execute(
            f"CREATE OR REPLACE VIEW runs AS SELECT {fields}, j AS manifest, NULL::VARCHAR AS"
            " path FROM (SELECT NULL::JSON AS j) WHERE false"
        )
        globbed["runs"] = False
    create_code_tables(con)
    return globbed


def create_code_tables(con: Any) -> None:
    """The code tables of :func:`replay.schema.codes` on ``con``: ``outcome_codes``,
    ``source_codes``, ``action_kinds`` (code, name) and ``mingtang_codes`` (bit, pinyin, name,
    level, fan)."""
    from engine.mingtang import REGISTRY

    c = schema.codes()
    for table, key in (
        ("outcome_codes", "outcome"),
        ("source_codes", "source"),
        ("action_kinds", "action_kind"),
    ):
        con.execute(f"CREATE OR REPLACE TABLE {table} (code UTINYINT, name VARCHAR)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?)", [(v, k) for k, v in c[key].items()])
    con.execute(
        "CREATE OR REPLACE TABLE mingtang_codes (bit UTINYINT, pinyin VARCHAR, name VARCHAR,"
        " level VARCHAR, fan INTEGER)"
    )
    con.executemany(
        "INSERT INTO mingtang_codes VALUES (?, ?, ?, ?, ?)",
        [
            (m["bit"], m["pinyin"], m["name"], m["level"], int(REGISTRY[m["pinyin"]].fan))
            for m in c["mingtang"]
        ],
    )


def refresh_catalog(root: Path) -> Path:
    """(Re)build ``root/paohuzi.duckdb`` atomically; its path."""
    import duckdb

    root = Path(root).resolve()
    path = root / CATALOG_NAME
    tmp = root / f".{CATALOG_NAME}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    try:
        con = duckdb.connect(str(tmp))
        try:
            globbed = _build_views(con, root)
            con.execute("CREATE TABLE catalog_meta (key VARCHAR, value VARCHAR)")
            meta = {
                "root": str(root),
                "schema_version": str(schema.SCHEMA_VERSION),
                "globbed": ",".join(k for k, v in globbed.items() if v),
                "listing": _listing_digest(listed_files(root)),
            }
            con.executemany("INSERT INTO catalog_meta VALUES (?, ?)", list(meta.items()))
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, path)
    except BaseException as e:
        for p in (tmp, tmp.with_name(tmp.name + ".wal")):
            with contextlib.suppress(OSError):
                p.unlink()
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreError(f"disk full while writing {path}") from None
        raise
    return path


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


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


@dataclass
class Run:
    """A run folder and its manifest."""

    name: str
    path: Path
    manifest: dict[str, Any] = field(repr=False)

    @property
    def rules(self) -> RuleSet:
        return RuleSet.from_dict(self.manifest["rules"])

    @property
    def status(self) -> str:
        return str(self.manifest.get("status"))

    @property
    def shards(self) -> list[dict[str, Any]]:
        """Finished shards, in hand order."""
        return sorted(self.manifest.get("shards", []), key=lambda s: s["index"])

    @property
    def n_hands(self) -> int:
        return sum(s["hands"] for s in self.shards)

    def shard_path(self, shard: dict[str, Any], table: str) -> Path:
        return self.path / shard["files"][table]["path"]

    def read_shard(self, shard: dict[str, Any], table: str) -> pa.Table:
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
        shard = self._shard_of(hand_id)
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

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def __repr__(self) -> str:
        return f"open_store({str(self.root)!r})"

    @property
    def catalog_path(self) -> Path:
        return self.root / CATALOG_NAME

    def run_names(self) -> list[str]:
        runs = self.root / "runs"
        if not runs.is_dir():
            return []
        return sorted(
            p.name.removeprefix("run=")
            for p in runs.iterdir()
            if p.name.startswith("run=") and (p / MANIFEST_NAME).exists()
        )

    def runs(self) -> list[Run]:
        return [self.run(n) for n in self.run_names()]

    def run(self, name: str) -> Run:
        path = run_dir(self.root, name)
        if not (path / MANIFEST_NAME).exists():
            known = ", ".join(self.run_names()) or "none"
            raise StoreError(f"no run {name!r} in {self.root} (runs: {known})")
        return Run(name, path, read_manifest(path))

    def connect(self) -> Any:
        """A read-only DuckDB connection with the views ``runs``, ``hands``, ``events``.

        The views read only the shards the manifests list. Opens the catalog file read-only
        when it is current; otherwise (no catalog, moved store, shards finished since it was
        built) an in-memory connection with the same views.
        """
        import duckdb

        if self.catalog_path.exists():
            try:
                con = duckdb.connect(str(self.catalog_path), read_only=True)
                meta = dict(con.execute("SELECT key, value FROM catalog_meta").fetchall())
                # Stale when the finished shards differ from those the catalog was built on.
                stale = meta.get("listing") != _listing_digest(listed_files(self.root))
                if (
                    meta.get("root") == str(self.root)
                    and meta.get("schema_version") == str(schema.SCHEMA_VERSION)
                    and not stale
                ):
                    return con
                con.close()
            except duckdb.Error:
                pass
        con = duckdb.connect(":memory:")
        _build_views(con, self.root)
        return con


def open_store(path: str | Path | None = None) -> Store:
    """The store at ``path`` (default ``$PAOHUZI_DATA`` or ``./data``), for reading."""
    return Store(Path(path) if path is not None else default_data_dir())
