"""The compiled search (engine.fast.search) against the reference (engine.search): from
random mid-hand states of every preset, converted to the compiled state by replaying their
history (``flat_state``), and generators in the same state, both draw the same sample (hands,
stock, hidden 偎 faces, every seat's pending options), reject the same candidates and leave
their random streams at the same place; the option values of both are the same numbers, from
live states and from recorded hands at step k; the compiled search policy does not peek."""

from __future__ import annotations

import random

import numpy as np
import pytest
from search_helpers import choice_states, mid_hand

from engine import search as ref_search
from engine.fast import search as F
from engine.fast import state as S
from engine.fast.pyrandom import N, getrandbits, mt_seed64, new_generator
from engine.groups import EAT_SHAPE_ID, GroupKind
from engine.rules import PRESETS, find_rules
from engine.state import Phase, State


def _compiled(s: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rp, hp, st): the compiled state of ``s``, its deal and history replayed."""
    rp, hp, st = F.flat_state(s)
    assert _fast_view(st, s.n_seats) == _ref_view(s)
    return rp, hp, st


def _ref_view(s: State) -> dict:
    """What the test compares: every card's place, the hidden 偎 faces, the pending
    decision and the others' marks the sample clears."""
    melds = []
    for seat in range(s.n_seats):
        melds.append(
            [
                (int(g.kind), EAT_SHAPE_ID[g.cards] if g.kind == GroupKind.CHI else g.cards[0])  # type: ignore[index]
                for g in s.melds[seat]
            ]
        )
    return {
        "hands": [list(h) for h in s.hands],
        "stock": list(s.stock),
        "melds": melds,
        "phase": int(s.phase),
        "card": -1 if s.card is None else int(s.card),
        "pending": {seat: list(a) for seat, a in s.pending.items()},
        "declared": dict(s.declared),
        "forced": bool(s.forced),
        "stinky": list(s.stinky),
        "renpeng": list(s.renpeng),
        "chouhu": [dict(c) for c in s.chouhu],
        "outcome": s.outcome is None,
    }


def _fast_view(st: np.ndarray, n: int) -> dict:
    pend_seats = [int(st[S.PEND_SEATS + i]) for i in range(int(st[S.PEND_NS]))]
    pos = int(st[S.STOCK_POS])
    return {
        "hands": [[int(v) for v in st[S.HANDS + 20 * s : S.HANDS + 20 * s + 20]] for s in range(n)],
        "stock": [int(v) for v in st[S.STOCK + pos : S.STOCK + 19]][::-1],
        "melds": [
            [
                (int(st[S.MELD_KIND + s * S.MAXM + i]), int(st[S.MELD_ID + s * S.MAXM + i]))
                for i in range(int(st[S.MELD_N + s]))
            ]
            for s in range(n)
        ],
        "phase": int(st[S.PHASE]),
        "card": int(st[S.CARD]),
        "pending": {
            s: [
                int(a) for a in st[S.PEND_A + s * S.MAXA : S.PEND_A + s * S.MAXA + st[S.PEND_N + s]]
            ]
            for s in pend_seats
        },
        "declared": {s: int(st[S.DECL + s]) for s in pend_seats if st[S.DECL + s] >= 0},
        "forced": bool(st[S.FORCED]),
        "stinky": [int(st[S.STINKY + s]) for s in range(n)],
        "renpeng": [int(st[S.RENPENG + s]) for s in range(n)],
        "chouhu": [
            {k: int(st[S.CHOUHU + s * 20 + k]) for k in range(20) if st[S.CHOUHU + s * 20 + k] >= 0}
            for s in range(n)
        ],
        "outcome": int(st[S.OUT_KIND]) < 0,
    }


def _generator(seed: int) -> np.ndarray:
    mt = np.zeros(N + 1, dtype=np.int64)
    mt_seed64(mt, np.uint64(seed))
    return mt


def _hidden_weis(s: State, seat: int) -> int:
    return sum(1 for o in s.active if o != seat for g in s.melds[o] if g.kind == GroupKind.WEI)


def _check(s: State, seat: int, seeds: range, where: str) -> list[int]:
    """Both determinizations of ``s`` for ``seat`` from each seed agree; the compiled
    results (draws taken, 0 for no deal)."""
    rp, hp, st = _compiled(s)
    before = st.copy()
    results = []
    for seed in seeds:
        r = random.Random(seed)
        mt = _generator(seed)
        try:
            d: State | None = ref_search.determinize(s, seat, r)
        except ref_search.SearchError:
            d = None
        out = np.zeros(S.STATE_SIZE, dtype=np.int32)
        got = F.determinize(rp, hp, st, seat, mt, out, F.MAX_TRIES)
        at = f"{where} seat {seat} seed {seed}: {s!r}"
        assert (st == before).all(), at  # the real state is untouched
        assert (got > 0) == (d is not None), at
        # the same random numbers were drawn: both streams go on alike
        assert [r.getrandbits(32) for _ in range(3)] == [
            int(getrandbits(mt, 32)) for _ in range(3)
        ], at
        if d is not None:
            assert _fast_view(out, s.n_seats) == _ref_view(d), at
        results.append(int(got))
    return results


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_compiled_determinization_draws_the_reference_sample(preset: str) -> None:
    n_states = n_weis = n_redrawn = n_claims = 0
    for deck_seed in range(60):
        steps = (deck_seed * 7) % 55
        s = mid_hand(preset, deck_seed, steps)
        if s is None:
            continue
        seat = s.current_player()
        assert seat is not None
        seeds = range(deck_seed * 1_000_003 + 2**40, deck_seed * 1_000_003 + 2**40 + 3)
        got = _check(s, seat, seeds, f"{preset} deck {deck_seed} steps {steps}")
        n_states += sum(g > 0 for g in got)
        n_weis += _hidden_weis(s, seat) > 0
        n_redrawn += sum(g > 1 for g in got)
        n_claims += s.phase in (Phase.CLAIM_HU, Phase.CLAIM_TAKE)
    # the sample covers what the mirror must get right: hidden 偎, rejected draws, claims
    assert n_states >= 100, n_states
    assert n_weis >= 5 and n_redrawn >= 5 and n_claims >= 5, (n_weis, n_redrawn, n_claims)


# hands whose first choice is a 天胡 on the deal (LIANG_HU) in at least one preset
_LIANG_HU_DECKS = (648, 982, 1490, 2164, 2544, 2955, 2972)

_RULES: list[tuple[str, tuple[str, ...]]] = [
    *((p, ()) for p in sorted(PRESETS)),
    ("hunan", ("peng_compulsory=on", "hu_on_discards=on")),
    ("luzhou", ("players=4", "chouhu=off")),
]


@pytest.mark.parametrize("case", _RULES, ids=lambda c: "-".join([c[0], *c[1]]))
def test_compiled_determinization_of_every_phase_draws_the_reference_sample(
    case: tuple[str, tuple[str, ...]],
) -> None:
    """Hu chances (CLAIM_HU, LIANG_HU), rule overrides, and the second decider of a claim
    after the first has declared."""
    rules = find_rules(case[0]).with_overrides(list(case[1]))
    phases: dict[int, int] = {}
    states = [s for d in range(40) for s in choice_states(rules, d)]
    for d in _LIANG_HU_DECKS:
        first = next(choice_states(rules, d), None)
        if first is not None and first.phase == Phase.LIANG_HU:
            states.append(first)
    picked = [s for i, s in enumerate(states) if s.phase != Phase.DISCARD or i % 6 == 0]
    for i, s in enumerate(picked):
        if s.phase == Phase.CLAIM_TAKE and i % 3:
            continue
        seat = s.current_player()
        assert seat is not None
        _check(s, seat, range(i, i + 2), f"state {i}")
        phases[int(s.phase)] = phases.get(int(s.phase), 0) + 1
        if len(s.deciders()) > 1:  # the next decider, the first having passed
            t = s.clone()
            t.apply(seat, s.pending[seat][0])
            nxt = t.current_player()
            if nxt is not None and t.phase == s.phase and nxt != seat:
                _check(t, nxt, range(i, i + 2), f"state {i} after a pass")
                phases[-1] = phases.get(-1, 0) + 1
    assert phases.get(int(Phase.CLAIM_HU), 0) >= 3, phases
    assert phases.get(int(Phase.LIANG_HU), 0) >= 2, phases
    assert phases.get(-1, 0) >= 3, phases


def test_compiled_determinization_refuses_a_seat_not_to_act() -> None:
    s = mid_hand("hunan", 3, 10)
    assert s is not None
    rp, hp, st = _compiled(s)
    seat = s.current_player()
    other = next(o for o in s.active if o not in s.deciders())
    out = np.zeros(S.STATE_SIZE, dtype=np.int32)
    assert F.determinize(rp, hp, st, other, _generator(1), out, F.MAX_TRIES) == F.NOT_TO_ACT
    assert F.determinize(rp, hp, st, 7, _generator(1), out, F.MAX_TRIES) == F.NOT_TO_ACT
    assert F.determinize(rp, hp, st, seat, _generator(1), out, F.MAX_TRIES) >= 1
    assert F.MAX_TRIES == ref_search.MAX_TRIES


def test_compiled_hidden_counts_and_revealed_faces_equal_the_reference() -> None:
    checked = 0
    for preset in sorted(PRESETS):
        for deck_seed in range(12):
            s = mid_hand(preset, deck_seed, deck_seed * 4)
            if s is None:
                continue
            seat = s.current_player()
            assert seat is not None
            _, _, st = _compiled(s)
            pool = np.zeros(20, dtype=np.int64)
            F.hidden_counts(st, seat, pool)
            assert list(pool) == ref_search.hidden_counts(s, seat)
            assert F.revealed_faces(st, seat) == ref_search.revealed_faces(s, seat)
            checked += 1
    assert checked >= 30


# (preset, deck, index of the choice state, first seed): a 胡 on offer (a claim, a 天胡 on
# the deal) where the sample's hands give another seat a 胡 too: the re-asked decision's
# pending seats change with the hidden cards
_HU_REASKED = (
    ("luzhou", 67, 24, 0),
    ("luzhou", 87, 21, 0),
    ("hunan", 147, 23, 0),
    ("hunan", 338, 22, 0),
    ("luzhou", 2164, 0, 105),
)


def test_compiled_determinization_asks_the_hu_again_of_the_new_hands() -> None:
    changed = set()
    for preset, deck, index, first in _HU_REASKED:
        s = list(choice_states(PRESETS[preset], deck))[index]
        assert s.phase in (Phase.CLAIM_HU, Phase.LIANG_HU), (preset, deck, index)
        seat = s.current_player()
        assert seat is not None
        seeds = range(first, first + 20)
        _check(s, seat, seeds, f"{preset} deck {deck} state {index}")
        for seed in seeds:
            d = ref_search.determinize(s, seat, random.Random(seed))
            if d.pending != s.pending:
                changed.add((preset, deck))
    assert len(changed) == len(_HU_REASKED), changed


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_option_values_are_the_same_numbers_in_both_engines(preset: str) -> None:
    """engine.fast.search.evaluate (one compiled call) equals engine.search.evaluate, every
    estimate of every option, for each rollout policy, on states of every phase."""
    from engine.policies import load_policy

    rules = PRESETS[preset]
    states = [s for d in range(6) for i, s in enumerate(choice_states(rules, d)) if i % 5 == 2]
    phases = set()
    for i, s in enumerate(states[:12]):
        seat = s.current_player()
        assert seat is not None
        rollout = ("random", "greedy", "heuristic")[i % 3]
        seed = (i * 2_654_435_761) % 2**64
        ref = ref_search.evaluate(s, seat, 3, load_policy(rollout), seed)
        assert F.evaluate(s, seat, 3, rollout, seed) == ref, (preset, i, rollout)
        phases.add(s.phase)
    assert len(states) >= 12 and len(phases) >= 2, phases


def test_option_values_of_a_recorded_hand_at_step_k_are_the_same_in_both_engines(
    tmp_path,
) -> None:
    from click.testing import CliRunner

    from engine.policies import load_policy
    from paohuzi.cli.main import main
    from replay.replayer.hand import Replayer, load_hand

    r = CliRunner().invoke(
        main, ["simulate", "--data", str(tmp_path), "--run", "h", "-n", "2", "-q", "-w", "1",
               "--rules", "luzhou"],
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    checked = 0
    for hand in (0, 1):
        rp = Replayer(load_hand(tmp_path, "h", hand))
        for k in range(0, rp.n_steps, 7):
            state = rp.state_at(k)
            seat = state.current_player()
            if seat is None or len(state.legal_actions(seat)) < 2:
                continue
            ref = ref_search.evaluate(state, seat, 2, load_policy("heuristic"), k)
            assert F.evaluate(state, seat, 2, "heuristic", k) == ref, (hand, k)
            checked += 1
    assert checked >= 3


def test_a_state_changed_in_place_is_refused() -> None:
    s = mid_hand("hunan", 5, 12)
    assert s is not None
    seat = s.current_player()
    other = next(o for o in s.active if o != seat)
    t = s.clone()
    t.hands[other], t.stock = list(t.hands[other]), list(t.stock)
    k = next(k for k in range(20) if t.hands[other][k] and t.stock[-1] != k)
    t.hands[other][k] -= 1
    t.hands[other][t.stock[-1]] += 1
    t.stock[-1] = k
    with pytest.raises(ref_search.SearchError, match="not the one its deck and history reach"):
        F.evaluate(t, seat, 2, "random", 1)
    with pytest.raises(ref_search.SearchError, match="unknown rollout policy 'search'"):
        F.evaluate(s, seat, 2, "search", 1)
    with pytest.raises(ref_search.SearchError, match="at least 1"):
        F.evaluate(s, seat, 0, "random", 1)


def _shuffle_hidden(st: np.ndarray, others: list[int], rng: random.Random) -> np.ndarray:
    """``st`` with the other seats' concealed cards and the stock below the shown bottom cards
    dealt anew among themselves (the seat's observation unchanged)."""
    t = st.copy()
    cards = [k for s in others for k in range(20) for _ in range(int(t[S.HANDS + s * 20 + k]))]
    lo = int(t[S.STOCK_POS])
    hi = 19 - min(int(t[S.N_SHOWN]), 19 - lo)  # the shown bottom cards stay
    cards += [int(v) for v in t[S.STOCK + lo : S.STOCK + hi]]
    rng.shuffle(cards)
    pos = 0
    for s in others:
        n = int(t[S.HANDS + s * 20 : S.HANDS + s * 20 + 20].sum())
        t[S.HANDS + s * 20 : S.HANDS + s * 20 + 20] = 0
        for k in cards[pos : pos + n]:
            t[S.HANDS + s * 20 + k] += 1
        pos += n
    t[S.STOCK + lo : S.STOCK + hi] = cards[pos:]
    return t


def test_the_compiled_search_policy_never_peeks() -> None:
    """The compiled search seat's choice (search_act) is unchanged when the other seats'
    concealed cards and the stock are dealt anew, its view kept; and it is the reference
    SearchPolicy's choice."""
    from engine.fast.features import weights_array
    from engine.policies import load_policy

    code = F.search_code("search@3/random")
    policy = load_policy("search@3/random")
    checked = 0
    for deck_seed in range(40):
        s = mid_hand("hunan", deck_seed, 8)
        if s is None or s.phase != Phase.DISCARD:
            continue
        seat = s.current_player()
        assert seat is not None
        rp, hp, st = _compiled(s)
        t = _shuffle_hidden(st, [o for o in s.active if o != seat], random.Random(deck_seed))
        if (t == st).all():
            continue
        w = weights_array()
        a = F.search_act(rp, hp, w, st, seat, new_generator(deck_seed), code)
        b = F.search_act(rp, hp, w, t, seat, new_generator(deck_seed), code)
        ref = policy.act(s.observation(seat), s.legal_actions(seat), random.Random(deck_seed))
        assert a == b == ref, (deck_seed, a, b, ref)
        checked += 1
        if checked == 6:
            break
    assert checked == 6


def test_compiled_improve_decides_as_the_reference() -> None:
    rng = np.random.default_rng(5)
    switched = 0
    for trial in range(400):
        k, n = int(rng.integers(2, 8)), int(rng.integers(1, 40))
        res = np.zeros((k, n, 4), dtype=np.int64)
        spread = int(rng.integers(1, 30))
        res[:, :, F.R_DELTA] = rng.integers(-spread, spread + 1, size=(k, n))
        if trial % 3 == 0:  # a clearly better option
            res[int(rng.integers(k)), :, F.R_DELTA] += spread
        acts = np.sort(rng.choice(200, size=k, replace=False)).astype(np.int64)
        default = int(rng.integers(k))
        got = int(acts[F.improve(acts, res, default)])
        want = ref_search.improve(acts.tolist(), res[:, :, F.R_DELTA].tolist(), default)
        assert got == want, (trial, res[:, :, 0], default)
        switched += got != acts[default]
    assert 50 < switched < 350, switched


def test_without_a_consistent_deal_the_search_plays_its_rollout_policys_choice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A position where no deal fits the seat's view in MAX_TRIES draws (one stopped a
    4,500-hand search@64 run): the search plays the rollout policy's own choice, in both
    engines, instead of stopping the run. The compiled decision (decide) with no deal found
    returns ``own`` whatever the values say; the reference's SearchPolicy.act, its playouts
    failing so, returns the rollout policy's choice from the same generator key."""
    from engine.policies import load_policy

    actions = np.array([10, 11, 12], dtype=np.int64)
    res = np.zeros((3, 4, 4), dtype=np.int64)
    res[2, :, F.R_DELTA] = [9, 8, 9, 8]  # option 2 clearly best: taken when a deal was found
    assert F.decide(1, 11, actions, res, 1) == 12
    assert F.decide(F.NO_DEAL, 11, actions, res, 1) == 11
    s = None
    for deck_seed in range(40):
        s = mid_hand("hunan", deck_seed, 8)
        if s is not None and s.phase == Phase.DISCARD:
            break
    assert s is not None
    seat = s.current_player()
    assert seat is not None
    policy = load_policy("search@4/learned@hunan")

    def no_deal(*_args: object, **_kw: object) -> None:
        raise ref_search.SearchError("no deal consistent with seat 0's view in 2000 draws")

    monkeypatch.setattr("engine.policies.search_policy.playouts", no_deal)
    rng = random.Random(5)
    seed, key = rng.getrandbits(64), rng.getrandbits(64)
    own = policy.rollout_policy.act(s.observation(seat), s.legal_actions(seat), random.Random(key))
    assert seed >= 0
    got = policy.act(s.observation(seat), s.legal_actions(seat), random.Random(5))
    assert got == own
