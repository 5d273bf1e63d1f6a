"""Summary tables: per shard, small counts and sums from which every number of ``paohuzi
stats`` and of the dashboard's pages follows exactly, without reading the ``hands`` table.

One Parquet file per shard, ``summary/part-NNNNN.parquet`` (listed in the manifest as
``files.summary`` with path, rows, bytes, sha256 and ``version``), one long table whose
``kind`` column says which summary a row belongs to (docs/LOG_FORMAT.md §10):

* additive kinds, summed over shards and filtered by bit tests on a *selection mask*:
  ``hands`` (per rotation, dealer, outcome, winner, source, 自摸, 荒庄 streak: hands and the
  sums of 胡息, 胡息², score, score²), ``stock`` (per rotation, outcome, cards left),
  ``values`` (per rotation, winner: the full histograms of 胡息, 等, 番, score over wins),
  ``mingtang`` (per rotation, winner, 名堂 bit; −1 平胡, −2 every win), ``conv`` (per bin of
  ``granule`` hands, rotation, seat, policy: seat-hands and wins);
* cluster kinds, one set of rows per selection mask a filter can give (enumerated here,
  :func:`seat_masks`): ``clusters`` (what = ``g:seat`` / ``g:dealer`` / ``g:policy`` /
  ``g:all`` seat-level groups with their cluster sums of the score change; ``win`` and
  ``win:huxi`` … the wins and the cluster sums of each value; ``win_source`` / ``win_bit``
  distinct clusters per source and 名堂; ``hand`` / ``hand_streak`` distinct clusters of the
  hand-level selection) and ``paired`` (``--duplicate``: sums of the per-deal differences
  between two policies). A cluster is a deal (a hand outside ``--duplicate`` runs); the
  rotations of a deal are always in one shard, so cluster sums add over shards.

A selection (the dashboard's seats S and policies P; ``paohuzi stats``: everything) becomes,
per run, a **seat mask**: bit ``4·rotation + seat`` is set when that seat in that rotation is
selected (:func:`seat_mask`), and a **rotation mask** for the hand-level numbers
(:func:`hand_mask`). Seat-level rows are tested on (rotation, seat), wins on (rotation,
winner), hands on the rotation.

>>> seat_mask([("a", "b", "a")], 3, (), ("a",))
5
>>> hand_mask([("a", "b", "c"), ("c", "a", "b"), ("b", "c", "a")], (1,), ("a",))
2
"""

from __future__ import annotations

import collections
import hashlib
import io
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

#: Bumped when the summary's content changes; ``paohuzi index`` rebuilds older entries.
#: 2: the ``paired`` float sums run in deal_id order (the same bytes on every build).
SUMMARY_VERSION = 2
SUMMARY_TABLE = "summary"
HUANG = 1

#: The columns of a summary file (every kind uses some of them; the others are null).
SUMMARY_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),
        ("rotation", pa.uint8()),
        ("dealer", pa.uint8()),
        ("outcome", pa.uint8()),
        ("winner", pa.uint8()),
        ("source", pa.uint8()),
        ("zimo", pa.bool_()),
        ("streak", pa.uint8()),
        ("stock", pa.uint8()),
        ("seat", pa.uint8()),
        ("policy", pa.string()),
        ("metric", pa.string()),
        ("v", pa.int32()),
        ("bit", pa.int16()),
        ("granule", pa.uint32()),
        ("bin", pa.uint32()),
        ("mask", pa.uint16()),
        ("what", pa.string()),
        ("key", pa.string()),
        ("a", pa.string()),
        ("b", pa.string()),
        ("n", pa.int64()),
        ("won", pa.int64()),
        ("d", pa.int64()),
        ("y", pa.int64()),
        ("m", pa.int64()),
        ("yy", pa.int64()),
        ("ym", pa.int64()),
        ("mm", pa.int64()),
        ("huxi_s", pa.int64()),
        ("huxi_ss", pa.int64()),
        ("score_s", pa.int64()),
        ("score_ss", pa.int64()),
        ("extra_s", pa.int64()),
        ("dw", pa.float64()),
        ("dww", pa.float64()),
        ("dy", pa.float64()),
        ("dyy", pa.float64()),
    ]
)

#: Per kind, the key columns its rolled-up view groups by and the columns it sums.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "hands": (
        ("rotation", "dealer", "outcome", "winner", "source", "zimo", "streak"),
        ("n", "huxi_s", "huxi_ss", "score_s", "score_ss"),
    ),
    "stock": (("rotation", "outcome", "stock"), ("n",)),
    "values": (("rotation", "winner", "metric", "v"), ("n",)),
    "mingtang": (
        ("rotation", "winner", "bit"),
        ("n", "huxi_s", "huxi_ss", "score_s", "score_ss", "extra_s"),
    ),
    "conv": (("granule", "bin", "rotation", "seat", "policy"), ("n", "won")),
    "clusters": (("mask", "what", "key"), ("n", "won", "d", "y", "m", "yy", "ym", "mm")),
    "paired": (("mask", "a", "b"), ("d", "dw", "dww", "dy", "dyy")),
}

VALUE_COLS = ("huxi", "deng", "fan", "score")
MINGTANG_BITS = 14
MAX_SEATS = 4


# ---------------------------------------------------------------------------------------------
# Selections
# ---------------------------------------------------------------------------------------------


def seat_policies(policies: Sequence[str], players: int, rotations: int) -> list[tuple[str, ...]]:
    """Who plays each seat in each rotation: seat ``s`` of rotation ``r`` is played by
    ``policies[(s − r) mod players]`` (docs/LOG_FORMAT.md §6)."""
    return [tuple(policies[(s - r) % players] for s in range(players)) for r in range(rotations)]


def seat_mask(
    per_rotation: Sequence[Sequence[str]],
    players: int,
    seats: Sequence[int] = (),
    policies: Sequence[str] = (),
) -> int:
    """Bit ``4·r + s`` for each seat ``s`` of rotation ``r`` in ``seats`` (all if empty)
    played by one of ``policies`` (any if empty): the seat-level and win selection."""
    m = 0
    for r, pols in enumerate(per_rotation):
        for s in range(players):
            if (seats and s not in seats) or (policies and pols[s] not in policies):
                continue
            m |= 1 << (MAX_SEATS * r + s)
    return m


def hand_mask(
    per_rotation: Sequence[Sequence[str]], seats: Sequence[int] = (), policies: Sequence[str] = ()
) -> int:
    """Bit ``r`` for each rotation in which one of ``seats`` (any seat if empty, the 坐醒
    sitter included) is played by one of ``policies``; every rotation without policies (the
    dashboard's hand-level selection)."""
    if not policies:
        return (1 << len(per_rotation)) - 1
    m = 0
    for r, pols in enumerate(per_rotation):
        if any(0 <= i < len(pols) and pols[i] in policies for i in (seats or range(MAX_SEATS))):
            m |= 1 << r
    return m


def seat_masks(per_rotation: Sequence[Sequence[str]], players: int) -> list[int]:
    """Every non-empty seat mask a choice of seats and policies gives (the masks the
    cluster rows are computed for)."""
    names = sorted({p for pols in per_rotation for p in pols})
    seat_sets = [
        c for k in range(1, players + 1) for c in itertools.combinations(range(players), k)
    ]
    pol_sets: list[tuple[str, ...]] = [()] + [
        c for k in range(1, len(names) + 1) for c in itertools.combinations(names, k)
    ]
    masks = {seat_mask(per_rotation, players, s, p) for s in seat_sets for p in pol_sets}
    masks.discard(0)
    return sorted(masks)


def granule(hands_total: int) -> int:
    """Hands per bin of the ``conv`` rows: the largest power of two ≤ hands_total / 100."""
    g = 1
    while g * 2 <= max(1, hands_total // 100):
        g *= 2
    return g


def quantile_disc(values: Sequence[int], counts: Sequence[int], q: float) -> int | None:
    """The ⌈n·q⌉-th smallest value (at least the first) of a histogram, as DuckDB's
    ``quantile_disc``.

    >>> quantile_disc([1, 2, 3], [1, 1, 2], 0.5)
    2
    """
    import math

    n = sum(counts)
    if n == 0:
        return None
    target = max(1, math.ceil(n * q))
    acc = 0
    for v, c in zip(values, counts):
        acc += c
        if acc >= target:
            return v
    return values[-1]


# ---------------------------------------------------------------------------------------------
# Computing a shard's summary
# ---------------------------------------------------------------------------------------------


def _run_shape(manifest: dict[str, Any]) -> tuple[int, list[tuple[str, ...]], bool, int]:
    rules = manifest.get("rules", {})
    params = manifest.get("params", {})
    players = int(rules.get("players", 3))
    duplicate = bool(params.get("duplicate"))
    rotations = int(params.get("rotations") or (players if duplicate else 1))
    per = seat_policies(list(params.get("policies") or ()), players, rotations)
    return players, per, duplicate, int(params.get("hands_total") or 0)


def _seat_rows_sql(players: int) -> str:
    structs = ", ".join(
        f"{{'seat': {i}::UTINYINT, 'policy': policy_{i}, 'delta': delta_{i},"
        f" 'won': coalesce(winner = {i}, false)}}"
        for i in range(MAX_SEATS)
    )
    sitter = "AND NOT ((dealer + 2) % 4 = u.seat)" if players == 4 else ""
    return (
        "SELECT hand_id, deal_id, rotation, dealer, u.seat AS seat, u.policy AS policy,"
        " u.delta::BIGINT AS delta, u.won AS won FROM"
        f" (SELECT *, unnest([{structs}]) AS u FROM h) WHERE u.policy IS NOT NULL {sitter}"
    )


def summarize_shard(hands: pa.Table, manifest: dict[str, Any]) -> dict[str, pa.Table]:
    """The summary rows of one shard's ``hands`` table, by kind (each a table of
    :data:`SUMMARY_SCHEMA`'s columns); :func:`summary_table` puts them in one. Computed with
    numpy (:mod:`replay.analysis.summarize`); :func:`summarize_shard_sql` is the reference."""
    from replay.analysis.summarize import summarize_shard as fast

    return fast(hands, manifest)


def summarize_shard_sql(hands: pa.Table, manifest: dict[str, Any]) -> dict[str, pa.Table]:
    """The reference of :func:`summarize_shard`: the same tables from SQL in DuckDB (the
    readable definition of every summary row; about 10× slower)."""
    import duckdb

    players, per, duplicate, total = _run_shape(manifest)
    _check_policies(hands, per, players)
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET threads = 1")
        con.register("h", hands)
        con.execute(f"CREATE TEMP VIEW s AS {_seat_rows_sql(players)}")
        masks = seat_masks(per, players)
        hmasks = list(range(1, 1 << len(per)))
        con.execute("CREATE TEMP TABLE masks (mask USMALLINT)")
        con.executemany("INSERT INTO masks VALUES (?)", [(m,) for m in masks])
        con.execute("CREATE TEMP TABLE hmasks (mask USMALLINT)")
        con.executemany("INSERT INTO hmasks VALUES (?)", [(m,) for m in hmasks])
        con.execute(
            "CREATE TEMP VIEW sm AS SELECT m.mask, s.* FROM s JOIN masks m"
            " ON (m.mask >> (4 * s.rotation + s.seat)) & 1 = 1"
        )
        con.execute(
            f"CREATE TEMP VIEW wm AS SELECT m.mask, h.* FROM h JOIN masks m ON h.outcome <> {HUANG}"
            " AND (m.mask >> (4 * h.rotation + h.winner)) & 1 = 1"
        )
        con.execute(
            "CREATE TEMP VIEW hm AS SELECT m.mask, h.* FROM h JOIN hmasks m"
            " ON (m.mask >> h.rotation) & 1 = 1"
        )
        bits = f"(SELECT range::SMALLINT AS bit FROM range({MINGTANG_BITS}))"
        g = granule(total)
        group_keys = (
            "[{'w': 'g:seat', 'k': 'seat ' || seat}, {'w': 'g:dealer', 'k': CASE WHEN seat ="
            " dealer THEN 'dealer' ELSE 'non-dealer' END}, {'w': 'g:policy', 'k': policy},"
            " {'w': 'g:all', 'k': 'all'}]"
        )
        win_values = ", ".join(
            f"{{'w': 'win:{c}', 'y': {c}::BIGINT, 'm': ({c} IS NOT NULL)::BIGINT}}"
            for c in VALUE_COLS
        )
        queries = {
            "hands": (
                "SELECT rotation, dealer, outcome, winner, source, zimo, huang_streak AS streak,"
                " count(*) AS n, sum(huxi::BIGINT) AS huxi_s, sum(huxi::BIGINT * huxi) AS huxi_ss,"
                " sum(score::BIGINT) AS score_s, sum(score::BIGINT * score) AS score_ss"
                " FROM h GROUP BY ALL"
            ),
            "stock": (
                "SELECT rotation, outcome, stock_left AS stock, count(*) AS n FROM h GROUP BY ALL"
            ),
            "values": " UNION ALL ".join(
                f"SELECT rotation, winner, '{c}' AS metric, {c}::INTEGER AS v, count(*) AS n"
                f" FROM h WHERE outcome <> {HUANG} AND {c} IS NOT NULL GROUP BY ALL"
                for c in VALUE_COLS
            ),
            "mingtang": (
                "WITH w AS (SELECT rotation, winner, mingtang, huxi::BIGINT AS huxi,"
                f" score::BIGINT AS score, deng FROM h WHERE outcome <> {HUANG}),"
                f" wb AS (SELECT w.*, b.bit FROM w JOIN {bits} b ON (w.mingtang >> b.bit) & 1 = 1"
                " UNION ALL SELECT w.*, -1::SMALLINT FROM w WHERE mingtang = 0"
                " UNION ALL SELECT w.*, -2::SMALLINT FROM w)"
                " SELECT rotation, winner, bit, count(*) AS n, sum(huxi) AS huxi_s,"
                " sum(huxi * huxi) AS huxi_ss, sum(score) AS score_s,"
                " sum(score * score) AS score_ss, sum(score - deng) AS extra_s FROM wb GROUP BY ALL"
            ),
            "conv": (
                f"SELECT {g}::UINTEGER AS granule, (hand_id // {g})::UINTEGER AS bin, rotation,"
                " seat, policy, count(*) AS n, sum(won::INT) AS won FROM s GROUP BY ALL"
            ),
            "clusters": (
                # seat-level groups: per cluster the seats in the group, their wins and score
                "SELECT mask, w AS what, k AS key, sum(n) AS n, sum(won) AS won, count(*) AS d,"
                " sum(y) AS y, sum(n) AS m, sum(y * y) AS yy, sum(y * n) AS ym, sum(n * n) AS mm"
                " FROM (SELECT mask, u.w, u.k, deal_id, count(*) AS n, sum(won::INT) AS won,"
                f" sum(delta) AS y FROM (SELECT *, unnest({group_keys}) AS u FROM sm)"
                " GROUP BY ALL) GROUP BY ALL"
                # the wins: clusters, wins, 自摸
                " UNION ALL SELECT mask, 'win', '', count(*), count(*) FILTER (WHERE zimo),"
                " count(DISTINCT deal_id), NULL, NULL, NULL, NULL, NULL FROM wm GROUP BY ALL"
                # cluster sums of each value over the wins
                " UNION ALL SELECT mask, w, '', sum(m), NULL, count(*) FILTER (WHERE m > 0),"
                " sum(y), sum(m), sum(y * y), sum(y * m), sum(m * m) FROM (SELECT mask, u.w,"
                f" deal_id, sum(u.y) AS y, sum(u.m) AS m FROM (SELECT *, unnest([{win_values}])"
                " AS u FROM wm) GROUP BY ALL) GROUP BY ALL"
                # distinct clusters per source and per 名堂 bit of the wins
                " UNION ALL SELECT mask, 'win_source', coalesce(source, 255)::VARCHAR, count(*),"
                " NULL, count(DISTINCT deal_id), NULL, NULL, NULL, NULL, NULL FROM wm GROUP BY ALL"
                " UNION ALL SELECT mask, 'win_bit', bit::VARCHAR, count(*), NULL,"
                " count(DISTINCT deal_id), NULL, NULL, NULL, NULL, NULL FROM"
                f" (SELECT wm.mask, wm.deal_id, b.bit FROM wm JOIN {bits} b"
                " ON (wm.mingtang >> b.bit) & 1 = 1"
                " UNION ALL SELECT mask, deal_id, -1 FROM wm WHERE mingtang = 0"
                " UNION ALL SELECT mask, deal_id, -2 FROM wm) GROUP BY ALL"
                # the hand-level selection (by rotation mask)
                " UNION ALL SELECT mask, 'hand', '', count(*), NULL, count(DISTINCT deal_id),"
                " NULL, NULL, NULL, NULL, NULL FROM hm GROUP BY ALL"
                " UNION ALL SELECT mask, 'hand_streak', least(huang_streak, 3)::VARCHAR,"
                " count(*), NULL, count(DISTINCT deal_id), NULL, NULL, NULL, NULL, NULL"
                " FROM hm GROUP BY ALL"
            ),
        }
        if duplicate:
            # float sums in deal_id order, one addition at a time (the same bytes every time)
            queries["paired"] = (
                "WITH p AS (SELECT mask, deal_id, policy, sum(won::INT)::DOUBLE / count(*) AS w,"
                " sum(delta)::DOUBLE / count(*) AS y FROM sm GROUP BY ALL),"
                " q AS (SELECT a.mask, a.policy AS a, b.policy AS b, a.deal_id, a.w - b.w AS dw,"
                " a.y - b.y AS dy FROM p a JOIN p b ON a.mask = b.mask"
                " AND a.deal_id = b.deal_id AND a.policy < b.policy)"
                " SELECT mask, a, b, count(*) AS d, sum(dw ORDER BY deal_id) AS dw,"
                " sum(dw * dw ORDER BY deal_id) AS dww, sum(dy ORDER BY deal_id) AS dy,"
                " sum(dy * dy ORDER BY deal_id) AS dyy FROM q GROUP BY ALL"
            )
        out = {}
        for kind, sql in queries.items():
            # sorted: the same shard gives the same bytes (a resumed run, a re-index)
            t = con.sql(f"SELECT * FROM ({sql}) ORDER BY ALL").to_arrow_table()
            out[kind] = _conform(kind, t)
        return out
    finally:
        con.close()


def _check_policies(hands: pa.Table, per: list[tuple[str, ...]], players: int) -> None:
    """The shard's policy columns are the manifest's seat policies, and the rotations of a
    deal are all in it (the cluster sums rely on both)."""
    import pyarrow.compute as pc

    rot = hands.column("rotation").to_numpy()
    for s in range(players):
        col = hands.column(f"policy_{s}").to_pylist()
        for r, pols in enumerate(per):
            idx = (rot == r).nonzero()[0]
            if len(idx) and any(col[i] != pols[s] for i in idx[:: max(1, len(idx) // 64)]):
                raise ValueError(f"seat {s} of rotation {r} is not played by {pols[s]!r}")
    if len(per) > 1 and hands.num_rows:
        counts = pc.value_counts(hands.column("deal_id"))
        if any(c != len(per) for c in counts.field("counts").to_pylist()):
            raise ValueError("a deal's rotations are not all in the shard")


def _conform(kind: str, t: pa.Table) -> pa.Table:
    """A kind's rows as a table of :data:`SUMMARY_SCHEMA` (nulls in the unused columns)."""
    n = t.num_rows
    cols = []
    for f in SUMMARY_SCHEMA:
        if f.name == "kind":
            cols.append(pa.array([kind] * n, pa.string()))
        elif f.name in t.column_names:
            cols.append(t.column(f.name).cast(f.type))
        else:
            cols.append(pa.nulls(n, f.type))
    return pa.Table.from_arrays(cols, schema=SUMMARY_SCHEMA)


def summary_table(parts: dict[str, pa.Table]) -> pa.Table:
    """The kinds of :func:`summarize_shard` in one table (the summary file's rows)."""
    tables = [parts[k] for k in KINDS if k in parts]
    return pa.concat_tables(tables) if tables else SUMMARY_SCHEMA.empty_table()


def summary_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return sink.getvalue()


def summary_path(index: int) -> str:
    """A shard's summary file, relative to its run folder."""
    return f"{SUMMARY_TABLE}/part-{index:05d}.parquet"


def write_summary(
    run_path: Path, index: int, hands: pa.Table, manifest: dict[str, Any]
) -> dict[str, Any]:
    """Summarise one shard's ``hands`` and write ``summary/part-NNNNN.parquet`` atomically;
    the manifest entries to add to the shard's ``files``: ``{"summary": {path, rows, bytes,
    sha256, version}}``. The runner calls this per finished shard; ``paohuzi index`` for
    shards recorded before."""
    from replay.store.files import atomic_write

    table = summary_table(summarize_shard(hands, manifest))
    data = summary_bytes(table)
    rel = summary_path(index)
    path = Path(run_path) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)
    return {
        SUMMARY_TABLE: {
            "path": rel,
            "rows": table.num_rows,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "version": SUMMARY_VERSION,
        }
    }


def spec_manifest(spec: Any) -> dict[str, Any]:
    """The parts of a manifest :func:`write_summary` reads, from a runner's ``RunSpec``."""
    return {
        "rules": spec.rules.to_dict(),
        "params": {
            "policies": list(spec.policies),
            "duplicate": spec.duplicate,
            "rotations": spec.rotations,
            "hands_total": spec.hands_total,
        },
    }


def has_summary(shard: dict[str, Any]) -> bool:
    """Whether a manifest's shard entry lists a summary file of this version."""
    e = shard.get("files", {}).get(SUMMARY_TABLE)
    return isinstance(e, dict) and e.get("version") == SUMMARY_VERSION


def summarized(info: Any) -> bool:
    """Whether a scanned run (:class:`~replay.store.scan.RunInfo`) has a checked summary file
    for every listed shard."""
    n_hands = sum(1 for t, _ in info.files if t == "hands")
    n_sum = sum(1 for t, _ in info.files if t == SUMMARY_TABLE)
    return info.usable and n_hands > 0 and n_sum == n_hands


# ---------------------------------------------------------------------------------------------
# The catalog's views
# ---------------------------------------------------------------------------------------------


def rollup_sql(kind: str) -> str:
    """A kind's rows summed over the shards of each run (the ``summary_<kind>`` view)."""
    keys, sums = KINDS[kind]
    agg = ", ".join(
        f"sum({c})::{'DOUBLE' if c in ('dw', 'dww', 'dy', 'dyy') else 'BIGINT'} AS {c}"
        for c in sums
    )
    return (
        f"SELECT run, {', '.join(keys)}, {agg} FROM summary WHERE kind = '{kind}'"
        f" GROUP BY run, {', '.join(keys)}"
    )


def create_views(con: Any, files: list[str], materialize: bool = False) -> None:
    """``summary`` (the rows of every listed summary file, with ``run``) and one
    ``summary_<kind>`` per kind, summed over shards: views, or tables when ``materialize``
    (the dashboard's private catalog: its pages then read a few thousand rows)."""
    create_summary_view(con, files)
    for kind in KINDS:
        what = "TABLE" if materialize else "VIEW"
        con.execute(f"DROP TABLE IF EXISTS summary_{kind}")
        con.execute(f"DROP VIEW IF EXISTS summary_{kind}")
        con.execute(f"CREATE {what} summary_{kind} AS {rollup_sql(kind)}")


def create_summary_view(con: Any, files: list[str]) -> None:
    """The ``summary`` view: the rows of ``files`` with ``run`` (empty without files)."""
    from replay.store.catalog import relation_sql

    if files:  # read as the shard tables are (the catalog's one reader of listed files)
        con.execute(
            f"CREATE OR REPLACE VIEW summary AS SELECT * FROM {relation_sql(SUMMARY_TABLE, files)}"
        )
    else:
        cols = ", ".join(f"NULL::{_duck_type(f.type)} AS {f.name}" for f in SUMMARY_SCHEMA)
        con.execute(
            f"CREATE OR REPLACE VIEW summary AS SELECT {cols}, NULL::VARCHAR AS run WHERE false"
        )


def _duck_type(t: pa.DataType) -> str:
    return {
        pa.string(): "VARCHAR",
        pa.uint8(): "UTINYINT",
        pa.uint16(): "USMALLINT",
        pa.uint32(): "UINTEGER",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
    }[t]


# ---------------------------------------------------------------------------------------------
# Indexing recorded runs
# ---------------------------------------------------------------------------------------------


def index_run(
    run_path: Path,
    progress: Any = None,
    workers: int = 1,
) -> tuple[int, int]:
    """Summarise every listed shard of a run that has no summary of this version yet, under
    the run's lock (:class:`~replay.store.manifest.RunLock`); the manifest is rewritten as
    summaries are made (paced: :class:`~replay.store.manifest.ManifestWriter`) and at the
    end, so an interrupted index resumes about where it stopped (a summary file written but
    not yet listed is rewritten with the same bytes). With
    ``workers > 1`` the shards are read and summarised in a pool of that many processes (the
    files and the manifest do not depend on it). Returns (shards summarised now, shards
    already summarised). ``progress(done, total)`` is called after each shard."""
    from replay.store.manifest import ManifestWriter, RunLock, read_manifest
    from replay.store.runs import Run

    run_path = Path(run_path)
    with RunLock(run_path):
        manifest = read_manifest(run_path)
        run = Run(run_path.name.removeprefix("run="), run_path, manifest)
        shards = run.shards
        todo = [s for s in shards if not has_summary(s)]
        writer = ManifestWriter(run_path, manifest)
        progress_doc = manifest.get("progress")
        try:
            for k, (shard, files) in enumerate(_summarise(run, todo, manifest, workers)):
                before = shard["files"].get(SUMMARY_TABLE) or {}  # an older version's
                shard["files"].update(files)
                if isinstance(progress_doc, dict) and isinstance(progress_doc.get("bytes"), int):
                    progress_doc["bytes"] += int(files[SUMMARY_TABLE]["bytes"]) - int(
                        before.get("bytes", 0) if isinstance(before, dict) else 0
                    )
                writer.due()
                if progress is not None:
                    progress(k + 1, len(todo))
        finally:
            writer.flush()  # what was summarised stays listed, also when interrupted
        return len(todo), len(shards) - len(todo)


def _summarise_one(
    name: str, path: Path, shard: dict[str, Any], shape: dict[str, Any]
) -> dict[str, Any]:
    """Read one shard's ``hands`` (checked) and write its summary; ``shape`` holds the
    manifest's ``rules`` and ``params`` (a worker never receives the whole manifest)."""
    from replay.store.runs import Run

    run = Run(name, path, {**shape, "shards": [shard]})
    return write_summary(path, int(shard["index"]), run.read_shard(shard, "hands"), shape)


def _summarise(run: Any, todo: list[dict[str, Any]], manifest: dict[str, Any], workers: int) -> Any:
    """(shard, its new ``files`` entries) in shard order, inline or from a process pool."""
    shape = {"rules": manifest.get("rules", {}), "params": manifest.get("params", {})}
    if workers <= 1 or len(todo) <= 1:
        for shard in todo:
            yield shard, _summarise_one(run.name, run.path, shard, shape)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx) as pool:
        # at most 2 shards per worker in flight, collected in order (bounded memory)
        waiting: collections.deque[tuple[dict[str, Any], Any]] = collections.deque()
        for shard in todo:
            waiting.append((shard, pool.submit(_summarise_one, run.name, run.path, shard, shape)))
            if len(waiting) >= 2 * workers:
                done, fut = waiting.popleft()
                yield done, fut.result()
        while waiting:
            done, fut = waiting.popleft()
            yield done, fut.result()
