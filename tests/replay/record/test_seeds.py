"""A run's seeds are derived in one place, ``engine.session.RunSeeds`` (STYLE §3): the
reference shard player and the compiled engine both take their decks, first dealers and
policy seeds from it, the manifest states its recipe, and no other module derives one."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from engine.deck import derive_seed, shuffle_deck
from engine.rules import find_rules
from engine.session import SEED_METHOD, RunSeeds, first_dealer
from replay import schema
from replay.record.spec import RunSpec

ROOT = Path(__file__).resolve().parents[3]


def spec(**kw: object) -> RunSpec:
    args: dict = dict(rules=find_rules("hunan"), policies=("random",) * 3, seed=7, deals=20,
                      session_length=4, duplicate=True, shard_hands=24)  # fmt: skip
    return RunSpec(**{**args, **kw})


def test_the_seeds_are_the_manifests_recipe() -> None:
    s = RunSeeds(7)
    rules = find_rules("hunan")
    assert s.session(2) == derive_seed(7, "session", 2)
    assert s.first_dealer(rules, 2) == first_dealer(rules, derive_seed(7, "session", 2))
    assert s.deck(5) == shuffle_deck(derive_seed(7, "deal", 5))
    assert s.hand(11) == derive_seed(7, "hand", 11)
    assert s.deals(range(3, 6)) == [s.deal(d) for d in range(3, 6)]
    assert s.hands([0, 11]) == [s.hand(0), s.hand(11)]
    seeds = spec().seeds_manifest()
    assert seeds == {"run_seed": 7, "seed_method_version": schema.SEED_METHOD_VERSION,
                     "shuffle_version": 1, **SEED_METHOD}  # fmt: skip


def test_the_compiled_engine_deals_the_runs_decks_and_dealers() -> None:
    from engine.fast.play import play_sessions

    sp = spec()
    sessions = range(1, 3)
    _, hands = play_sessions(sp, sessions)
    seeds = sp.seeds
    for i, deal in enumerate(hands["deal_id"]):
        assert tuple(int(k) for k in hands["deck"][i]) == seeds.deck(int(deal))
    first = np.flatnonzero(hands["session_hand"] == 0)
    got = [int(hands["dealer"][i]) for i in first if hands["rotation"][i] == 0]
    assert got == [seeds.first_dealer(sp.rules, i).dealer for i in sessions]


def _seed_derivations(path: Path) -> list[str]:
    """The ``derive_seed(s)(…, "session" | "deal" | "hand" | "policy", …)`` calls of a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None))
            in ("derive_seed", "derive_seeds")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in ("session", "deal", "hand", "policy")
        ):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.args[1].value}")
    return out


#: Benchmarks make inputs of their own (they record no run).
BENCHMARKS = {"bench/engine.py", "bench/throughput.py"}


def test_no_other_module_derives_a_runs_seeds() -> None:
    found = [hit for pkg in ("engine", "replay", "dashboard")
             for path in sorted((ROOT / pkg).rglob("*.py")) for hit in _seed_derivations(path)]  # fmt: skip
    where = sorted({hit.split(":")[0] for hit in found} - BENCHMARKS)
    assert where == ["engine/play.py", "engine/session.py"], found
