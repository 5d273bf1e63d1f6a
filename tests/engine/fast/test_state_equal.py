"""Differential tests: the compiled state machine and play loop (engine.fast.state / play)
against the reference engine.

1. Whole hands: the runner's own session loop (``replay`` runner ``play_sessions`` into a
   ``ShardRecorder``) plays seeded random self-play runs; the same decks, dealers and policy
   seeds go through :func:`engine.fast.play.play_batch`; every event column and every hand
   outcome column must be equal, row for row (five presets and ``--set`` overrides).
2. Kernel level: the compiled state is driven by the reference's chosen actions
   (:func:`~engine.fast.state.apply`), and at every step the deciders, each decider's legal
   action set, the phase, the card on offer and the whole visible state (hands, melds, 臭牌,
   忍碰, 臭胡, discards, stock) must agree with :class:`engine.state.State`.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from weights_helpers import FLAGS_OFF, ODD_GREEDY, ODD_HEURISTIC, write_weights

from engine.deck import derive_seed, shuffle_deck
from engine.fast import state as S
from engine.fast.play import EVENT_COLUMNS, play_batch
from engine.fast.rule_arrays import rule_arrays
from engine.groups import EAT_SHAPE_ID, GroupKind
from engine.policies import load_policies
from engine.rules import RuleSet, find_rules
from engine.state import Game, State

try:
    from replay.record.recorder import ShardRecorder
    from replay.record.shard import play_sessions
    from replay.record.spec import RunSpec
except ImportError:  # before the move of replay/ into subpackages
    from replay.recorder import ShardRecorder  # type: ignore[no-redef]
    from replay.runner import RunSpec, play_sessions  # type: ignore[no-redef]

CASES: list[tuple[str, tuple[str, ...], int]] = [
    ("hunan", (), 240),
    ("hunan-basic", (), 120),
    ("hunan-full", (), 160),
    ("hunan-4p", (), 160),
    ("luzhou", (), 200),
    ("hunan", ("min_huxi=10", "hu_on_discards=on", "one_five_ten=on"), 160),
    ("hunan", ("chouhu=off", "peng_compulsory=on", "tianhu_formula=plain"), 120),
    ("luzhou", ("players=4", "luzhou_di_mode=a", "one_five_ten=on"), 120),
]


def _rules(preset: str, overrides: tuple[str, ...]) -> RuleSet:
    return find_rules(preset).with_overrides(list(overrides))


def _case_id(case: tuple[str, tuple[str, ...], int]) -> str:
    return "-".join([case[0], *case[1]])


# The recorder's buffers by our column names.
_EVENT_BUF = {
    "hand": "e_hand",
    "seq": "e_seq",
    "seat": "e_seat",
    "action": "e_action",
    "kind": "e_kind",
    "card": "e_card",
    "from_seat": "e_from",
    "forced": "e_forced",
    "n_legal": "e_n_legal",
    "options": "e_options",
}
_HAND_BUF = {
    "outcome": "h_outcome",
    "winner": "h_winner",
    "source": "h_source",
    "hu_card": "h_card",
    "from_seat": "h_from",
    "huxi": "h_huxi",
    "deng": "h_deng",
    "fan": "h_fan",
    "score": "h_score",
    "mingtang": "h_mingtang",
    "zimo": "h_zimo",
    "stock_left": "h_stock",
    "n_events": "h_events",
}


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_play_batch_equals_recorder(case: tuple[str, tuple[str, ...], int]) -> None:
    preset, overrides, deals = case
    rules = _rules(preset, overrides)
    _check_run(rules, ("random",) * rules.players, deals, 20261201 + len(overrides), case)


GREEDY_CASES: list[tuple[str, tuple[str, ...], int]] = [
    ("hunan", (), 60),
    ("luzhou", (), 40),
    ("hunan-4p", (), 30),
    ("hunan", ("one_five_ten=on", "min_huxi=10"), 30),
]


@pytest.mark.parametrize("case", GREEDY_CASES, ids=_case_id)
def test_play_batch_greedy_equals_recorder(case: tuple[str, tuple[str, ...], int]) -> None:
    preset, overrides, deals = case
    rules = _rules(preset, overrides)
    pols = ("greedy",) * rules.players
    _check_run(rules, pols, deals, 99 + len(overrides), case)
    mixed = ("greedy", "random", "greedy", "random")[: rules.players]
    _check_run(rules, mixed, deals // 2, 7, case)


WEIGHTED_CASES: list[tuple[str, tuple[str, ...], int]] = [
    ("hunan", (), 40),
    ("luzhou", (), 30),
    ("hunan-4p", (), 24),
    ("hunan", ("hu_on_discards=on", "min_huxi=10"), 30),
]


@pytest.mark.parametrize("case", WEIGHTED_CASES, ids=_case_id)
def test_play_batch_weighted_equals_recorder(
    case: tuple[str, tuple[str, ...], int], tmp_path: Path
) -> None:
    """Non-default tables (every parameter moved; the flags off; greedy's) play the same
    events compiled as in the reference, the compiled policies reading them from the seat's
    weight array."""
    preset, overrides, deals = case
    rules = _rules(preset, overrides)
    odd = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    off = write_weights(tmp_path / "off.json", "heuristic", FLAGS_OFF)
    g = write_weights(tmp_path / "g.json", "greedy", ODD_GREEDY)
    _check_run(rules, (f"heuristic@{odd}",) * rules.players, deals, 31 + len(overrides), case)
    mixed = (f"heuristic@{off}", "heuristic", f"greedy@{g}", "random")[: rules.players]
    _check_run(rules, mixed, deals, 32, case)


def _check_run(
    rules: RuleSet,
    policies: tuple[str, ...],
    deals: int,
    run_seed: int,
    case: tuple[str, tuple[str, ...], int],
) -> None:
    spec = RunSpec(rules=rules, policies=policies, seed=run_seed, deals=deals)
    rec = ShardRecorder(rules)
    play_sessions(spec, range(spec.n_sessions), rec, None)
    n = len(rec)
    decks = np.frombuffer(bytes(rec.h_deck), dtype=np.uint8).reshape(n, 80)
    dealers = np.array(rec.h_dealer, dtype=np.int64)
    seeds = [derive_seed(run_seed, "hand", int(h)) for h in rec.h_id]
    ev, hands = play_batch(rules, decks, dealers, seeds, list(policies))

    ref_hands = {k: np.array(getattr(rec, v), dtype=np.int64) for k, v in _HAND_BUF.items()}
    for s in range(4):
        ref_hands[f"delta_{s}"] = np.array(rec.h_delta[s], dtype=np.int64)
    bad_hand = n
    for k, ref in ref_hands.items():
        d = np.nonzero(hands[k].astype(np.int64) != ref)[0]
        if len(d):
            bad_hand = min(bad_hand, int(d[0]))
    ref_ev = {k: np.array(getattr(rec, v), dtype=np.int64) for k, v in _EVENT_BUF.items()}
    # event hand index: the batch index (the recorder writes hand ids = batch index here)
    ref_ev["hand"] = np.array(rec.e_hand, dtype=np.int64)
    n_ev = min(len(ev["seq"]), len(ref_ev["seq"]))
    bad_ev = n_ev if len(ev["seq"]) == len(ref_ev["seq"]) else n_ev - 1
    for k in EVENT_COLUMNS:
        d = np.nonzero(ev[k][:n_ev].astype(np.int64) != ref_ev[k][:n_ev])[0]
        if len(d):
            bad_ev = min(bad_ev, int(d[0]))
    if bad_ev < len(ref_ev["seq"]) or len(ev["seq"]) != len(ref_ev["seq"]):
        i = max(bad_ev, 0)
        h = int(ref_ev["hand"][i]) if i < len(ref_ev["hand"]) else -1
        row_ref = {k: int(ref_ev[k][i]) for k in EVENT_COLUMNS if i < len(ref_ev[k])}
        row_fast = {k: int(ev[k][i]) for k in EVENT_COLUMNS if i < len(ev[k])}
        pytest.fail(
            f"{_case_id(case)} {policies} run seed {run_seed}: first differing event row {i}"
            f" (hand {h}, seq {row_ref.get('seq')}, dealer {dealers[h] if h >= 0 else '?'}):\n"
            f"  reference {row_ref}\n  fast      {row_fast}"
        )
    if bad_hand < n:
        h = bad_hand
        ref_row = {k: int(v[h]) for k, v in ref_hands.items()}
        fast_row = {k: int(hands[k][h]) for k in ref_hands}
        pytest.fail(
            f"{_case_id(case)} {policies} run seed {run_seed}: first differing hand {h}"
            f" (dealer {dealers[h]}):\n"
            f"  reference {ref_row}\n  fast      {fast_row}"
        )
    assert int(hands["n_events"].sum()) == len(ev["seq"])


# ---------------------------------------------------------------------------------------------
# Kernel level: drive the compiled state with the reference's actions
# ---------------------------------------------------------------------------------------------


def _meld_pairs(state: State, seat: int) -> list[tuple[int, int]]:
    out = []
    for g in state.melds[seat]:
        mid = EAT_SHAPE_ID[g.cards] if g.kind == GroupKind.CHI else g.cards[0]  # type: ignore[index]
        out.append((int(g.kind), mid))
    return out


def _opt(v: int | None) -> int:
    return -1 if v is None else int(v)


def _compare(ref: State, st: np.ndarray, where: str) -> None:
    buf = np.zeros(S.MAXA, dtype=np.int64)
    n = ref.n_seats
    assert S.current_player(st) == _opt(ref.current_player()), where
    assert int(st[S.PHASE]) == int(ref.phase), where
    assert int(st[S.FORCED]) == int(ref.forced), where
    assert int(st[S.CARD]) == _opt(ref.card), where
    assert int(st[S.OWNER]) == _opt(ref.owner), where
    assert int(st[S.CARD_KIND]) == _opt(ref.card_kind), where
    assert S.stock_left(st) == len(ref.stock), where
    assert int(st[S.N_DRAWS]) == ref.n_draws, where
    assert int(st[S.LIANG_KNOWN]) == int(ref.liang_known), where
    for seat in range(n):
        got = list(buf[: S.legal_actions(st, seat, buf)])
        assert got == ref.legal_actions(seat), f"{where} seat {seat}"
        assert list(st[S.HANDS + 20 * seat : S.HANDS + 20 * seat + 20]) == ref.hands[seat], where
        nm = int(st[S.MELD_N + seat])
        fast_melds = [
            (int(st[S.MELD_KIND + seat * S.MAXM + i]), int(st[S.MELD_ID + seat * S.MAXM + i]))
            for i in range(nm)
        ]
        assert fast_melds == _meld_pairs(ref, seat), f"{where} seat {seat} melds"
        assert int(st[S.STINKY + seat]) == ref.stinky[seat], where
        assert int(st[S.RENPENG + seat]) == ref.renpeng[seat], where
        assert int(st[S.DISCARDED + seat]) == ref.discarded[seat], where
        chouhu = {
            k: int(st[S.CHOUHU + seat * 20 + k])
            for k in range(20)
            if st[S.CHOUHU + seat * 20 + k] >= 0
        }
        assert chouhu == ref.chouhu[seat], where
        nd = int(st[S.DISCARDS_N + seat])
        assert (
            list(st[S.DISCARDS + seat * S.MAXD : S.DISCARDS + seat * S.MAXD + nd])
            == (ref.discards[seat])
        ), where
        nr = int(st[S.RIGHT_N + seat])
        assert (
            list(st[S.RIGHT + seat * S.MAXD : S.RIGHT + seat * S.MAXD + nr]) == (ref.right[seat])
        ), where
    pos = int(st[S.STOCK_POS])
    assert list(st[S.STOCK + pos : S.STOCK + 19])[::-1] == ref.stock, where


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_kernel_steps_follow_reference(case: tuple[str, tuple[str, ...], int]) -> None:
    preset, overrides, _ = case
    rules = _rules(preset, overrides)
    rp, hp = rule_arrays(rules)
    game = Game(rules)
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    n_hands = 30
    for h in range(n_hands):
        deck = shuffle_deck(derive_seed(77, "deal", h))
        dealer = h % rules.players
        ref = game.new_initial_state(deck, dealer)
        S.new_state(rp, hp, np.array(deck, dtype=np.int64), dealer, st)
        rng = random.Random(h)
        step = 0
        while True:
            where = f"{_case_id(case)} hand {h} (deal seed {h}, dealer {dealer}) step {step}"
            _compare(ref, st, where)
            if ref.outcome is not None:
                break
            seat = ref.current_player()
            assert seat is not None
            legal = ref.legal_actions(seat)
            # lean towards takes and wins so that 吃/碰/胡 paths are exercised
            takes = [a for a in legal if a != 0]
            a = rng.choice(takes) if takes and rng.random() < 0.6 else rng.choice(legal)
            ref.apply(seat, a)
            S.apply(rp, hp, st, seat, a)
            step += 1
        out = ref.outcome
        assert int(st[S.OUT_KIND]) == int(out.kind), where
        assert int(st[S.OUT_WINNER]) == _opt(out.winner), where
        assert int(st[S.OUT_SOURCE]) == _opt(out.source), where
        assert int(st[S.OUT_CARD]) == _opt(out.card), where
        assert int(st[S.OUT_FROM]) == _opt(out.from_seat), where
        assert list(st[S.OUT_DELTA : S.OUT_DELTA + rules.players]) == list(out.deltas), where
        if out.result is not None:
            assert int(st[S.OUT_SCORE]) == out.result.score, where
            assert int(st[S.OUT_HUXI]) == out.result.huxi, where


def test_apply_checked_refuses_illegal() -> None:
    rules = find_rules("hunan")
    rp, hp = rule_arrays(rules)
    st = np.zeros(S.STATE_SIZE, dtype=np.int32)
    deck = shuffle_deck(5)
    S.new_state(rp, hp, np.array(deck, dtype=np.int64), 0, st)
    ref = Game(rules).new_initial_state(deck, 0)
    seat = ref.current_player()
    legal = ref.legal_actions(seat)
    before = st.copy()
    illegal = next(a for a in range(200) if a not in legal)
    assert not S.apply_checked(rp, hp, st, seat, illegal)
    assert not S.apply_checked(rp, hp, st, (seat + 1) % 3, legal[0])
    assert (st == before).all()
    assert S.apply_checked(rp, hp, st, seat, legal[0])


def test_random_policy_rng_matches_python() -> None:
    from engine.fast.pyrandom import new_generator, randbelow

    for seed in (0, 1, 2**32 - 1, 2**32, derive_seed(3, "policy", 2), 2**64 - 1):
        mt = new_generator(seed)
        r = random.Random(seed)
        for n in (2, 3, 7, 20, 33, 64, 97):
            assert [randbelow(mt, n) for _ in range(50)] == [r.randrange(n) for _ in range(50)]


def test_seat_policies_mixed_codes() -> None:
    """Policies given by code are the same as by name."""
    rules = find_rules("hunan")
    decks = np.array([shuffle_deck(s) for s in range(5)], dtype=np.uint8)
    a = play_batch(rules, decks, [0, 1, 2, 0, 1], range(5), ["random"] * 3)
    b = play_batch(rules, decks, [0, 1, 2, 0, 1], range(5), [0, 0, 0])
    for k in a[0]:
        assert (a[0][k] == b[0][k]).all()
    assert load_policies("random", 3)[0].name == "random"


def test_policy_seeds_and_seed64() -> None:
    from engine.fast.play import policy_keys
    from engine.fast.pyrandom import N, mt_seed64, randbelow

    seeds = [0, 7, 2**64 - 1, derive_seed(1, "hand", 3)]
    keys = policy_keys(seeds, 4)
    for h, seed in enumerate(seeds):
        for s in range(4):
            v = derive_seed(seed, "policy", s)
            assert int(keys[h, s]) == v
            mt = np.zeros(N + 1, dtype=np.int64)
            mt_seed64(mt, keys[h, s])
            r = random.Random(v)
            assert [randbelow(mt, 11) for _ in range(20)] == [r.randrange(11) for _ in range(20)]
    for v in (0, 1, 2**32 - 1, 2**32):
        mt = np.zeros(N + 1, dtype=np.int64)
        mt_seed64(mt, np.uint64(v))
        r = random.Random(v)
        assert [randbelow(mt, 5) for _ in range(20)] == [r.randrange(5) for _ in range(20)]


def test_unknown_policy_is_refused() -> None:
    decks = np.array([shuffle_deck(1)], dtype=np.uint8)
    with pytest.raises(ValueError, match="unknown policy .nope."):
        play_batch(find_rules("hunan"), decks, [0], [1], ["random", "nope", "random"])
    ev, _ = play_batch(find_rules("hunan"), decks, [0], [1], [" Random", "GREEDY", "random"])
    assert len(ev["seq"]) > 0


HEURISTIC_CASES: list[tuple[str, tuple[str, ...], int]] = [
    ("hunan", (), 40),
    ("luzhou", (), 30),
    ("hunan-4p", (), 20),
    ("hunan", ("one_five_ten=on", "min_huxi=10", "hu_on_discards=on"), 20),
]


@pytest.mark.parametrize("case", HEURISTIC_CASES, ids=_case_id)
def test_play_batch_heuristic_equals_recorder(case: tuple[str, tuple[str, ...], int]) -> None:
    preset, overrides, deals = case
    rules = _rules(preset, overrides)
    _check_run(rules, ("heuristic",) * rules.players, deals, 31 + len(overrides), case)
    mixed = ("heuristic", "greedy", "random", "heuristic")[: rules.players]
    _check_run(rules, mixed, deals // 2, 8, case)


def test_cached_kernels_reload_in_a_new_process() -> None:
    """The kernels compiled (and cached) by this process load and run in a fresh one (numba
    cannot reload a cached recursive kernel: none may be recursive), with the same output."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from engine.deck import shuffle_deck\n"
        "from engine.fast.play import play_batch\n"
        "from engine.rules import find_rules\n"
        "decks = np.array([shuffle_deck(s) for s in range(6)], dtype=np.uint8)\n"
        "for p in ('random', 'greedy', 'heuristic'):\n"
        "    ev, hands = play_batch(find_rules('hunan'), decks, [0, 1, 2] * 2, range(6), [p] * 3)\n"
        "    print(p, int(ev['action'].astype(np.int64).sum()), int(hands['n_events'].sum()))\n"
    )
    decks = np.array([shuffle_deck(s) for s in range(6)], dtype=np.uint8)
    expected = []
    for p in ("random", "greedy", "heuristic"):
        ev, hands = play_batch(find_rules("hunan"), decks, [0, 1, 2] * 2, range(6), [p] * 3)
        expected.append(
            f"{p} {int(ev['action'].astype(np.int64).sum())} {int(hands['n_events'].sum())}"
        )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:3] == expected
