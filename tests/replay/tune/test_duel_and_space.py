"""The pieces of ``paohuzi tune``: the searched vector (replay.tune.space) and the duel's figure
(replay.tune.duel), which must be the paired difference ``paohuzi stats`` gives for the same
duplicate run recorded by ``simulate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from weights_helpers import ODD_HEURISTIC, write_weights

from engine.errors import InvalidNotation
from engine.policies import weights as W
from engine.rules import find_rules
from paohuzi.cli.main import main
from replay.tune.duel import Duel
from replay.tune.evaluate import InProcess, split
from replay.tune.space import Space, default_params, parse_params

# ------------------------------------------------------------------ the vector


def test_start_vector_gives_the_start_table() -> None:
    sp = Space.of("heuristic", W.DEFAULT_HEURISTIC, default_params("heuristic"))
    assert sp.table(sp.x0) == W.DEFAULT_HEURISTIC
    assert "ready_max_hand" not in sp.names and "discard_term" not in sp.names
    lo, hi = sp.bounds
    assert all(a <= x <= b for a, x, b in zip(lo, sp.x0, hi))


def test_vector_is_clipped_and_rounded() -> None:
    sp = Space.of("heuristic", W.DEFAULT_HEURISTIC, ("spill", "path_slack"))
    t = sp.table([1e6, 1.5])  # spill far above its range 0 … 1; path_slack 3 × 1.5 = 4.5
    assert t["spill"] == 1.0 and t["path_slack"] == 5.0
    t = sp.table([-5.0, -1.0])
    assert t["spill"] == 0.0 and t["path_slack"] == 0.0
    W.weights_from_mapping(t.as_dict(), "heuristic")  # every value a valid table again


@pytest.mark.parametrize(
    "text, message",
    [
        ("nope", "unknown parameter 'nope' for heuristic"),
        ("danger_w", "unknown parameter 'danger_w' for greedy (a heuristic parameter)"),
        (" , ", "name at least one parameter"),
    ],
)
def test_bad_params(text: str, message: str) -> None:
    with pytest.raises(InvalidNotation, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_params(text, "heuristic" if text == "nope" else "greedy")


def test_params_all_and_order() -> None:
    assert parse_params("hx,margin", "greedy") == ("margin", "hx")
    assert "ready_max_hand" in parse_params("all", "heuristic")
    assert "ready_takes" not in parse_params("all", "heuristic")


def test_split_covers_every_session_once() -> None:
    for n in (1, 15, 16, 17, 250, 1001):
        for tables in (1, 3, 14):
            r = split(n, tables, 2)
            assert r[0][0] == 0 and r[-1][1] == n
            assert all(a < b for a, b in r) and all(
                r[i][1] == r[i + 1][0] for i in range(len(r) - 1)
            )


# ------------------------------------------------------------------ the duel = stats


@pytest.mark.parametrize(
    "preset, sets", [("hunan", ()), ("hunan-4p", ()), ("hunan", ("min_huxi=10",))]
)
def test_duel_equals_stats_of_the_recorded_run(
    tmp_path: Path, preset: str, sets: tuple[str, ...]
) -> None:
    """The duel's per-deal figure = ``paohuzi stats``'s paired difference of the same run
    recorded by ``simulate --duplicate`` (candidate in one seat, the baseline in the others)."""
    rules = find_rules(preset).with_overrides(sets)
    f = write_weights(tmp_path / "w.json", "heuristic", ODD_HEURISTIC)
    table = W.read_weights(f, "heuristic")
    deals, seed = 40, 11
    others = ["greedy"] * (rules.players - 1)
    policies = ",".join([f"heuristic@{f}", *others])
    args = ["simulate", "--data", str(tmp_path / "d"), "--run", "r", "-n", str(deals), "--seed",
            str(seed), "--rules", preset, "--duplicate", "-p", policies, "-q", "-w", "1"]  # fmt: skip
    for s in sets:
        args += ["--set", s]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.stderr
    r = CliRunner().invoke(main, ["stats", "r", "--data", str(tmp_path / "d"), "--json"])
    assert r.exit_code == 0, r.stderr
    (row,) = json.loads(r.stdout)["runs"][0]["paired"]
    assert (row["a"], row["b"], row["deals"]) == ("greedy", f"heuristic@{f}", deals)

    duel = Duel(rules, "greedy")
    spec = duel.spec(table, seed, deals)
    with InProcess(duel, 1) as ev:
        (d,) = ev.run([table], seed, deals)
    assert d.deals == deals
    mean, lo, hi = d.score_ci()
    got = row["score_diff"]  # greedy − candidate: the other sign
    assert mean == pytest.approx(-got["mean"], abs=1e-9)
    assert (lo, hi) == (pytest.approx(-got["hi"], abs=1e-9), pytest.approx(-got["lo"], abs=1e-9))
    w = d.win_ci()
    assert w[0] == pytest.approx(-row["win_diff"]["mean"], abs=1e-9)
    # and the run it plays is the recorded one, but for the candidate's name
    assert spec.seed == seed and spec.duplicate and spec.deals == deals


def test_duel_is_the_same_cut_in_any_tasks() -> None:
    rules = find_rules("hunan")
    duel = Duel(rules, "heuristic")
    t = W.weights_from_mapping(ODD_HEURISTIC, "heuristic")
    whole = duel.play(t, 5, 200, range(0, 25))
    parts = [duel.play(t, 5, 200, range(a, b)) for a, b in ((0, 7), (7, 20), (20, 25))]
    from replay.tune.duel import DealDiffs

    joined = DealDiffs.join(parts)
    assert (joined.score == whole.score).all() and (joined.won == whole.won).all()


def test_baseline_may_not_take_the_candidates_name() -> None:
    from engine.errors import PaohuziError

    duel = Duel(find_rules("hunan"), "heuristic@candidate", W.DEFAULT_HEURISTIC)
    with pytest.raises(PaohuziError, match="may not be named"):
        duel.spec(W.DEFAULT_HEURISTIC, 1, 8)
