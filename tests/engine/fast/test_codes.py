"""The rule codes and tables of the kernels (engine.fast.codes) against the reference.

The tables are derived from the reference at import; these tests check that what was derived
says what the reference says everywhere a kernel may look (every enum member, every 名堂
predicate on a grid of contexts, the 等 of every rule set, the kernel's ``_score`` against
``engine.scoring.score_hu``), and that a pattern the tables cannot express fails loudly.
"""

from __future__ import annotations

import random
from itertools import product

import numpy as np
import pytest

from engine.actions import ActionKind
from engine.cards import NUM_KINDS, is_big, is_red
from engine.fast import cache
from engine.fast import codes as C
from engine.fast import hu as F
from engine.groups import GroupKind
from engine.hu import NoWin, Source
from engine.mingtang import REGISTRY, MingTang, MingTangContext, mingtang_context
from engine.rules import _CHOICES, PRESETS, RuleSet
from engine.scoring import score_hu
from engine.state import CardKind, OutcomeKind, Phase

_ENUMS = (
    ("PH_", Phase),
    ("CK_", CardKind),
    ("OK_", OutcomeKind),
    ("SRC_", Source),
    ("R_", NoWin),
    ("GK_", GroupKind),
    ("AK_", ActionKind),
)


@pytest.mark.parametrize(("prefix", "enum"), _ENUMS, ids=[p for p, _ in _ENUMS])
def test_every_enum_member_has_its_code(prefix: str, enum: type) -> None:
    for member in enum:  # type: ignore[attr-defined]
        assert getattr(C, prefix + member.name) == int(member)


def test_card_tables_are_the_reference_definitions() -> None:
    for k in range(NUM_KINDS):
        assert C.RED[k] == int(is_red(k)) == mingtang_context([k], ()).red
        assert C.BIG[k] == int(is_big(k)) == mingtang_context([k], ()).big


def test_mingtang_bits() -> None:
    assert {p: m.bit for p, m in REGISTRY.items()} == C.MINGTANG_BITS == F.MINGTANG_BITS
    assert list(C.MT_BIT) == [m.bit for m in REGISTRY.values()]


_COUNTS = ("red", "big", "small")


def _random_values(rng: random.Random) -> dict[str, int]:
    v = {name: rng.randrange(2) for name in C.FIELDS}
    for name in _COUNTS:
        v[name] = rng.choice((rng.randrange(30), rng.randrange(-1, C.DECK_SIZE + 1)))
    return v


def _field(values: dict[str, int], i: int) -> int:
    """Row i's field in ``values`` (as field_context reads it: a count not given is -1)."""
    name = C.FIELDS[C.MT_FIELD[i]]
    return values.get(name, -1 if name in _COUNTS else 0)


def _table_says(i: int, values: dict[str, int]) -> bool:
    return bool(C.MT_LO[i] <= _field(values, i) <= C.MT_HI[i])


def test_mingtang_rows_are_the_predicates() -> None:
    """Each row's field interval and 番 are its pattern's, on every field swept alone and on
    random contexts with every field set."""
    rng = random.Random(5)
    grids = [{name: x} for name in _COUNTS for x in range(-1, C.DECK_SIZE + 1)]
    grids += [{name: x} for name in C.FIELDS if name not in _COUNTS for x in (0, 1)]
    grids += [_random_values(rng) for _ in range(20000)]
    for values in grids:
        ctx = C.field_context(values)
        for i, m in enumerate(C.MT_PATTERNS):
            present = m.applies(ctx)
            assert present == _table_says(i, values), (m.pinyin, values)
            if present:
                x = _field(values, i)
                assert m.fan_for(ctx) == C.MT_FAN[i] + C.MT_SLOPE[i] * (x - C.MT_LO[i])
                assert m.fan == C.MT_MULT[i]


def _rule_sets() -> list[RuleSet]:
    keys = sorted(_CHOICES)
    out = [
        RuleSet(**dict(zip(keys, vs, strict=True))) for vs in product(*(_CHOICES[k] for k in keys))
    ]
    return out + list(PRESETS.values())


def test_deng_table_is_score_hu() -> None:
    for rules in _rule_sets():
        p = F.rule_params(rules)
        for zimo, tianhu in product((0, 1), (0, 1)):
            ctx = C.field_context({"zimo": zimo, "tianhu": tianhu})
            row = C.DENG[p[F.P_DENG_VARIANT], zimo, tianhu]
            assert [score_hu(rules, hx, ctx).deng for hx in range(C.HX_MAX + 1)] == list(row)


def test_score_kernel_is_score_hu() -> None:
    """``engine.fast.hu._score`` (the loop over the tables) against the reference on random
    readings of every rule set, the 3提/5坎 天胡 included."""
    rng = random.Random(11)
    for rules in _rule_sets():
        params = F.rule_params(rules)
        for _ in range(1000):
            v = _random_values(rng)
            for name in _COUNTS:
                v[name] = max(v[name], 0)
            auto = rng.random() < 0.25
            hx = rng.randrange(C.HX_MAX + 1)
            ctx = C.field_context(v, auto_tianhu=auto)
            want = score_hu(rules, hx, ctx)
            got = F._score(  # type: ignore[call-arg]
                params, hx, v["red"], v["big"], v["small"], *(bool(v[f]) for f in C.FIELDS[3:]),
                auto,
            )  # fmt: skip
            mask = F.mingtang_mask(rules, want.mingtang)
            assert got == (want.deng, want.fan, want.score, mask), (rules, hx, v, auto)


def test_a_pattern_the_tables_cannot_hold_fails_loudly() -> None:
    class Odd(MingTang):
        name, pinyin, level, bit = "奇", "odd", "basic", 15

        @classmethod
        def applies(cls, ctx: MingTangContext) -> bool:
            return ctx.red in (1, 3)

    class Two(MingTang):
        name, pinyin, level, bit = "双", "two", "basic", 15

        @classmethod
        def applies(cls, ctx: MingTangContext) -> bool:
            return ctx.red == 1 or ctx.big == 1

    for m in (Odd, Two):
        with pytest.raises(ValueError, match=m.pinyin):
            C._mingtang_row(m)


def test_the_digest_is_in_every_cache_stamp(monkeypatch: pytest.MonkeyPatch) -> None:
    before = cache._digest(())
    monkeypatch.setattr(C, "DIGEST", "0" * 16)
    assert cache._digest(()) != before
    assert len(C.DIGEST) == 16


def test_rule_params_pick_the_table_rows() -> None:
    for rules in _rule_sets():
        p = F.rule_params(rules)
        assert p[F.P_MT_VARIANT] == C.mingtang_variant(rules)
        assert p[F.P_DENG_VARIANT] == C.deng_variant(rules)
        assert p[F.P_VARIANT] == C.hx_variant(rules)
    assert C.DENG.dtype == np.int64 and C.MT_ON.shape == (len(C.MT_VARIANTS), 2, C.MT_ROWS)


def test_action_kind_is_the_references_kind_of_every_code() -> None:
    from engine.actions import MAX_ACTION, kind_of
    from engine.errors import InvalidNotation
    from engine.fast.play import action_kind

    checked = 0
    for code in range(MAX_ACTION + 1):
        try:
            want = int(kind_of(code))
        except InvalidNotation:
            continue
        assert action_kind(code) == want, code
        checked += 1
    assert checked > 60_000
