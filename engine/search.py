"""Search from any state (issue 21, reference engine): determinization and option values.

:func:`determinize` draws, for the seat to act, a full state it cannot tell apart from the real
one — its :meth:`~engine.state.State.observation` is equal and its legal options are the
same — with every card it has not seen placed anew: the other seats' concealed hands, the
faces of their face-down 偎 and the order of the stock. What it conditions on and what it does
not infer is in docs/SEARCH.md. :func:`evaluate` plays each legal option out from the same
determinizations (common random numbers) with a rollout policy and averages the seat's score
delta, win, 荒庄 and winning 胡息, each with a 95% interval.

No peeking: the sample is a function of the seat's observation and the random stream only.
The hidden cards are taken as a sorted multiset (what the seat has not seen), never in the
order the real state holds them, and every hidden slot is overwritten.

>>> from engine.deck import shuffle_deck
>>> from engine.state import Game
>>> import random
>>> s = Game().new_initial_state(shuffle_deck(3), 0)
>>> seat = s.current_player()
>>> d = determinize(s, seat, random.Random(1))
>>> d.observation(seat).to_dict() == s.observation(seat).to_dict()
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.cards import COPIES, NUM_KINDS
from engine.errors import IllegalAction, PaohuziError
from engine.groups import Group, GroupKind
from engine.policy import Policy
from engine.state import _ANY, CardKind, Outcome, Phase, State

#: Tries of :func:`determinize` before it gives up (a state whose constraints leave almost no
#: deal; none is known).
MAX_TRIES = 2000


class SearchError(PaohuziError):
    """A search that cannot be made as asked (no seat to act, no consistent deal)."""


def hidden_counts(state: State, seat: int) -> list[int]:
    """Copies of each face ``seat`` has not seen (80 minus its
    :meth:`~engine.observation.Observation.seen_counts`)."""
    obs = state.observation(seat)
    seen = list(obs.seen_counts())
    if obs.card is not None and state.card_kind == CardKind.LIANG:
        seen[obs.card] -= 1  # the 亮张 on offer is the one in the dealer's hand: counted twice
    return [COPIES - seen[k] for k in range(NUM_KINDS)]


def revealed_faces(state: State, seat: int) -> int:
    """Bitmask of faces shown face-up after the deal and past their 跑 (discards, the dead
    cards to the right, the card on offer once a take is offered): another seat holding a 坎
    of such a face would have had to 跑 it (RULES §8.4), so no other seat's hand holds three
    of it now. A discard on offer for 胡 is not yet past its 跑 (胡 is settled first)."""
    obs = state.observation(seat)
    skip = (
        state.owner
        if state.phase == Phase.CLAIM_HU and state.card_kind == CardKind.DISCARDED
        else None
    )
    mask = 0
    for s in state.active:
        discards = obs.discards(s)
        if s == skip:
            discards = discards[:-1]  # its last discard is the card on offer
        for k in (*discards, *obs.right(s)):
            mask |= 1 << k
    if obs.card is not None and state.phase == Phase.CLAIM_TAKE:
        mask |= 1 << obs.card
    return mask


def determinize(state: State, seat: int, rng: random.Random, max_tries: int = MAX_TRIES) -> State:
    """A state ``seat`` cannot tell from ``state`` (same observation, same legal options), its
    hidden cards drawn from those the seat has not seen. Raises :class:`SearchError` when
    ``seat`` is not to act or no consistent deal is found in ``max_tries`` draws."""
    if state.outcome is not None or seat not in state.deciders():
        raise SearchError(f"seat {seat} is not to act (deciders {list(state.deciders())})")
    obs = state.observation(seat)
    want = (obs.to_dict(), list(state.pending[seat]))
    others = [s for s in state.active if s != seat]
    pool = hidden_counts(state, seat)
    liang = obs.liang if seat != state.dealer else None
    if liang is not None:  # the 亮张 is publicly in the dealer's hand (C32): keep it there
        pool[liang] += 1
    shown = len(obs.bottom_shown)  # 4 players: the shown bottom cards stay where they are
    for k in obs.bottom_shown:
        pool[k] -= 1
    cards = sorted(k for k in range(NUM_KINDS) for _ in range(pool[k]))
    weis = [(s, i) for s in others for i, g in enumerate(state.melds[s]) if g.kind == GroupKind.WEI]
    no_kan = revealed_faces(state, seat)
    for _ in range(max_tries):
        out = _draw(state, seat, rng, cards, others, weis, liang, shown, no_kan)
        if out is not None and (out.observation(seat).to_dict(), out.pending.get(seat)) == (
            want[0],
            want[1],
        ):
            return out
    raise SearchError(f"no deal consistent with seat {seat}'s view in {max_tries} draws")


def _draw(
    state: State,
    seat: int,
    rng: random.Random,
    cards: list[int],
    others: list[int],
    weis: list[tuple[int, int]],
    liang: int | None,
    shown: int,
    no_kan: int,
) -> State | None:
    """One candidate: the hidden cards dealt anew (None when a rule it must keep fails)."""
    left = [0] * NUM_KINDS
    for k in cards:
        left[k] += 1
    if liang is not None:
        left[liang] -= 1  # dealt to the dealer below, before any 偎 takes a face
    faces: list[int] = []
    for _s, _i in weis:  # a hidden 偎 takes three copies of one unseen face
        options = [k for k in range(NUM_KINDS) if left[k] >= 3]
        if not options:
            return None
        k = options[rng.randrange(len(options))]
        left[k] -= 3
        faces.append(k)
    rest = [k for k in range(NUM_KINDS) for _ in range(left[k])]
    rng.shuffle(rest)
    out = state.clone()
    pos = 0
    for s in others:
        n = state.hand_size[s] - (1 if s == state.dealer and liang is not None else 0)
        hand = [0] * NUM_KINDS
        for k in rest[pos : pos + n]:
            hand[k] += 1
        pos += n
        if s == state.dealer and liang is not None:
            hand[liang] += 1
        if any(c > 3 or (c == 3 and no_kan >> k & 1) for k, c in enumerate(hand)):
            return None  # a concealed 4 would have been 提; a revealed face's 坎 跑'd
        out.hands[s] = hand
        # what the seat cannot see of the others' past choices is not carried over
        out.stinky[s] = out.renpeng[s] = 0
        out.chouhu[s] = {}
    for (s, i), k in zip(weis, faces, strict=True):
        if out.hands[s][k] or k == (out.card if out.phase == Phase.CLAIM_TAKE else -1):
            return None  # a 偎 of k beside a k in hand, or a 跑 owed on the card on offer
        out.melds[s] = out.melds[s][:i] + [Group(GroupKind.WEI, (k,) * 3)] + out.melds[s][i + 1 :]
    stock = rest[pos:]
    assert len(stock) == len(state.stock) - shown, (len(stock), len(state.stock), shown)
    out.stock = state.stock[:shown] + stock
    out._lonely = [((), _ANY)] * state.n_seats
    return _reask(out, seat)


def _reask(out: State, seat: int) -> State | None:
    """The pending decision asked again of the new hands: the others' options (and their
    hidden declarations, dropped) depend on cards the seat cannot see."""
    phase = out.phase
    try:
        if phase == Phase.CLAIM_HU:
            out._claim_hu()
        elif phase == Phase.CLAIM_TAKE:
            out._claim_take()
        elif phase == Phase.LIANG_HU:
            out._liang_hu()
        else:  # one seat decides (discard, a forced take): nothing of the others is asked
            out.declared = {}
            out._hu = {k: v for k, v in out._hu.items() if k == seat}
    except (AssertionError, IllegalAction, KeyError, ValueError):
        return None
    if out.outcome is not None or seat not in out.deciders():
        return None
    return out


# ---------------------------------------------------------------------------------------------
# Option values
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A mean over the rollouts with its 95% normal interval."""

    mean: float
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, xs: Sequence[float]) -> Estimate:
        n = len(xs)
        if n == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        m = math.fsum(xs) / n
        var = math.fsum((x - m) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
        h = 1.959963984540054 * math.sqrt(var / n)
        return cls(m, m - h, m + h, n)


@dataclass(frozen=True)
class OptionValue:
    """What one legal option was worth to the seat, over the same determinizations."""

    action: int
    delta: Estimate  # the seat's score delta at the end of the hand
    win: Estimate  # 1 when the seat won
    huang: Estimate  # 1 for a 荒庄
    win_huxi: Estimate  # 胡息 of the seat's wins (n: the wins)
    #: The rollouts' score deltas and wins (1.0 or 0.0), in rollout order: the options of one
    #: evaluation share their determinizations, so these pair up rollout by rollout (what
    #: engine.judge's paired comparison needs). None for values read back from a store.
    samples: tuple[tuple[float, ...], tuple[float, ...]] | None = field(
        default=None, compare=False, repr=False
    )


def play_out(state: State, policies: Sequence[Policy], rng: random.Random) -> State:
    """Play ``state`` to the end in place, every seat by its policy (forced moves applied),
    all drawing from ``rng``."""
    while state.outcome is None:
        forced = state.forced
        for s in state.deciders():
            legal = state.pending[s]
            a = legal[0] if forced or len(legal) == 1 else policies[s].act(
                state.observation(s), legal, rng
            )  # fmt: skip
            state.apply(s, a)
            if state.outcome is not None or state.declared == {}:
                break
    return state


def check_budget(rollouts: int, seed: int) -> None:
    """:class:`SearchError` for a budget below one rollout or a seed outside 64 bits."""
    if rollouts < 1:
        raise SearchError(f"rollouts must be at least 1, not {rollouts}")
    if not 0 <= seed < 1 << 64:
        raise SearchError(f"the seed must be 0 … 2**64 - 1, not {seed}")


def playouts(
    state: State,
    seat: int,
    rollouts: int,
    rollout_policy: Policy,
    seed: int,
    options: Sequence[int],
) -> list[list[Outcome]]:
    """The outcome of every option in ``options`` (legal for ``seat``) from each of ``rollouts``
    determinizations, ``[option][rollout]``: the r-th determinization from ``Random(x_r)``,
    ``x_r`` the r-th ``getrandbits(64)`` of ``Random(seed)``, every option played out by
    ``rollout_policy`` from the next 64 bits of that generator (common random numbers)."""
    check_budget(rollouts, seed)
    policies = [rollout_policy] * state.n_seats
    out: list[list[Outcome]] = [[] for _ in options]
    root = random.Random(seed)
    for _ in range(rollouts):
        # one 64-bit seed per determinization from the root stream, and from its stream the
        # rollouts' (MT19937 throughout, as the compiled engine reproduces it)
        base = random.Random(root.getrandbits(64))
        det = determinize(state, seat, base)
        stream = base.getrandbits(64)
        for i, a in enumerate(options):
            s = det.clone()
            s.apply(seat, a)
            o = play_out(s, policies, random.Random(stream)).outcome
            assert o is not None
            out[i].append(o)
    return out


#: What :func:`option_values` averages per option: the seat's score delta, its win (1/0) and
#: the 荒庄 (1/0), one value per rollout, and the 胡息 of each of its wins.
Columns = tuple[Sequence[float], Sequence[float], Sequence[float], Sequence[float]]


def columns(seat: int, outcomes: Sequence[Outcome]) -> Columns:
    """The :data:`Columns` of one option's :func:`playouts` outcomes."""
    wins = [o for o in outcomes if o.winner == seat]
    return (
        [float(o.deltas[seat]) for o in outcomes],
        [1.0 if o.winner == seat else 0.0 for o in outcomes],
        [1.0 if o.winner is None else 0.0 for o in outcomes],
        [float(o.result.huxi) for o in wins if o.result and o.result.huxi is not None],
    )


def option_values(options: Sequence[int], cols: Sequence[Columns]) -> list[OptionValue]:
    """The estimates of each option from its :data:`Columns` (both engines build them)."""
    return [
        OptionValue(
            a,
            Estimate.of(col[0]),
            Estimate.of(col[1]),
            Estimate.of(col[2]),
            Estimate.of(col[3]),
            (tuple(col[0]), tuple(col[1])),
        )
        for a, col in zip(options, cols, strict=True)
    ]


def options_of(state: State, seat: int, actions: Sequence[int] | None) -> list[int]:
    """The legal options of ``seat`` an evaluation values: all, or those in ``actions``, in
    the legal order."""
    legal = list(state.pending.get(seat, ()))
    return legal if actions is None else [a for a in legal if a in set(actions)]


def evaluate(
    state: State,
    seat: int,
    rollouts: int,
    rollout_policy: Policy,
    seed: int,
    actions: Sequence[int] | None = None,
) -> list[OptionValue]:
    """The value of each legal option of ``seat`` at ``state`` (or of those in ``actions``):
    ``rollouts`` determinizations, each option played out from every one of them with the same
    random stream (common random numbers). A pure function of its arguments."""
    options = options_of(state, seat, actions)
    outcomes = playouts(state, seat, rollouts, rollout_policy, seed, options)
    return option_values(options, [columns(seat, os) for os in outcomes])


def best_option(values: Sequence[OptionValue]) -> int:
    """The option of highest mean score delta, ties to the lowest action code."""
    return min(values, key=lambda v: (-v.delta.mean, v.action)).action


#: The paired test of :func:`improve`: an option replaces the rollout policy's own choice when
#: its mean score delta beats it by more than ``Z`` standard errors of the paired differences.
Z = 1.96
Z2 = Z * Z


def improve(options: Sequence[int], deltas: Sequence[Sequence[int]], default: int) -> int:
    """The search policy's choice (one step of policy improvement over the rollout policy):
    ``options[default]`` (the rollout policy's own choice), unless other options beat it —
    their score deltas minus its, rollout by rollout (the same determinizations and streams),
    have a mean above ``Z`` standard errors — then the one of those of highest mean, ties to
    the lowest action code. Exact in integers but one product, ``Z2 · (n·Σd² − (Σd)²)``, so
    both engines decide alike; with one rollout the default is kept."""
    base = deltas[default]
    n = len(base)
    best, best_t = default, 0
    for i, (a, d) in enumerate(zip(options, deltas, strict=True)):
        if i == default:
            continue
        diff = [x - y for x, y in zip(d, base, strict=True)]
        t = sum(diff)
        q = sum(x * x for x in diff)
        beats = t > 0 and t * t * (n - 1) > Z2 * (n * q - t * t)
        if beats and (best == default or t > best_t or (t == best_t and a < options[best])):
            best, best_t = i, t
    return options[best]
