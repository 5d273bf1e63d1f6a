"""No policy result depends on the interpreter's float summation.

CPython 3.12 made the builtin ``sum()`` of floats a compensated (Neumaier) sum: the same terms
may add up to a different last bit than on 3.11, and a near-tie decided by that bit would make
the reference disagree with the compiled mirror (which adds left to right, ``total += x``) and
keep recorded runs from reproducing across interpreters. So:

1. :func:`compensated_sum` is what 3.12+ does (checked against the builtin where it runs);
2. the policy modules' source never hands floats to the builtin: every ``sum`` goes through
   :func:`engine.policies.features.left_sum` (floats, left to right) or
   :func:`~engine.policies.features.int_sum` (ints, checked), read from their AST;
3. the reference ``heuristic`` and ``greedy`` choose the same actions, decision for decision,
   on recorded states (3 presets × 3 tables, 2000 decisions) with ``builtins.sum`` replaced by
   :func:`compensated_sum`, and no policy call sums a float with it.
"""

from __future__ import annotations

import ast
import builtins
import math
import random
import struct
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from engine.deck import derive_seed, shuffle_deck
from engine.policies import features as F
from engine.policies import load_policies
from engine.rules import find_rules
from engine.state import Game, State

POLICY_DIR = Path(F.__file__).resolve().parent
_builtin_sum = builtins.sum


def compensated_sum(iterable: Iterable[Any], /, start: Any = 0) -> Any:
    """``sum()`` as CPython 3.12 and 3.13 compute it (Python/bltinmodule.c,
    ``builtin_sum_impl``): exact ints while every item is an int; from the first float on
    (or from a float ``start``), Neumaier's compensated sum over the float items, ints added
    to the running sum uncompensated (3.14 compensates them too), the compensation added at
    the end unless it is zero or not finite; anything else falls back to ``+`` from there on.
    """
    it = iter(iterable)
    result = start
    if type(result) is int:
        for item in it:
            if type(item) is int or type(item) is bool:
                result += item
                continue
            result = result + item
            break
        else:
            return result
    if type(result) is float:
        hi, lo = result, 0.0
        for item in it:
            if type(item) is float:
                t = hi + item
                if abs(hi) >= abs(item):
                    lo += (hi - t) + item
                else:
                    lo += (item - t) + hi
                hi = t
                continue
            if isinstance(item, int) and -(2**63) <= item < 2**63:  # a C long
                hi += float(item)
                continue
            if lo and math.isfinite(lo):
                hi += lo
            result = hi + item
            break
        else:
            if lo and math.isfinite(lo):
                hi += lo
            return hi
    for item in it:
        result = result + item
    return result


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _samples(rng: random.Random) -> list[list[float]]:
    out: list[list[float]] = [[0.1] * 10, [1e100, 1.0, -1e100], [-0.0, -0.0], [0.5, 1e16, -1e16]]
    for _ in range(300):
        n = rng.randrange(0, 12)
        scale = 10.0 ** rng.randrange(-3, 20)
        out.append([rng.uniform(-1.0, 1.0) * scale for _ in range(n)])
        # the heuristic's own kind of terms: live copies times 1 + 0.1 per extra 胡息
        out.append([rng.randrange(1, 4) * (1.0 + 0.1 * rng.randrange(0, 20)) for _ in range(n)])
    return out


# ---------------------------------------------------------------------------- the emulation


def test_compensated_sum_rounds_as_neumaier() -> None:
    assert compensated_sum([0.1] * 10) == 1.0
    assert F.left_sum([0.1] * 10) == 0.9999999999999999
    assert compensated_sum([1e100, 1.0, -1e100]) == 1.0
    assert F.left_sum([1e100, 1.0, -1e100]) == 0.0
    assert compensated_sum([1, 2, 3]) == 6 and type(compensated_sum([1, 2, 3])) is int
    assert compensated_sum([1, 0.5, 2]) == 3.5
    assert compensated_sum([[1], [2]], []) == [1, 2]
    assert _bits(compensated_sum([-0.0, -0.0], -0.0)) == _bits(-0.0)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="the builtin is compensated from 3.12 on")
def test_compensated_sum_is_the_builtin() -> None:
    rng = random.Random(12)
    for xs in _samples(rng):
        assert _bits(compensated_sum(xs)) == _bits(_builtin_sum(xs)), xs
        assert _bits(compensated_sum(xs, 0.0)) == _bits(_builtin_sum(xs, 0.0)), xs
        mixed: list[Any] = [int(x) if i % 3 == 1 else x for i, x in enumerate(xs)]
        if sys.version_info < (3, 14):  # 3.14 compensates the ints as well
            assert _bits(compensated_sum(mixed)) == _bits(_builtin_sum(mixed)), mixed


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the builtin is compensated from 3.12 on")
def test_left_sum_is_the_builtin_before_312() -> None:
    """On 3.11 ``left_sum`` is bit for bit the builtin it replaced: no choice changes there."""
    rng = random.Random(11)
    for xs in _samples(rng):
        assert _bits(F.left_sum(xs)) == _bits(_builtin_sum(xs)), xs


# ---------------------------------------------------------------------------- the source


def _policy_modules() -> list[Path]:
    paths = sorted(POLICY_DIR.glob("*.py"))
    assert {p.name for p in paths} >= {"features.py", "greedy.py", "heuristic.py"}
    return paths


def test_policy_code_never_sums_floats_with_the_builtin() -> None:
    """In engine/policies the name ``sum`` occurs only inside ``features.int_sum``; no
    ``fsum`` / ``.sum`` (math, numpy, statistics) and no ``builtins`` access either."""
    bad: list[str] = []
    helpers = set()
    for path in _policy_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        allowed: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in ("int_sum", "left_sum"):
                helpers.add(f"{path.name}:{node.name}")
                if node.name == "int_sum":
                    allowed |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Name) and node.id in ("sum", "fsum", "builtins"):
                if id(node) not in allowed:
                    bad.append(f"{where} {node.id}")
            elif isinstance(node, ast.Attribute) and node.attr in ("sum", "fsum", "nansum"):
                bad.append(f"{where} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module in ("math", "builtins"):
                names = {a.name for a in node.names}
                if names & {"fsum", "sum", "*"}:
                    bad.append(f"{where} from {node.module} import {sorted(names)}")
            elif isinstance(node, ast.Import) and any(a.name == "builtins" for a in node.names):
                bad.append(f"{where} import builtins")
    assert not bad, "sum the floats with F.left_sum and the ints with F.int_sum: " + ", ".join(bad)
    assert helpers == {"features.py:int_sum", "features.py:left_sum"}


def test_int_sum_refuses_floats() -> None:
    assert F.int_sum(range(5)) == 10
    assert F.int_sum([True, 2]) == 3
    with pytest.raises(TypeError, match="non-int"):
        F.int_sum([1, 2.0])  # type: ignore[list-item]


# ---------------------------------------------------------------------------- the choices

PRESETS = ("hunan", "hunan-4p", "luzhou")
HANDS = 10  # per preset and table: 2000 decisions with a real choice in all (150-280 each)


def _record(preset: str, table: tuple[str, ...]) -> list[tuple[State, int, list[int], Any, int]]:
    """Seeded hands: every decision with more than one option, as (state copy, seat, legal,
    the seat's rng state before, the action chosen)."""
    rules = find_rules(preset)
    game = Game(rules)
    out = []
    for i in range(HANDS):
        seed = derive_seed(3120, "hand", i)
        state = game.new_initial_state(shuffle_deck(seed), i % rules.players)
        pols = load_policies(list(table[: rules.players]), rules.players)
        rngs = [random.Random(derive_seed(seed, "policy", s)) for s in range(rules.players)]
        while state.outcome is None:
            seat = state.deciders()[0]
            legal = state.legal_actions(seat)
            if state.forced or len(legal) == 1:
                state.apply(seat, legal[0])
                continue
            before = state.clone()
            rng_state = rngs[seat].getstate()
            a = pols[seat].act(state.observation(seat), legal, rngs[seat])
            out.append((before, seat, legal, rng_state, a))
            state.apply(seat, a)
    return out


TABLES = (("heuristic",), ("heuristic", "greedy", "random", "heuristic"), ("greedy",))


@pytest.mark.parametrize("preset", PRESETS)
def test_choices_do_not_depend_on_the_interpreter_sum(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = []
    for table in TABLES:
        recorded += [(table, *r) for r in _record(preset, table)]
    assert len(recorded) > 150
    float_sums: list[Any] = []
    calls = [0]

    def patched(iterable: Iterable[Any], /, start: Any = 0) -> Any:
        items = list(iterable)
        calls[0] += 1
        if any(type(x) is float for x in items) or type(start) is float:
            float_sums.append(items)
        return compensated_sum(items, start)

    rules = find_rules(preset)
    for t in F._TABLES.values():  # recompute every memoised search under the patch
        t.memo_rest.clear()
        t.memo_waits.clear()
    pols = {table: load_policies(list(table[: rules.players]), rules.players) for table in TABLES}
    monkeypatch.setattr(builtins, "sum", patched)
    got = []
    for table, state, seat, legal, rng_state, _a in recorded:
        rng = random.Random()
        rng.setstate(rng_state)
        got.append(pols[table][seat].act(state.observation(seat), legal, rng))
    monkeypatch.undo()
    assert calls[0] > 0  # the patch is in the policies' path (int_sum)
    assert not float_sums, f"a policy summed floats with the builtin: {float_sums[:3]}"
    diff = [i for i, (r, g) in enumerate(zip(recorded, got)) if r[-1] != g]
    assert not diff, (
        f"{len(diff)} of {len(recorded)} choices changed under a compensated sum, first at"
        f" {recorded[diff[0]][0]} seat {recorded[diff[0]][2]}"
    )


def test_the_heuristic_sums_terms_the_two_sums_round_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terms the heuristic adds (its 听牌 values) do round differently left to right and
    compensated on some recorded states: the builtin would have made them interpreter-bound."""
    seen: list[list[float]] = []
    left = F.left_sum

    def recording(values: Iterable[float]) -> float:
        xs = list(values)
        seen.append(xs)
        return left(xs)

    monkeypatch.setattr(F, "left_sum", recording)
    for preset in PRESETS:
        _record(preset, ("heuristic",))
    monkeypatch.undo()
    assert len(seen) > 100
    apart = [xs for xs in seen if _bits(left(xs)) != _bits(compensated_sum(xs))]
    assert apart, f"none of {len(seen)} sums rounds apart"
