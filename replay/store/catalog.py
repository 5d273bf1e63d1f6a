"""The DuckDB catalog over a store: views ``runs``, ``hands``, ``events`` over the shards the
manifests list, and the code tables."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.errors import CorruptLog
from replay.record import schema
from replay.store.layout import CATALOG_NAME, MANIFEST_NAME, StoreError
from replay.store.manifest import read_manifest

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
