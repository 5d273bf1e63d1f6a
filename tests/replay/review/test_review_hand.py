"""The review of a recorded hand (issue 23, replay.review.hand): a declined winning 胡 is a
blunder, a taken one agrees with the best option, the same seed gives the same review in
both engines, the classes and the accuracy follow their documented thresholds, and
``paohuzi review`` prints it (text, JSON) or one error line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.actions import HU, PASS
from engine.deck import derive_seed, shuffle_deck
from engine.fast.search import evaluate as fast_evaluate
from engine.judge import accuracy, classify, judge
from engine.rules import find_rules
from engine.state import Game, State
from paohuzi.cli.main import main
from replay.replayer.hand import HandLog, Replayer
from replay.review.hand import decisions_to_review, review_hand


def _hand_with_a_hu_offered(decline: bool) -> tuple[HandLog, int]:
    """A random-policy hunan hand in which a seat is offered 胡 and (``decline``) passes on it
    or takes it; the step of that decision."""
    rules = find_rules("hunan")
    for deck_seed in range(500):
        s = Game(rules).new_initial_state(shuffle_deck(deck_seed), deck_seed % 3)
        rng = random.Random(deck_seed)
        while s.outcome is None:
            seat = s.current_player()
            assert seat is not None
            legal = s.legal_actions(seat)
            if HU in legal and PASS in legal and len(s.history) > 10:
                k = len(s.history)
                s.apply(seat, PASS if decline else HU)
                return _finish_at_random(s, rng), k  # (the log needs no end, but have one)
            s.apply(seat, legal[rng.randrange(len(legal))])
    raise AssertionError("no hand with a 胡 on offer")


def test_a_declined_winning_hu_is_a_blunder_and_a_taken_one_the_best() -> None:
    log, k = _hand_with_a_hu_offered(decline=True)
    seat = log.events[k][0]
    r = review_hand(log, [seat], 32, "heuristic", seed=1)
    d = next(d for d in r.decisions if d.step == k)
    assert (d.played, d.best, d.kind) == (PASS, HU, "blunder"), d
    assert d.win_loss >= 15 and d.score_loss > 0 and d.accuracy < 60
    assert r.summary()["seats"][seat]["blunder"] >= 1
    log, k = _hand_with_a_hu_offered(decline=False)
    seat = log.events[k][0]
    r = review_hand(log, [seat], 32, "heuristic", seed=1)
    d = next(d for d in r.decisions if d.step == k)
    assert (d.played, d.best, d.kind, d.win_loss) == (HU, HU, None, 0.0), d
    assert d.accuracy == 100.0


def _finish_at_random(s: State, rng: random.Random) -> HandLog:
    """The hand of state ``s`` played to its end by random choices from ``rng``, as a log."""
    while s.outcome is None:
        seat = s.current_player()
        assert seat is not None
        la = s.legal_actions(seat)
        s.apply(seat, la[rng.randrange(len(la))])
    return HandLog.from_history(s.rules, s.deck, s.dealer, s.history, run="t", hand_id=0)


def _random_hand(deck_seed: int) -> HandLog:
    """A random-policy hunan hand (deck and policy from ``deck_seed``)."""
    s = Game(find_rules("hunan")).new_initial_state(shuffle_deck(deck_seed), deck_seed % 3)
    return _finish_at_random(s, random.Random(deck_seed))


def test_a_near_tie_gets_no_class_while_a_declined_hu_stays_a_blunder_at_16_rollouts() -> None:
    """Issue 43 item 5. Hand 3's step 33 (a discard among many): at 16 rollouts its win loss
    against the highest noisy estimate is 12.5 points — a "mistake" by the old rule — but
    the paired interval of the played option against that one includes zero, so no class;
    at 1,024 rollouts the played discard is itself the likeliest to win (loss 0). A declined
    winning 胡 loses on nearly every rollout: a blunder at 16 as at 32."""
    log = _random_hand(3)
    d = next(d for d in review_hand(log, [0], 16, "heuristic", seed=1).decisions if d.step == 33)
    assert d.phase == "DISCARD" and len(d.options) > 5
    assert classify(d.win_loss) == "mistake"  # the old rule's class
    assert d.win_loss_ci[0] <= 0 < d.win_loss_ci[1] and d.kind is None
    values = fast_evaluate(Replayer(log).state_at(33), 0, 1024, "heuristic",
                           derive_seed(1, "review", 33))  # fmt: skip
    big = judge(33, 0, d.phase, d.played, values)
    assert (big.win_loss, big.kind) == (0.0, None)
    # the gains are paired rollout by rollout: the played option's is exactly zero
    g = dict(zip([v.action for v in d.options], d.gains, strict=True))
    assert (g[d.played].win.mean, g[d.played].win.low, g[d.played].win.high) == (0.0, 0.0, 0.0)
    log, k = _hand_with_a_hu_offered(decline=True)
    seat = log.events[k][0]
    d = next(d for d in review_hand(log, [seat], 16, "heuristic", seed=1).decisions if d.step == k)
    assert (d.played, d.best, d.kind) == (PASS, HU, "blunder") and d.win_loss_ci[0] > 15, d


def test_same_seed_same_review_in_both_engines() -> None:
    log, _ = _hand_with_a_hu_offered(decline=True)
    seats = [log.events[0][0]]
    fast = review_hand(log, seats, 3, "greedy", seed=7, engine="fast").to_dict()
    ref = review_hand(log, seats, 3, "greedy", seed=7, engine="reference").to_dict()
    assert fast.pop("engine") == "fast" and ref.pop("engine") == "reference"
    assert fast == ref and fast["decisions"]
    assert review_hand(log, seats, 3, "greedy", seed=8).to_dict()["decisions"] != ref["decisions"]
    # every reviewed step is a real choice of a reviewed seat
    assert [d["step"] for d in fast["decisions"]] == decisions_to_review(log, seats)


def test_classes_and_accuracy_follow_their_thresholds() -> None:
    assert [classify(x) for x in (0, 4.99, 5, 9.99, 10, 14.99, 15, 80)] == [
        None, None, "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder", "blunder",
    ]  # fmt: skip
    assert accuracy(0) == 100.0 and accuracy(100) == 0.0
    assert 60 < accuracy(10) < 70 and accuracy(5) > accuracy(10) > accuracy(15)


def _review(store: Path, *args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["review", "--data", str(store), "-q", *args])
    return r.exit_code, r.stdout, r.stderr


def test_review_command_prints_text_and_json(store: Path) -> None:
    code, out, err = _review(store, "m", "1", "--seat", "1", "--rollouts", "4")
    assert code == 0, err
    assert out.startswith("review of run m hand 1: seats 1, 4 rollouts")
    assert "seat 1:" in out and "option" in out
    code, out, err = _review(store, "m", "1", "--seat", "1", "-N", "4", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["seats"] == [1] and doc["rollouts"] == 4 and doc["engine"] == "fast"
    for d in doc["decisions"]:
        assert d["seat"] == 1 and d["played"] in [o["action"] for o in d["options"]]
        assert d["class"] in (None, "inaccuracy", "mistake", "blunder")
        assert all(o["rollouts"] == 4 for o in d["options"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope", "0"), "nope"),
        (("m", "99"), "run m has no hand 99"),
        (("m", "0", "--seat", "3"), "seat 3 out of range: seats are 0 … 2"),
        (("m", "0", "--seat", "x"), "--seat 'x': a seat number or 'all'"),
        (("m", "0", "--rollouts", "0"), "0 is not in the range 1<=x<=4096"),
        (("m", "0", "--rollouts", "5000"), "5000 is not in the range 1<=x<=4096"),
        (("m", "0", "--rollout-policy", "search"), "'search' is not one of"),
    ],
)
def test_bad_review_input_is_one_error_line(
    store: Path, args: tuple[str, ...], message: str
) -> None:
    code, _, err = _review(store, *args)
    assert code == 2 and err.startswith("Error: ") and err.count("\n") == 1, err
    assert message in err, err


def test_ctrl_c_stops_the_review_cleanly(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.review.hand as H

    def interrupted(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(H, "review_hand", interrupted)
    code, out, err = _review(store, "m", "0")
    assert code == 130 and out == "" and "review interrupted" in err


def test_the_intervals_shrink_as_one_over_root_n() -> None:
    """Four times the rollouts, half the interval (1/√N), option by option, on average."""
    log, k = _hand_with_a_hu_offered(decline=True)
    seat = log.events[k][0]
    small = review_hand(log, [seat], 32, "heuristic", seed=2)
    big = review_hand(log, [seat], 128, "heuristic", seed=2)
    ratios = []
    for a, b in zip(small.decisions, big.decisions):
        assert a.step == b.step
        for x, y in zip(a.options, b.options):
            wa, wb = x.delta.high - x.delta.low, y.delta.high - y.delta.low
            if wa > 0 and wb > 0:
                ratios.append(wb / wa)
    assert len(ratios) >= 10
    mean = sum(ratios) / len(ratios)
    assert 0.4 < mean < 0.62, mean  # 1/√4 = 0.5
