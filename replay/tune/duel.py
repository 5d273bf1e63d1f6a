"""One weights table against the baseline on common duplicate deals.

A duel of ``deals`` deals under seed ``S`` is the run ``paohuzi simulate --duplicate --seed
S -n deals --policies CANDIDATE,BASELINE,BASELINE`` (one candidate seat, the baseline in the
others, every deal played once per rotation so the candidate sits in every seat): the same
decks, dealers, sessions and policy seeds, played by the compiled engine
(:func:`engine.fast.play.play_sessions`) without writing anything. Its figure is the one
``paohuzi stats`` gives for a duplicate run (``replay.analysis.figures.groups.paired``): per
deal, the candidate's mean score change per seat-hand minus the baseline's (and the same for
the win rate); the mean over deals, with :func:`replay.analysis.intervals.paired_diff_ci`.
A test holds the two equal on a recorded run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.errors import PaohuziError
from engine.policies import weights as W
from engine.rules import RuleSet
from replay.analysis.intervals import Moments, paired_diff_ci
from replay.record.spec import DEFAULT_SESSION_LENGTH, RunSpec

#: The name the candidate plays under in a duel (its table is given, never read from a file).
CANDIDATE_SET = "candidate"


@dataclass(frozen=True)
class Duel:
    """The fixed side of every duel of a tuning run: the rules, the baseline (a policy spec
    and, if weighted, its table) and the session length."""

    rules: RuleSet
    baseline: str
    baseline_table: W.PolicyWeights | None = None
    session_length: int = DEFAULT_SESSION_LENGTH

    def candidate_name(self, table: W.PolicyWeights) -> str:
        return f"{table.policy}@{CANDIDATE_SET}"

    def spec(self, table: W.PolicyWeights, seed: int, deals: int) -> RunSpec:
        """The run this duel plays (what ``simulate`` would record)."""
        cand = self.candidate_name(table)
        if W.is_weighted_spec(self.baseline) and W.canonical(self.baseline) == cand:
            raise PaohuziError(f"the baseline may not be named {cand!r} (the candidate's name)")
        weights = [(cand, table)]
        if self.baseline_table is not None:
            weights.append((W.canonical(self.baseline), self.baseline_table))
        policies = (cand,) + (self.baseline,) * (self.rules.players - 1)
        return RunSpec(
            rules=self.rules,
            policies=policies,
            seed=seed,
            deals=deals,
            session_length=self.session_length,
            duplicate=True,
            engine="fast",
            weights=tuple(sorted(weights)),
        )

    def play(self, table: W.PolicyWeights, seed: int, deals: int, sessions: range) -> DealDiffs:
        """The per-deal differences of ``sessions`` of the duel's run."""
        from engine.fast.play import play_sessions

        spec = self.spec(table, seed, deals)
        _, hands = play_sessions(spec, sessions)
        return deal_diffs(hands, spec.rules.players)


@dataclass(frozen=True)
class DealDiffs:
    """Per deal of a duel (in deal order): the candidate's mean score change per seat-hand
    minus the baseline's (``score``), and the same for wins (``won``)."""

    score: np.ndarray
    won: np.ndarray

    @classmethod
    def join(cls, parts: Sequence[DealDiffs]) -> DealDiffs:
        return cls(np.concatenate([p.score for p in parts]), np.concatenate([p.won for p in parts]))

    @property
    def deals(self) -> int:
        return len(self.score)

    def score_ci(self) -> tuple[float, float, float]:
        """(mean, lo, hi): the paired difference in score per hand, 95 %."""
        return paired_diff_ci(moments(self.score))

    def win_ci(self) -> tuple[float, float, float]:
        return paired_diff_ci(moments(self.won))


def moments(d: np.ndarray) -> Moments:
    """Σd, Σd², n in a fixed order (the same floats for the same array)."""
    x = np.asarray(d, dtype=np.float64)
    return Moments(float(np.sum(x)), float(np.sum(x * x)), len(x))


def deal_diffs(hands: dict[str, np.ndarray], players: int) -> DealDiffs:
    """The differences of the hands of a duel (hand columns of ``play_sessions``: ``rotation``,
    ``dealer``, ``delta_S``, ``winner``, in deal order, every rotation of every deal). In
    rotation ``r`` seat ``s`` is played by policy ``(s − r) mod n``: the candidate (policy 0)
    sits in seat ``r``. The seat-hands are the catalog's ``seats``: with 4 players the 坐醒
    sitter, seat ``(dealer + 2) mod 4``, plays no hand and is left out."""
    rot = hands["rotation"].astype(np.int64)
    n = len(rot)
    if n % players:
        raise ValueError(f"{n} hands are no whole number of {players}-rotation deals")
    seat = np.arange(players)[None, :]
    delta = np.stack([hands[f"delta_{s}"].astype(np.int64) for s in range(players)], axis=1)
    winner = hands["winner"].astype(np.int64)  # NULL8 (255) for 荒庄: no seat
    won = winner[:, None] == seat
    plays = np.ones((n, players), dtype=bool)
    if players == 4:
        plays = seat != ((hands["dealer"].astype(np.int64) + 2) % 4)[:, None]
    cand = (rot[:, None] == seat) & plays
    base = ~(rot[:, None] == seat) & plays

    def per_deal(mask: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.where(mask, x, 0).sum(axis=1).reshape(-1, players).sum(axis=1)

    nc = per_deal(cand, np.ones_like(delta))
    nb = per_deal(base, np.ones_like(delta))
    return DealDiffs(
        per_deal(cand, delta) / nc - per_deal(base, delta) / nb,
        per_deal(cand, won) / nc - per_deal(base, won) / nb,
    )
