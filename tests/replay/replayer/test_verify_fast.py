"""paohuzi verify's two engines: the compiled re-application (the default) and the reference
one (``--reference``) name the same hands and events, from the command line too, on random
corruptions as well (test_verify.py runs every crafted case with both engines)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from verify_helpers import a_decision, rewrite, rows_of, verify_cli

from replay.replayer import verify as V
from replay.store.runs import open_store


def test_fast_flags_a_flipped_action_and_names_hand_and_event(root: Path) -> None:
    hand = 22
    k, other = a_decision(root, hand)
    rewrite(root, "events", hand, lambda c: c["action"].__setitem__(rows_of(c, hand)[k], other))
    rep = V.verify_store(root, checksums=False, engine="fast")
    assert rep.bad_hands == [("main", hand)]
    p = rep.problems[0]
    assert (p.run, p.hand, p.seq) == ("main", hand, k)
    res = verify_cli(root, "--no-checksum")
    assert res.exit_code == 1
    assert f"run main hand {hand} seq {k}:" in res.output and "by the fast engine" in res.output
    res = verify_cli(root, "--no-checksum", "--reference")
    assert res.exit_code == 1
    assert f"run main hand {hand} seq {k}:" in res.output
    assert "by the reference engine" in res.output


def test_reference_flag(root: Path) -> None:
    res = verify_cli(root, "--reference")
    assert res.exit_code == 0, res.output
    assert "all good" in res.output and "by the reference engine" in res.output
    out = json.loads(verify_cli(root, "--reference", "--json").output)
    assert out["ok"] and {r["engine"] for r in out["runs"]} == {"reference"}
    out = json.loads(verify_cli(root, "--json").output)
    assert out["ok"] and {r["engine"] for r in out["runs"]} == {"fast"}


def test_uncovered_rules_fall_back_to_the_reference(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(V, "fast_unsupported", lambda rules: "not compiled")
    rep = V.verify_store(root, engine="fast")
    assert rep.ok and {r.engine for r in rep.runs} == {"reference"}


def test_engines_agree_on_random_corruptions(pristine: Path) -> None:
    """Each shard's tables, with a few random cells changed, through both engines' per-hand
    checks: the same problems (the kernel misses nothing the reference finds)."""
    rnd = random.Random(11)
    r = open_store(pristine).run("main")
    rules = V.RuleSet.from_dict(r.manifest["rules"])
    for shard in r.shards:
        hands_t = pq.read_table(r.shard_path(shard, "hands"), columns=V.HAND_COLUMNS)
        events_t = pq.read_table(r.shard_path(shard, "events"), columns=V.EVENT_COLUMNS)
        ev, hs = events_t.to_pydict(), hands_t.to_pydict()
        for _ in range(6):
            col = rnd.choice(["seat", "action", *V.DERIVED_EVENT_COLUMNS])
            i = rnd.randrange(len(ev[col]))
            v = ev[col][i]
            ev[col][i] = (not v) if col == "forced" else None if v is None else (v + 1) % 4
        for _ in range(2):
            col = rnd.choice(list(V.OUTCOME_COLUMNS[:-1]))
            i = rnd.randrange(len(hs[col]))
            v = hs[col][i]
            hs[col][i] = (not v) if col == "zimo" else 1 if v is None else None
        ht = pa.Table.from_pydict(hs, schema=hands_t.schema)
        et = pa.Table.from_pydict(ev, schema=events_t.schema)
        ids = et.column("hand_id").to_pylist()
        todo = []
        for i, hid in enumerate(ht.column("hand_id").to_pylist()):
            rows = [j for j, h in enumerate(ids) if h == hid]
            todo.append((i, rows[0], rows[-1] + 1))
        cols = [np.array(c, dtype=np.int64) for c in zip(*todo, strict=True)]
        fast = V._FastCheck("main", rules, ht, et).check(*cols)
        ref = V._ReferenceCheck("main", rules, ht, et).check(*cols)
        assert fast == ref and ref  # some hands are bad, the same ones, the same problems
