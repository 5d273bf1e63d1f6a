"""The readable definition of every summary row: a shard's summary computed with SQL in
DuckDB (about 10× slower than :func:`replay.derived.summarize.summarize_shard`, the builder
``simulate`` and ``index`` use; ``make test`` holds the two to equal tables, row for row).
The format is :mod:`replay.store.summary_schema`.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from replay.store.summary_schema import (
    HUANG,
    MAX_SEATS,
    MINGTANG_BITS,
    VALUE_COLS,
    Shape,
    cluster_masks,
    conform,
    run_shape,
)


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


def summarize_shard_sql(hands: pa.Table, manifest: dict[str, Any]) -> dict[str, pa.Table]:
    """The summary rows of one shard's ``hands`` table, by kind (each a table of
    ``SUMMARY_SCHEMA``'s columns), from SQL."""
    import duckdb

    shape = run_shape(manifest)
    players, per, duplicate, g, classes = shape
    if not classes:
        _check_policies(hands, per, players)
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET threads = 1")
        _create_views(con, hands, shape)
        queries = _summary_queries(g, duplicate)
        out = {}
        for kind, sql in queries.items():
            # sorted: the same shard gives the same bytes (a resumed run, a re-index)
            t = con.sql(f"SELECT * FROM ({sql}) ORDER BY ALL").to_arrow_table()
            out[kind] = conform(kind, t)
        return out
    finally:
        con.close()


def _create_views(con: Any, hands: pa.Table, shape: Shape) -> None:
    """The views the queries read: ``h`` (the hands), ``s`` (one row per seated seat of a
    hand), and each joined to the cluster masks it belongs to: ``sm`` (seats), ``wm`` (the
    wins, by the winner's seat), ``hm`` (hands, by rotation)."""
    players, per, _duplicate, _g, classes = shape
    if classes:
        _register_classes(con, hands, per, players)
    else:
        con.register("h", hands)
    con.execute(f"CREATE TEMP VIEW s AS {_seat_rows_sql(players)}")
    masks, hmasks = cluster_masks(shape)
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


# the 名堂 bits, one row each
_BITS = f"(SELECT range::SMALLINT AS bit FROM range({MINGTANG_BITS}))"


def _summary_queries(g: int, duplicate: bool) -> dict[str, str]:
    """One query per summary kind, over the views of :func:`_create_views` (``g``: the
    granule of the convergence bins; ``duplicate``: with the paired differences)."""
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
            f" wb AS (SELECT w.*, b.bit FROM w JOIN {_BITS} b ON (w.mingtang >> b.bit) & 1 = 1"
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
        "clusters": _clusters_sql(),
    }
    if duplicate:
        queries["paired"] = _paired_sql()
    return queries


def _clusters_sql() -> str:
    """The ``clusters`` kind: per cluster mask, the sums over the deals (the clusters) of
    the seat-level groups, the wins, each value, the sources and 名堂 bits of the wins, and
    the hand-level selection."""
    group_keys = (
        "[{'w': 'g:seat', 'k': 'seat ' || seat}, {'w': 'g:dealer', 'k': CASE WHEN seat ="
        " dealer THEN 'dealer' ELSE 'non-dealer' END}, {'w': 'g:policy', 'k': policy},"
        " {'w': 'g:all', 'k': 'all'}]"
    )
    win_values = ", ".join(
        f"{{'w': 'win:{c}', 'y': {c}::BIGINT, 'm': ({c} IS NOT NULL)::BIGINT}}" for c in VALUE_COLS
    )
    return (
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
        f" (SELECT wm.mask, wm.deal_id, b.bit FROM wm JOIN {_BITS} b"
        " ON (wm.mingtang >> b.bit) & 1 = 1"
        " UNION ALL SELECT mask, deal_id, -1 FROM wm WHERE mingtang = 0"
        " UNION ALL SELECT mask, deal_id, -2 FROM wm) GROUP BY ALL"
        # the hand-level selection (by rotation mask)
        " UNION ALL SELECT mask, 'hand', '', count(*), NULL, count(DISTINCT deal_id),"
        " NULL, NULL, NULL, NULL, NULL FROM hm GROUP BY ALL"
        " UNION ALL SELECT mask, 'hand_streak', least(huang_streak, 3)::VARCHAR,"
        " count(*), NULL, count(DISTINCT deal_id), NULL, NULL, NULL, NULL, NULL"
        " FROM hm GROUP BY ALL"
    )


def _paired_sql() -> str:
    """The ``paired`` kind of a duplicate run: per cluster mask and pair of policies, the
    sums of their per-deal differences in win rate and score."""
    # float sums in deal_id order, one addition at a time (the same bytes every time)
    return (
        "WITH p AS (SELECT mask, deal_id, policy, sum(won::INT)::DOUBLE / count(*) AS w,"
        " sum(delta)::DOUBLE / count(*) AS y FROM sm GROUP BY ALL),"
        " q AS (SELECT a.mask, a.policy AS a, b.policy AS b, a.deal_id, a.w - b.w AS dw,"
        " a.y - b.y AS dy FROM p a JOIN p b ON a.mask = b.mask"
        " AND a.deal_id = b.deal_id AND a.policy < b.policy)"
        " SELECT mask, a, b, count(*) AS d, sum(dw ORDER BY deal_id) AS dw,"
        " sum(dw * dw ORDER BY deal_id) AS dww, sum(dy ORDER BY deal_id) AS dy,"
        " sum(dy * dy ORDER BY deal_id) AS dyy FROM q GROUP BY ALL"
    )


def _register_classes(con: Any, hands: pa.Table, per: list[tuple[str, ...]], players: int) -> None:
    """View ``h``: a run of imported hands' ``hands`` with each hand's ``rotation`` its
    policy class, the row of ``per`` its seats' policies match, and its deal itself."""
    cols = ", ".join(f"p{s} VARCHAR" for s in range(players))
    con.execute(f"CREATE TEMP TABLE classes (c UTINYINT, {cols})")
    marks = ", ".join("?" for _ in range(players + 1))
    con.executemany(f"INSERT INTO classes VALUES ({marks})", [(i, *c) for i, c in enumerate(per)])
    con.register("h0", hands)
    on = " AND ".join(f"h0.policy_{s} = k.p{s}" for s in range(players))
    con.execute(
        "CREATE TEMP VIEW h AS SELECT h0.* REPLACE (k.c AS rotation, h0.hand_id AS deal_id)"
        f" FROM h0 JOIN classes k ON {on}"
    )
    n = con.execute("SELECT count(*) FROM h").fetchone()
    if n is None or n[0] != hands.num_rows:
        raise ValueError("a hand's seats' policies are none of the run's")


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
