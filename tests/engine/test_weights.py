"""The parameter table of greedy and heuristic (engine.policies.weights): every parameter
named once with its default, range and meaning; the defaults are the values the policies
played before weights became data; specs; strict weights files; a table played by the
reference policies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from weights_helpers import FLAGS_OFF, ODD_GREEDY, ODD_HEURISTIC, document, write_weights

from engine.deck import shuffle_deck
from engine.errors import InvalidNotation
from engine.play import play_hand
from engine.policies import features as F
from engine.policies import load_policies, load_policy
from engine.policies import weights as W
from engine.policies.greedy import GreedyPolicy
from engine.policies.heuristic import HeuristicPolicy
from engine.rules import find_rules
from engine.state import Game

#: The values the policies held as literals before issue 22 (class attributes, Weights()
#: defaults and the constants of heuristic and features): the defaults must stay these, so
#: recorded runs of ``greedy`` / ``heuristic`` keep their meaning.
BEFORE = {
    "margin": -25.0, "table": 1.0, "hx": 7.0, "discard_term": 1, "full": 10.0, "pair": 6.0,
    "part": 3.0, "out": 0.45, "spill": 0.12, "big": 0.35, "self": 0.12, "kan": 12.0,
    "pair_dead": 0.4, "part_hx": 0.5, "big_extra": 0.5, "seen_w": 0.25, "danger_w": 4.0,
    "hu_risk": 0.5, "threat_floor": 0.02, "threat_hand": 21.0, "p_in_max": 0.9,
    "stinky_w": 1.2, "path_w": 1.5, "path_slack": 3, "ready_max_hand": 14, "ready_w": 40.0,
    "ready_hx": 0.1, "ready_takes": 1,
}  # fmt: skip


def test_every_parameter_is_named_once_with_a_default_in_its_range() -> None:
    names = [p.name for p in W.PARAMS]
    assert len(set(names)) == len(names)
    assert names[: len(BEFORE)] == list(BEFORE)
    assert [p.policy for p in W.PARAMS[len(BEFORE) :]] == ["learned"] * (len(names) - len(BEFORE))
    for p in W.PARAMS:
        assert p.policy in W.WEIGHTED and p.kind in ("float", "int", "flag"), p
        assert p.low <= p.default <= p.high and p.meaning, p
        if p.kind == "flag":
            assert (p.low, p.high) == (0.0, 1.0) and p.default in (0.0, 1.0), p
        if p.kind != "float":
            assert p.default == int(p.default), p
    # greedy's block first (the compiled array's order), heuristic's after
    assert [p.policy for p in W.PARAMS] == sorted(
        (p.policy for p in W.PARAMS), key=W.WEIGHTED.index
    )


def test_defaults_are_the_values_played_before() -> None:
    assert W.DEFAULT_HEURISTIC.as_dict() == BEFORE
    assert W.DEFAULT_GREEDY.as_dict() == {p.name: BEFORE[p.name] for p in W.policy_params("greedy")}


def test_the_policies_hold_the_table_defaults() -> None:
    h = HeuristicPolicy()
    for p in W.policy_params("heuristic"):
        if p.name in F.Weights.PARAMS:
            got = getattr(h.wt, F.Weights.PARAMS[p.name])
        else:
            got = getattr(h, p.name)
        assert got == p.default, p.name
        if p.kind == "flag":
            assert type(got) is bool, p.name
        elif p.kind == "int":
            assert type(got) is int, p.name
    assert GreedyPolicy.margin == -25.0 and F.DEFAULT.pair_dead == 0.4


def test_from_weights_sets_every_parameter() -> None:
    table = W.weights_from_mapping(ODD_HEURISTIC, "heuristic")
    p = HeuristicPolicy.from_weights(table, "heuristic@odd.json")
    assert p.name == "heuristic@odd.json"
    for name, value in ODD_HEURISTIC.items():
        slot = F.Weights.PARAMS.get(name)
        assert (getattr(p.wt, slot) if slot else getattr(p, name)) == value, name
    with pytest.raises(ValueError, match="a heuristic table for the greedy policy"):
        GreedyPolicy.from_weights(table)


def test_shipped_default_sets_equal_the_defaults() -> None:
    assert W.shipped_names("heuristic")[:2] == ["default", "tuned-hunan"]
    assert W.shipped_names("greedy") == ["default"]
    assert W.load_spec("heuristic@default") == W.DEFAULT_HEURISTIC
    assert W.load_spec("greedy@DEFAULT") == W.DEFAULT_GREEDY
    doc = json.loads((W.SHIPPED_DIR / "default-heuristic.json").read_text("utf-8"))
    assert "default" in doc["about"] and "weights_document" in doc["about"]


@pytest.mark.parametrize(
    "name", [n for n in W.shipped_names("heuristic") if n.startswith("tuned-")]
)
def test_shipped_tuned_sets_name_the_command_that_made_them(name: str) -> None:
    """docs/TUNING.md: a tuned set is data with its command, for the preset its name gives;
    it differs from the defaults and is a valid table (read by the one reader)."""
    from engine.rules import find_rules

    find_rules(name.removeprefix("tuned-"))
    t = W.load_spec(f"heuristic@{name}")
    assert t.policy == "heuristic" and t != W.DEFAULT_HEURISTIC
    doc = json.loads((W.SHIPPED_DIR / f"{name}-heuristic.json").read_text("utf-8"))
    assert "made by: paohuzi tune " in doc["about"] and "(better)" in doc["about"]
    assert t["ready_max_hand"] == W.DEFAULT_HEURISTIC["ready_max_hand"]  # not tuned: speed


# ---------------------------------------------------------------------------------------------
# Specs
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("heuristic@default", ("heuristic", "default", False)),
        (" Heuristic@Tuned-Hunan ", ("heuristic", "tuned-hunan", False)),
        ("greedy@w.json", ("greedy", "w.json", True)),
        ("heuristic@runs/W/T.JSON", ("heuristic", "runs/W/T.JSON", True)),
        ("heuristic@/abs/path/table", ("heuristic", "/abs/path/table", True)),
        ("heuristic@./x", ("heuristic", "./x", True)),
    ],
)
def test_spec_names_a_set_or_a_file(spec: str, parsed: tuple[str, str, bool]) -> None:
    assert W.parse_spec(spec) == parsed
    assert W.is_weighted_spec(spec)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("random@x", "only greedy, heuristic and learned take weights"),
        ("heuristic@", "name a weights file or set after '@'"),
        ("heuristic@no such", "is no weights set name"),
        ("heuristic@a,b.json", "may not contain ','"),
        ("heuristic@a+b.json", "may not contain"),
        ("heuristic@" + "x/" * 100, "longer than 180 characters"),
        (
            "heuristic@nosuchset",
            "no shipped weights set 'nosuchset' for heuristic (shipped: default",
        ),
    ],
)
def test_bad_spec_is_one_line(spec: str, message: str) -> None:
    with pytest.raises(InvalidNotation, match=message.replace("(", r"\(")) as e:
        load_policy(spec)
    assert "\n" not in str(e.value)


def test_search_and_plain_specs_are_not_weighted() -> None:
    assert not W.is_weighted_spec("search@16/heuristic")
    assert not W.is_weighted_spec("heuristic")
    assert load_policy("search@2/greedy").name == "search@2/greedy"


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def _bad(tmp_path: Path, content: object, policy: str = "heuristic") -> str:
    path = tmp_path / "w.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    with pytest.raises(InvalidNotation) as e:
        W.read_weights(path, policy, shown="w.json")
    text = str(e.value)
    assert "\n" not in text and text.startswith("weights file 'w.json': "), text
    return text


def _with(**changes: object) -> dict[str, object]:
    values: dict[str, object] = dict(BEFORE)
    for k, v in changes.items():
        if v is None:
            values.pop(k)
        else:
            values[k] = v
    return document("heuristic", values)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_with(danger_w=None), "parameter 'danger_w' is missing"),
        (dict(_with(), weights={**BEFORE, "dangerw": 1}), "unknown parameter 'dangerw'"),
        (_with(hx="7"), "parameter 'hx': expected a number, got '7'"),
        (_with(hx=True), "parameter 'hx': expected a number, got True"),
        (_with(hx=None, margin=[1]), "parameter 'margin': expected a number"),
        (_with(spill=1.5), "parameter 'spill': 1.5 is out of range 0 … 1"),
        (_with(margin=-1e9), "parameter 'margin': -1000000000.0 is out of range -1000 … 1000"),
        (_with(ready_max_hand=14.5), "parameter 'ready_max_hand': expected a whole number"),
        (_with(ready_takes=0.5), "parameter 'ready_takes': expected 0 or 1"),
        (dict(_with(), policy="greedy"), "field policy: expected 'heuristic', got 'greedy'"),
        (dict(_with(), extra=1), "unknown key 'extra'"),
        ({"policy": "heuristic"}, "field weights is missing"),
        ([1, 2], "expected a JSON object, got [1, 2]"),
        (dict(_with(), about=3), "field about: expected a string"),
    ],
)
def test_bad_weights_file_names_the_parameter(tmp_path: Path, doc: object, message: str) -> None:
    assert message in _bad(tmp_path, doc)


def test_greedy_file_refuses_a_heuristic_parameter(tmp_path: Path) -> None:
    doc = document("greedy", {**W.DEFAULT_GREEDY.as_dict(), "ready_w": 40.0})
    assert "unknown parameter 'ready_w' for greedy (a heuristic parameter)" in _bad(
        tmp_path, doc, "greedy"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON (Expecting property name"),
        ('{"policy": "heuristic", "weights": {"hx": NaN}}', "not JSON (NaN is not a number"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        ("", "not JSON"),
    ],
)
def test_unreadable_content_is_one_line(tmp_path: Path, content: object, message: str) -> None:
    assert message in _bad(tmp_path, content)


def test_missing_file_directory_and_fifo(tmp_path: Path) -> None:
    with pytest.raises(W.WeightsUnreadable, match="weights file 'nope.json': cannot read it"):
        W.read_weights(tmp_path / "nope.json", "heuristic", shown="nope.json")
    with pytest.raises(InvalidNotation, match="is a directory, not a file"):
        W.read_weights(tmp_path, "heuristic")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InvalidNotation, match="is not a regular file"):
        W.read_weights(fifo, "heuristic")
    big = tmp_path / "big.json"
    big.write_text(" " * (W.MAX_BYTES + 1))
    with pytest.raises(InvalidNotation, match="more than 65,536"):
        W.read_weights(big, "heuristic")


def test_file_round_trip(tmp_path: Path) -> None:
    table = W.weights_from_mapping(ODD_HEURISTIC, "heuristic")
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(W.weights_document(table, "odd")), "utf-8")
    assert W.read_weights(path, "heuristic") == table
    assert table.vector()[W.INDEX["danger_w"]] == 9.0


def test_a_learned_table_older_than_the_mingtang_coefficients_reads_as_it_was(
    tmp_path: Path,
) -> None:
    """The 名堂 coefficients came after learned tables were recorded: a table without them
    reads with them at 0 (it plays as before: 0 × a feature adds nothing), writes and records
    itself without them (so its manifests and run digests stay as they were), and a nonzero
    one is written; any other missing parameter is still refused."""
    assert {f"{k}_{n}" for k in "dc" for n in W.MINGTANG} == W.LATE
    old = {k: v for k, v in W.DEFAULT_LEARNED.as_dict().items() if k not in W.LATE}
    assert old == W.DEFAULT_LEARNED.as_dict()  # at 0, not written
    table = W.weights_from_mapping(old, "learned")
    assert table == W.DEFAULT_LEARNED and all(table[n] == 0.0 for n in W.LATE)
    moved = W.weights_from_mapping({**old, "d_dian": 3.5}, "learned")
    assert moved.as_dict()["d_dian"] == 3.5 and "c_dian" not in moved.as_dict()
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(W.weights_document(moved, "moved")), "utf-8")
    assert W.read_weights(path, "learned") == moved
    del old["d_path"]
    with pytest.raises(InvalidNotation, match="parameter 'd_path' is missing"):
        W.weights_from_mapping(old, "learned")


# ---------------------------------------------------------------------------------------------
# Play (reference)
# ---------------------------------------------------------------------------------------------


def _hands(specs: str, n: int = 6, preset: str = "hunan") -> list[list[tuple[int, int]]]:
    rules = find_rules(preset)
    game = Game(rules)
    out = []
    for seed in range(n):
        pols = load_policies(specs, rules.players)
        steps = play_hand(game, shuffle_deck(seed), seed % rules.players, pols, seed)
        out.append([(s.seat, s.action) for s in steps])
    return out


def test_default_sets_play_as_the_builtins() -> None:
    assert _hands("heuristic@default") == _hands("heuristic")
    assert _hands("greedy@default,random,heuristic@default") == _hands("greedy,random,heuristic")


def test_a_table_changes_play(tmp_path: Path) -> None:
    odd = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    off = write_weights(tmp_path / "off.json", "heuristic", FLAGS_OFF)
    g = write_weights(tmp_path / "g.json", "greedy", ODD_GREEDY)
    base = _hands("heuristic", 8)
    assert _hands(f"heuristic@{odd}", 8) != base
    assert _hands(f"heuristic@{off}", 8) != base
    assert _hands(f"greedy@{g}", 8) != _hands("greedy", 8)
    assert load_policy(f"heuristic@{odd}").name == f"heuristic@{odd}"


def test_given_tables_are_not_read_again(tmp_path: Path) -> None:
    path = write_weights(tmp_path / "odd.json", "heuristic", ODD_HEURISTIC)
    spec = f"heuristic@{path}"
    table = W.load_spec(spec)
    path.unlink()
    p = load_policy(spec, {W.canonical(spec): table})
    assert isinstance(p, HeuristicPolicy) and p.danger_w == 9.0
    with pytest.raises(W.WeightsUnreadable):
        load_policy(spec)


def test_the_doc_prints_the_table() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "POLICIES.md").read_text("utf-8")
    assert W.table_markdown() in doc
