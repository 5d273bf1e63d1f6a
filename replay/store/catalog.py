"""The one DuckDB catalog over a store, for the CLI, ``paohuzi.duckdb`` and the dashboard.

:func:`build_catalog` makes, on any connection, from a :func:`~replay.store.scan.scan_store`
result: views ``hands`` and ``events`` (with the column ``run``) over the shard files the
manifests list and that passed the integrity checks, a view ``seats`` (one row per playing
seat per hand), a table ``runs`` (one row per usable run), a table ``damaged_runs`` (run,
problem: the runs left out, and why) and the code tables of
:func:`replay.schema.codes`. Three ways to open it, all built by that one function:

* :func:`refresh_catalog` writes ``DATA/paohuzi.duckdb`` with paths relative to the store,
  so a moved or copied store keeps working (open it with ``file_search_path`` set to the
  store, or from the store's folder: ``cd DATA && duckdb paohuzi.duckdb``); a store whose
  path holds a comma gets absolute paths instead (:func:`paths_kind`);
* :func:`connect` (``Store.connect()``) opens that file read-only when it matches what the
  store holds now; else it rebuilds it (a store marked writable) or builds the same views in
  memory, and says so in one note (on stderr by default): a reader never answers from a
  catalog built on other files;
* :func:`open_catalog` (the dashboard) builds it in a private file, reopens it read-only,
  applies the caller's DuckDB settings, switches external access off except for the listed
  shard files and locks the configuration.

The catalog is bound to its store: ``catalog_meta`` records the digest of what it was built
on (:func:`listing_digest`: every usable run's manifest SHA-256 and checked files). It must be
a regular file: a directory, FIFO, device or symlink in its place is never opened (readers
build the views in memory; :func:`refresh_catalog` refuses at once).

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
import re
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import duckdb

from replay import schema
from replay.store.ducklimits import duckdb_settings
from replay.store.facts_schema import FACTS_TABLE
from replay.store.fsinfo import file_kind
from replay.store.layout import CATALOG_NAME, StoreError
from replay.store.scan import StoreState, scan_store, writable_mode
from replay.store.summary_schema import KINDS, SUMMARY_TABLE, duck_type

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

    One ``read_parquet`` per run (its files in the order given, the run's name from its
    folder, ``run=NAME``, as a constant column), joined by ``UNION ALL``: a filter on ``run``
    (also a parameter) drops the other runs' files unread, as hive partitioning would, but
    no path is parsed for its partitions (a third of the cost of making or binding the view
    of a 10⁸-hand run's 24,415 files) and a ``key=value`` folder above the store adds no
    column. Every listed file has its table's columns: a shard table's of
    :data:`schema.SCHEMA_VERSION` (the scan lists only runs of that version, each file
    checked against its manifest), a summary file's ``SUMMARY_SCHEMA`` (every summary file
    is written conformed to it), so DuckDB takes the columns from the first file;
    ``union_by_name`` would open every file's footer when the view is made (about 5 s per
    table at 10⁸ hands). A schema version that adds
    columns must then read the older files by name."""
    if files:
        parts = []
        for run, group in _by_run(files):
            listing = ", ".join(_lit(f) for f in group)
            parts.append(
                f"SELECT *, {_lit(run)} AS run FROM read_parquet([{listing}],"
                " hive_partitioning = false)"
            )
        return f"({' UNION ALL '.join(parts)})"
    from replay.store.facts_schema import FACTS_SCHEMA  # Arrow schemas: built when used
    from replay.store.summary_schema import SUMMARY_SCHEMA

    derived = {SUMMARY_TABLE: SUMMARY_SCHEMA, FACTS_TABLE: FACTS_SCHEMA}
    fields = derived[table] if table in derived else schema.SCHEMAS[table]
    cols = ", ".join(f"NULL::{duck_type(f.type)} AS {f.name}" for f in fields)
    return f"(SELECT {cols}, NULL::VARCHAR AS run WHERE false)"


def _by_run(files: list[str]) -> list[tuple[str, list[str]]]:
    """``files`` (each inside its run folder ``…/run=NAME/``) grouped by run, in order."""
    out: list[tuple[str, list[str]]] = []
    for f in files:
        i = f.rindex(f"{os.sep}run=") + 5
        run = f[i : f.index(os.sep, i)]
        if out and out[-1][0] == run:
            out[-1][1].append(f)
        else:
            out.append((run, [f]))
    return out


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
        _drop(con, f"summary_{kind}")
        con.execute(f"CREATE {what} summary_{kind} AS {rollup_sql(kind)}")


def _drop(con: Any, name: str) -> None:
    """Drop ``name`` from the connection's schema, whether a table or a view (DuckDB's ``DROP
    TABLE IF EXISTS`` refuses a view of that name, and ``DROP VIEW`` a table)."""
    row = con.execute(
        "SELECT 'TABLE' FROM duckdb_tables() WHERE table_name = $n AND"
        " database_name = current_database() AND schema_name = current_schema()"
        " UNION ALL SELECT 'VIEW' FROM duckdb_views() WHERE view_name = $n AND"
        " database_name = current_database() AND schema_name = current_schema()",
        {"n": name},
    ).fetchone()
    if row is not None:
        con.execute(f"DROP {row[0]} {name}")


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


#: How :func:`listing_digest` is made; a catalog of another was built by another version.
LISTING_FORMAT = "3"


def listing_digest(state: StoreState) -> str:
    """What a catalog was built on: the usable runs — each bound by the SHA-256 of its
    manifest's bytes, which lists every shard file's SHA-256, and by the digest of its
    checked files (:attr:`~replay.store.scan.RunInfo.files_digest`) — and the runs left
    out. A run folder replaced by another of the same name and size, or the catalog of
    another store copied in, does not match. O(runs): the files' digest is the scan's."""
    rows = [
        (r.name, r.status, r.hands, r.manifest_sha256, r.files_digest) for r in state.usable_runs
    ]
    damaged = [(r.name, r.problem) for r in state.runs if r.problem is not None]
    doc = [LISTING_FORMAT, rows, damaged]
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _run_digests(state: StoreState) -> dict[str, str]:
    """Per usable run, its manifest's SHA-256 (``catalog_meta.runs``: which runs changed)."""
    return {r.name: r.manifest_sha256 for r in state.usable_runs}


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


def _file_views(con: Any, state: StoreState, base: Path | None) -> list[str]:
    """The views over the shard files on ``con`` (``hands``, ``events``, ``seats``, and
    ``facts`` over the facts files of the runs that have them, docs/LOG_FORMAT.md §12; paths
    relative to ``base`` when given); the summary files, named the same way."""
    listed = listed_files(state, base)
    for table in schema.TABLES:
        con.execute(_view_sql(table, listed[table]))
    con.execute(_SEATS_SQL)
    ffiles = state.files(FACTS_TABLE)
    con.execute(
        _view_sql(FACTS_TABLE, ffiles if base is None else [_relative(f, base) for f in ffiles])
    )
    sfiles = state.summary_sources()
    return sfiles if base is None else [_relative(f, base) for f in sfiles]


def _mismatch(con: Any, state: StoreState) -> str | None:
    """Why the catalog open on ``con`` does not answer for ``state`` (what follows "the
    catalog X …"), or None when :func:`refresh_catalog` built it on exactly ``state``'s
    checked files, with this schema version and relative paths."""
    try:
        meta = {
            str(k): str(v) for k, v in con.execute("SELECT key, value FROM catalog_meta").fetchall()
        }
    except duckdb.Error:
        return "was not written by paohuzi (it has no catalog_meta)"
    if (
        meta.get("schema_version") != str(schema.SCHEMA_VERSION)
        or meta.get("listing_format") != LISTING_FORMAT
    ) or meta.get("paths") not in (
        "relative",
        "absolute",
    ):
        return "was built by another version of paohuzi"
    kind = paths_kind(Path(state.root))
    if meta.get("paths") != kind or (kind == "absolute" and meta.get("root") != str(state.root)):
        return "was built for another folder"
    if meta.get("listing") == listing_digest(state):
        return None
    try:
        then = json.loads(meta.get("runs", ""))
        changed = sorted(set(then.items()) ^ set(_run_digests(state).items()))
        names = list(dict.fromkeys(str(n) for n, _ in changed))
    except (ValueError, TypeError, AttributeError):
        names = []
    if not names:
        return "was built from other files"
    shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
    return f"was built from other files (run{'s' if len(names) > 1 else ''} {shown} changed)"


def paths_kind(root: Path) -> str:
    """How the catalog of the store at ``root`` names its files: ``relative`` to the store
    (found through DuckDB's ``file_search_path``, so a moved or copied store keeps working),
    or ``absolute`` when the store's path holds a comma, which ``file_search_path`` takes
    for a separator of two folders (such a catalog is rebuilt when the store moves)."""
    return "absolute" if "," in str(root) else "relative"


def _built_on(con: Any, state: StoreState) -> bool:
    """Whether the catalog open on ``con`` answers for ``state`` (:func:`_mismatch`)."""
    return _mismatch(con, state) is None


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be the catalog (what follows "the catalog X …": a directory, a
    FIFO, a device, a socket or a symlink in its place), or None for a regular file or no
    file. Only ``lstat``: nothing is opened (a FIFO would hang, a device never end)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot be examined ({e.strerror or e})"
    if stat.S_ISREG(mode):
        return None
    return f"is {file_kind(mode)}, not a regular file"


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


def refresh_after_write(run_path: Path) -> None:
    """After a writer changed a run's manifest (a stored review, a comparison): rebuild the
    catalog bound to the manifests, as the next reader would, with a note; a store whose
    catalog cannot be written keeps its old one (the reader's note says so)."""
    import contextlib

    from engine.errors import PaohuziError

    with contextlib.suppress(PaohuziError, OSError):
        refresh_catalog(Path(run_path).parent.parent)


def refresh_catalog(root: Path, state: StoreState | None = None) -> Path:
    """(Re)build ``root/paohuzi.duckdb`` atomically, with paths relative to ``root``; its
    path. Raises :class:`StoreError` with one line, before any work, when something other
    than a regular file is in its place or the store is marked read-only (``chmod -w``: not
    written even by root, as :class:`~replay.store.scan.ChecksumCache`), and when the file
    cannot be written (disk full, permission, an I/O error); nothing half-written is left."""
    root = Path(root).resolve()
    path = root / CATALOG_NAME
    refused = write_problem(root)
    if refused is not None:
        raise StoreError(refused)
    with _REBUILDING:  # the scan too: a later rebuild never writes an earlier listing
        return _refresh(root, path, state if state is not None else scan_store(root))


#: The rebuild's temporary file is named by the process id (``.paohuzi.duckdb.tmp-PID``):
#: two threads of one process (the service's requests) rebuild one at a time.
_REBUILDING = threading.RLock()


def _refresh(root: Path, path: Path, state: StoreState) -> Path:
    tmp = root / f".{CATALOG_NAME}.tmp-{os.getpid()}"
    _remove_db(tmp)
    try:
        con = duck_connect(str(tmp))
        kind = paths_kind(root)
        try:
            if kind == "relative":
                con.execute("SET file_search_path = ?", [str(root)])  # views bind relative paths
            build_catalog(con, state, base=root if kind == "relative" else None, materialize=True)
            con.execute("CREATE TABLE catalog_meta (key VARCHAR, value VARCHAR)")
            meta = {
                "root": str(root),
                "schema_version": str(schema.SCHEMA_VERSION),
                "paths": kind,
                "listing": listing_digest(state),
                "listing_format": LISTING_FORMAT,
                "runs": json.dumps(_run_digests(state), sort_keys=True),
            }
            con.executemany("INSERT INTO catalog_meta VALUES (?, ?)", list(meta.items()))
            con.execute("CHECKPOINT")
        finally:
            with contextlib.suppress(duckdb.Error):  # after a fatal error close fails too
                con.close()
        os.replace(tmp, path)
    except BaseException as e:
        _remove_db(tmp)
        if isinstance(e, (OSError, duckdb.Error)):
            raise StoreError(_write_failure(path, e)) from None
        raise
    return path


def write_problem(root: Path) -> str | None:
    """Why the catalog of the store at ``root`` cannot be written, found without writing (a
    command that writes the store asks first): something other than a regular file in its
    place, or the store's folder marked read-only; None otherwise."""
    root = Path(root).resolve()
    path = root / CATALOG_NAME
    bad = file_problem(path)
    if bad is not None:
        return f"the catalog {path} {bad}: remove it, and it is rebuilt"
    if not writable_mode(root):
        return f"the store {root} is read-only: its catalog {path} cannot be written"
    return None


def _write_failure(path: Path, e: BaseException) -> str:
    """One line for a catalog that could not be written."""
    text = " ".join(str(e).split())
    full = isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)
    if full or "No space left on device" in text or "Disk quota exceeded" in text:
        return f"disk full while writing {path}"
    if isinstance(e, OSError):
        text = e.strerror or text
    text = re.sub(r"^[A-Za-z ]*Error: ", "", text)[:200] or type(e).__name__
    return f"cannot write the catalog {path}: {text}"


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


#: Where a reader's note goes: one line ("the catalog X was built from other files;
#: rebuilt"); by default ``Note: …`` on stderr.
Note = Callable[[str], None]


def stderr_note(text: str) -> None:
    print(f"Note: {text}", file=sys.stderr)


def _open_file(
    path: Path, state: StoreState
) -> tuple[duckdb.DuckDBPyConnection | None, str | None]:
    """(the catalog file opened read-only, None) when it answers for ``state``; else (None,
    why it does not), or (None, None) when there is none."""
    bad = file_problem(path)
    if bad is not None:
        return None, bad
    if not path.exists():
        return None, None
    try:
        con = duck_connect(str(path), read_only=True)
    except duckdb.Error:
        return None, "is not a DuckDB database"
    try:
        why = _mismatch(con, state)
        if why is None:
            if paths_kind(Path(state.root)) == "relative":
                con.execute("SET file_search_path = ?", [str(state.root)])
            return con, None
    except duckdb.Error:
        why = "cannot be read"
    with contextlib.suppress(duckdb.Error):
        con.close()
    return None, why


def connect(
    root: Path, state: StoreState | None = None, note: Note | None = None
) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the catalog of the store at ``root``: ``paohuzi.duckdb``
    when it was built on exactly the runs and files that pass the checks now. Otherwise it
    is rebuilt first when the store is marked writable (and then opened), or the same views
    are built in memory; a catalog that was there and could not be used is said in one
    ``note`` (default: :func:`stderr_note`): "the catalog X was built from other files;
    rebuilt" / "…; read in memory". One that is not a regular file is never opened."""
    root = Path(root).resolve()
    state = state if state is not None else scan_store(root)
    tell = note if note is not None else stderr_note
    path = root / CATALOG_NAME
    con, why = _open_file(path, state)
    if con is not None:
        return con
    special = file_problem(path) is not None
    if state.exists and not special and writable_mode(root):
        try:
            refresh_catalog(root, state)
        except StoreError as e:
            why = f"{why}, and" if why else "is not there, and it"
            tell(f"the catalog {path} {why} could not be rebuilt ({e}); read in memory")
        else:
            con, again = _open_file(path, state)
            if con is not None:
                if why is not None:
                    tell(f"the catalog {path} {why}; rebuilt")
                return con
            tell(f"the catalog {path} {again or 'vanished'} after it was rebuilt; read in memory")
    elif why is not None:
        ro = "" if special or not state.exists else " (the store is read-only)"
        tell(f"the catalog {path} {why}; read in memory{ro}")
    con = duck_connect(":memory:")
    build_catalog(con, state, materialize=True)
    return con


def prepare_catalog(state: StoreState, dest: Path) -> str | None:
    """Write the dashboard's catalog over ``state`` to the DuckDB file ``dest``: a copy of
    the store's ``paohuzi.duckdb`` when that was built on exactly the files of ``state``
    (``simulate`` and ``index`` leave it so: no summary file is read again), else one built
    now (the store is not written). :func:`open_catalog` opens a private copy of it.
    Returns the page's note when a ``paohuzi.duckdb`` was there and could not be used (built
    from other files, not a regular file …), else None."""
    root = Path(state.root)
    used, why = _copy_store_catalog(root, state, dest)
    if not used:
        _remove_db(dest)  # DuckDB creates the file itself
        con = duck_connect(str(dest))
        try:
            build_catalog(con, state, materialize=True)
            con.execute("CHECKPOINT")
        finally:
            con.close()
    if why is None:
        return None
    return (
        f"The catalog {root / CATALOG_NAME} {why}; the pages read the store's files"
        " instead (any `paohuzi stats` or `paohuzi index` rebuilds it)."
    )


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
    allowed = (
        state.files("hands")
        + state.files("events")
        + state.files("summary")
        + state.files("rollup")
        + state.files(FACTS_TABLE)
    )
    ro.execute("SET allowed_paths = ?", [allowed])
    ro.execute("SET allowed_directories = ?", [[]])
    ro.execute("SET enable_external_access = false")
    ro.execute("SET parquet_metadata_cache = true")
    ro.execute("SET lock_configuration = true")
    return ro


def _copy_store_catalog(root: Path, state: StoreState, dest: Path) -> tuple[bool, str | None]:
    """Copy ``paohuzi.duckdb`` to ``dest``: (True, None) when the copy's ``catalog_meta``
    says it was built on exactly ``state``'s checked files (the copy is checked, not the
    original, so a catalog replaced meanwhile cannot slip through), else (False, why not;
    None when there is no catalog). Its materialised summary tables are kept; the views over
    the shard files are made again with absolute paths (the dashboard's connection may read
    only the listed files, named as the scan names them). Only a regular file is copied,
    never followed through a symlink."""
    src = root / CATALOG_NAME
    why = file_problem(src)
    if why is not None:
        return False, why
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return False, None
    except OSError as e:
        return False, f"cannot be read ({e.strerror or e})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False, "is not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as f, open(dest, "wb") as out:
            shutil.copyfileobj(f, out)
        con = duck_connect(str(dest))
        try:
            why = _mismatch(con, state)
            if why is None:
                con.execute(_view_sql(SUMMARY_TABLE, _file_views(con, state, None)))
                con.execute("CHECKPOINT")
        finally:
            con.close()
    except OSError as e:
        why = f"cannot be read ({e.strerror or e})"
    except duckdb.Error:
        why = "is not a DuckDB catalog"
    finally:
        os.close(fd)
    if why is not None:
        _remove_db(dest)
    return why is None, why
