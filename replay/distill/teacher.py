"""Teacher data: the search's option values at the decisions of self-play hands.

A chunk of teacher data is ``hands`` hands (numbered on from ``chunk`` × ``chunk_size``) of self-play by the apprentice (a ``learned``
table in every seat, compiled), each dealt from its own seed; at each decision with more than
one option and no 胡 among them, with probability ``sample`` (a generator of its own, so the
hands do not depend on it), the search values every option as ``search@N`` does
(:func:`engine.fast.search.evaluate_kernel`: ``rollouts`` determinizations of what the seat
cannot see, every option played out from each by the rollout policy, the same random streams
for every option), and the option's features (:func:`engine.fast.learned.features`) are kept
beside its mean score change and win rate. The apprentice's own choice is played on.

Everything is a pure function of the chunk's :class:`ChunkSpec`: the same rows, in the same
order, from any process (:func:`chunk_table`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from engine.deck import derive_seed, derive_seeds
from engine.policies import learned as L
from engine.policies import weights as W
from engine.rules import RuleSet

#: The columns of a teacher-data row (one per option of a sampled decision).
FEATURE_COLUMNS = tuple(f"x{i}" for i in range(max(len(L.DISCARD_FEATURES), len(L.CLAIM_FEATURES))))
SCHEMA = pa.schema(
    [
        ("chunk", pa.uint32()),
        ("hand", pa.uint32()),
        ("decision", pa.uint32()),  # the decision's number within the chunk
        ("kind", pa.uint8()),  # engine.policies.learned.DISCARD / CLAIM
        ("seat", pa.uint8()),
        ("option", pa.uint8()),  # the option's index among the legal actions
        ("action", pa.int32()),
        ("chosen", pa.bool_()),  # the apprentice's choice
        ("value", pa.float64()),  # mean score change of the seat over the rollouts
        ("win", pa.float64()),  # share of the rollouts the seat won
        *[(c, pa.float64()) for c in FEATURE_COLUMNS],
    ]
)


#: The key of a chunk file's schema metadata holding its :meth:`ChunkSpec.digest`.
DIGEST_KEY = b"paohuzi.teacher.spec"
#: A decision is sampled when a draw below this falls under ``sample`` × this.
SAMPLE_SCALE = 1 << 20


@dataclass(frozen=True)
class ChunkSpec:
    """One chunk of teacher data: ``hands`` hands from ``first_hand`` of the stream ``seed``;
    ``table`` plays them, ``rollout`` (a table of any weighted policy) plays the search's
    rollouts, ``rollouts`` per decision; a decision is sampled with probability ``sample``."""

    rules: RuleSet
    table: W.PolicyWeights
    rollout: W.PolicyWeights
    rollouts: int
    seed: int
    chunk: int
    hands: int
    chunk_size: int
    sample: float

    @property
    def first_hand(self) -> int:
        return self.chunk * self.chunk_size

    def digest(self) -> str:
        """What made the chunk (every field, the tables in full), as a SHA-256: stored in its
        file, so data of other settings is never read as this chunk's."""
        doc = {
            "rules": self.rules.to_dict(),
            "table": [self.table.policy, list(self.table.values)],
            "rollout": [self.rollout.policy, list(self.rollout.values)],
            **{k: getattr(self, k) for k in ("rollouts", "seed", "chunk", "hands", "chunk_size",
                                             "sample")},
            "schema": [f"{f.name}:{f.type}" for f in SCHEMA],
        }  # fmt: skip
        text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def chunk_table(spec: ChunkSpec) -> pa.Table:
    """The teacher rows of a chunk (:data:`SCHEMA`), in play order."""
    from engine.fast.codes import HU
    from engine.fast.deck import shuffle_decks
    from engine.fast.features import weights_array
    from engine.fast.learned import N_FEATURES, features
    from engine.fast.policies import LEARNED, POLICY_CODES, choose
    from engine.fast.pyrandom import N as MT_N
    from engine.fast.pyrandom import mt_seed64, randbelow
    from engine.fast.rule_arrays import rule_arrays
    from engine.fast.search import R_DELTA, R_WIN, evaluate_kernel
    from engine.fast.state import STATE_SIZE, apply, new_state

    rules = spec.rules
    rp, hp = rule_arrays(rules)
    w = weights_array(spec.table)
    rw = weights_array(spec.rollout)
    rcode = POLICY_CODES[spec.rollout.policy]
    hand_ids = range(spec.first_hand, spec.first_hand + spec.hands)
    seeds = derive_seeds(spec.seed, "teacher-deal", hand_ids)
    decks = shuffle_decks(np.array(seeds, dtype=np.uint64))
    cols: dict[str, list] = {f.name: [] for f in SCHEMA}
    st = np.zeros(STATE_SIZE, dtype=np.int32)
    mts = np.zeros((4, MT_N + 1), dtype=np.int64)
    pick = np.zeros(MT_N + 1, dtype=np.int64)
    out = np.zeros((96, N_FEATURES), dtype=np.float64)
    threshold = round(spec.sample * SAMPLE_SCALE)
    decision = 0
    for j, hand in enumerate(hand_ids):
        dealer = seeds[j] % rules.players
        new_state(rp, hp, decks[j], dealer, st)
        for s in range(4):
            mt_seed64(mts[s], np.uint64(derive_seed(spec.seed, "teacher-seat", hand, s)))
        mt_seed64(pick, np.uint64(derive_seed(spec.seed, "teacher-pick", hand)))
        step = 0
        while (choice := next_choice(rp, hp, st)) is not None:
            seat, legal = choice
            n = len(legal)
            a = choose(LEARNED, rp, hp, w, st, seat, mts[seat])
            if HU not in legal and randbelow(pick, SAMPLE_SCALE) < threshold:
                out[:n] = 0.0
                kind = features(rp, w, st, seat, out)
                if kind >= 0:
                    res = np.zeros((n, spec.rollouts, 4), dtype=np.int64)
                    eseed = np.uint64(derive_seed(spec.seed, "teacher-eval", hand, step))
                    got = evaluate_kernel(
                        rp, hp, rw, st, seat, spec.rollouts, rcode, eseed, legal, res
                    )
                    if got > 0:
                        value = res[:, :, R_DELTA].mean(axis=1)
                        win = res[:, :, R_WIN].mean(axis=1)
                        for i in range(n):
                            cols["chunk"].append(spec.chunk)
                            cols["hand"].append(hand)
                            cols["decision"].append(decision)
                            cols["kind"].append(kind)
                            cols["seat"].append(seat)
                            cols["option"].append(i)
                            cols["action"].append(int(legal[i]))
                            cols["chosen"].append(bool(legal[i] == a))
                            cols["value"].append(float(value[i]))
                            cols["win"].append(float(win[i]))
                            for c, x in zip(FEATURE_COLUMNS, out[i]):
                                cols[c].append(float(x))
                        decision += 1
            apply(rp, hp, st, seat, a)
            step += 1
    return pa.table(cols, schema=SCHEMA.with_metadata({DIGEST_KEY: spec.digest()}))


def next_choice(rp: np.ndarray, hp: np.ndarray, st: np.ndarray) -> tuple[int, np.ndarray] | None:
    """Play the compiled state ``st`` on through forced actions and single options to the
    next real choice: ``(seat, its legal actions)``, or None when the hand is over."""
    from engine.fast.state import FORCED, MAXA, OUT_KIND, PEND_A, PEND_N, apply, current_player

    while st[OUT_KIND] < 0:
        seat = int(current_player(st))
        n = int(st[PEND_N + seat])
        base = PEND_A + seat * MAXA
        if st[FORCED] or n == 1:
            apply(rp, hp, st, seat, st[base])
            continue
        return seat, st[base : base + n].astype(np.int64)
    return None
