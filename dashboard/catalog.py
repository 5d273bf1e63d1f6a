"""The dashboard's DuckDB catalog: views over the listed shards only, opened read-only and
locked (no streamlit here; :mod:`dashboard.db` caches it).

Why not the store's own ``paohuzi.duckdb``: its views glob every Parquet file, so one
corrupt shard breaks every query of every run, and a shard written but not yet listed is
read. Here each run contributes exactly the files its manifest lists and that are present
with the listed size (:mod:`dashboard.services.store`); a bad run is left out with a reason.

The catalog is written to a private temporary file, reopened ``read_only=True`` and unlinked.
Then external access is switched off except for the listed shard files (no ATTACH, COPY,
``read_csv('/etc/…')``, extension loading or network), and the configuration is locked so no
statement can switch it back on. Tables: ``runs`` (one row per usable run), views ``hands``
and ``events`` (with the column ``run``), ``seats`` (one row per playing seat per hand) and
the code tables of :func:`replay.record.schema.codes`.

>>> import tempfile
>>> from dashboard.services.store import scan_store
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
import os
import tempfile
from typing import Any

import duckdb
import pyarrow as pa

from dashboard.services.store import StoreState
from replay.record import schema
from replay.store.catalog import create_code_tables

_TYPES = {
    pa.uint8(): "UTINYINT",
    pa.uint16(): "USMALLINT",
    pa.uint32(): "UINTEGER",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.bool_(): "BOOLEAN",
    pa.string(): "VARCHAR",
}

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
]


def _lit(s: str) -> str:
    # Paths come from manifests on disk, never from a user; quoted all the same.
    return "'" + s.replace("'", "''") + "'"


def _view_sql(table: str, files: list[str]) -> str:
    if files:
        listing = ", ".join(_lit(f) for f in files)
        return (
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listing}],"
            " hive_partitioning = true, union_by_name = true, hive_types = {'run': VARCHAR})"
        )
    cols = ", ".join(
        f"NULL::{_TYPES.get(f.type, 'BLOB')} AS {f.name}" for f in schema.SCHEMAS[table]
    )
    return f"CREATE VIEW {table} AS SELECT {cols}, NULL::VARCHAR AS run WHERE false"


# One row per playing seat per hand: the 4-player 坐醒 sitter, (dealer + 2) mod 4, sits out.
# One scan of hands, unnested (a UNION ALL of four selects would scan it four times).
_SEAT_STRUCTS = ", ".join(
    f"{{'seat': {i}::UTINYINT, 'policy': policy_{i}, 'delta': delta_{i},"
    f" 'won': coalesce(winner = {i}, false)}}"
    for i in range(schema.MAX_SEATS)
)
_SEATS_SQL = (
    "CREATE VIEW seats AS SELECT run, hand_id, deal_id, rotation, dealer, outcome, winner,"
    " u.seat AS seat, u.policy AS policy, u.delta AS delta, u.won AS won FROM"
    " (SELECT run, hand_id, deal_id, rotation, dealer, outcome, winner, policy_3,"
    f" unnest([{_SEAT_STRUCTS}]) AS u FROM hands)"
    " WHERE u.policy IS NOT NULL AND NOT (policy_3 IS NOT NULL AND (dealer + 2) % 4 = u.seat)"
)


def _build(con: Any, state: StoreState) -> None:
    for table in schema.TABLES:
        con.execute(_view_sql(table, state.files(table)))
    con.execute(_SEATS_SQL)
    con.execute(f"CREATE TABLE runs ({', '.join(f'{n} {t}' for n, t in RUN_COLUMNS)})")
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
        )
        for r in state.usable_runs
    ]
    if rows:
        con.executemany(f"INSERT INTO runs VALUES ({', '.join('?' * len(RUN_COLUMNS))})", rows)
    create_code_tables(con)


def open_catalog(state: StoreState) -> duckdb.DuckDBPyConnection:
    """A read-only, locked connection with the views over ``state``'s usable runs."""
    fd, path = tempfile.mkstemp(prefix="paohuzi-dashboard-", suffix=".duckdb")
    os.close(fd)
    os.unlink(path)  # DuckDB creates the file itself
    try:
        con = duckdb.connect(path)
        try:
            _build(con, state)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        ro = duckdb.connect(path, read_only=True)
    finally:
        for p in (path, path + ".wal"):
            with contextlib.suppress(OSError):
                os.unlink(p)  # the open read-only connection keeps the data
    allowed = state.files("hands") + state.files("events")
    ro.execute("SET allowed_paths = ?", [allowed])
    ro.execute("SET allowed_directories = ?", [[]])
    ro.execute("SET enable_external_access = false")
    ro.execute("SET parquet_metadata_cache = true")
    ro.execute("SET lock_configuration = true")
    return ro
