"""The one DuckDB catalog over a store, for the CLI, ``paohuzi.duckdb`` and the dashboard.

:func:`build_catalog` makes, on any connection, from a :func:`~replay.store.scan.scan_store`
result: views ``hands`` and ``events`` (with the column ``run``) over the shard files the
manifests list and that passed the integrity checks, a view ``seats`` (one row per playing
seat per hand), a table ``runs`` (one row per usable run), a table ``damaged_runs`` (run,
problem: the runs left out, and why) and the code tables of
:func:`replay.record.schema.codes`. Three ways to open it, all built by that one function:

* :func:`refresh_catalog` writes ``DATA/paohuzi.duckdb`` with paths relative to the store,
  so a moved or copied store keeps working (open it with ``file_search_path`` set to the
  store, or from the store's folder: ``cd DATA && duckdb paohuzi.duckdb``);
* :func:`connect` (``Store.connect()``) opens that file read-only when it matches what the
  store holds now, else builds the same views in memory;
* :func:`open_catalog` (the dashboard) builds it in a private file, reopens it read-only,
  applies the caller's DuckDB settings, switches external access off except for the listed
  shard files and locks the configuration.

>>> import tempfile
>>> from replay.store.scan import scan_store
>>> con = open_catalog(scan_store(tempfile.mkdtemp()))
>>> con.execute("SELECT count(*) FROM hands").fetchone()
(0,)
>>> con.execute("CREATE TABLE t (x INT)")
Traceback (most recent call last):
...
_duckdb.InvalidInputException: Invalid Input Error: Cannot execute statement of type "CREATE" ...
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb

from replay.record import schema
from replay.store.ducklimits import duckdb_settings
from replay.store.layout import CATALOG_NAME, StoreError
from replay.store.scan import StoreState, scan_store
from replay.store.summary_schema import KINDS, SUMMARY_SCHEMA, SUMMARY_TABLE, duck_type

#: The columns of the ``runs`` table, from :class:`~replay.store.scan.RunInfo`.
RUN_COLUMNS: list[tuple[str, str]] = [
    ("run", "VARCHAR"),
    ("status", "VARCHAR"),
    ("state", "VARCHAR"),
    ("hands", "BIGINT"),
    ("hands_target", "BIGINT"),
    ("events", "BIGINT"),
    ("rules", "VARCHAR"),
    ("rules_preset", "VARCHAR"),
    ("players", "INTEGER"),
    ("ruleset", "VARCHAR"),
    ("huayang", "VARCHAR"),
    ("level", "VARCHAR"),
    ("huangzhuang_rotate", "INTEGER"),
    ("min_huxi", "INTEGER"),
    ("policies", "VARCHAR"),
    ("policy_mix", "VARCHAR"),
    ("duplicate", "BOOLEAN"),
    ("rotations", "INTEGER"),
    ("seed", "UBIGINT"),
    ("created", "VARCHAR"),
    ("updated", "VARCHAR"),
    ("schema_version", "INTEGER"),
    ("code_version", "VARCHAR"),
    ("rules_fingerprint", "VARCHAR"),
    ("session_length", "INTEGER"),
    ("bytes", "BIGINT"),
]


def _lit(s: str) -> str:
    # Paths come from manifests checked to lie inside their run folder; quoted all the same.
    return "'" + s.replace("'", "''") + "'"


def relation_sql(table: str, files: list[str]) -> str:
    """A relation (for a ``FROM``) of ``table``'s rows in ``files``, with the ``run`` column,
    as the catalog's view of that table has them: the view itself is this over every listed
    file; a query about a few shards names only theirs (:meth:`StoreState.shard_files`).

    Every listed file has its table's columns: a shard table's of
    :data:`schema.SCHEMA_VERSION` (the scan lists only runs of that version, each file
    checked against its manifest), a summary file's ``SUMMARY_SCHEMA`` (every summary file
    is written conformed to it), so DuckDB takes the columns from the first file;
    ``union_by_name`` would open every file's footer when the view is made (about 5 s per
    table at 10⁸ hands). A schema version that adds
    columns must then read the older files by name."""
    if files:
        listing = ", ".join(_lit(f) for f in files)
        return (
            f"(SELECT * FROM read_parquet([{listing}], hive_partitioning = true,"
            " hive_types = {'run': VARCHAR}))"
        )
    fields = SUMMARY_SCHEMA if table == SUMMARY_TABLE else schema.SCHEMAS[table]
    cols = ", ".join(f"NULL::{duck_type(f.type)} AS {f.name}" for f in fields)
    return f"(SELECT {cols}, NULL::VARCHAR AS run WHERE false)"


def _view_sql(table: str, files: list[str]) -> str:
    return f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM {relation_sql(table, files)}"


def rollup_sql(kind: str) -> str:
    """A summary kind's rows summed over the shards of each run (the ``summary_<kind>``
    view; :data:`~replay.store.summary_schema.KINDS`)."""
    keys, sums = KINDS[kind]
    agg = ", ".join(
        f"sum({c})::{'DOUBLE' if c in ('dw', 'dww', 'dy', 'dyy') else 'BIGINT'} AS {c}"
        for c in sums
    )
    return (
        f"SELECT run, {', '.join(keys)}, {agg} FROM summary WHERE kind = '{kind}'"
        f" GROUP BY run, {', '.join(keys)}"
    )


def _summary_views(con: Any, files: list[str], materialize: bool = False) -> None:
    """``summary`` (the rows of every listed summary file, with ``run``) and one
    ``summary_<kind>`` per kind, summed over shards: views, or tables when ``materialize``
    (the dashboard's private catalog: its pages then read a few thousand rows)."""
    con.execute(_view_sql(SUMMARY_TABLE, files))
    for kind in KINDS:
        what = "TABLE" if materialize else "VIEW"
        con.execute(f"DROP TABLE IF EXISTS summary_{kind}")
        con.execute(f"DROP VIEW IF EXISTS summary_{kind}")
        con.execute(f"CREATE {what} summary_{kind} AS {rollup_sql(kind)}")


# One row per playing seat per hand: the 4-player 坐醒 sitter, (dealer + 2) mod 4, sits out.
# One scan of hands, unnested (a UNION ALL of four selects would scan it four times).
_SEAT_STRUCTS = ", ".join(
    f"{{'seat': {i}::UTINYINT, 'policy': policy_{i}, 'delta': delta_{i},"
    f" 'won': coalesce(winner = {i}, false)}}"
    for i in range(schema.MAX_SEATS)
)
_SEATS_SQL = (
    "CREATE OR REPLACE VIEW seats AS SELECT run, hand_id, deal_id, rotation, dealer, outcome,"
    " winner, u.seat AS seat, u.policy AS policy, u.delta AS delta, u.won AS won FROM"
    " (SELECT run, hand_id, deal_id, rotation, dealer, outcome, winner, policy_3,"
    f" unnest([{_SEAT_STRUCTS}]) AS u FROM hands)"
    " WHERE u.policy IS NOT NULL AND NOT (policy_3 IS NOT NULL AND (dealer + 2) % 4 = u.seat)"
)


def listed_files(state: StoreState, base: Path | None = None) -> dict[str, list[str]]:
    """Per table, the checked shard files of the usable runs, in run and shard order;
    relative to ``base`` when given."""
    out: dict[str, list[str]] = {}
    for table in schema.TABLES:
        files = state.files(table)
        if base is not None:
            files = [_relative(f, base) for f in files]
        out[table] = files
    return out


def _relative(path: str, base: Path) -> str:
    """``path`` relative to ``base`` (string work: a big store lists 70,000 files)."""
    prefix = f"{base}{os.sep}"
    return path[len(prefix) :] if path.startswith(prefix) else str(Path(path).relative_to(base))


def listing_digest(state: StoreState) -> str:
    """What a catalog was built on: the usable runs — each bound by the SHA-256 of its
    manifest's bytes, which lists every shard file's SHA-256 — and their checked files
    (relative to the store). A run folder replaced by another of the same name and size, or
    the catalog of another store copied in, does not match."""
    rows = [(r.name, r.status, r.hands, r.manifest_sha256) for r in state.usable_runs]
    listed = listed_files(state, Path(state.root))
    listed["summary"] = [_relative(f, Path(state.root)) for f in state.files("summary")]
    return hashlib.sha256(json.dumps([rows, listed], sort_keys=True).encode()).hexdigest()


def create_code_tables(con: Any) -> None:
    """The code tables of :func:`replay.record.schema.codes` on ``con``: ``outcome_codes``,
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


def _file_views(con: Any, state: StoreState, base: Path | None) -> list[str]:
    """The views over the shard files on ``con`` (``hands``, ``events``, ``seats``; paths
    relative to ``base`` when given); the summary files, named the same way."""
    listed = listed_files(state, base)
    for table in schema.TABLES:
        con.execute(_view_sql(table, listed[table]))
    con.execute(_SEATS_SQL)
    sfiles = state.files(SUMMARY_TABLE)
    return sfiles if base is None else [_relative(f, base) for f in sfiles]


def _built_on(con: Any, state: StoreState) -> bool:
    """Whether the catalog open on ``con`` was built (by :func:`refresh_catalog`) on exactly
    ``state``'s checked files, with this schema version and relative paths."""
    meta = dict(con.execute("SELECT key, value FROM catalog_meta").fetchall())
    return (
        meta.get("schema_version") == str(schema.SCHEMA_VERSION)
        and meta.get("paths") == "relative"
        and meta.get("listing") == listing_digest(state)
    )


def build_catalog(
    con: Any, state: StoreState, base: Path | None = None, materialize: bool = False
) -> None:
    """The catalog's views and tables on ``con`` over ``state``'s usable runs (shard paths
    relative to ``base`` when given, else absolute); the summary views as tables when
    ``materialize``. Every view of the catalog is made here."""
    sfiles = _file_views(con, state, base)
    _summary_views(con, sfiles, materialize=materialize)
    con.execute(f"CREATE OR REPLACE TABLE runs ({', '.join(f'{n} {t}' for n, t in RUN_COLUMNS)})")
    rows = [
        (
            r.name,
            r.status,
            r.state,
            r.hands,
            r.hands_target,
            r.events,
            r.rules,
            r.rules_preset,
            r.players,
            r.ruleset,
            r.huayang,
            r.level,
            r.huangzhuang_rotate,
            r.min_huxi,
            ",".join(r.policies),
            ",".join(sorted(r.policies)),
            r.duplicate,
            r.rotations,
            r.seed,
            r.created,
            r.updated,
            r.schema_version,
            r.code_version,
            r.rules_fingerprint,
            r.session_length,
            r.bytes,
        )
        for r in state.usable_runs
    ]
    if rows:
        con.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * len(RUN_COLUMNS))})", rows)
    con.execute("CREATE OR REPLACE TABLE damaged_runs (run VARCHAR, problem VARCHAR)")
    damaged = [(r.name, r.problem) for r in state.runs if r.problem is not None]
    if damaged:
        con.executemany("INSERT INTO damaged_runs VALUES (?, ?)", damaged)
    create_code_tables(con)


def _remove_db(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        with contextlib.suppress(OSError):
            p.unlink()


def refresh_catalog(root: Path, state: StoreState | None = None) -> Path:
    """(Re)build ``root/paohuzi.duckdb`` atomically, with paths relative to ``root``; its
    path."""
    root = Path(root).resolve()
    state = state if state is not None else scan_store(root)
    path = root / CATALOG_NAME
    tmp = root / f".{CATALOG_NAME}.tmp-{os.getpid()}"
    _remove_db(tmp)
    try:
        con = duck_connect(str(tmp))
        try:
            con.execute("SET file_search_path = ?", [str(root)])  # views bind relative paths
            build_catalog(con, state, base=root, materialize=True)
            con.execute("CREATE TABLE catalog_meta (key VARCHAR, value VARCHAR)")
            meta = {
                "root": str(root),
                "schema_version": str(schema.SCHEMA_VERSION),
                "paths": "relative",
                "listing": listing_digest(state),
            }
            con.executemany("INSERT INTO catalog_meta VALUES (?, ?)", list(meta.items()))
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, path)
    except BaseException as e:
        _remove_db(tmp)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreError(f"disk full while writing {path}") from None
        raise
    return path


def duck_connect(database: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection within the product's limits (:mod:`replay.store.ducklimits`:
    memory and spill space) and without the progress bar (which DuckDB draws on stdout
    after 2 s and so would corrupt ``--json`` output)."""
    limits = duckdb_settings()  # a bad limit fails before anything is opened
    con = duckdb.connect(database, read_only=read_only)
    con.execute("SET enable_progress_bar = false")
    for key, value in limits.items():
        con.execute(f"SET {key} = ?", [value])
    return con


def connect(root: Path, state: StoreState | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the catalog of the store at ``root``: ``paohuzi.duckdb``
    when it was built on exactly the runs and files that pass the checks now, else the same
    views in memory."""
    root = Path(root).resolve()
    state = state if state is not None else scan_store(root)
    path = root / CATALOG_NAME
    if path.exists():
        try:
            con = duck_connect(str(path), read_only=True)
            if _built_on(con, state):
                con.execute("SET file_search_path = ?", [str(root)])
                return con
            con.close()
        except duckdb.Error:
            pass
    con = duck_connect(":memory:")
    build_catalog(con, state, materialize=True)
    return con


def prepare_catalog(state: StoreState, dest: Path) -> None:
    """Write the dashboard's catalog over ``state`` to the DuckDB file ``dest``: a copy of
    the store's ``paohuzi.duckdb`` when that was built on exactly the files of ``state``
    (``simulate`` and ``index`` leave it so: no summary file is read again), else one built
    now. :func:`open_catalog` opens a private copy of it."""
    root = Path(state.root)
    if not _copy_store_catalog(root, state, dest):
        _remove_db(dest)  # DuckDB creates the file itself
        con = duck_connect(str(dest))
        try:
            build_catalog(con, state, materialize=True)
            con.execute("CHECKPOINT")
        finally:
            con.close()


def open_catalog(
    state: StoreState, settings: Mapping[str, Any] | None = None, prepared: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A read-only, locked connection with the catalog over ``state`` (the dashboard's), on
    a private copy of ``prepared`` (a file of :func:`prepare_catalog` over the same state:
    each further connection then costs a file copy) or of one prepared now. ``settings``
    (DuckDB options such as ``memory_limit``) are applied before the lock; only the listed
    files can be read."""
    fd, name = tempfile.mkstemp(prefix="paohuzi-dashboard-", suffix=".duckdb")
    os.close(fd)
    path = Path(name)
    try:
        if prepared is not None:
            shutil.copyfile(prepared, path)
        else:
            prepare_catalog(state, path)
        ro = duck_connect(str(path), read_only=True)
    finally:
        _remove_db(path)  # the open read-only connection keeps the data
    for key, value in (settings or {}).items():
        ro.execute(f"SET {key} = ?", [value])
    allowed = state.files("hands") + state.files("events") + state.files("summary")
    ro.execute("SET allowed_paths = ?", [allowed])
    ro.execute("SET allowed_directories = ?", [[]])
    ro.execute("SET enable_external_access = false")
    ro.execute("SET parquet_metadata_cache = true")
    ro.execute("SET lock_configuration = true")
    return ro


def _copy_store_catalog(root: Path, state: StoreState, dest: Path) -> bool:
    """Copy ``paohuzi.duckdb`` to ``dest``; True when the copy's ``catalog_meta`` says it
    was built on exactly ``state``'s checked files (the copy is checked, not the original,
    so a catalog replaced meanwhile cannot slip through). Its materialised summary tables
    are kept; the views over the shard files are made again with absolute paths (the
    dashboard's connection may read only the listed files, named as the scan names them)."""
    src = root / CATALOG_NAME
    try:
        shutil.copyfile(src, dest)
        con = duck_connect(str(dest))
        try:
            ok = _built_on(con, state)
            if ok:
                con.execute(_view_sql(SUMMARY_TABLE, _file_views(con, state, None)))
                con.execute("CHECKPOINT")
        finally:
            con.close()
    except (OSError, duckdb.Error):
        ok = False
    if not ok:
        _remove_db(dest)
    return ok
