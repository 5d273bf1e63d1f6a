"""How far a fast policy's choices are from the search's (issue 44), valued afresh.

    python -m bench.teacher_gap [--hands 60] [--rollouts 64] [--fresh 512]
        [--play learned@hunan] [--tables learned@hunan,heuristic@tuned-hunan]

``paohuzi distill`` reports a table's **regret** on held-out teacher data: the search's best
value at a decision minus the value of the table's choice, both from the same ``N``
rollouts. The best of ``k`` noisy values is biased upward, so most of that figure is noise:
it says little about how much better the search chooses. Here, at every third decision of
``--hands`` self-play hands of ``--play`` (compiled, the hunan preset), the search values
the options with ``--rollouts`` rollouts (its rollout policy ``--play``) and picks the best
mean, as the distill teacher does (``search@N`` keeps its rollout policy's choice unless
another option is clearly better); then a **fresh** valuation with ``--fresh`` rollouts of
other random streams values the search's pick and each table's own choice. Printed per kind
of decision (discard, claim): the in-sample regret of each table (what distill reports) and
the fresh gain of the search's pick over the table's choice, with its standard error — the
part of the regret that is real.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.deck import derive_seed, derive_seeds
from engine.fast.codes import HU
from engine.fast.deck import shuffle_decks
from engine.fast.features import weights_array
from engine.fast.learned import N_FEATURES, features
from engine.fast.policies import POLICY_CODES, choose
from engine.fast.pyrandom import N as MT_N
from engine.fast.pyrandom import mt_seed64
from engine.fast.rule_arrays import rule_arrays
from engine.fast.search import R_DELTA, evaluate_kernel
from engine.fast.state import STATE_SIZE, apply, new_state
from engine.policies import weights as W
from engine.rules import find_rules
from replay.distill.teacher import next_choice

KINDS = ("discard", "claim")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--hands", type=int, default=60)
    ap.add_argument("--rollouts", type=int, default=64)
    ap.add_argument("--fresh", type=int, default=512)
    ap.add_argument("--play", default="learned@hunan")
    ap.add_argument("--tables", default="learned@hunan,heuristic@tuned-hunan")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rules = find_rules("hunan")
    rp, hp = rule_arrays(rules)
    play = W.load_spec(a.play)
    pw, pcode = weights_array(play), POLICY_CODES[play.policy]
    tables = [(spec, W.load_spec(spec)) for spec in a.tables.split(",")]
    tw = [(spec, weights_array(t), POLICY_CODES[t.policy]) for spec, t in tables]
    seeds = derive_seeds(a.seed, "teacher-gap", range(a.hands))
    decks = shuffle_decks(np.array(seeds, dtype=np.uint64))
    st = np.zeros(STATE_SIZE, dtype=np.int32)
    mts = np.zeros((4, MT_N + 1), dtype=np.int64)
    out = np.zeros((96, N_FEATURES))
    rows: list[tuple[int, list[float], list[float]]] = []  # kind, in-sample regrets, gains
    t0 = time.perf_counter()
    for j in range(a.hands):
        new_state(rp, hp, decks[j], seeds[j] % rules.players, st)
        for s in range(4):
            mt_seed64(mts[s], np.uint64(derive_seed(a.seed, "teacher-gap-seat", j, s)))
        step = 0
        while (choice := next_choice(rp, hp, st)) is not None:
            seat, legal = choice
            n = len(legal)
            picks = [choose(code, rp, hp, w, st, seat, mts[seat].copy()) for _, w, code in tw]
            act = choose(pcode, rp, hp, pw, st, seat, mts[seat])
            if HU not in legal and step % 3 == 0:
                out[:n] = 0.0
                kind = features(rp, pw, st, seat, out)
                if kind >= 0:
                    first = _values(rp, hp, pw, pcode, st, seat, legal, a.rollouts, a.seed, j, step)
                    fresh = _values(
                        rp, hp, pw, pcode, st, seat, legal, a.fresh, a.seed + 1, j, step
                    )
                    if first is not None and fresh is not None:
                        best = int(np.argmax(first))
                        idx = [int(np.flatnonzero(legal == p)[0]) for p in picks]
                        rows.append((
                            kind,
                            [float(first.max() - first[i]) for i in idx],
                            [float(fresh[best] - fresh[i]) for i in idx],
                        ))  # fmt: skip
            apply(rp, hp, st, seat, act)
            step += 1
    took = time.perf_counter() - t0
    print(
        f"{a.hands} hands of {a.play} self-play (hunan), every third decision: the search's"
        f" pick by {a.rollouts} rollouts, valued afresh by {a.fresh} ({took:.0f} s)"
    )
    for kind, label in enumerate(KINDS):
        got = [r for r in rows if r[0] == kind]
        if not got:
            continue
        print(f"\n{label}: {len(got)} decisions")
        print(f"  {'table':28} {'in-sample regret':>17} {'fresh gain of the search':>26}")
        for i, (spec, _) in enumerate(tables):
            regret = np.array([r[1][i] for r in got])
            gain = np.array([r[2][i] for r in got])
            se = gain.std(ddof=1) / np.sqrt(len(gain)) if len(gain) > 1 else float("nan")
            print(f"  {spec:28} {regret.mean():17.3f} {gain.mean():+19.3f} ± {se:.3f}")


def _values(rp, hp, w, code, st, seat, legal, rollouts, seed, hand, step):  # type: ignore[no-untyped-def]
    """Each option's mean score change over ``rollouts`` rollouts (None: no consistent deal)."""
    res = np.zeros((len(legal), rollouts, 4), dtype=np.int64)
    eseed = np.uint64(derive_seed(seed, "teacher-gap-eval", hand, step))
    if evaluate_kernel(rp, hp, w, st, seat, rollouts, code, eseed, legal, res) <= 0:
        return None
    return res[:, :, R_DELTA].mean(axis=1)


if __name__ == "__main__":
    main()
