"""Builders of the verifier's tests: a pristine store of two runs (``verify_store_at``), a
shard rewritten with a change applied, a hand's rows and one of its decisions with another
legal option, the ``paohuzi verify`` command line."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from engine.rules import find_rules
from paohuzi.cli.main import main
from replay import store
from replay.record import runner
from replay.record.spec import RunSpec
from replay.replayer.hand import load_hand, replay_hand
from replay.store.runs import open_store

HANDS = 40
SHARD = 8  # hands per shard: 5 shards


def shard_of(root: Path, hand: int, run: str = "main") -> dict:
    return open_store(root).run(run).shards[hand // SHARD]


def rewrite(
    root: Path,
    table: str,
    hand: int,
    change: Callable[[dict[str, list]], None],
    run: str = "main",
    fix_manifest: bool = False,
) -> None:
    """Rewrite the shard file holding ``hand`` with ``change`` applied to its columns (as
    lists), the way the store writes shards; optionally make the manifest agree."""
    r = open_store(root).run(run)
    shard = shard_of(root, hand, run)
    path = r.shard_path(shard, table)
    t = pq.read_table(path)
    cols = t.to_pydict()
    change(cols)
    new = pa.Table.from_pydict(cols, schema=t.schema)
    data = store.parquet_bytes(new, table)
    store.atomic_write(path, data)
    if fix_manifest:
        m = r.manifest
        for s in m["shards"]:
            if s["index"] == shard["index"]:
                s["files"][table].update(
                    bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), rows=new.num_rows
                )
        store.write_manifest(r.path, m)


def rows_of(cols: dict[str, list], hand: int) -> list[int]:
    return [i for i, h in enumerate(cols["hand_id"]) if h == hand]


def a_decision(root: Path, hand: int) -> tuple[int, int]:
    """A non-forced decision of ``hand`` with another legal option: (seq, other action)."""
    log = load_hand(root, "main", hand)
    for k, (seat, action) in enumerate(log.events):
        legal = replay_hand(log, k).legal_actions(seat)
        if len(legal) > 1:
            return k, next(a for a in legal if a != action)
    raise AssertionError("no decision with a choice")


def verify_cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["verify", "--data", str(root), "-q", *args])


def make_store(d: Path) -> Path:
    """Two runs of random play (Hunan and Luzhou), ``HANDS`` hands in shards of ``SHARD``."""
    for name, preset in (("main", "hunan"), ("other", "luzhou")):
        spec = RunSpec(
            rules=find_rules(preset),
            policies=("random",) * 3,
            seed=5,
            deals=HANDS,
            session_length=4,
            shard_hands=SHARD,
        )
        runner.simulate(spec, d, name)
    return d
