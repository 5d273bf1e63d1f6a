"""paohuzi verify: a sound store passes; each kind of damage is reported with its run, hand
and event seq, the rest of the store is still checked and still readable, and the exit
status says whether anything is bad. Every case runs twice: with the default (compiled)
engine, and with ``verify_store`` checking both engines and requiring the same report,
problem for problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from verify_helpers import HANDS, SHARD, a_decision, rewrite, rows_of, shard_of, verify_cli

from engine.errors import CorruptLog
from paohuzi.cli.main import main
from replay import store
from replay.replayer import verify as V
from replay.replayer.hand import load_hand, replay_hand
from replay.replayer.verify import check_log
from replay.store.runs import open_store

#: What the cases call: the product's verify_store, or (the autouse fixture) _both.
verify_store = V.verify_store
_real_verify_store = V.verify_store


def _both(*args: Any, **kw: Any) -> V.VerifyReport:
    """verify_store by both engines; asserts they agree; the fast report."""
    kw.pop("engine", None)
    fast = _real_verify_store(*args, **{**kw, "engine": "fast"})
    ref = _real_verify_store(*args, **{**kw, "engine": "reference"})
    assert fast.problems == ref.problems
    assert fast.bad_hands == ref.bad_hands and fast.n_bad == ref.n_bad
    assert [r.hands for r in fast.runs] == [r.hands for r in ref.runs]
    assert {r.engine for r in fast.runs if r.engine} <= {"fast"}
    return fast


@pytest.fixture(autouse=True, params=["default", "both engines"])
def engines(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "both engines":
        monkeypatch.setitem(globals(), "verify_store", _both)
    return str(request.param)


# ------------------------------------------------------------------ a sound store


def test_sound_store_passes(root: Path) -> None:
    rep = verify_store(root)
    assert rep.ok and rep.n_bad == 0 and rep.problems == []
    assert rep.hands == 2 * HANDS
    res = verify_cli(root)
    assert res.exit_code == 0, res.output
    assert "verified 80 hands in 2 run(s)" in res.output and "all good" in res.output
    out = json.loads(verify_cli(root, "--json").output)
    assert out["ok"] and out["bad_hands"] == 0 and out["hands"] == 80


def test_unknown_run_is_an_input_error(root: Path) -> None:
    res = verify_cli(root, "nope")
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and "no run 'nope'" in res.output


# ------------------------------------------------------------------ damaged hands


def test_flipped_action_names_exactly_that_hand(root: Path) -> None:
    hand = 13
    k, other = a_decision(root, hand)

    def flip(cols: dict[str, list]) -> None:
        cols["action"][rows_of(cols, hand)[k]] = other

    rewrite(root, "events", hand, flip)
    rep = verify_store(root)
    assert rep.bad_hands == [("main", hand)]
    hand_problems = [p for p in rep.problems if p.hand is not None]
    assert {p.hand for p in hand_problems} == {hand}
    assert hand_problems[0].seq == k
    # The rewritten file no longer matches its checksum: a shard-level finding, no hand.
    assert any(p.hand is None and "SHA-256" in p.reason for p in rep.problems)
    res = verify_cli(root)
    assert res.exit_code == 1
    assert f"run main hand {hand} seq {k}:" in res.output
    assert "1 bad hand(s)" in res.output
    # Workers do not change the report.
    rep2 = verify_store(root, workers=2, min_pool_hands=0)
    assert rep2.problems == rep.problems and rep2.bad_hands == rep.bad_hands


def test_flipped_action_with_a_consistent_manifest(root: Path) -> None:
    hand = 30
    k, other = a_decision(root, hand)
    rewrite(
        root,
        "events",
        hand,
        lambda c: c["action"].__setitem__(rows_of(c, hand)[k], other),
        fix_manifest=True,
    )
    rep = verify_store(root)
    assert rep.bad_hands == [("main", hand)]
    assert all(p.hand == hand for p in rep.problems)


def test_illegal_event(root: Path) -> None:
    hand = 4
    rewrite(root, "events", hand, lambda c: c["action"].__setitem__(rows_of(c, hand)[2], 99))
    rep = verify_store(root, checksums=False)
    (p,) = rep.problems
    assert (p.run, p.hand, p.seq) == ("main", hand, 2)
    assert p.reason.startswith("illegal event: seat")


def test_events_out_of_order(root: Path) -> None:
    hand = 9

    def swap(cols: dict[str, list]) -> None:
        i, j = rows_of(cols, hand)[3:5]
        cols["seq"][i], cols["seq"][j] = cols["seq"][j], cols["seq"][i]

    rewrite(root, "events", hand, swap)
    rep = verify_store(root, checksums=False)
    (p,) = rep.problems
    assert (p.hand, p.seq) == (hand, 3) and "out of order" in p.reason


def test_deck_not_a_permutation(root: Path) -> None:
    hand = 17

    def dup(cols: dict[str, list]) -> None:
        i = cols["hand_id"].index(hand)
        deck = bytearray(cols["deck"][i])
        deck[0] = deck[1] if deck[1] != deck[0] else (deck[0] + 1) % 20
        cols["deck"][i] = bytes(deck)

    rewrite(root, "hands", hand, dup, fix_manifest=True)  # past the integrity checks
    rep = verify_store(root, checksums=False)
    (p,) = rep.problems
    assert p.hand == hand and "not a permutation of the 80 cards" in p.reason
    with pytest.raises(Exception, match="not a permutation"):
        replay_hand(load_hand(root, "main", hand), 0)


def test_tampered_outcome_and_event_columns(root: Path) -> None:
    def tamper(cols: dict[str, list]) -> None:
        i = cols["hand_id"].index(20)
        cols["stock_left"][i] += 1
        cols["delta_0"][i] += 5

    rewrite(root, "hands", 20, tamper)
    rewrite(root, "events", 21, lambda c: c["n_legal"].__setitem__(rows_of(c, 21)[0], 7))
    rep = verify_store(root, checksums=False)
    assert rep.bad_hands == [("main", 20), ("main", 21)]
    by_hand = {p.hand: p for p in rep.problems}
    assert "recorded outcome differs" in by_hand[20].reason
    assert "stock_left" in by_hand[20].reason and "delta_0" in by_hand[20].reason
    assert by_hand[21].seq == 0 and "n_legal 7" in by_hand[21].reason


# ------------------------------------------------------------------ damaged files


def test_truncated_parquet_file(root: Path) -> None:
    path = open_store(root).run("main").shard_path(shard_of(root, 8), "events")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    rep = verify_store(root)
    main_rep = next(r for r in rep.runs if r.run == "main")
    other = next(r for r in rep.runs if r.run == "other")
    assert other.ok and other.hands == HANDS
    assert main_rep.unverifiable == SHARD and main_rep.hands == HANDS - SHARD
    assert any(p.shard == 1 and "cannot read events/part-00001.parquet" in p.reason
               for p in main_rep.problems)  # fmt: skip
    # The rest of the store is still readable.
    assert replay_hand(load_hand(root, "main", 0)).is_terminal()
    assert replay_hand(load_hand(root, "other", 8)).is_terminal()
    with pytest.raises(CorruptLog, match="run main"):
        load_hand(root, "main", 8)
    res = verify_cli(root)
    assert res.exit_code == 1 and "run main shard 1: cannot read" in res.output
    res = CliRunner().invoke(main, ["replay", "main", "8", "--data", str(root)])
    assert res.exit_code == 2 and res.output.startswith("Error: run main")
    assert res.output.count("\n") == 1


def test_corrupted_parquet_bytes(root: Path) -> None:
    path = open_store(root).run("main").shard_path(shard_of(root, 16), "hands")
    data = bytearray(path.read_bytes())
    for i in range(200, 400):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    rep = verify_store(root)
    assert not rep.ok
    assert all(p.run == "main" for p in rep.problems)
    assert all(p.hand is None or 16 <= p.hand < 24 for p in rep.problems)
    assert any(p.shard == 2 for p in rep.problems)
    assert next(r for r in rep.runs if r.run == "other").ok


def test_missing_manifest(root: Path) -> None:
    (root / "runs" / "run=main" / "manifest.json").unlink()
    rep = verify_store(root)
    (p,) = next(r for r in rep.runs if r.run == "main").problems
    assert "no manifest.json" in p.reason
    assert next(r for r in rep.runs if r.run == "other").ok
    res = verify_cli(root)
    assert res.exit_code == 1 and "run main: no manifest.json" in res.output
    assert verify_cli(root, "other").exit_code == 0


def test_manifest_disagrees_with_its_shards(root: Path) -> None:
    r = open_store(root).run("main")
    m = r.manifest
    m["shards"][1]["files"]["hands"]["rows"] = 99
    del m["shards"][3]  # a finished shard the manifest forgot
    store.write_manifest(r.path, m)
    rep = verify_store(root)
    reasons = [str(p) for p in rep.problems]
    assert any("hands/part-00001.parquet has 8 rows, the manifest says 99" in x for x in reasons)
    assert any("shard 4 starts at hand 32, expected 24" in x for x in reasons)
    assert any("progress says 40 hands, its shards hold 32" in x for x in reasons)
    assert any("hands/part-00003.parquet is not listed" in x for x in reasons)
    assert rep.bad_hands == []  # every listed hand itself is sound


@pytest.mark.parametrize("version", [0, 99])
def test_unknown_schema_version(root: Path, version: int) -> None:
    r = open_store(root).run("main")
    m = r.manifest
    m["schema_version"] = version
    store.write_manifest(r.path, m)
    rep = verify_store(root)
    (p,) = next(x for x in rep.runs if x.run == "main").problems
    assert "schema version" in p.reason and str(version) in p.reason
    assert next(x for x in rep.runs if x.run == "other").ok
    if version > 1:
        res = CliRunner().invoke(main, ["replay", "main", "0", "--data", str(root)])
        assert res.exit_code == 2 and "schema version 99" in res.output
        assert res.output.count("\n") == 1


def test_check_log_without_recorded_rows(root: Path) -> None:
    log = load_hand(root, "other", 3)
    assert check_log(log) == [] and check_log(log, compare=False) == []
    short = type(log).from_history(log.rules, log.deck, log.dealer, log.events[:-1])
    (p,) = check_log(short)
    assert "ends before the hand does" in p.reason
