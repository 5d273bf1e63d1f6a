"""The numpy summary builder (replay/derived/summarize.py, what ``simulate`` and ``index``
write) against the SQL reference (``replay.derived.summarize_sql.summarize_shard_sql``): equal tables, row for
row and byte for byte, on every preset, rule overrides, seat mixes, ``--duplicate``,
sessions with 荒庄 streaks, shards of one hand, and hands with nulls where the summaries
must treat a null as SQL does."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine.rules import find_rules
from replay.derived.summaries import spec_manifest, summary_bytes, summary_table
from replay.derived.summarize import summarize_shard
from replay.derived.summarize_sql import summarize_shard_sql
from replay.record.fast_engine import play_shard_tables
from replay.record.spec import RunSpec

CASES = [
    ("hunan", (), ("random",) * 3, False, 8),
    ("hunan", (), ("random", "greedy", "heuristic"), True, 8),
    ("hunan-basic", (), ("greedy", "random", "greedy"), False, 1),
    ("hunan-full", (), ("heuristic", "random", "random"), True, 8),
    ("hunan-4p", (), ("random", "greedy", "random", "heuristic"), True, 8),
    ("hunan-4p", (), ("greedy",) * 4, False, 8),
    ("luzhou", (), ("random", "greedy", "heuristic"), False, 8),
    ("hunan", ("min_huxi=10",), ("random",) * 3, False, 32),
]


def _first_difference(a: pa.Table, b: pa.Table) -> str:
    for i, (x, y) in enumerate(zip(a.to_pylist(), b.to_pylist())):
        if x != y:
            return f"row {i}: sql {x} != numpy {y}"
    return f"rows: sql {a.num_rows}, numpy {b.num_rows}; types {a.schema} / {b.schema}"


def _assert_equal(hands: pa.Table, manifest: dict) -> None:
    ref = summarize_shard_sql(hands, manifest)
    got = summarize_shard(hands, manifest)
    assert list(got) == list(ref)
    for kind in ref:
        assert got[kind].equals(ref[kind]), f"{kind}: {_first_difference(ref[kind], got[kind])}"
    a, b = (summary_bytes(summary_table(p)) for p in (ref, got))
    assert a == b


def _shards(preset: str, sets: tuple[str, ...], policies: tuple[str, ...], dup: bool,
            session: int, deals: int, shard: int):  # fmt: skip
    rules = find_rules(preset).with_overrides(sets)
    spec = RunSpec(rules=rules, policies=policies, seed=7, deals=deals, duplicate=dup,
                          session_length=session, shard_hands=shard, engine="fast")  # fmt: skip
    man = spec_manifest(spec)
    for i in range(spec.n_shards):
        yield play_shard_tables(spec, spec.shard_sessions(i))[0], man


@pytest.mark.parametrize(("preset", "sets", "policies", "dup", "session"), CASES)
def test_numpy_summary_equals_sql(
    preset: str, sets: tuple[str, ...], policies: tuple[str, ...], dup: bool, session: int
) -> None:
    streaks = 0
    for hands, man in _shards(preset, sets, policies, dup, session, deals=400, shard=640):
        streaks += int(np.asarray(hands.column("huang_streak")).max() > 0)
        _assert_equal(hands, man)
    if session > 1:
        assert streaks, "no 荒庄 streak in the sample: the streak rows went untested"


def test_one_hand_shards() -> None:
    for hands, man in _shards("hunan", (), ("greedy", "random", "random"), False, 1, 3, 1):
        _assert_equal(hands, man)
    for hands, man in _shards("hunan-4p", (), ("greedy", "random") * 2, True, 1, 1, 1):
        _assert_equal(hands, man)


def test_nulls_are_treated_as_sql_does() -> None:
    """Winning hands with a null 胡息, 等, score, source or 自摸 (rows no engine writes
    today, which a summary must still count as SQL does: a sum skips nulls, a group of
    nulls sums to null)."""
    rng = np.random.default_rng(5)
    for hands, man in _shards("hunan", (), ("random", "greedy", "heuristic"), True, 8, 60, 200):
        n = hands.num_rows
        for name in ("huxi", "deng", "fan", "score", "source", "zimo"):
            col = hands.column(name)
            drop = rng.random(n) < 0.3
            if name == "huxi":
                drop |= np.arange(n) % 7 == 0  # whole groups of nulls too
            mask = np.asarray(col.is_null()) | drop
            i = hands.schema.get_field_index(name)
            arr = pa.array(col.to_pylist(), col.type, mask=mask)
            hands = hands.set_column(i, hands.schema.field(i), arr)
        _assert_equal(hands, man)


def test_a_wrong_policy_column_is_refused() -> None:
    hands, man = next(_shards("hunan", (), ("random", "greedy", "greedy"), False, 8, 20, 20))
    i = hands.schema.get_field_index("policy_1")
    bad = pa.array(["random"] * hands.num_rows)
    hands = hands.set_column(i, hands.schema.field(i), bad)
    with pytest.raises(ValueError, match="seat 1 of rotation 0 is not played by 'greedy'"):
        summarize_shard(hands, man)
